"""What a record may hold: the checks on ids and metadata every write path shares.

The store, the adapters and the explorer's scenarios all accept records through these two
functions, so what a metadata value may be (and how it is normalised) is decided here once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError

__all__ = ["check_id", "check_metadata"]


def check_id(value: object, name: str = "id") -> str:
    if not isinstance(value, str):
        raise PlaceboragTypeError(f"{name}={value!r} must be a str, not {type(value).__name__}")
    if not value:
        raise PlaceboragValueError(f"{name}='' must be a non-empty str")
    return value


_SCALARS = frozenset({str, int, bool})


def check_metadata(value: object, name: str = "metadata") -> dict[str, Any] | None:
    if value is None:
        return None
    if type(value) is dict and all(
        type(k) is str and k and k[0] != "$" and type(v) in _SCALARS for k, v in value.items()
    ):
        return dict(value)  # the common case, checked in one pass; floats take the long way
    if not isinstance(value, Mapping):
        raise PlaceboragTypeError(
            f"{name}={value!r} must be a dict or None, not {type(value).__name__}"
        )
    out: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key or key.startswith("$"):
            raise PlaceboragValueError(
                f"{name} key {key!r} must be a non-empty str not starting with '$'"
            )
        if not isinstance(item, (str, int, float, bool)):
            raise PlaceboragTypeError(
                f"{name}[{key!r}]={item!r} must be a str, int, float or bool, "
                f"not {type(item).__name__}"
            )
        if isinstance(item, float) and not math.isfinite(item):
            raise PlaceboragValueError(f"{name}[{key!r}]={item!r} must be finite")
        out[key] = item
    return out
