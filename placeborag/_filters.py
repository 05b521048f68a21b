"""The metadata filter language: a compiler from ``where`` dicts to a tree of small predicates.

``compile_filter`` validates the whole filter before any record is read and returns a node tree.
Each node answers two questions the same way: ``matches(metadata)`` for one record (the plain
path) and ``mask(columns)`` for a whole column store at once (the vectorised path the store
uses). Compiling, evaluating and copying a filter walk it with an explicit stack, so a filter
nested to any depth works (Python's recursion limit plays no part). The rules:

* a key the record does not carry never matches, whatever the operator (``$ne``/``$nin``
  included: "absent" is not a value to compare against), unless the engine's rules say
  otherwise (:func:`filter_rules`, the one place that decides it); a key holding ``None``
  counts as absent;
* values have kinds: bool, number (int or float), str, datetime, date, list and dict; equality
  needs the same kind (``5 == 5.0`` matches, ``True`` does not equal ``1``, ``"7"`` does not
  equal ``7``); a dict or list given as a value is compared as a literal, item by item;
* ``$in``/``$nin`` test a stored scalar against the list, and a stored list by its items (any
  item in the list); ``$contains`` tests whether a stored list holds a value;
* ``$gt``/``$gte``/``$lt``/``$lte`` take a finite number, a datetime or a date. Under the default
  ``semantics="strict"`` a record whose value cannot be compared with the bound (a str or a bool
  against a number, a number against a datetime) raises :class:`~placeborag._errors.FilterTypeError`
  ("cannot compare") when the query runs: it is a bug in the filter, not a record that happens
  not to match. Under ``semantics="engine"`` such a record does not match, as in Chroma and
  Qdrant;
* ``{}`` has no conditions and matches every record;
* an empty ``$in``/``$nin`` list is refused, unless the engine's rules take it
  (:class:`FilterRules`): Qdrant's ``MatchAny([])`` and the pgvector clients read it as the
  empty set, so ``$in: []`` matches no record and ``$nin: []`` every record;
* a malformed clause raises :class:`~placeborag.FilterError` naming the clause (a
  :class:`~placeborag._errors.FilterTypeError`, also a ``TypeError``, where a list or a dict was
  expected and something else was given).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from placeborag._errors import FilterError, FilterTypeError
from placeborag._metadata import MAX_DEPTH as MAX_LITERAL_DEPTH
from placeborag._metadata import copy_filter
from placeborag._profiles import EMPTY_IN
from placeborag._validation import shown

if TYPE_CHECKING:
    from placeborag._profiles import Profile

__all__ = [
    "MAX_CLAUSES",
    "MAX_LITERAL_DEPTH",
    "OPERATORS",
    "STRICT",
    "Columns",
    "Filter",
    "FilterRules",
    "compile_filter",
    "copy_filter",
    "filter_rules",
]

_COMPARISON = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$contains")
_LOGICAL = ("$and", "$or")
OPERATORS = tuple(sorted(_COMPARISON + _LOGICAL))
_RANGE_OPS = ("$gt", "$gte", "$lt", "$lte")
_EXACT_INT = 2**53
MAX_CLAUSES = 100_000  # keeps a cyclic filter (a list that holds itself) from compiling forever
_SEMANTICS = ("strict", "engine")


@dataclass(frozen=True)
class FilterRules:
    """The rules a compiled filter follows where engines disagree.

    ``semantics="strict"`` (placeborag's own rules) raises on a range bound against a stored
    value of another kind; ``"engine"`` skips such a record. ``negations_match_missing`` lets
    ``$ne``/``$nin`` match a record without the key. ``empty_in`` is what an empty
    ``$in``/``$nin`` list does: ``"error"`` refuses it, ``"empty_set"`` reads it as the empty set
    (``$in: []`` matches no record, ``$nin: []`` every record). :func:`filter_rules` gives a
    profile's rules; :data:`STRICT` is placeborag's own.
    """

    semantics: str = "strict"
    negations_match_missing: bool = False
    empty_in: str = "error"

    def __post_init__(self) -> None:
        if self.semantics not in _SEMANTICS:
            raise FilterError(
                f"semantics={shown(self.semantics)} must be one of 'strict', 'engine'"
            )
        if not isinstance(self.negations_match_missing, bool):
            raise FilterTypeError(
                f"negations_match_missing={shown(self.negations_match_missing)} must be a bool"
            )
        if self.empty_in not in EMPTY_IN:
            raise FilterError(
                f"empty_in={shown(self.empty_in)} must be one of 'error', 'empty_set'"
            )

    @classmethod
    def of(cls, negations_match_missing: bool = False, semantics: str | None = None) -> FilterRules:
        """The rules the older two keywords spell: ``semantics`` defaults to ``"engine"`` when
        ``negations_match_missing`` is set (only engine semantics set it), else ``"strict"``."""
        if semantics is None:
            semantics = "engine" if negations_match_missing else "strict"
        return cls(semantics, negations_match_missing)


STRICT = FilterRules()
"""placeborag's own rules, the default of every store (``filter_semantics="strict"``)."""


def filter_rules(profile: Profile, semantics: str) -> FilterRules:
    """The rules a store with ``profile`` and ``filter_semantics=semantics`` filters by.

    The one place that decides them: under ``"strict"`` placeborag's own (:data:`STRICT`);
    under ``"engine"`` the profile's engine's, from its ``negation_matches_missing`` (how
    ``$ne``/``$nin`` treat a record without the key) and its ``empty_in`` (what an empty
    ``$in``/``$nin`` list does).
    """
    if semantics not in _SEMANTICS:
        raise FilterError(f"filter_semantics={shown(semantics)} must be one of 'strict', 'engine'")
    if semantics == "strict":
        return STRICT
    return FilterRules("engine", profile.negation_matches_missing, profile.empty_in)


# kind codes used in the columns
_MISSING, _BOOL, _NUMBER, _STR, _DATETIME, _DATE, _LIST, _DICT, _OTHER = range(9)
_SIMPLE_KINDS = (_MISSING, _BOOL, _NUMBER, _STR)


def _kind(value: object) -> int:
    t = type(value)
    if t is str:
        return _STR
    if t is bool:
        return _BOOL
    if t is int or t is float:
        return _NUMBER
    if value is None:
        return _MISSING
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, (int, float)):
        return _NUMBER
    if isinstance(value, str):
        return _STR
    if isinstance(value, _dt.datetime):
        return _DATETIME
    if isinstance(value, _dt.date):
        return _DATE
    if isinstance(value, (list, tuple)):
        return _LIST
    if isinstance(value, Mapping):
        return _DICT
    return _OTHER


def _same(a: object, b: object) -> bool:
    """Equality with kinds: a bool never equals a number, a str never equals a number.

    Dicts and lists compare item by item with the same rule; their depth is bounded (metadata
    and filter literals are checked at MAX_LITERAL_DEPTH), so the recursion is too.
    """
    ka = _kind(a)
    if ka == _MISSING or ka != _kind(b):
        return False
    # The kind says what both are; the isinstance checks only tell the type checker.
    if ka == _LIST and isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    if ka == _DICT and isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _lookup_key(value: object) -> tuple[int, object]:
    """A set key with the equality of :func:`_same` for scalars (Python compares ints and floats
    exactly, and equal numbers hash equal)."""
    return (_kind(value), value)


# kind, number, str codes table, str codes, simple, present, is_number, first clash
_Column = tuple[
    np.ndarray, np.ndarray, dict[str, int], np.ndarray, bool, np.ndarray, np.ndarray, int
]


class Columns:
    """A lazily built, per-key column view of a list of metadata dicts."""

    __slots__ = ("_cache", "_rows")

    def __init__(self, rows: Sequence[Mapping[str, Any] | None]) -> None:
        self._rows = rows
        self._cache: dict[str, _Column] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def column(self, key: str) -> _Column:
        """(kind, number, str codes table, str codes, simple, present, is_number, clash) for
        one key: ``present`` and ``is_number`` are ``kind`` tests made once, ``clash`` the
        first row holding a value that is not a number (-1 if none).

        ``simple`` is False when a value cannot be answered from these arrays alone (an int
        beyond 2**53, a datetime, a list, a dict): the filter then answers row by row, exactly.
        """
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        n = len(self._rows)
        # None stands for a record without the key: both are _MISSING
        values = [meta.get(key) if meta else None for meta in self._rows]
        types = set(map(type, values))
        table: dict[str, int] = {}
        if types <= {str, type(None)}:  # the common column of labels: whole-column steps
            codes = np.array(
                [-1 if v is None else table.setdefault(v, len(table)) for v in values],
                dtype=np.int64,
            )
            kind = np.where(codes >= 0, _STR, _MISSING).astype(np.int8)
            return self._keep(key, kind, np.zeros(n), table, codes, True)
        if types <= {int, float, type(None)} and all(
            abs(v) <= _EXACT_INT for v in values if type(v) is int
        ):  # numbers only (no bool: its type is not int), each exact as a float
            present = [v is not None for v in values]
            number = np.array([0.0 if v is None else float(v) for v in values])
            kind = np.where(present, _NUMBER, _MISSING).astype(np.int8)
            return self._keep(key, kind, number, table, np.full(n, -1, dtype=np.int64), True)
        kind = np.zeros(n, dtype=np.int8)
        # 0 where the value is not a number: every use masks ``number`` by ``kind``, so no
        # comparison meets a NaN (and none can warn).
        number = np.zeros(n)
        codes = np.full(n, -1, dtype=np.int64)
        simple = True
        for i, value in enumerate(values):
            if value is None:
                continue
            k = _kind(value)
            kind[i] = k
            if k == _STR:
                codes[i] = table.setdefault(value, len(table))
            elif k in (_NUMBER, _BOOL):
                if isinstance(value, int) and abs(value) > _EXACT_INT:
                    simple = False  # float() would round it, or overflow beyond 1e308
                else:
                    number[i] = float(value)
            elif k != _MISSING:
                simple = False
        return self._keep(key, kind, number, table, codes, simple)

    def _keep(
        self,
        key: str,
        kind: np.ndarray,
        number: np.ndarray,
        table: dict[str, int],
        codes: np.ndarray,
        simple: bool,
    ) -> _Column:
        present = kind != _MISSING
        is_number = kind == _NUMBER
        other = present & ~is_number
        clash = int(np.argmax(other)) if other.any() else -1
        out = (kind, number, table, codes, simple, present, is_number, clash)
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
        """Whether one record's metadata passes the filter."""
        return bool(_evaluate(self, lambda leaf: leaf._leaf_matches(metadata), _combine_bools))

    def mask(self, columns: Columns) -> np.ndarray:
        """A boolean array: which of the column store's records pass the filter."""
        return _evaluate(self, lambda leaf: leaf._leaf_mask(columns), _combine_masks)

    # Every node but _Logical is a leaf and answers these; _evaluate asks only the leaves.
    def _leaf_matches(self, metadata: Mapping[str, Any] | None) -> bool:
        raise NotImplementedError

    def _leaf_mask(self, columns: Columns) -> np.ndarray:
        raise NotImplementedError

    def keys(self) -> frozenset[str]:
        """The metadata keys the filter reads."""
        out: set[str] = set()
        stack: list[Filter] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, _Logical):
                stack.extend(node.children)
            elif isinstance(node, _Compare):
                out.add(node.key)
        return frozenset(out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.clause!r})"


def _combine_bools(op: str, values: list[bool]) -> bool:
    return all(values) if op == "$and" else any(values)


def _combine_masks(op: str, values: list[np.ndarray]) -> np.ndarray:
    combine = np.logical_and if op == "$and" else np.logical_or
    combined: np.ndarray
    if len(values) <= 2:
        combined = values[0] if len(values) == 1 else combine(values[0], values[1])
    else:
        combined = combine.reduce(values)
    return combined


_T = TypeVar("_T")


def _evaluate(
    root: Filter, leaf: Callable[[Filter], _T], combine: Callable[[str, list[_T]], _T]
) -> _T:
    """Evaluate a node tree bottom-up with an explicit stack (no recursion at any depth).

    Every leaf is evaluated (no short-circuit), so the plain and the vectorised paths raise the
    same "cannot compare" errors for the same records.
    """
    if not isinstance(root, _Logical):
        return leaf(root)
    out: list[_T] = []
    stack: list[tuple[Filter, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if isinstance(node, _Logical):
            if done:
                n = len(node.children)
                values = out[len(out) - n :]
                del out[len(out) - n :]
                out.append(combine(node.op, values))
            else:
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node.children))
        else:
            out.append(leaf(node))
    return out[0]


class _Always(Filter):
    """``{}`` inside ``$and``/``$or``: a filter with no conditions matches every record."""

    __slots__ = ()

    def _leaf_matches(self, metadata: Mapping[str, Any] | None) -> bool:
        return True

    def _leaf_mask(self, columns: Columns) -> np.ndarray:
        return np.ones(len(columns), dtype=bool)


class _Compare(Filter):
    __slots__ = ("_lookup", "key", "missing", "op", "strict", "value")

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
        self.strict = True  # a range bound against a value of another kind raises
        self._lookup: frozenset[tuple[int, object]] | None = None

    @property
    def lookup(self) -> frozenset[tuple[int, object]]:
        """The ``$in``/``$nin`` values as a set (built on first use: the vectorised path does
        not need it)."""
        if self._lookup is None:
            self._lookup = frozenset((_kind(v), v) for v in self.value)
        return self._lookup

    # -- one record ----------------------------------------------------------------------

    def _holds(self, stored: Any) -> bool:
        op = self.op
        if op == "$eq":
            return _same(stored, self.value)
        if op == "$ne":
            return not _same(stored, self.value)
        if op in ("$in", "$nin"):
            # The values are scalars: a stored dict, or a list held in a stored list, equals
            # none of them (and cannot be looked up in a set).
            items = stored if _kind(stored) == _LIST else (stored,)
            hit = any(
                _kind(item) not in (_LIST, _DICT) and _lookup_key(item) in self.lookup
                for item in items
            )
            return hit if op == "$in" else not hit
        if op == "$contains":
            return _kind(stored) == _LIST and any(_same(item, self.value) for item in stored)
        return self._compare(stored)

    def _compare(self, stored: Any) -> bool:
        bound = self.value
        kind = _kind(stored)
        if kind == _kind(bound):
            try:
                return bool(self._RANGE[self.op](stored, bound))
            except TypeError:  # a naive and an aware datetime
                pass
        if self.strict:
            raise self._cannot_compare(stored)
        return False

    def _cannot_compare(self, stored: Any) -> FilterTypeError:
        bound = self.value
        return FilterTypeError(
            f"cannot compare {self.op} {shown(bound)} ({type(bound).__name__}) with the stored "
            "value "
            f"{shown(stored)} ({type(stored).__name__}) of metadata key {shown(self.key)}; a bound "
            "against a "
            f"value of another type is a bug in the filter (pass filter_semantics='engine' to "
            f"skip such records as the engines do) in clause {shown(self.clause)}"
        )

    def _leaf_matches(self, metadata: Mapping[str, Any] | None) -> bool:
        if not metadata or self.key not in metadata:
            return self.missing
        stored = metadata[self.key]
        if stored is None:
            return self.missing
        return self._holds(stored)

    # -- a whole column store ------------------------------------------------------------

    def _simple_bound(self) -> bool:
        if self.op == "$contains":
            return False
        values = self.value if self.op in ("$in", "$nin") else (self.value,)
        types = set(map(type, values))
        if types == {str}:
            return True
        if types == {int}:  # a long list of ints: two C-speed passes
            return bool(min(values) >= -_EXACT_INT and max(values) <= _EXACT_INT)
        for v in values:
            k = _kind(v)
            if k not in _SIMPLE_KINDS or (isinstance(v, int) and abs(v) > _EXACT_INT):
                return False
        return True

    def _leaf_mask(self, columns: Columns) -> np.ndarray:
        kind, number, table, codes, simple, present, is_number, clash = columns.column(self.key)
        if not (simple and self._simple_bound()):
            # Big integers, datetimes, lists and dicts: answer row by row, exactly.
            return np.fromiter(
                (self._leaf_matches(columns.row(i)) for i in range(len(columns))),
                dtype=bool,
                count=len(columns),
            )
        op = self.op
        if op in self._RANGE:
            if self.strict and clash >= 0:
                raise self._cannot_compare(columns.row(clash)[self.key])
            in_range: np.ndarray = is_number & self._RANGE[op](number, float(self.value))
            return in_range
        values = self.value if op in ("$in", "$nin") else (self.value,)
        k = _kind(values[0])  # $in/$nin values share one kind
        hit: np.ndarray
        if k == _STR:
            wanted = [table[v] for v in values if v in table]
            if len(wanted) == 1:
                hit = codes == wanted[0]
            else:
                hit = np.isin(codes, wanted) if wanted else np.zeros(len(columns), dtype=bool)
        elif len(values) == 1:
            hit = (kind == k) & (number == float(values[0]))
        else:
            hit = (kind == k) & np.isin(number, np.array(values, dtype=np.float64))
        if op in ("$ne", "$nin"):
            return ~hit if self.missing else present & ~hit
        return hit


class _EmptyList(_Compare):
    """``$in: []`` or ``$nin: []`` read as the empty set: no value is in it, so ``$in`` matches
    no record and ``$nin`` every record, whether it carries the key or not."""

    __slots__ = ()

    def _leaf_matches(self, metadata: Mapping[str, Any] | None) -> bool:
        return self.op == "$nin"

    def _leaf_mask(self, columns: Columns) -> np.ndarray:
        return np.full(len(columns), self.op == "$nin", dtype=bool)


class _Logical(Filter):
    __slots__ = ("children", "op")

    def __init__(self, clause: object, op: str, children: list[Filter]) -> None:
        super().__init__(clause)
        self.op, self.children = op, children


def _fail(message: str, clause: object) -> FilterError:
    return FilterError(f"{message} in clause {shown(clause)}")


def _fail_type(message: str, clause: object) -> FilterTypeError:
    return FilterTypeError(f"{message} in clause {shown(clause)}")


def _is_finite_number(value: object) -> bool:
    # math.isfinite(10**400) raises OverflowError: ints are always finite.
    return not isinstance(value, float) or math.isfinite(value)


def _check_literal(op: str, value: object, clause: object) -> None:
    """A value for equality: a scalar, a datetime or date, or a list or dict of those (bounded
    depth, checked with a stack)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        k = _kind(item)
        if k == _NUMBER and not _is_finite_number(item):
            raise _fail(f"{op} needs a finite value, got {shown(item)}", clause)
        if item is None:
            raise _fail(
                f"{op} needs a value, got None; a key holding None counts as absent and never "
                "matches",
                clause,
            )
        if k == _OTHER:
            raise _fail_type(
                f"{op} needs a str, int, float, bool, datetime, date, list or dict, got "
                f"{shown(item)} "
                f"of type {type(item).__name__}",
                clause,
            )
        if k in (_LIST, _DICT):
            if depth >= MAX_LITERAL_DEPTH:
                raise _fail(f"{op} value is nested deeper than {MAX_LITERAL_DEPTH} levels", clause)
            # The kind says what the item is; the isinstance checks only tell the type checker.
            if k == _DICT and isinstance(item, Mapping):
                for key in item:
                    if not isinstance(key, str):
                        raise _fail_type(f"{op} value key {shown(key)} must be a str", clause)
                children = list(item.values())
            elif isinstance(item, (list, tuple)):
                children = list(item)
            stack.extend((child, depth + 1) for child in children)


def _check_scalar(op: str, value: object, clause: object) -> int:
    k = _kind(value)
    if k == _NUMBER and not _is_finite_number(value):
        raise _fail(f"{op} needs a finite value, got {shown(value)}", clause)
    if k in (_MISSING, _LIST, _DICT, _OTHER):
        raise _fail(
            f"{op} needs a str, int, float, bool, datetime or date, got {shown(value)} of type "
            f"{type(value).__name__}",
            clause,
        )
    return k


def _compile_operator(
    key: str, op: str, value: object, clause: object, rules: FilterRules
) -> Filter:
    if op in ("$eq", "$ne"):
        _check_literal(op, value, clause)
    elif op == "$contains":
        _check_scalar(op, value, clause)
    elif op in _RANGE_OPS:
        if isinstance(value, bool) or not isinstance(value, (int, float, _dt.date)):
            raise _fail_type(
                f"{op} needs a number, a datetime or a date, got {shown(value)} of type "
                f"{type(value).__name__}",
                clause,
            )
        if not _is_finite_number(value):
            raise _fail(f"{op} needs a finite number, got {shown(value)}", clause)
    elif op in ("$in", "$nin"):
        if not isinstance(value, (list, tuple)):
            raise _fail_type(f"{op} needs a non-empty list, got {shown(value)}", clause)
        if not value:
            if rules.empty_in == "empty_set":
                return _EmptyList(clause, key, op, ())
            raise _fail(f"{op} needs a non-empty list, got an empty one", clause)
        types = set(map(type, value))
        if types == {str} or types == {int} or types == {bool}:
            kinds = {_kind(value[0])}  # the common large lists: one pass over the types only
        else:
            kinds = {_check_scalar(op, v, clause) for v in value}
        if len(kinds) > 1:
            raise _fail(
                f"{op} needs values of one kind (all str, all numbers, all bool or all datetimes)",
                clause,
            )
        value = tuple(value)
    elif op in _LOGICAL:
        raise _fail(
            f"{op} combines whole filters; use it at the top level, not under {shown(key)}", clause
        )
    else:
        raise _fail(f"unknown operator {shown(op)}; expected one of {', '.join(OPERATORS)}", clause)
    return _Compare(clause, key, op, value)


def _compile_key(key: object, condition: object, clause: object, rules: FilterRules) -> Filter:
    if not isinstance(key, str):
        raise _fail_type(f"metadata key {shown(key)} must be a str", clause)
    if not key:
        raise _fail("metadata key '' must be a non-empty str", clause)
    if isinstance(condition, Mapping):
        operators = [op for op in condition if isinstance(op, str) and op.startswith("$")]
        if not operators:  # no operator: a dict value, compared as a literal
            _check_literal("equality", condition, clause)
            return _Compare(clause, key, "$eq", condition)
        if len(operators) != len(condition):
            plain = next(k for k in condition if not (isinstance(k, str) and k.startswith("$")))
            raise _fail(
                f"the condition on {shown(key)} mixes operators and the plain key {shown(plain)}; "
                "give "
                f"operators only (one of {', '.join(_COMPARISON)}), or a dict without operators "
                "to compare a dict value",
                clause,
            )
        nodes = [
            _compile_operator(key, op, value, clause, rules) for op, value in condition.items()
        ]
        return nodes[0] if len(nodes) == 1 else _Logical(clause, "$and", nodes)
    if isinstance(condition, (list, tuple)):
        raise _fail(
            f"a list is not a value; to match any of them use {{'$in': {shown(list(condition))}}}, "
            f"to compare a list value use {{'$eq': {shown(list(condition))}}}",
            clause,
        )
    _check_literal("equality", condition, clause)
    return _Compare(clause, key, "$eq", condition)


def _compile(where: Mapping[str, Any], rules: FilterRules) -> Filter:
    """Compile a non-empty filter dict, walking nested ``$and``/``$or`` with a stack."""
    root: list[Filter] = []
    # (filter dict, the list its node goes into)
    stack: list[tuple[object, list[Filter]]] = [(where, root)]
    clauses = 0
    while stack:
        current, out = stack.pop()
        clauses += 1
        if clauses > MAX_CLAUSES:
            raise FilterError(
                f"the filter has more than {MAX_CLAUSES} clauses (does a list hold itself?)"
            )
        if not isinstance(current, Mapping):
            raise FilterTypeError(
                f"a filter must be a dict, got {shown(current)} of type {type(current).__name__}"
            )
        if not current:
            out.append(_Always(current))
            continue
        many = len(current) > 1
        target = out
        if many:
            node = _Logical(current, "$and", [])
            out.append(node)
            target = node.children
        pending: list[tuple[object, list[Filter]]] = []
        for key, condition in current.items():
            if isinstance(key, str) and key.startswith("$"):
                if key not in _LOGICAL:
                    if key in _COMPARISON:
                        raise _fail(
                            f"{key} compares a value; put it under a metadata key, "
                            f"like {{'lang': {{{shown(key)}: ...}}}}",
                            current,
                        )
                    raise _fail(
                        f"unknown operator {shown(key)}; expected one of {', '.join(OPERATORS)}",
                        current,
                    )
                if not isinstance(condition, (list, tuple)):
                    raise _fail_type(
                        f"{key} needs a non-empty list of filters, got {shown(condition)}", current
                    )
                if not condition:
                    raise _fail(
                        f"{key} needs a non-empty list of filters, got {shown(condition)}", current
                    )
                node = _Logical(current, key, [])
                target.append(node)
                # Children are compiled later, in order (the stack is last in, first out).
                pending.extend((child, node.children) for child in condition)
            else:
                target.append(_compile_key(key, condition, current, rules))
        stack.extend(reversed(pending))
    return root[0]


def _set_semantics(root: Filter, rules: FilterRules) -> Filter:
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, _Logical):
            stack.extend(node.children)
        elif isinstance(node, _Compare):
            node.strict = rules.semantics == "strict"
            # What a record without the key gives $ne/$nin: decided here, read by both paths.
            node.missing = rules.negations_match_missing and node.op in ("$ne", "$nin")
    return root


def compile_filter(
    where: Mapping[str, Any] | None,
    rules: FilterRules | None = None,
    *,
    negations_match_missing: bool | None = None,
    semantics: str | None = None,
) -> Filter | None:
    """Validate and compile a ``where`` filter; None (no filter) for None and for ``{}``.

    ``rules`` are the rules to follow where engines disagree (:data:`STRICT`, placeborag's own,
    by default; :func:`filter_rules` gives a store's). The compiled filter answers
    ``matches(metadata)`` for one record's metadata.

    ``negations_match_missing`` and ``semantics`` are the older spelling of the first two
    rules (``semantics`` is ``"engine"`` when only ``negations_match_missing=True`` is given);
    they cannot be combined with ``rules``.
    """
    if rules is None:
        rules = FilterRules.of(bool(negations_match_missing), semantics)
    elif negations_match_missing is not None or semantics is not None:
        raise FilterTypeError(
            "give rules= or the older negations_match_missing=/semantics=, not both"
        )
    elif not isinstance(rules, FilterRules):
        raise FilterTypeError(f"rules={shown(rules)} must be a FilterRules, such as STRICT")
    if where is None:
        return None
    if not isinstance(where, Mapping):
        raise FilterTypeError(
            f"where={shown(where)} must be a dict or None, not {type(where).__name__}"
        )
    if not where:
        return None  # no conditions: every record matches, as in 0.4.0
    node = _compile(where, rules)
    if rules is not STRICT and rules != STRICT:
        _set_semantics(node, rules)
    return node


def failing_clause(root: Filter, metadata: Mapping[str, Any] | None) -> object:
    """The part of a compiled filter's ``where`` that rules out a record with ``metadata``: the
    first failing condition under an ``$and`` (however deep), the whole ``$or`` that no branch
    of passes, or the condition itself. For a record that passes, the whole clause."""
    node = root
    while isinstance(node, _Logical) and node.op == "$and":
        failing = next((c for c in node.children if not c.matches(metadata)), None)
        if failing is None:
            break
        node = failing
    return node.clause
