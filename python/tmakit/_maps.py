"""tmakit.TensorMap: the arguments of the driver's encode calls, by the scenario
format's names, with the C++ validator, the derived sizes and the pictures."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from . import _core, _values
from ._errors import Finding, MapError, translated

__all__ = ["TensorMap"]


class TensorMap:
    """A tensor map (docs/tensor-maps.md). Sizes are elements and every per-dimension
    list is in the map's order: dimension 0 is the innermost (fastest) one, as the
    driver, PTX and the scenario format have it. `strides` are bytes, for dims 1..rank-1."""

    __slots__ = ("_json", "_facts")

    @translated()
    def __init__(self, spec: Dict[str, Any]):
        """From a dict in the scenario format's `tensor_maps` form (with "global_address"
        standalone). Malformed input raises InputError naming the field."""
        if not isinstance(spec, dict):
            raise TypeError(f"spec must be a dict in the scenario format's tensor_maps form, got {type(spec).__name__}")
        try:
            text = json.dumps(spec)
        except (TypeError, ValueError) as e:
            raise TypeError(f"spec: {e}") from None
        self._json: str = _core.map_canonical(text, "map")
        self._facts: Dict[str, int] = _core.map_facts(self._json)

    # -- constructors ------------------------------------------------------------------
    @classmethod
    def tiled(cls, *, data_type: Any, dims: Sequence[int], box: Sequence[int], strides: Optional[Sequence[int]] = None,
              element_strides: Optional[Sequence[int]] = None, interleave: Any = "none", swizzle: Any = "none",
              l2_promotion: Any = "none", oob_fill: Any = "none", global_address: int = 0) -> "TensorMap":
        """cuTensorMapEncodeTiled's arguments."""
        spec = cls._common("tiled", data_type, dims, strides, element_strides, interleave, swizzle, l2_promotion,
                           oob_fill, global_address)
        spec["box"] = _values.integers(box, "box")
        return cls(spec)

    @classmethod
    def im2col(cls, *, data_type: Any, dims: Sequence[int], strides: Sequence[int], pixel_box_lower: Sequence[int],
               pixel_box_upper: Sequence[int], channels_per_pixel: int, pixels_per_column: int,
               element_strides: Optional[Sequence[int]] = None, interleave: Any = "none", swizzle: Any = "none",
               l2_promotion: Any = "none", oob_fill: Any = "none", global_address: int = 0) -> "TensorMap":
        """cuTensorMapEncodeIm2col's arguments (pixel_box_* entry 0 applies to W, then H, then D)."""
        spec = cls._common("im2col", data_type, dims, strides, element_strides, interleave, swizzle, l2_promotion,
                           oob_fill, global_address)
        spec.update(pixel_box_lower=_values.integers(pixel_box_lower, "pixel_box_lower"),
                    pixel_box_upper=_values.integers(pixel_box_upper, "pixel_box_upper"),
                    channels_per_pixel=_values.integer(channels_per_pixel, "channels_per_pixel"),
                    pixels_per_column=_values.integer(pixels_per_column, "pixels_per_column"))
        return cls(spec)

    @classmethod
    def im2col_wide(cls, *, data_type: Any, dims: Sequence[int], strides: Sequence[int], pixel_box_lower_w: int,
                    pixel_box_upper_w: int, channels_per_pixel: int, pixels_per_column: int, mode: str = "w",
                    element_strides: Optional[Sequence[int]] = None, interleave: Any = "none", swizzle: Any = "none",
                    l2_promotion: Any = "none", oob_fill: Any = "none", global_address: int = 0) -> "TensorMap":
        """cuTensorMapEncodeIm2colWide's arguments (sm_100+); mode "w" or "w128"."""
        spec = cls._common("im2col_wide", data_type, dims, strides, element_strides, interleave, swizzle,
                           l2_promotion, oob_fill, global_address)
        spec.update(pixel_box_lower_w=_values.integer(pixel_box_lower_w, "pixel_box_lower_w"),
                    pixel_box_upper_w=_values.integer(pixel_box_upper_w, "pixel_box_upper_w"),
                    channels_per_pixel=_values.integer(channels_per_pixel, "channels_per_pixel"),
                    pixels_per_column=_values.integer(pixels_per_column, "pixels_per_column"),
                    mode=_values.choice(mode, "mode", ["w", "w128"]))
        return cls(spec)

    @classmethod
    def from_json(cls, value: Any) -> "TensorMap":
        """From JSON text or a dict (what to_json() gives, or a scenario's tensor_maps entry
        without "global")."""
        if isinstance(value, (str, bytes)):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as e:
                from ._errors import InputError
                raise InputError(f"not valid JSON: {e}", "python.json", "value") from None
        return cls(value)

    @staticmethod
    def from_tensor(tensor: Any, box: Sequence[int], **options: Any) -> "TensorMap":
        """tmakit.from_tensor: a tiled map over a torch tensor, a NumPy array or a DLPack object."""
        from ._tensors import from_tensor
        return from_tensor(tensor, box, **options)

    @staticmethod
    def _common(encode: str, data_type: Any, dims: Any, strides: Any, element_strides: Any, interleave: Any,
                swizzle: Any, l2_promotion: Any, oob_fill: Any, global_address: Any) -> Dict[str, Any]:
        spec: Dict[str, Any] = {
            "encode": encode, "data_type": _values.data_type(data_type), "dims": _values.integers(dims, "dims"),
            "interleave": _values.choice(interleave, "interleave", _values.INTERLEAVES),
            "swizzle": _values.choice(swizzle, "swizzle", _values.SWIZZLES),
            "l2_promotion": _values.choice(l2_promotion, "l2_promotion", _values.L2_PROMOTIONS),
            "oob_fill": _values.choice(oob_fill, "oob_fill", _values.OOB_FILLS),
            "global_address": _values.integer(global_address, "global_address"),
        }
        if strides is not None:
            spec["strides"] = _values.integers(strides, "strides")
        if element_strides is not None:
            spec["element_strides"] = _values.integers(element_strides, "element_strides")
        return spec

    # -- rules ---------------------------------------------------------------------------
    @translated()
    def validate(self, target: str = "sm_90a") -> List[Finding]:
        """Every rule the map breaks for `target` (errors and warnings), as `tmakit map` prints them."""
        return [Finding(*t) for t in _core.map_validate(self._json, str(target))]

    def check(self, target: str = "sm_90a") -> "TensorMap":
        """Raises MapError carrying every finding when any is an error; returns the map."""
        findings = self.validate(target)
        if any(f.severity == "error" for f in findings):
            raise MapError(findings, str(target))
        return self

    @translated()
    def check_coordinates(self, coords: Sequence[int], direction: str = "load", target: str = "sm_90a") -> List[Finding]:
        """The instruction-time rules of one coordinate vector."""
        c = _values.integers(coords, "coords")
        return [Finding(*t) for t in _core.map_check_coordinates(self._json, c, str(direction), str(target))]

    # -- derived sizes -------------------------------------------------------------------
    @property
    def box_bytes(self) -> int:
        """Bytes one load delivers: the mbarrier transaction count (expect_tx) of one load."""
        return self._facts["bytes_per_box"]

    @property
    def smem_footprint(self) -> int:
        """Shared-memory bytes the box occupies (rows × pitch, swizzle padding included)."""
        return self._facts["smem_footprint"]

    @property
    def smem_alignment(self) -> int:
        """Minimum alignment of the shared-memory operand (128 bytes: the H100 faults below it)."""
        return self._facts["smem_alignment"]

    @property
    def swizzle_period(self) -> int:
        """Alignment at which the swizzle pattern starts at phase 0 (256/512/1024; 128 without swizzle)."""
        return self._facts["swizzle_period"]

    @property
    def row_bytes(self) -> int:
        return self._facts["row_bytes"]

    @property
    def row_pitch(self) -> int:
        return self._facts["row_pitch"]

    @property
    def rows(self) -> int:
        return self._facts["rows"]

    # -- fields --------------------------------------------------------------------------
    def to_json(self) -> Dict[str, Any]:
        """The map in the scenario format's tensor_maps form (every field, defaults filled in)."""
        return json.loads(self._json)

    def __getattr__(self, name: str) -> Any:
        # encode, data_type, rank, dims, strides, box, swizzle, ... as to_json() names them.
        if name.startswith("_"):
            raise AttributeError(name)
        j = json.loads(self._json)
        if name == "rank":
            return len(j["dims"])
        if name in j:
            return j[name]
        raise AttributeError(f"TensorMap has no field {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorMap) and json.loads(self._json) == json.loads(other._json)

    def __hash__(self) -> int:
        return hash(self._json)

    def __repr__(self) -> str:
        return f"TensorMap({self._json})"

    def layout(self, coords: Optional[Sequence[int]] = None, smem_offset: int = 0, *, target: str = "sm_90a",
               max_lines: int = 64, offsets: Sequence[int] = (), w_halo: int = 0, w_offset: int = 0) -> "Layout":
        """Where a load of the box at `coords` (dimension 0 first; default all 0) into shared
        memory at `smem_offset` puts every 16-byte chunk (as `tmakit layout`)."""
        from ._layout import layout
        return layout(self, coords, smem_offset, target=target, max_lines=max_lines, offsets=offsets,
                      w_halo=w_halo, w_offset=w_offset)


from ._layout import Layout  # noqa: E402  (the annotation above)
