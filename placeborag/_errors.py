"""The exception hierarchy: one root, and subclasses that are also the builtin a caller catches.

Every exception placeborag raises on its own account is defined here, so a caller finds them
all in one place and catches them all with ``PlaceboragError``. The modules that raised them
first (``_scoring``, ``_replay``) still re-export them, so older imports keep working.
"""

from __future__ import annotations

__all__ = [
    "FilterError",
    "FilterTypeError",
    "MissingExtra",
    "PlaceboragError",
    "PlaceboragTypeError",
    "PlaceboragValueError",
    "PlaceboragWarning",
    "RecordingNotFound",
    "RetrievalError",
    "RetrievalTimeout",
    "ScriptError",
    "ScriptExhausted",
    "UnrecordedText",
    "WriteError",
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


class MissingExtra(PlaceboragError, ImportError):
    """An optional feature whose package is not installed: the message names the pip extra."""


class PlaceboragWarning(UserWarning):
    """Something placeborag was asked to do has no effect (a marker no fixture reads, ...)."""


class RetrievalError(PlaceboragError, RuntimeError):
    """A read from a fake store failed (injected by ``fail_next_query``)."""


class RetrievalTimeout(RetrievalError, TimeoutError):
    """The default injected failure: the read path timed out."""


class WriteError(PlaceboragError, RuntimeError):
    """A write the store refused: by default what :meth:`FakeVectorStore.fail_next_write`
    injects (the store is left exactly as it was)."""


class ScriptExhausted(PlaceboragError, RuntimeError):
    """A request arrived after the last step of a script without ``then_repeats()``."""


class ScriptError(PlaceboragError, RuntimeError):
    """A scorer was used in a way its script or its record does not allow.

    Raised when a step is added after ``then_repeats()``, when ``then_repeats()`` is called
    twice, when a scripted scorer is built without a first step, and when ``request`` or
    ``last_request`` is read while the record does not hold what they promise.
    """


class UnrecordedText(PlaceboragValueError):
    """A text that the recording does not hold in the namespace it was asked in.

    ``text`` is the text as given, ``kind`` is ``"document"`` or ``"query"`` and ``candidates``
    holds up to three nearest recorded texts of that kind (by :mod:`difflib` ratio).
    """

    def __init__(self, message: str, *, text: str, kind: str, candidates: tuple[str, ...]):
        super().__init__(message)
        self.text = text
        self.kind = kind
        self.candidates = candidates


class RecordingNotFound(PlaceboragValueError, FileNotFoundError):
    """No recording at a path: nothing there, a file instead of a directory, or a file missing.

    Also a ``FileNotFoundError``, which is what a missing recording raised before 0.5.
    """
