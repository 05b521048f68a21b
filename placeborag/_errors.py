"""The exception hierarchy: one root, and subclasses that are also the builtin a caller catches."""

from __future__ import annotations

__all__ = [
    "FilterError",
    "FilterTypeError",
    "PlaceboragError",
    "PlaceboragTypeError",
    "PlaceboragValueError",
    "PlaceboragWarning",
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


class FilterTypeError(FilterError, PlaceboragTypeError):
    """A filter clause of the wrong type (a non-dict filter, ``$in`` or ``$and`` without a list),
    or a bound of one type compared with a stored value of another ("cannot compare").

    It is both a ``TypeError`` (what 0.4.0 raised for these) and a ``ValueError`` (what every
    other :class:`FilterError` is), so ``pytest.raises`` with either one holds.
    """


class PlaceboragWarning(UserWarning):
    """Something placeborag was asked to do has no effect (a marker no fixture reads, ...)."""


class RetrievalError(PlaceboragError, RuntimeError):
    """A read from a fake store failed (injected by ``fail_next_query``)."""


class RetrievalTimeout(RetrievalError, TimeoutError):
    """The default injected failure: the read path timed out."""
