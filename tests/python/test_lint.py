"""tmakit.lint: the same diagnostics as `tmakit lint --format json` on the same module."""
from __future__ import annotations

import json

import pytest

import tmakit
from conftest import run_cli

MODULE = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b64 %rd<4>;
  .shared .align 8 .b64 bar;
  .shared .align 128 .b8 buf[1024];
  mbarrier.init.shared::cta.b64 [bar], 1;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd1], 100, [bar];
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.tile.bogus [buf], [%rd2, {0, 0}], [bar];
  ret;
}
"""


@pytest.mark.parametrize("arch", [None, "sm_90", "sm_100a"])
def test_same_diagnostics_as_the_cli(cli, tmp_path, arch):
    f = tmp_path / "k.ptx"
    f.write_text(MODULE)
    r = run_cli(cli, ["lint", str(f), "--format", "json"] + (["--arch", arch] if arch else []))
    assert r.returncode in (0, 1, 2), r.stderr
    result = tmakit.lint(MODULE, arch, file=str(f))
    assert [result.to_json(str(f))] == json.loads(r.stdout)
    assert result.errors >= 1 and result.instructions >= 2


def test_clean_module_and_notes():
    clean = MODULE.replace(", 100,", ", 128,").splitlines()
    clean = "\n".join(l for l in clean if ".bogus" not in l)
    r = tmakit.lint(clean)
    assert (r.errors, r.warnings, r.unusable) == (0, 0, False) and r.instructions == 2


def test_unusable_and_bad_arguments():
    r = tmakit.lint("ret;")
    assert r.unusable  # no .target, no .version
    with pytest.raises(tmakit.InputError, match="arch"):
        tmakit.lint(MODULE, "sm_42")
    with pytest.raises(tmakit.InputError, match="ptx_version"):
        tmakit.lint(MODULE, ptx_version="eight")
    with pytest.raises(TypeError, match="ptx_text"):
        tmakit.lint(b".version 8.0")
    first = tmakit.lint(MODULE).diagnostics[0]
    assert str(first).startswith("<ptx>:") and first.line is not None
