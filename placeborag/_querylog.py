"""The query log of a store (``store.queries``): the most recent queries, bounded.

A store keeps the last ``query_log`` :class:`~placeborag.QueryRecord` objects (1,000 by
default; ``None`` keeps every one, ``0`` none) and counts every query it received, so a test
that runs a million queries holds a thousand records, not a million (a record is about 800
bytes for a text query, and holds the whole vector of a ``query_by_vector`` call). Its methods
are called with the store's lock held.
"""

from __future__ import annotations

import numbers
from collections import deque

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._results import QueryRecord
from placeborag._validation import shown

__all__ = ["DEFAULT_QUERY_LOG", "QueryLog", "check_query_log"]

#: How many of its most recent queries a store keeps unless told otherwise (``query_log=``).
DEFAULT_QUERY_LOG = 1000


def check_query_log(value: object) -> int | None:
    """``query_log``: None (keep every query) or an int >= 0 (how many recent ones to keep)."""
    allowed = (
        "None (keep every query) or an int >= 0 (how many of the most recent queries "
        "store.queries keeps; 0 keeps none)"
    )
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PlaceboragTypeError(
            f"query_log={shown(value)} must be {allowed}, not {type(value).__name__}"
        )
    if value < 0:
        raise PlaceboragValueError(f"query_log={shown(value)} must be {allowed}")
    return int(value)


class QueryLog:
    """The most recent ``limit`` query records (every one when ``limit`` is None) and the
    number of queries received."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.records: deque[QueryRecord] = deque(maxlen=limit)
        self.count = 0

    def add(self, record: QueryRecord) -> None:
        self.records.append(record)  # a full deque drops its oldest record
        self.count += 1

    def last(self) -> QueryRecord:
        if self.records:
            return self.records[-1]
        if self.count:
            raise PlaceboragValueError(
                f"the store received {self.count:,} queries and keeps none of them "
                "(query_log=0); build it with query_log=None or a count to keep them"
            )
        raise PlaceboragValueError("the store has received no query yet")
