"""docs/python.md shows a real run: each ```python cell, run in order in one namespace from the
repository root, must print exactly the ```text cell that follows it."""
from __future__ import annotations

import contextlib
import io
import os
import re

from conftest import ROOT

CELL = re.compile(r"```python\n(.*?)```\n\n```text\n(.*?)```", re.S)


def test_worked_example_output_is_real():
    cells = CELL.findall((ROOT / "docs/python.md").read_text())
    assert len(cells) >= 6
    namespace: dict = {}
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        for code, want in cells:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, "docs/python.md", "exec"), namespace)
            assert out.getvalue() == want, code
    finally:
        os.chdir(here)
