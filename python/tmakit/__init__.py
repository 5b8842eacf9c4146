"""tmakit: the GPU's bulk-copy engine (TMA) from Python — tensor maps checked rule by
rule, a bit-exact model of the engine, pictures of shared memory, a PTX linter.

    import tmakit
    m = tmakit.TensorMap.tiled(data_type="bfloat16", dims=[256, 64], strides=[512], box=[64, 8], swizzle="128b")
    m.check()                                  # raises tmakit.MapError naming every broken rule
    smem = tmakit.simulate_load(m, tensor, coords=[64, 8])

docs/python.md has the whole API."""
from ._errors import Finding, InputError, MapError, ModelError, ModelWarning, TmakitError
from ._maps import TensorMap
from ._layout import NO_DATA, Layout
from ._tensors import TensorFacts, describe, from_tensor, from_triton
from ._model import run, simulate_load, simulate_reduce, simulate_store
from ._lint import LintDiagnostic, LintResult, lint
from ._explain import explain, explain_rules

__version__ = "0.1.0"

__all__ = ["Finding", "InputError", "Layout", "LintDiagnostic", "LintResult", "MapError", "ModelError",
           "ModelWarning", "NO_DATA", "TensorFacts", "TensorMap", "TmakitError", "describe", "explain", "explain_rules",
           "from_tensor",
           "from_triton", "lint", "run", "simulate_load", "simulate_reduce", "simulate_store"]
