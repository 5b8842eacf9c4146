// placeholder: replaced by the scenario loader
