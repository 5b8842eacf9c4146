"""tmakit.explain(rule): what a rule id in any tmakit message means, as `tmakit explain RULE`
prints it: the rule, its source, what the H100 showed (with the recorded vectors) and the fix,
all from tmakit's own docs."""
from __future__ import annotations

from typing import List

from . import _core
from ._errors import InputError


def explain(rule: str) -> str:
    """The explanation of `rule` ("map.box-inner-bytes", or "[map.box-inner-bytes]" as a message
    prints it). Raises InputError for an id no doc names (explain_rules() lists them)."""
    if not isinstance(rule, str):
        raise TypeError(f"rule must be a str, got {type(rule).__name__}")
    rid = rule.strip()
    if rid.startswith("[") and rid.endswith("]"):
        rid = rid[1:-1]
    text = _core.explain(rid)
    if text is None:
        raise InputError(f"no rule '{rid}' in tmakit's docs (tmakit.explain_rules() lists every rule id)",
                         "python.input", "rule")
    return text


def explain_rules() -> List[str]:
    """Every rule id that explain() knows, sorted."""
    return list(_core.explain_rules())
