"""A small, independent interpreter of the metadata filter language, for differential tests.

Written as plainly as possible from the documented rules (docs/vector-store.md), sharing no code
with placeborag/_filters.py: an operator on a key the record lacks is false (strict semantics),
values compare only within their kind (bool, number, str, list, dict; lists and dicts item by
item), numbers compare exactly (Python's int/float comparison is exact), ``$in``/``$nin`` test a
stored list by its items, and range operators hold only for numbers.
"""

from __future__ import annotations

from typing import Any


def kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "dict"
    return "num" if isinstance(value, (int, float)) else "str"


def equal(a: Any, b: Any) -> bool:
    if kind(a) != kind(b):
        return False
    if kind(a) == "list":
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if kind(a) == "dict":
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return a == b


class Clash(Exception):
    """The reference's "cannot compare": a range bound against a stored non-number (raised
    under strict semantics, where the filter is a bug, not a record that does not match)."""


def reference(where: dict[str, Any], meta: dict[str, Any] | None, strict: bool = False) -> bool:
    """Whether ``meta`` satisfies the well-formed filter ``where``. Every clause is evaluated
    (so ``strict`` sees a clash anywhere in the filter)."""
    meta = meta or {}
    results = []
    for key, condition in where.items():
        if key == "$and":
            results.append(all([reference(c, meta, strict) for c in condition]))
        elif key == "$or":
            results.append(any([reference(c, meta, strict) for c in condition]))
        else:
            operators = condition if isinstance(condition, dict) else {"$eq": condition}
            for op, v in operators.items():
                if key not in meta:
                    results.append(False)
                    continue
                x = meta[key]
                if op == "$eq":
                    results.append(equal(x, v))
                elif op == "$ne":
                    results.append(not equal(x, v))
                elif op in ("$in", "$nin"):  # a stored list: any of its items
                    items = x if kind(x) == "list" else [x]
                    hit = any(equal(item, y) for item in items for y in v)
                    results.append(hit if op == "$in" else not hit)
                elif kind(x) != "num":
                    if strict:
                        raise Clash
                    results.append(False)
                else:
                    results.append({"$gt": x > v, "$gte": x >= v, "$lt": x < v, "$lte": x <= v}[op])
    return all(results)
