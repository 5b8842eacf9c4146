"""The package as installed: its public names, its type information, the `tmakit`
command it installs, and the stub of the C++ module against the module itself."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tmakit
from tmakit import _cli


def test_public_names_and_annotations():
    for name in tmakit.__all__:
        assert hasattr(tmakit, name), name
    for fn in (tmakit.from_tensor, tmakit.from_triton, tmakit.run, tmakit.simulate_load, tmakit.simulate_store,
               tmakit.simulate_reduce, tmakit.lint, tmakit.TensorMap.tiled, tmakit.TensorMap.validate,
               tmakit.TensorMap.layout):
        sig = inspect.signature(fn)
        assert sig.return_annotation is not inspect.Signature.empty, fn.__name__
    folder = Path(tmakit.__file__).parent
    assert (folder / "py.typed").exists() and (folder / "_core.pyi").exists()


def test_core_stub_matches_the_module(tmp_path):
    # nanobind's stubgen on the built module must give the stub shipped with the package.
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "_core.pyi"
    r = subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-m", "tmakit._core", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    shipped = (Path(tmakit.__file__).parent / "_core.pyi").read_text().splitlines()[1:]
    assert out.read_text().splitlines()[1:] == shipped  # line 1: the docstring


def test_cli_entry_runs_the_packaged_binary():
    exe = Path(sys.executable).parent / "tmakit"
    assert exe.exists(), "pip install . installs the tmakit command"
    r = subprocess.run([str(exe), "map", "--type", "bfloat16", "--dims", "256,64", "--strides", "512", "--box", "64,8",
                        "--swizzle", "128b"], capture_output=True, text=True)
    assert r.returncode == 0 and "bytes per box: 1024" in r.stdout, r.stdout + r.stderr
    # The preload library of `tmakit watch` travels with the binary (../lib from bin/).
    assert any(Path(_cli.binary()).parent.parent.glob("lib*/libtmakit_watch.so"))
    r = subprocess.run([str(exe), "map", "--type", "float32", "--dims", "64", "--box", "512"], capture_output=True,
                       text=True)
    assert r.returncode == 1 and "map.box-dim-range" in r.stdout + r.stderr


def test_cli_entry_without_binary(monkeypatch, capsys):
    monkeypatch.setattr(_cli, "binary", lambda: os.path.join(os.sep, "no", "such", "tmakit"))
    assert _cli.main(["--help"]) == 2
    assert "missing" in capsys.readouterr().err
