"""Issue 24, item 5 (the Python edges) and tmakit.explain (item 1)."""
from __future__ import annotations

import pathlib
import warnings

import numpy as np
import pytest

import tmakit
from test_tensors import ForeignDLPack

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("dtype, name", [(np.int8, "uint8"), (np.int16, "uint16"), (np.bool_, "uint8")])
def test_one_and_two_byte_types_are_copied_as_unsigned(dtype, name):
    m = tmakit.from_tensor(np.zeros((2, 64), dtype=dtype), box=[16, 1])
    assert m.data_type == name


@pytest.mark.parametrize("code", [7, 8, 10, 12, 14])  # DLPack 1.1's float8 kinds (e4m3fn = 10, e5m2 = 12)
def test_fp8_through_dlpack_is_uint8_as_triton_encodes_it(code):
    buffer = np.zeros((16, 64), np.uint8)
    m = tmakit.from_tensor(ForeignDLPack([16, 64], [64, 1], code, 8, 1, buffer.ctypes.data), box=[64, 8])
    assert (m.data_type, m.dims) == ("uint8", [64, 16])


def test_the_box_order_is_named_and_a_transposed_box_warns():
    a = np.zeros((256, 64), np.float16)  # 256 rows of 64: dims [64, 256] innermost first
    inner_first = tmakit.from_tensor(a, box_innermost_first=[64, 8])
    assert tmakit.from_tensor(a, box=[64, 8]).to_json() == inner_first.to_json()
    assert tmakit.from_tensor(a, block_shape=[8, 64]).to_json() == inner_first.to_json()  # tensor order
    tall = np.zeros((64, 16), np.float32)  # dims [16, 64]
    with pytest.warns(UserWarning, match=r"block_shape=\[64, 16\].*python.box-order"):
        tmakit.from_tensor(tall, box=[64, 16])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tmakit.from_tensor(tall, box=[16, 64])  # fits as given: no warning
    with pytest.raises(tmakit.InputError, match="give the box once"):
        tmakit.from_tensor(a, box=[64, 8], block_shape=[8, 64])


def test_a_wrong_shape_tensor_is_a_shape_error_not_a_model_fault():
    m = tmakit.TensorMap.tiled(data_type="float32", dims=[64, 64], strides=[256], box=[32, 8])
    with pytest.raises(tmakit.InputError) as e:
        tmakit.simulate_load(m, np.zeros((8, 64), np.float32), coords=[0, 0])
    assert e.value.rule == "python.tensor-size"
    assert "16384" in str(e.value) and "2048" in str(e.value)
    assert not isinstance(e.value, tmakit.ModelError)
    assert tmakit.simulate_load(m, np.zeros((64, 64), np.float32), coords=[0, 0]).size == m.smem_footprint


def test_lint_takes_a_path(tmp_path):
    text = (ROOT / "tests/corpus").glob("**/*.ptx")
    src = next(iter(text), None)
    if src is None:
        src = tmp_path / "k.ptx"
        src.write_text(".version 8.7\n.target sm_90a\n.address_size 64\n")
    by_text = tmakit.lint(src.read_text(), file=str(src))
    for given in (src, str(src)):
        r = tmakit.lint(given)
        assert r.instructions == by_text.instructions
        assert [(d.rule, d.line) for d in r.diagnostics] == [(d.rule, d.line) for d in by_text.diagnostics]
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k() {\n  cp.async.bulk.bogus;\n}\n")
    r = tmakit.lint(bad)
    assert r.diagnostics and all(d.file == str(bad) for d in r.diagnostics)


def test_a_bad_layout_argument_is_a_value_error():
    m = tmakit.TensorMap.tiled(data_type="bfloat16", dims=[256, 64], strides=[512], box=[64, 8], swizzle="128b")
    with pytest.raises(ValueError) as e:
        m.layout([0])
    assert not isinstance(e.value, tmakit.ModelError)
    assert e.value.rule.startswith("coord.")


def test_explain_from_python():
    text = tmakit.explain("[map.box-inner-bytes]")
    assert text.startswith("map.box-inner-bytes\n") and "Fix: " in text
    assert "h100-inner-coordinate-fault" in tmakit.explain("coord.inner-align")
    assert "map.smem-alignment" in tmakit.explain_rules()
    with pytest.raises(tmakit.InputError, match="no rule"):
        tmakit.explain("map.nothing")


def test_pip_builds_out_of_the_source_tree():
    # A build folder kept in the source tree holds the first install's paths (its isolated build
    # environment, gone afterwards), so a second `pip install .` failed; a fresh one each time builds clean.
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[tool.scikit-build]")[1].split("\n[")[0]
    assert not [l for l in section.splitlines() if l.strip().startswith("build-dir")]
