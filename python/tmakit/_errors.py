"""Exceptions and findings of the tmakit package, and the one place that turns
the C++ core's exceptions (tmakit._core.InputError / ProgramError, args
(severity, rule, message, where)) into them."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, TypeVar

from . import _core

__all__ = ["Finding", "TmakitError", "InputError", "MapError", "ModelError", "ModelWarning"]


@dataclass(frozen=True)
class Finding:
    """One diagnostic: a broken rule (docs/tensor-maps.md, docs/diagnostics.md)."""

    severity: str  # "error", "warning" or "note"
    rule: str  # stable id, e.g. "map.box-dim-range"
    message: str  # names the values
    field: str  # the place: "box[0]", "program[3] (cta 0)", "kernel.ptx:4:7"

    def __str__(self) -> str:
        # The format of the CLI and of every tmakit message: "WHERE: error: MESSAGE [RULE]".
        where = f"{self.field}: " if self.field else ""
        rule = f" [{self.rule}]" if self.rule else ""
        return f"{where}{self.severity}: {self.message}{rule}"


class TmakitError(Exception):
    """Base of every error tmakit raises on purpose."""


class InputError(TmakitError, ValueError):
    """Unusable input: a malformed scenario or map, an unknown name, a wrong size.

    `rule` is the diagnostic id, `where` the argument or field it is about."""

    def __init__(self, message: str, rule: str = "python.input", where: str = ""):
        self.rule, self.where, self.message = rule, where, message
        super().__init__(str(Finding("error", rule, message, where)))


class MapError(TmakitError, ValueError):
    """A tensor map that breaks rules: `findings` holds every one (errors and warnings)."""

    def __init__(self, findings: Sequence[Finding], target: str):
        self.findings = list(findings)
        self.target = target
        errors = [f for f in self.findings if f.severity == "error"]
        lines = "\n".join(f"  {f}" for f in errors)
        super().__init__(f"the tensor map is invalid for {target} ({len(errors)} error"
                         f"{'' if len(errors) == 1 else 's'}):\n{lines}")


class ModelError(TmakitError, RuntimeError):
    """The model stopped at a diagnosed error of the program (undefined behaviour,
    a fault, a deadlock, a wrong byte count): rule id, step and message."""

    def __init__(self, finding: Finding):
        self.finding = finding
        self.rule, self.message, self.where = finding.rule, finding.message, finding.field
        m = re.match(r"program\[(\d+)\]", finding.field)
        self.step: Optional[int] = int(m.group(1)) if m else None
        super().__init__(str(finding))


class ModelWarning(UserWarning):
    """A warning of the model (a run that completed but did something suspect)."""


def finding_of(args: Sequence[Any]) -> Finding:
    severity, rule, message, where = (list(args) + ["", "", "", ""])[:4]
    return Finding(str(severity), str(rule), str(message), str(where))


F = TypeVar("F", bound=Callable[..., Any])


def translated(program_error: type = ModelError) -> Callable[[F], F]:
    """Calls into _core raise InputError for unusable input and `program_error`
    (ModelError by default) for a diagnosed error of the map or program."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def call(*a: Any, **k: Any) -> Any:
            try:
                return fn(*a, **k)
            except _core.InputError as e:
                f = finding_of(e.args)
                raise InputError(f.message, f.rule, f.field) from None
            except _core.ProgramError as e:
                raise program_error(finding_of(e.args)) from None

        return call  # type: ignore[return-value]

    return wrap
