"""The script of a scripted double: its steps in order, how many were taken, and whether the
last one repeats. The scripted scorer and the scripted chat model share it; each holds one
and calls it under its own lock (the script itself is not locked)."""

from __future__ import annotations

from typing import Generic, TypeVar

from placeborag._errors import ScriptError, ScriptExhausted

__all__ = ["Script", "count"]

S = TypeVar("S")


def count(number: int, noun: str) -> str:
    """``1 step``, ``2 steps``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


class Script(Generic[S]):
    """Steps taken one per request, in order; after ``end()`` the last one answers the rest."""

    __slots__ = ("repeats", "steps", "taken")

    def __init__(self, steps: list[S]) -> None:
        self.steps = steps
        self.taken = 0
        self.repeats = False

    def add(self, step: S, method: str) -> None:
        if self.repeats:
            raise ScriptError(
                f"{method}() cannot add a step after then_repeats(); then_repeats() must"
                " be the last call of the script"
            )
        self.steps.append(step)

    def end(self) -> None:
        """``then_repeats()``: the last step answers every further request."""
        if self.repeats:
            raise ScriptError(
                "then_repeats() was already called; it ends the script and may be called once"
            )
        self.repeats = True

    def take(self) -> S | None:
        """The step for the next request, or None when the script is exhausted."""
        if self.taken < len(self.steps):
            self.taken += 1
            return self.steps[self.taken - 1]
        if self.repeats:
            return self.steps[-1]
        return None

    def exhausted(self, what: str) -> ScriptExhausted:
        """The error of a request (described by ``what``) that arrived after the last step."""
        return ScriptExhausted(
            f"no step left for {what}: the script has {count(len(self.steps), 'step')} and"
            f" answered {count(self.taken, 'request')}; end it with then_repeats() to answer"
            " every further request with its last step"
        )

    def __repr__(self) -> str:
        return f"steps={len(self.steps)} taken={self.taken} repeats={self.repeats}"
