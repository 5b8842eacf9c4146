"""tmakit.run and the simulate_* helpers: against `tmakit run` on the same scenario,
against the independent NumPy reference (reference.py), and the model's diagnostics."""
from __future__ import annotations

import json
import random
import threading
import time

import numpy as np
import pytest

import reference
import tmakit
from conftest import run_cli, write_json

TYPES = {"uint8": np.uint8, "float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32,
         "float64": np.uint64}


def test_run_quickstart_as_the_cli(cli, root, tmp_path):
    scenario = root / "examples/quickstart/scenario.json"
    out = tmakit.run(scenario)
    r = run_cli(cli, ["run", str(scenario), "-o", str(tmp_path / "out")])
    assert r.returncode == 0, r.stderr
    assert out["tile"].tobytes() == (tmp_path / "out/tile.bin").read_bytes()
    assert out["tile"].dtype == np.uint8 and out["tile"].size == 1024
    # The same scenario as a dict, its input given as an array instead of {"random": 7}.
    s = json.loads(scenario.read_text())
    data = np.random.default_rng(1).integers(0, 256, 32768, dtype=np.uint8)
    s["global"]["A"]["init"] = {"byte": 0}
    via_inputs = tmakit.run(s, {"A": data})["tile"]
    (tmp_path / "A.bin").write_bytes(data.tobytes())
    s["global"]["A"]["init"] = {"file": "A.bin"}
    f = write_json(tmp_path / "s.json", s)
    assert tmakit.run(f)["tile"].tobytes() == via_inputs.tobytes()
    r = run_cli(cli, ["run", str(f), "-o", str(tmp_path / "out2")])
    assert (tmp_path / "out2/tile.bin").read_bytes() == via_inputs.tobytes()


def test_model_errors_as_the_cli(cli, root):
    scenario = root / "examples/deadlock/scenario.json"
    with pytest.raises(tmakit.ModelError) as e:
        tmakit.run(scenario)
    r = run_cli(cli, ["run", str(scenario)])
    assert r.returncode == 1
    assert r.stderr.strip() == f"{scenario}: {e.value}"
    assert e.value.rule and e.value.step is not None and e.value.message in str(e.value)


def test_run_bad_input(tmp_path):
    with pytest.raises(tmakit.InputError, match="not valid JSON"):
        (tmp_path / "x.json").write_text("{")
        tmakit.run(tmp_path / "x.json")
    with pytest.raises(tmakit.InputError, match="cannot read"):
        tmakit.run(tmp_path / "missing.json")
    with pytest.raises(tmakit.InputError) as e:
        tmakit.run({"format": "tmakit-scenario/2"})
    assert "format" in str(e.value)
    with pytest.raises(TypeError, match="scenario"):
        tmakit.run(42)
    s = {"format": "tmakit-scenario/1", "global": {"A": {"bytes": 64}}, "program": [],
         "outputs": [{"name": "A", "global": "A"}]}
    assert tmakit.run(s)["A"].tolist() == [0] * 64
    with pytest.raises(tmakit.InputError, match="64") as e:
        tmakit.run(s, {"A": np.zeros(10, np.uint8)})
    assert e.value.where == 'inputs["A"]'
    with pytest.raises(tmakit.InputError, match="not a global allocation"):
        tmakit.run(s, {"B": np.zeros(64, np.uint8)})


def random_case(rng: random.Random):
    """A valid random tiled map over a tensor, with coordinates partly out of bounds."""
    data_type = rng.choice(list(TYPES))
    k = np.dtype(TYPES[data_type]).itemsize
    mode = rng.choice(["none", "none", "32b", "64b", "128b"])
    rank = rng.randint(1, 3)
    span = reference.SPAN[mode] or 256
    box0 = rng.choice([b for b in (16, 32, 64, 128, 256) if b % (16 // min(k, 16)) == 0 and b * k % 16 == 0
                       and b * k <= span and b <= 256] or [16 // k])
    box = [box0] + [rng.randint(1, 6) for _ in range(rank - 1)]
    estr = [1] + [rng.randint(1, 3) for _ in range(rank - 1)]
    dims = [rng.randint(1, 3 * box0)] + [rng.randint(1, 12) for _ in range(rank - 1)]
    step = 16 // k
    coords = [rng.randrange(-box0, dims[0] + 8, step) // step * step] + [rng.randint(-4, d + 2) for d in dims[1:]]
    fill = "nan_request_zero_fma" if data_type != "uint8" and rng.random() < 0.3 else "none"
    base = rng.randrange(0, 8) * 128
    return data_type, TYPES[data_type], box, estr, dims, coords, mode, fill, base


def tensor_for(dims, dtype, rng: np.random.Generator, pad: int = 0):
    """A tensor of shape dims reversed; rows padded to a 16-byte multiple (+ pad elements) as a map needs."""
    k = np.dtype(dtype).itemsize
    inner = dims[0] + (-dims[0] * k % 16) // k + pad
    full = rng.integers(0, np.iinfo(dtype).max, size=tuple(reversed(dims[1:])) + (inner,), dtype=dtype,
                        endpoint=True)
    return full[..., :dims[0]]


@pytest.mark.parametrize("seed", range(40))
def test_simulate_load_against_numpy_reference(seed):
    rng = random.Random(seed)
    data_type, dtype, box, estr, dims, coords, mode, fill, base = random_case(rng)
    t = tensor_for(dims, dtype, np.random.default_rng(seed), pad=rng.choice([0, 16]))
    m = tmakit.from_tensor(t, box=box, element_strides=estr, swizzle=mode, oob_fill=fill, data_type=data_type)
    got = tmakit.simulate_load(m, t, coords, smem_offset=base)
    want = reference.load(t, box, estr, coords, mode, base, nan_fill=fill != "none")
    assert got.size == m.smem_footprint
    assert got.tobytes() == want.tobytes(), (data_type, box, estr, dims, coords, mode, fill, base)


def test_simulate_load_worked_example_128b(bf16_map):
    # §3.5: element (x, y) of the box lands at y·128 + ((x>>3 ^ y) << 4) + (2x & 15) from a 1024-aligned D.
    t = np.arange(64 * 256, dtype=np.uint32).astype(np.uint16).reshape(64, 256)
    got = tmakit.simulate_load(bf16_map, t, [64, 8]).view(np.uint16)
    for y in range(8):
        for x in range(64):
            assert got[(y * 128 + (((x >> 3) ^ y) << 4) + (2 * x & 15)) // 2] == t[8 + y, 64 + x]
    # D ≡ 128 (mod 1024): chunk j goes to j ^ ((y + 1) & 7).
    got = tmakit.simulate_load(bf16_map, t, [64, 8], smem_offset=128).view(np.uint16)
    assert all(got[(y * 128 + (((x >> 3) ^ ((y + 1) & 7)) << 4) + (2 * x & 15)) // 2] == t[8 + y, 64 + x]
               for y in range(8) for x in range(64))


def test_simulate_load_as_a_scenario_through_the_cli(cli, tmp_path):
    # The same load written by hand as a scenario file, its tensor an init file, run by `tmakit run`.
    rng = np.random.default_rng(5)
    t = rng.integers(0, 2**16, size=(40, 96), dtype=np.uint16)
    m = tmakit.from_tensor(t, box=[32, 8], swizzle="64b", data_type="float16")
    got = tmakit.simulate_load(m, t, [-16, 36], smem_offset=384)
    (tmp_path / "T.bin").write_bytes(t.tobytes())
    spec = {k: v for k, v in m.to_json().items() if k != "global_address"}
    s = {"format": "tmakit-scenario/1", "global": {"T": {"bytes": t.nbytes, "init": {"file": "T.bin"}}},
         "tensor_maps": {"m": {**spec, "global": "T"}},
         "symbols": {"d": "shared:384", "b": "shared:8192"},
         "program": ["mbarrier.init.shared::cta.b64 [b], 1;",
                     "mbarrier.arrive.expect_tx.shared::cta.b64 _, [b], 512;",
                     "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes.tile [d], [m, {-16, 36}], [b];",
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [b], 0;"],
         "outputs": [{"name": "box", "shared": {"cta": 0, "offset": 384, "bytes": 512}}]}
    r = run_cli(cli, ["run", str(write_json(tmp_path / "s.json", s)), "-o", str(tmp_path / "out")])
    assert r.returncode == 0, r.stderr
    assert got.tobytes() == (tmp_path / "out/box.bin").read_bytes()


def test_simulate_load_errors(bf16_map):
    t = np.zeros((64, 256), np.uint16)
    with pytest.raises(tmakit.ModelError) as e:  # H9: 8 bytes is not a multiple of 16
        tmakit.simulate_load(bf16_map, t, [4, 0])
    assert e.value.rule and e.value.step is not None
    with pytest.raises(tmakit.InputError, match="coords"):
        tmakit.simulate_load(bf16_map, t, [0])
    with pytest.raises(tmakit.MapError):
        tmakit.simulate_load(tmakit.TensorMap.tiled(data_type="float32", dims=[64], box=[512]), np.zeros(64, np.float32), [0])
    with pytest.raises(tmakit.InputError) as e:  # a tensor smaller than its map: a shape error, not a fault
        tmakit.simulate_load(bf16_map, np.zeros((8, 256), np.uint16), [0, 16])
    assert e.value.rule == "python.tensor-size"
    with pytest.raises(tmakit.ModelError, match="128"):  # H15
        tmakit.simulate_load(bf16_map, t, [0, 0], smem_offset=64)
    with pytest.raises(tmakit.InputError, match="smem_offset"):
        tmakit.simulate_load(bf16_map, t, [0, 0], smem_offset=8)
    im2col = tmakit.TensorMap.im2col(data_type="float16", dims=[64, 14, 14, 2], strides=[128, 1792, 25088],
                                     pixel_box_lower=[-1, -1], pixel_box_upper=[1, 1], channels_per_pixel=64,
                                     pixels_per_column=16)
    with pytest.raises(tmakit.InputError, match="tmakit.run"):
        tmakit.simulate_load(im2col, np.zeros((2, 14, 14, 64), np.uint16), [0, 0, 0, 0])


@pytest.mark.parametrize("seed", range(12))
def test_simulate_store_against_numpy_reference(seed):
    rng = random.Random(100 + seed)
    data_type, dtype, box, estr, dims, coords, mode, _, base = random_case(rng)
    k = np.dtype(dtype).itemsize
    dims[0] += -dims[0] * k % 16 // k  # H6: a store writes whole 16-byte chunks; keep rows whole chunks
    coords = [max(c, 0) for c in coords]  # H14: stores start at non-negative coordinates
    coords[0] = coords[0] // (16 // k) * (16 // k)
    t = tensor_for(dims, dtype, np.random.default_rng(seed))
    m = tmakit.from_tensor(t, box=box, element_strides=estr, swizzle=mode, data_type=data_type)
    smem = np.random.default_rng(seed + 1).integers(0, 256, m.smem_footprint, dtype=np.uint8)
    got = tmakit.simulate_store(m, t, smem, coords, smem_offset=base)
    want = reference.store(t, smem, box, estr, coords, mode, base)
    assert got.shape == t.shape and np.array_equal(got, want)


@pytest.mark.parametrize("op, dtype, data_type, combine", [
    ("add", np.uint32, "uint32", lambda a, b: (int(a) + int(b)) & 0xFFFFFFFF),
    ("max", np.uint32, "int32", lambda a, b: np.uint32(max(np.int32(a.view(np.int32)), np.int32(b.view(np.int32))))),
    ("add", np.uint32, "float32",
     lambda a, b: (np.uint32(a).view(np.float32) + np.uint32(b).view(np.float32)).view(np.uint32)),
])
def test_simulate_reduce_against_numpy_reference(op, dtype, data_type, combine):
    rng = np.random.default_rng(3)
    if data_type == "float32":
        t = rng.standard_normal((12, 64)).astype(np.float32).view(np.uint32)
        smem_values = rng.standard_normal(16 * 8).astype(np.float32).view(np.uint8)
    else:
        t = rng.integers(0, 2**32, size=(12, 64), dtype=np.uint32)
        smem_values = rng.integers(0, 256, 16 * 8 * 4, dtype=np.uint8)
    m = tmakit.from_tensor(t, box=[16, 8], swizzle="64b", data_type=data_type)
    got = tmakit.simulate_reduce(m, t, smem_values, [48, 6], op)
    want = reference.store(t, smem_values, [16, 8], [1, 1], [48, 6], "64b", combine=combine)
    assert np.array_equal(got, want)
    with pytest.raises(tmakit.InputError, match="op"):
        tmakit.simulate_reduce(m, t, smem_values, [48, 6], "mul")
    with pytest.raises(tmakit.InputError, match="smem"):
        tmakit.simulate_reduce(m, t, smem_values[:10], [48, 6], op)


def test_the_gil_is_released_during_a_model_run():
    # A box of 192 KiB loaded many times; while the model runs, this thread must keep counting.
    t = np.zeros((256, 256), np.uint32)
    m = tmakit.from_tensor(t, box=[64, 256], swizzle="none")
    s = {"format": "tmakit-scenario/1", "global": {"T": {"bytes": t.nbytes}},
         "tensor_maps": {"m": {**{k: v for k, v in m.to_json().items() if k != "global_address"}, "global": "T"}},
         "symbols": {"d": "shared:0", "b": "shared:65536"},
         "program": ["mbarrier.init.shared::cta.b64 [b], 1;"] + [
             f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [b], {m.box_bytes};",
             "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes.tile [d], [m, {0, 0}], [b];",
             "mbarrier.try_wait.parity.shared::cta.b64 p, [b], 0;",
             f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [b], {m.box_bytes};",
             "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes.tile [d], [m, {0, 0}], [b];",
             "mbarrier.try_wait.parity.shared::cta.b64 p, [b], 1;"] * 800,
         "outputs": []}
    # This thread's counting rate alone, then while the model runs in another thread: with the GIL
    # released it keeps a good part of its rate even on a loaded machine; held, it would stall for
    # the whole run (~0.12 s; it could count only in the 5 ms switch interval before the run enters
    # C++, under 0.05 of its rate).
    stop = time.perf_counter() + 0.05
    alone = 0
    while time.perf_counter() < stop:
        alone += 1
    inside, done = threading.Event(), threading.Event()

    def model():
        inside.set()
        tmakit.run(s)
        done.set()

    worker = threading.Thread(target=model)
    n, start = 0, time.perf_counter()
    worker.start()
    inside.wait()
    while not done.is_set():
        n += 1
        time.perf_counter()  # the same work per iteration as the solo loop
    seconds = time.perf_counter() - start
    worker.join()
    assert seconds > 0.03, "the run was too short to tell"
    assert n / seconds > 0.1 * alone / 0.05, f"{n} iterations in {seconds:.3f} s against {alone} in 0.05 s alone"
