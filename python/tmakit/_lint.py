"""tmakit.lint: `tmakit lint` on PTX text."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import _core
from ._errors import Finding, translated

__all__ = ["LintDiagnostic", "LintResult", "lint"]


def _place(where: str) -> Dict[str, Any]:
    # "file:line:col" → its parts, as `tmakit lint --format json` splits them (the file may hold ':').
    parts = where.rsplit(":", 2)
    if len(parts) < 3:
        return {"file": where}
    return {"file": parts[0], "line": _atoi(parts[1]), "column": _atoi(parts[2])}


def _atoi(text: str) -> int:
    digits = re.match(r"\s*[-+]?\d+", text)
    return int(digits.group(0)) if digits else 0


@dataclass(frozen=True)
class LintDiagnostic:
    severity: str
    rule: str
    message: str
    file: str
    line: Optional[int]
    column: Optional[int]
    notes: List[Finding] = field(default_factory=list)

    def __str__(self) -> str:
        where = self.file + (f":{self.line}:{self.column}" if self.line is not None else "")
        return "\n".join([str(Finding(self.severity, self.rule, self.message, where))] + [str(n) for n in self.notes])


@dataclass(frozen=True)
class LintResult:
    diagnostics: List[LintDiagnostic]
    instructions: int  # instructions of the table's families that were checked
    unusable: bool  # no target or PTX version to check against

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)

    def to_json(self, file: str) -> Dict[str, Any]:
        """One file's record of `tmakit lint --format json`."""
        diags = []
        for d in self.diagnostics:
            place = {"file": d.file} if d.line is None else {"file": d.file, "line": d.line, "column": d.column}
            j = {**place, "message": d.message, "severity": d.severity, "rule": d.rule,
                 "notes": [{**_place(n.field), "message": n.message} for n in d.notes]}
            diags.append(j)
        return {"file": file, "instructions": self.instructions, "errors": self.errors, "warnings": self.warnings,
                "unusable": self.unusable, "diagnostics": diags}


@translated()
def lint(ptx_text: "str | os.PathLike[str]", arch: Optional[str] = None, *, ptx_version: Optional[str] = None,
         file: str = "<ptx>") -> LintResult:
    """Lints a PTX module (docs/lint.md) against its own .target and .version, or `arch` /
    `ptx_version` instead. `ptx_text` is the module's text, or a path (a pathlib.Path, or a str of
    one line naming an existing file): then the file is read and named in the diagnostics.
    Diagnostics name file:line:col (file = `file`, or the path)."""
    if isinstance(ptx_text, os.PathLike) or (isinstance(ptx_text, str) and "\n" not in ptx_text
                                              and ";" not in ptx_text and os.path.isfile(ptx_text)):
        path = os.fspath(ptx_text)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                ptx_text = f.read()
        except OSError as e:
            from ._errors import InputError
            raise InputError(f"cannot read {path}: {e.strerror}", "python.ptx-file", "ptx_text") from None
        if file == "<ptx>":
            file = path
    if not isinstance(ptx_text, str):
        raise TypeError(f"ptx_text must be a str or a path, got {type(ptx_text).__name__}")
    raw, instructions, unusable = _core.lint(ptx_text, str(file), arch, ptx_version)
    out: List[LintDiagnostic] = []
    for severity, rule, message, where in raw:
        if severity == "note" and out:
            out[-1].notes.append(Finding(severity, rule, message, where))
            continue
        p = _place(where)
        out.append(LintDiagnostic(severity, rule, message, p["file"], p.get("line"), p.get("column")))
    return LintResult(out, instructions, unusable)
