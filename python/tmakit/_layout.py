"""Pictures of a tensor load: Layout, which Jupyter shows as SVG (`tmakit layout`)."""
from __future__ import annotations

import json
import os
import tempfile
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence

import numpy as np

from . import _core, _values
from ._errors import InputError, ModelError, translated

if TYPE_CHECKING:
    from ._maps import TensorMap

__all__ = ["Layout", "NO_DATA"]

# Coordinates of a chunk that holds no tensor data (padding, or past the box's end).
NO_DATA = np.iinfo(np.int64).min


class Layout:
    """Where every 16-byte chunk of a box lands in shared memory.

    `chunks`: int64 array (n, rank), the tensor coordinates (dimension 0 first) of the first
    element of each chunk in physical order from the box's offset; NO_DATA rows for padding
    and unused chunks. `kinds`, `offsets`: each chunk's kind (data, partial, oob, padding,
    unused) and physical shared offset. `json`: the whole `tmakit layout --format json` document."""

    def __init__(self, svg: str, text: str, json_text: str):
        self._svg, self._text, self._json_text = svg, text, json_text
        self.json: Dict[str, Any] = json.loads(json_text)
        rank = len(self.json["map"]["dims"])
        chunks = self.json["chunks"]
        self.chunks = np.full((len(chunks), rank), NO_DATA, dtype=np.int64)
        for i, c in enumerate(chunks):
            if "first" in c:
                self.chunks[i] = c["first"]
        self.kinds = np.array([c["kind"] for c in chunks], dtype=object)
        self.offsets = np.array([c["offset"] for c in chunks], dtype=np.int64)

    def _repr_svg_(self) -> str:
        return self._svg

    def svg(self) -> str:
        return self._svg

    def text(self) -> str:
        return self._text

    def save(self, path: "os.PathLike[str] | str", format: Optional[str] = None) -> None:
        """Writes SVG, text or JSON (by `format`, else the suffix: .svg, .txt, .json), all or nothing."""
        path = os.fspath(path)
        fmt = format or {".svg": "svg", ".txt": "text", ".json": "json"}.get(os.path.splitext(path)[1].lower())
        if fmt not in ("svg", "text", "json"):
            raise InputError(f"cannot tell the format of \"{path}\": give format='svg', 'text' or 'json' or use a "
                             ".svg, .txt or .json name", "python.format", "path")
        data = {"svg": self._svg, "text": self._text, "json": self._json_text}[fmt]
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".tmakit-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def __repr__(self) -> str:
        return f"<tmakit.Layout {self.json['lines_shown']} of {self.json['lines_total']} lines>"


@translated(ModelError)
def layout(m: "TensorMap", coords: Optional[Sequence[int]], smem_offset: int, *, target: str, max_lines: int,
           offsets: Sequence[int], w_halo: int, w_offset: int) -> Layout:
    # As `tmakit layout` (layout_command.cpp's place): map rules, then the coordinates, then the picture.
    m.check(target)
    rank = m.rank
    c = [0] * max(1, min(rank, 5)) if coords is None else _values.integers(coords, "coords")
    off = _values.integer(smem_offset, "smem_offset")
    if off < 0 or off >= 2**32:
        raise InputError(f"{off} is not a 32-bit shared-memory offset", "python.smem-offset", "smem_offset")
    lines = _values.integer(max_lines, "max_lines")
    if not 1 <= lines <= 4096:
        raise InputError(f"{lines} is outside 1..4096", "python.max-lines", "max_lines")
    for f in m.check_coordinates(c, "load", target):
        if f.severity == "error":
            raise InputError(f.message, f.rule, "coords")  # a bad argument, not a fault of the program
    svg, text, js = _core.layout_render(m._json, c, off, lines, _values.integers(offsets, "offsets"),
                                        _values.integer(w_halo, "w_halo"), _values.integer(w_offset, "w_offset"))
    return Layout(svg, text, js)


