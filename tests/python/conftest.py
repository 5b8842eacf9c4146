"""Fixtures of the Python tests: the repository, and the tmakit CLI the package was built
with (round trips: the same input through tmakit and through the CLI must agree)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import List

import pytest

import tmakit
from tmakit import _cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli() -> str:
    """The packaged CLI (built in the same CMake build as the module); TMAKIT_CLI overrides it."""
    exe = os.environ.get("TMAKIT_CLI") or _cli.binary()
    assert os.access(exe, os.X_OK), f"no tmakit CLI at {exe}: the package installs one"
    return exe


def run_cli(cli: str, args: List[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([cli, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def write_json(path: Path, value) -> Path:
    path.write_text(json.dumps(value))
    return path


@pytest.fixture
def bf16_map() -> tmakit.TensorMap:
    """The spec's worked example §3.5: 128B swizzle, bf16, box {64, 8}."""
    return tmakit.TensorMap.tiled(data_type="bfloat16", dims=[256, 64], strides=[512], box=[64, 8], swizzle="128b")
