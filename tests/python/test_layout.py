"""TensorMap.layout: the same SVG, text and JSON as `tmakit layout`, chunk coordinates
as the spec's 128B worked example places them, save() all or nothing."""
from __future__ import annotations

import json

import numpy as np
import pytest

import tmakit
from conftest import run_cli, write_json


@pytest.mark.parametrize("fmt", ["svg", "text", "json"])
def test_same_picture_as_the_cli(cli, tmp_path, bf16_map, fmt):
    lay = bf16_map.layout([64, 8], smem_offset=256)
    f = write_json(tmp_path / "map.json", bf16_map.to_json())
    r = run_cli(cli, ["layout", str(f), "--coords", "64,8", "--smem-offset", "256", "--format", fmt])
    assert r.returncode == 0, r.stderr
    assert r.stdout == {"svg": lay.svg(), "text": lay.text(), "json": lay._json_text}[fmt]


def test_im2col_picture_as_the_cli(cli, tmp_path):
    m = tmakit.TensorMap.im2col(data_type="float16", dims=[64, 14, 14, 2], strides=[128, 1792, 25088],
                                pixel_box_lower=[-1, -1], pixel_box_upper=[1, 1], channels_per_pixel=64,
                                pixels_per_column=16, swizzle="128b")
    lay = m.layout([0, -1, -1, 0], offsets=[1, 1])
    f = write_json(tmp_path / "map.json", m.to_json())
    r = run_cli(cli, ["layout", str(f), "--coords", "0,-1,-1,0", "--offsets", "1,1", "--format", "json"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == lay.json and "walk" in lay.json


def test_chunks_follow_the_worked_example(bf16_map):
    # §3.5: chunk j of row y lands at chunk j ^ y of line y (1024-aligned D); at D ≡ 128, j ^ ((y + 1) & 7).
    for base, phase in ((0, 0), (128, 1)):
        lay = bf16_map.layout([64, 8], smem_offset=base)
        assert lay.chunks.shape == (64, 2)
        for y in range(8):
            for j in range(8):
                physical = y * 8 + (j ^ ((y + phase) & 7))
                assert list(lay.chunks[physical]) == [64 + 8 * j, 8 + y]
                assert lay.offsets[physical] == base + physical * 16
        assert set(lay.kinds) == {"data"}


def test_kinds_padding_and_oob():
    # A 32-byte row under 128B swizzle: each 128-byte line holds 2 data chunks and 6 of padding (H2).
    m = tmakit.TensorMap.tiled(data_type="float32", dims=[8, 4], strides=[32], box=[8, 8], swizzle="128b")
    lay = m.layout([0, 0])
    assert list(lay.kinds).count("padding") == 8 * 6
    assert (lay.chunks[lay.kinds == "padding"] == tmakit.NO_DATA).all()
    assert list(lay.kinds).count("oob") == 4 * 2  # rows 4..7 are past dims[1]
    assert lay._repr_svg_().startswith("<svg") or "<svg" in lay._repr_svg_()[:200]
    assert "line" in repr(lay)


def test_save(tmp_path, bf16_map):
    lay = bf16_map.layout()
    for name, text in (("a.svg", lay.svg()), ("a.txt", lay.text()), ("a.json", lay._json_text)):
        lay.save(tmp_path / name)
        assert (tmp_path / name).read_text() == text
    lay.save(tmp_path / "picture", format="json")
    assert json.loads((tmp_path / "picture").read_text())["format"] == "tmakit-layout/1"
    with pytest.raises(tmakit.InputError, match="format"):
        lay.save(tmp_path / "a.png")
    with pytest.raises(FileNotFoundError):
        lay.save(tmp_path / "no/such/folder/a.svg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "a.svg", "a.txt", "picture"]


def test_layout_errors(bf16_map):
    with pytest.raises(tmakit.MapError):
        tmakit.TensorMap.tiled(data_type="float32", dims=[64], box=[512]).layout()
    with pytest.raises(tmakit.InputError) as e:  # 8 bytes of inner coordinate: a bad argument, named
        bf16_map.layout([4, 0])
    assert e.value.where == "coords" and e.value.rule == "coord.inner-align"
    with pytest.raises(tmakit.ModelError, match="128"):
        bf16_map.layout([0, 0], smem_offset=64)  # H15
    with pytest.raises(tmakit.InputError, match="max_lines"):
        bf16_map.layout(max_lines=0)
    with pytest.raises(TypeError, match="coords"):
        bf16_map.layout(coords="0,0")
