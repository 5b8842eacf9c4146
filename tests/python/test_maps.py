"""TensorMap: construction, validation and derived sizes, against the spec's worked
examples and against `tmakit map` on the same input (same findings, same sizes)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tmakit
from conftest import run_cli, write_json

# A map breaking several rules at once: box[0] past 256, a 130-byte stride, a swizzled row wider than its span.
BAD = dict(data_type="float32", dims=[1024, 64], strides=[130], box=[300, 8], swizzle="64b")


def cli_findings(cli, tmp_path, m: tmakit.TensorMap, target="sm_90a"):
    f = write_json(tmp_path / "map.json", m.to_json())
    r = run_cli(cli, ["map", str(f), "--target", target])
    assert r.returncode in (0, 1), r.stderr
    lines = [l for l in r.stdout.splitlines() if re.search(r": (error|warning|note): ", l)]
    sizes = {k: int(v) for k, v in re.findall(r"^(bytes per box|smem footprint|smem alignment): (\d+)", r.stdout, re.M)}
    return str(f), lines, sizes, r.returncode


def expected_lines(file, findings):
    return [str(tmakit.Finding(x.severity, x.rule, x.message, f"{file}: {x.field}" if x.field else file))
            for x in findings]


@pytest.mark.parametrize("kwargs", [
    dict(data_type="bfloat16", dims=[256, 64], strides=[512], box=[64, 8], swizzle="128b"),
    BAD,
    dict(data_type="uint8", dims=[466, 3, 5], strides=[512, 2048], box=[128, 2, 4], element_strides=[1, 2, 3]),
    dict(data_type="float16", dims=[100, 7], strides=[200], box=[32, 8], oob_fill="nan_request_zero_fma"),
])
def test_findings_and_sizes_as_the_cli(cli, tmp_path, kwargs):
    m = tmakit.TensorMap.tiled(**kwargs)
    file, lines, sizes, status = cli_findings(cli, tmp_path, m)
    findings = m.validate("sm_90a")
    assert expected_lines(file, findings) == lines
    assert status == (1 if any(f.severity == "error" for f in findings) else 0)
    assert sizes == {"bytes per box": m.box_bytes, "smem footprint": m.smem_footprint,
                     "smem alignment": m.smem_alignment}


def test_im2col_maps_as_the_cli(cli, tmp_path):
    m = tmakit.TensorMap.im2col(data_type="float16", dims=[64, 14, 14, 2], strides=[128, 1792, 25088],
                                pixel_box_lower=[-1, -1], pixel_box_upper=[1, 1], channels_per_pixel=64,
                                pixels_per_column=32, swizzle="128b")
    file, lines, sizes, status = cli_findings(cli, tmp_path, m)
    assert expected_lines(file, m.validate()) == lines and status == 0
    assert m.box_bytes == 64 * 32 * 2 == sizes["bytes per box"]
    w = tmakit.TensorMap.im2col_wide(data_type="float16", dims=[64, 14, 14, 2], strides=[128, 1792, 25088],
                                     pixel_box_lower_w=-1, pixel_box_upper_w=1, channels_per_pixel=64,
                                     pixels_per_column=32, mode="w128", swizzle="128b")
    file, lines, sizes, status = cli_findings(cli, tmp_path, w, "sm_100a")
    assert expected_lines(file, w.validate("sm_100a")) == lines and status == 0
    # im2col_wide needs sm_100+: on sm_90a the target rule is named.
    assert any(f.rule.startswith("map.") and "sm_100" in f.message for f in w.validate("sm_90a"))


def test_worked_examples_byte_counts():
    # §2.8 A and B: UINT16, G = {256, 64}, B = {32, 8}: 512 bytes; E = {1, 3}: 32 × 3 × 2 = 192.
    a = tmakit.TensorMap.tiled(data_type="uint16", dims=[256, 64], strides=[512], box=[32, 8])
    b = tmakit.TensorMap.tiled(data_type="uint16", dims=[256, 64], strides=[512], box=[32, 8], element_strides=[1, 3])
    assert (a.box_bytes, b.box_bytes) == (512, 192)
    assert (a.smem_footprint, b.smem_footprint) == (512, 192)
    # §3.3 / H2: a 32-byte row under 128B swizzle occupies a full 128-byte span.
    n = tmakit.TensorMap.tiled(data_type="float16", dims=[64, 64], strides=[128], box=[16, 8], swizzle="128b")
    assert (n.box_bytes, n.row_pitch, n.smem_footprint, n.swizzle_period) == (256, 128, 1024, 1024)
    assert n.smem_alignment == 128  # H15


def test_check_raises_map_error_with_every_finding():
    m = tmakit.TensorMap.tiled(**BAD)
    with pytest.raises(tmakit.MapError) as e:
        m.check()
    rules = {f.rule for f in e.value.findings if f.severity == "error"}
    assert len(rules) >= 3, rules  # not only the first broken rule
    assert {f.field for f in e.value.findings} >= {"box[0]", "strides[0]"}
    assert all(str(f) in str(e.value) for f in e.value.findings if f.severity == "error")
    assert isinstance(e.value, ValueError) and e.value.target == "sm_90a"
    ok = tmakit.TensorMap.tiled(data_type="float32", dims=[64], box=[16])
    assert ok.check() is ok and [f for f in ok.validate() if f.severity != "note"] == []


def test_fields_to_json_and_equality(bf16_map):
    j = bf16_map.to_json()
    assert j["dims"] == [256, 64] and j["swizzle"] == "128b" and j["element_strides"] == [1, 1]
    assert tmakit.TensorMap.from_json(j) == bf16_map == tmakit.TensorMap(j)
    assert tmakit.TensorMap.from_json(__import__("json").dumps(j)) == bf16_map
    assert (bf16_map.rank, bf16_map.data_type, bf16_map.box) == (2, "bfloat16", [64, 8])
    # Other spellings of the same values: byte counts, NumPy dtypes, numpy integers.
    same = tmakit.TensorMap.tiled(data_type="bfloat16", dims=np.array([256, 64]), strides=(np.int64(512),),
                                  box=[64, 8], swizzle=128)
    assert same == bf16_map
    assert tmakit.TensorMap.tiled(data_type=np.float16, dims=[64], box=[8]).data_type == "float16"
    with pytest.raises(AttributeError):
        bf16_map.no_such_field


@pytest.mark.parametrize("kwargs, exc, where", [
    (dict(dims=[64, "8"]), TypeError, "dims[1]"),
    (dict(dims=[64.0]), TypeError, "dims[0]"),
    (dict(box=[True]), TypeError, "box[0]"),
    (dict(swizzle="256b"), tmakit.InputError, "swizzle"),
    (dict(swizzle=1.5), TypeError, "swizzle"),
    (dict(data_type="int8"), tmakit.InputError, "data_type"),
    (dict(dims=[2**64]), tmakit.InputError, "dims[0]"),
    (dict(box=[8, 8]), tmakit.InputError, "strides"),  # rank 2 needs a stride
    (dict(global_address=-16), tmakit.InputError, "global_address"),
])
def test_bad_arguments_name_the_argument(kwargs, exc, where):
    args = dict(data_type="float32", dims=[64], box=[16])
    args.update(kwargs)
    if "box" in kwargs and len(kwargs["box"]) == 2:
        args["dims"] = [64, 64]
    with pytest.raises(exc) as e:
        tmakit.TensorMap.tiled(**args)
    assert where in str(e.value)


def test_bad_dicts_and_json():
    with pytest.raises(tmakit.InputError, match=r"map\.swizle.*unknown key"):
        tmakit.TensorMap({"encode": "tiled", "data_type": "float32", "dims": [8], "box": [8], "swizle": "none"})
    with pytest.raises(tmakit.InputError, match="not valid JSON"):
        tmakit.TensorMap.from_json("{")
    with pytest.raises(TypeError):
        tmakit.TensorMap([1, 2])
    with pytest.raises(TypeError, match="spec"):
        tmakit.TensorMap({"encode": "tiled", "dims": [object()]})


def test_coordinates_rules():
    m = tmakit.TensorMap.tiled(data_type="float32", dims=[64, 64], strides=[256], box=[16, 4])
    assert m.check_coordinates([4, 0]) == []  # 16 bytes
    bad = m.check_coordinates([2, 0])  # 8 bytes: H9
    assert bad and bad[0].severity == "error"
    assert any(f.severity == "error" for f in m.check_coordinates([0, -1], "store"))  # H14
    assert m.check_coordinates([0, -1], "load") == []
    with pytest.raises(tmakit.InputError, match="direction"):
        m.check_coordinates([0, 0], "sideways")
    with pytest.raises(tmakit.InputError, match="target"):
        m.validate("sm_42")
