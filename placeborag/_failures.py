"""Injected failures: the queue behind ``FakeVectorStore.fail_next_query`` and
``KnowledgeStub.fail_next_search``. Each entry fails a number of calls, in order; the owner
calls it under its own lock."""

from __future__ import annotations

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._validation import shown

__all__ = ["FailureQueue"]

Failure = BaseException | type[BaseException]


class FailureQueue(list[tuple[Failure, int]]):
    """Failures queued by ``fail_next_*``: each raised for its number of calls, then the next.

    A list of (failure, calls left), so that "is one queued?" (asked on every write and
    query) is a list's own truth test, not a call.
    """

    __slots__ = ()

    @staticmethod
    def checked(error: object, times: object) -> tuple[Failure, int]:
        """``error`` (an exception instance or class) and ``times`` (>= 1), checked before
        anything is queued."""
        if not (
            isinstance(error, BaseException)
            or (isinstance(error, type) and issubclass(error, BaseException))
        ):
            raise PlaceboragTypeError(
                f"error={shown(error)} must be an exception instance or class, "
                f"not {type(error).__name__}"
            )
        if isinstance(times, bool) or not isinstance(times, int):
            raise PlaceboragTypeError(
                f"times={shown(times)} must be an int, not {type(times).__name__}"
            )
        if times < 1:
            raise PlaceboragValueError(f"times={shown(times)} must be >= 1")
        return error, times

    def add(self, error: Failure, times: int) -> None:
        self.append((error, times))

    def take(self) -> BaseException | None:
        """The failure the next call raises (None if none is queued), spending one call of it.

        A class is instantiated; an instance is raised again with its traceback reset, so a
        failure injected many times never grows one traceback.
        """
        if not self:
            return None
        error, left = self[0]
        if left == 1:
            self.pop(0)
        else:
            self[0] = (error, left - 1)
        return error() if isinstance(error, type) else error.with_traceback(None)
