"""Checks of Python arguments before they become the scenario format's JSON:
wrong types raise TypeError naming the argument; names are the format's
spellings (docs/scenario-format.md in the tmakit repository)."""
from __future__ import annotations

import numbers
from typing import Any, List, Optional, Sequence

from ._errors import InputError

DATA_TYPES = ("uint8 uint16 uint32 int32 uint64 int64 float16 float32 float64 bfloat16 float32_ftz tfloat32 "
              "tfloat32_ftz 16u4_align8b 16u4_align16b 16u6_align16b").split()
SWIZZLES = "none 32b 64b 128b 128b_atom_32b 128b_atom_32b_flip_8b 128b_atom_64b".split()
INTERLEAVES = "none 16b 32b".split()
L2_PROMOTIONS = "none 64b 128b 256b".split()
OOB_FILLS = "none nan_request_zero_fma".split()


def integer(value: Any, name: str) -> int:
    # bool is an int in Python, never a size or a coordinate.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


def integers(values: Any, name: str, length: Optional[int] = None) -> List[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) and not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of integers, got {type(values).__name__} {values!r}")
    out = [integer(v, f"{name}[{i}]") for i, v in enumerate(values)]
    if length is not None and len(out) != length:
        raise InputError(f"expected {length} entries, got {len(out)}", "python.length", name)
    return out


def choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """A name of the format; swizzles, interleaves and L2 promotions also take their byte count (128 → "128b")."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = "none" if value == 0 else f"{int(value)}b"
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string (one of {' '.join(choices)}), got {type(value).__name__} {value!r}")
    v = value.lower()
    if v == "zero" and "nan_request_zero_fma" in choices:
        v = "none"  # the driver's FLOAT_OOB_FILL_NONE fills zeros
    if v not in choices:
        raise InputError(f"unknown value \"{value}\"; expected one of: {' '.join(choices)}", "python.enum", name)
    return v


def data_type(value: Any, name: str = "data_type") -> str:
    """A data-type name, or a NumPy / PyTorch dtype naming one (numpy.float16, torch.bfloat16, ...)."""
    if isinstance(value, str):
        return choice(value, name, DATA_TYPES)
    text = str(getattr(value, "name", None) or value)  # numpy.dtype('float16').name, str(torch.bfloat16)
    if isinstance(value, type):
        text = value.__name__  # numpy.float16
    text = text.removeprefix("torch.")
    if text in DATA_TYPES:
        return text
    raise InputError(f"{value!r} is not a data type of a tensor map; expected one of: {' '.join(DATA_TYPES)}"
                     " (int8 and int16 have none: view the data as uint8 or uint16)", "python.dtype", name)
