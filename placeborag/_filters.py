"""The metadata filter language: a compiler from ``where`` dicts to a tree of small predicates.

``compile_filter`` validates the whole filter before any record is read and returns a node tree.
Each node answers two questions the same way: ``matches(metadata)`` for one record (the plain
path) and ``mask(columns)`` for a whole column store at once (the vectorised path the store
uses). The rules:

* a key the record does not carry never matches, whatever the operator (``$ne``/``$nin``
  included: "absent" is not a value to compare against);
* values have three kinds, bool, number (int or float) and str; equality needs the same kind
  (``5 == 5.0`` matches, ``True`` does not equal ``1``, ``"7"`` does not equal ``7``);
* ``$gt``/``$gte``/``$lt``/``$lte`` take a finite number; a record whose value is not a number
  does not match;
* a malformed clause raises :class:`~placeborag.FilterError` naming the clause.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from placeborag._errors import FilterError, PlaceboragTypeError

__all__ = ["OPERATORS", "Columns", "Filter", "compile_filter"]

_COMPARISON = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin")
_LOGICAL = ("$and", "$or")
OPERATORS = tuple(sorted(_COMPARISON + _LOGICAL))
_EXACT_INT = 2**53

# kind codes used in the columns
_MISSING, _BOOL, _NUMBER, _STR = 0, 1, 2, 3


def _kind(value: object) -> int:
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, (int, float)):
        return _NUMBER
    if isinstance(value, str):
        return _STR
    return _MISSING


def _same(a: object, b: object) -> bool:
    ka = _kind(a)
    return ka != _MISSING and ka == _kind(b) and a == b


class Columns:
    """A lazily built, per-key column view of a list of metadata dicts."""

    __slots__ = ("_cache", "_rows")

    def __init__(self, rows: Sequence[Mapping[str, Any] | None]) -> None:
        self._rows = rows
        self._cache: dict[str, tuple[np.ndarray, np.ndarray, dict[str, int], np.ndarray, bool]] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def column(self, key: str) -> tuple[np.ndarray, np.ndarray, dict[str, int], np.ndarray, bool]:
        """(kind, number, str codes table, str codes, exact) for one key."""
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        n = len(self._rows)
        kind = np.zeros(n, dtype=np.int8)
        number = np.full(n, np.nan)
        codes = np.full(n, -1, dtype=np.int64)
        table: dict[str, int] = {}
        exact = True
        for i, meta in enumerate(self._rows):
            if not meta or key not in meta:
                continue
            value = meta[key]
            k = _kind(value)
            kind[i] = k
            if k == _STR:
                codes[i] = table.setdefault(value, len(table))
            elif k != _MISSING:
                number[i] = float(value)
                if isinstance(value, int) and abs(value) > _EXACT_INT:
                    exact = False
        out = (kind, number, table, codes, exact)
        self._cache[key] = out
        return out

    def row(self, i: int) -> Mapping[str, Any]:
        return self._rows[i] or {}


class Filter:
    """A compiled filter node."""

    __slots__ = ("clause",)

    def __init__(self, clause: object) -> None:
        self.clause = clause

    def matches(self, metadata: Mapping[str, Any] | None) -> bool:
        raise NotImplementedError

    def mask(self, columns: Columns) -> np.ndarray:
        raise NotImplementedError

    def keys(self) -> frozenset[str]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.clause!r})"


class _Compare(Filter):
    __slots__ = ("key", "missing", "op", "test", "value")

    _RANGE: dict[str, Callable[[Any, Any], Any]] = {
        "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b,
        "$lt": lambda a, b: a < b,
        "$lte": lambda a, b: a <= b,
    }

    def __init__(self, clause: object, key: str, op: str, value: Any) -> None:
        super().__init__(clause)
        self.key, self.op, self.value = key, op, value
        self.missing = False  # what a record without the key gives (engine semantics may flip it)

    def keys(self) -> frozenset[str]:
        return frozenset((self.key,))

    def _holds(self, stored: Any) -> bool:
        op = self.op
        if op == "$eq":
            return _same(stored, self.value)
        if op == "$ne":
            return not _same(stored, self.value)
        if op == "$in":
            return any(_same(stored, v) for v in self.value)
        if op == "$nin":
            return not any(_same(stored, v) for v in self.value)
        return _kind(stored) == _NUMBER and bool(self._RANGE[op](stored, self.value))

    def matches(self, metadata: Mapping[str, Any] | None) -> bool:
        if not metadata or self.key not in metadata:
            return self.missing
        return self._holds(metadata[self.key])

    def _bounds_exact(self) -> bool:
        values = self.value if self.op in ("$in", "$nin") else (self.value,)
        return all(not isinstance(v, int) or abs(v) <= _EXACT_INT for v in values)

    def mask(self, columns: Columns) -> np.ndarray:
        kind, number, table, codes, exact = columns.column(self.key)
        if not (exact and self._bounds_exact()):
            # Integers beyond 2**53 do not survive float64: answer row by row, exactly.
            return np.fromiter(
                (self.matches(columns.row(i)) for i in range(len(columns))),
                dtype=bool,
                count=len(columns),
            )
        present = kind != _MISSING
        op = self.op
        if op in self._RANGE:
            with np.errstate(invalid="ignore"):
                return (kind == _NUMBER) & self._RANGE[op](number, float(self.value))
        values = self.value if op in ("$in", "$nin") else (self.value,)
        hit = np.zeros(len(columns), dtype=bool)
        for v in values:
            k = _kind(v)
            if k == _STR:
                code = table.get(v)
                if code is not None:
                    hit |= codes == code
            else:
                hit |= (kind == k) & (number == float(v))
        if op in ("$ne", "$nin"):
            return ~hit if self.missing else present & ~hit
        return hit


class _Logical(Filter):
    __slots__ = ("children", "op")

    def __init__(self, clause: object, op: str, children: list[Filter]) -> None:
        super().__init__(clause)
        self.op, self.children = op, children

    def keys(self) -> frozenset[str]:
        return frozenset().union(*(c.keys() for c in self.children))

    def matches(self, metadata: Mapping[str, Any] | None) -> bool:
        if self.op == "$and":
            return all(c.matches(metadata) for c in self.children)
        return any(c.matches(metadata) for c in self.children)

    def mask(self, columns: Columns) -> np.ndarray:
        masks = [c.mask(columns) for c in self.children]
        combine = np.logical_and if self.op == "$and" else np.logical_or
        return combine.reduce(masks) if len(masks) > 1 else masks[0]


def _fail(message: str, clause: object) -> FilterError:
    return FilterError(f"{message} in clause {clause!r}")


def _check_scalar(op: str, value: object, clause: object) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise _fail(f"{op} needs a finite value, got {value!r}", clause)
    if _kind(value) == _MISSING:
        raise _fail(
            f"{op} needs a str, int, float or bool, got {value!r} of type {type(value).__name__}",
            clause,
        )


def _compile_operator(key: str, op: str, value: object, clause: object) -> Filter:
    if op in ("$eq", "$ne"):
        _check_scalar(op, value, clause)
    elif op in ("$gt", "$gte", "$lt", "$lte"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(
                f"{op} needs a number, got {value!r} of type {type(value).__name__}", clause
            )
        if not math.isfinite(value):
            raise _fail(f"{op} needs a finite number, got {value!r}", clause)
    elif op in ("$in", "$nin"):
        if not isinstance(value, (list, tuple)):
            raise _fail(f"{op} needs a non-empty list, got {value!r}", clause)
        if not value:
            raise _fail(f"{op} needs a non-empty list, got an empty one", clause)
        for v in value:
            _check_scalar(op, v, clause)
        kinds = {_kind(v) for v in value}
        if len(kinds) > 1:
            raise _fail(f"{op} needs values of one kind (all str, all numbers or all bool)", clause)
        value = tuple(value)
    elif op in _LOGICAL:
        raise _fail(
            f"{op} combines whole filters; use it at the top level, not under {key!r}", clause
        )
    else:
        raise _fail(f"unknown operator {op!r}; expected one of {', '.join(OPERATORS)}", clause)
    return _Compare(clause, key, op, value)


def _compile_key(key: object, condition: object, clause: object) -> Filter:
    if not isinstance(key, str):
        raise _fail(f"metadata key {key!r} must be a str", clause)
    if not key:
        raise _fail("metadata key '' must be a non-empty str", clause)
    if isinstance(condition, Mapping):
        if not condition:
            raise _fail(f"the condition on {key!r} is empty; give at least one operator", clause)
        nodes = []
        for op, value in condition.items():
            if not isinstance(op, str) or not op.startswith("$"):
                raise _fail(
                    f"{op!r} is not an operator; nested metadata is not supported, "
                    f"expected one of {', '.join(_COMPARISON)}",
                    clause,
                )
            nodes.append(_compile_operator(key, op, value, clause))
        return nodes[0] if len(nodes) == 1 else _Logical(clause, "$and", nodes)
    if isinstance(condition, (list, tuple)):
        raise _fail(
            f"a list is not a value; to match any of them use {{'$in': {list(condition)!r}}}",
            clause,
        )
    _check_scalar("equality", condition, clause)
    return _Compare(clause, key, "$eq", condition)


def _compile(where: object) -> Filter:
    if not isinstance(where, Mapping):
        raise FilterError(f"a filter must be a dict, got {where!r} of type {type(where).__name__}")
    if not where:
        raise FilterError("the filter {} has no conditions; pass where=None for no filter")
    nodes: list[Filter] = []
    for key, condition in where.items():
        if isinstance(key, str) and key.startswith("$"):
            if key not in _LOGICAL:
                if key in _COMPARISON:
                    raise _fail(
                        f"{key} compares a value; put it under a metadata key, "
                        f"like {{'lang': {{{key!r}: ...}}}}",
                        where,
                    )
                raise _fail(
                    f"unknown operator {key!r}; expected one of {', '.join(OPERATORS)}", where
                )
            if not isinstance(condition, (list, tuple)) or not condition:
                raise _fail(f"{key} needs a non-empty list of filters, got {condition!r}", where)
            nodes.append(_Logical(where, key, [_compile(c) for c in condition]))
        else:
            nodes.append(_compile_key(key, condition, where))
    return nodes[0] if len(nodes) == 1 else _Logical(where, "$and", nodes)


def _negations_match_missing(node: Filter) -> Filter:
    """Let every ``$ne``/``$nin`` in the tree match a record without the key (engine semantics)."""
    if isinstance(node, _Logical):
        for child in node.children:
            _negations_match_missing(child)
    elif isinstance(node, _Compare) and node.op in ("$ne", "$nin"):
        node.missing = True
    return node


def compile_filter(
    where: Mapping[str, Any] | None, *, negations_match_missing: bool = False
) -> Filter | None:
    """Validate and compile a ``where`` filter; None means no filter.

    ``negations_match_missing=True`` gives the engine semantics of Chroma and Qdrant, where
    ``$ne``/``$nin`` also match a record that lacks the key (placeborag's own rule says no).
    """
    if where is None:
        return None
    if not isinstance(where, Mapping):
        raise PlaceboragTypeError(
            f"where={where!r} must be a dict or None, not {type(where).__name__}"
        )
    node = _compile(where)
    return _negations_match_missing(node) if negations_match_missing else node
