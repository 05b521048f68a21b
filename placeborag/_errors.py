"""The exception hierarchy: one root, and subclasses that are also the builtin a caller catches."""

from __future__ import annotations

__all__ = [
    "FilterError",
    "PlaceboragError",
    "PlaceboragTypeError",
    "PlaceboragValueError",
    "RetrievalError",
    "RetrievalTimeout",
]


class PlaceboragError(Exception):
    """Root of every exception placeborag raises on its own account."""


class PlaceboragTypeError(PlaceboragError, TypeError):
    """An argument of the wrong type: the message names the value and what is allowed."""


class PlaceboragValueError(PlaceboragError, ValueError):
    """An argument of the right type but an impossible value."""


class FilterError(PlaceboragValueError):
    """A malformed metadata filter; raised before any record is read."""


class RetrievalError(PlaceboragError, RuntimeError):
    """A read from a fake store failed (injected by ``fail_next_query``)."""


class RetrievalTimeout(RetrievalError, TimeoutError):
    """The default injected failure: the read path timed out."""
