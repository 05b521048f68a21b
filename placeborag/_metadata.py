"""What a record may hold: the checks on ids and metadata every write path shares.

The store, the adapters and the explorer's scenarios all accept records through these
functions, so what a metadata value may be (and how it is normalised) is decided here once.

A metadata value may be what the engines store: ``None``, a str, an int (any size), a finite
float, a bool, a ``datetime.datetime`` or ``datetime.date``, or a list, tuple or dict of those,
nested up to ``MAX_DEPTH`` levels (dict keys are str). numpy scalars become the Python number
they hold. The checks walk nested values with a stack, and the value kept is a deep copy: a
caller changing its own dict or list afterwards does not change the record.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
from collections.abc import Mapping
from typing import Any

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._threads import bulk
from placeborag._validation import check_column, shown

__all__ = [
    "MAX_DEPTH",
    "check_id",
    "check_metadata",
    "check_metadatas",
    "check_records",
    "copy_filter",
    "copy_metadata",
]

MAX_DEPTH = 64


def check_id(value: object, name: str = "id") -> str:
    if not isinstance(value, str):
        raise PlaceboragTypeError(
            f"{name}={shown(value)} must be a str, not {type(value).__name__}"
        )
    if not value:
        raise PlaceboragValueError(f"{name}='' must be a non-empty str")
    return value


# Immutable values kept as they are; a float needs its finiteness checked, so it is not here.
_SCALARS = frozenset({str, int, bool, type(None), _dt.datetime, _dt.date})
_IMMUTABLE = _SCALARS | {float}  # the value types a shallow copy keeps apart from the caller
_ALLOWED = "None, a str, int, finite float, bool, datetime, date, or a list or dict of those"


def check_metadata(value: object, name: str = "metadata") -> dict[str, Any] | None:
    """The metadata of one record, checked and deep-copied (None stays None)."""
    if value is None:
        return None
    if type(value) is dict:  # the common case, checked in one plain loop; floats take the long way
        for key, item in value.items():
            if type(key) is not str or not key or key[0] == "$" or type(item) not in _SCALARS:
                break
        else:
            return dict(value)
    if not isinstance(value, Mapping):
        raise PlaceboragTypeError(
            f"{name}={shown(value)} must be a dict or None, not {type(value).__name__}"
        )
    for key in value:
        if not isinstance(key, str) or not key or key.startswith("$"):
            raise PlaceboragValueError(
                f"{name} key {shown(key)} must be a non-empty str not starting with '$'"
            )
    return _checked_copy(value, name)


def check_metadatas(values: list[object], name: str = "metadatas") -> list[dict[str, Any] | None]:
    """:func:`check_metadata` of each of ``values`` (``name[i]`` in messages), with the common
    case checked column-wise: plain dicts of scalar values, their keys and value types each
    looked at once for the whole batch rather than once per record."""
    types = set(map(type, values))
    if types <= {dict, type(None)}:
        dicts: list[dict[str, Any]] = [v for v in values if type(v) is dict]
        keys = set(itertools.chain.from_iterable(dicts))
        leaves = list(itertools.chain.from_iterable(map(dict.values, dicts)))
        kinds = set(map(type, leaves))
        if (
            all(type(k) is str and k and k[0] != "$" for k in keys)
            and kinds <= _IMMUTABLE
            and (float not in kinds or all(math.isfinite(v) for v in leaves if type(v) is float))
        ):
            return [dict(v) if type(v) is dict else None for v in values]
    return [check_metadata(v, f"{name}[{i}]") for i, v in enumerate(values)]


def copy_metadata(value: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of checked metadata for a caller to keep: shallow when every value is immutable
    (the common case), deep when a list or dict is held (so the caller cannot change the
    record through it)."""
    if not value:
        return {}
    if _IMMUTABLE.issuperset(map(type, value.values())):  # one C-level pass, no generator
        return dict(value)
    copied: dict[str, Any] = copy_filter(dict(value))  # checked when written: copy only
    return copied


def _checked_copy(value: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Validate and deep-copy a metadata dict with an explicit stack (any depth up to MAX_DEPTH,
    no recursion)."""
    out: dict[str, Any] = {}
    # (source container, target container, path for messages, depth)
    stack: list[tuple[Any, Any, str, int]] = [(value, out, name, 0)]
    while stack:
        source, target, path, depth = stack.pop()
        items = source.items() if isinstance(source, Mapping) else enumerate(source)
        for key, item in items:
            where = f"{path}[{shown(key)}]"
            if depth and isinstance(source, Mapping) and not isinstance(key, str):
                raise PlaceboragTypeError(
                    f"{path} key {shown(key)} must be a str, not {type(key).__name__}"
                )
            item = _scalar(item, where)
            if isinstance(item, (Mapping, list, tuple)):
                if depth + 1 >= MAX_DEPTH:
                    raise PlaceboragValueError(
                        f"{where} is nested deeper than {MAX_DEPTH} levels; "
                        f"metadata may be {_ALLOWED}, up to {MAX_DEPTH} levels deep"
                    )
                if isinstance(item, Mapping):
                    copy: Any = {}
                    stack.append((item, copy, where, depth + 1))
                else:
                    copy = [None] * len(item)
                    stack.append((item, copy, where, depth + 1))
                    if isinstance(item, tuple):
                        # filled in place, then frozen once its items are in
                        copy = _TupleSlot(copy)
                _put(target, key, copy)
            else:
                _put(target, key, item)
    return _freeze_tuples(out)


class _TupleSlot:
    """A list being filled that becomes a tuple when the copy is done."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = items


def _put(target: Any, key: Any, item: Any) -> None:
    target[key] = item


def _freeze_tuples(root: dict[str, Any]) -> dict[str, Any]:
    """Replace every _TupleSlot by the tuple of its items, innermost first (a stack again)."""
    order: list[tuple[Any, Any]] = []  # (container, key) of every slot, parents before children
    stack: list[Any] = [root]
    while stack:
        container = stack.pop()
        items = container.items() if isinstance(container, dict) else enumerate(container)
        for key, item in items:
            if isinstance(item, _TupleSlot):
                order.append((container, key))
                stack.append(item.items)
            elif isinstance(item, (dict, list)):
                stack.append(item)
    for container, key in reversed(order):
        container[key] = tuple(container[key].items)
    return root


def _scalar(item: Any, where: str) -> Any:
    """A leaf value as kept (numpy scalars as Python numbers), or a container to walk."""
    t = type(item)
    if t in _SCALARS or isinstance(item, (Mapping, list, tuple)):
        return item
    if isinstance(item, (bool, str, _dt.date)):
        return item
    if isinstance(item, int):
        return int(item)
    if isinstance(item, float):
        if not math.isfinite(item):
            raise PlaceboragValueError(f"{where}={shown(item)} must be finite")
        return float(item)
    # numpy scalars, without importing numpy here
    kind = getattr(getattr(item, "dtype", None), "kind", None)
    if kind is not None and getattr(item, "ndim", 0) != 0:  # an array, not a scalar
        raise PlaceboragTypeError(
            f"{where}={shown(item)} must be {_ALLOWED}, not a numpy array; store "
            "value.tolist() for a list"
        )
    if kind == "b" and hasattr(item, "item"):
        return bool(item)
    if kind in ("i", "u") and hasattr(item, "item"):
        return int(item)
    if kind == "f" and hasattr(item, "item"):
        return _scalar(float(item), where)
    raise PlaceboragTypeError(f"{where}={shown(item)} must be {_ALLOWED}, not {t.__name__}")


def copy_filter(where: Any) -> Any:
    """A deep copy of a filter or of metadata (dicts, lists and tuples copied, other values
    shared), made with a stack: nested to any depth, it never reaches the recursion limit."""
    if not isinstance(where, (Mapping, list, tuple)):
        return where
    out: list[Any] = []
    stack: list[tuple[Any, bool]] = [(where, False)]
    while stack:
        item, done = stack.pop()
        if not done:
            if isinstance(item, Mapping):
                children = list(item.values())
            elif isinstance(item, (list, tuple)):
                children = list(item)
            else:
                out.append(item)
                continue
            stack.append((item, True))
            stack.extend((child, False) for child in reversed(children))
            continue
        n = len(item)
        values = out[len(out) - n :]
        del out[len(out) - n :]
        if isinstance(item, Mapping):
            out.append(dict(zip(item.keys(), values)))
        elif isinstance(item, tuple):
            out.append(tuple(values))
        else:
            out.append(values)
    return out[0]


def check_records(
    ids: object, texts: object, metadatas: object
) -> tuple[list[str], list[str], list[dict[str, Any] | None]]:
    """Columns of records, every one checked (before anything is written)."""
    id_list = check_column(ids, "ids")
    with bulk(len(id_list)):  # a large batch: its copies are made with the collector off
        return _check_records(id_list, texts, metadatas)


def _check_records(
    id_list: list[Any], texts: object, metadatas: object
) -> tuple[list[str], list[str], list[dict[str, Any] | None]]:
    text_list = check_column(texts, "texts")
    _same_length(text_list, "texts", id_list)
    # Whole columns first (C loops); a column that fails is walked again, one value at a
    # time, for the message naming the first bad one.
    distinct = set(id_list) if set(map(type, id_list)) <= {str} else None
    if distinct is None or "" in distinct:
        for i, value in enumerate(id_list):
            check_id(value, f"ids[{i}]")
    if not set(map(type, text_list)) <= {str}:
        for i, value in enumerate(text_list):
            if not isinstance(value, str):
                raise PlaceboragTypeError(
                    f"texts[{i}]={shown(value)} must be a str, not {type(value).__name__}"
                )
    meta_list: list[dict[str, Any] | None] = [None] * len(id_list)
    if metadatas is not None:
        raw = check_column(metadatas, "metadatas")
        _same_length(raw, "metadatas", id_list)
        meta_list = check_metadatas(raw, "metadatas")
    if distinct is None or len(distinct) != len(id_list):
        seen: dict[str, int] = {}
        for i, value in enumerate(id_list):
            if value in seen:
                from placeborag._errors import PlaceboragValueError

                raise PlaceboragValueError(
                    f"ids[{i}]={shown(value)} repeats ids[{seen[value]}]; "
                    "an id may appear once per call"
                )
            seen[value] = i
    return id_list, text_list, meta_list


def _same_length(column: list[Any], name: str, ids: list[Any]) -> None:
    if len(column) != len(ids):
        raise PlaceboragValueError(
            f"{name} has {len(column)} items and ids has {len(ids)}; they must have the same length"
        )
