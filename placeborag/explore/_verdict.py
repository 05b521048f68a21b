"""What an exported test pins, in words: the behaviours an export found and the proof's result.

The types the export makes and the proof fills in live here, below both: the export
(:mod:`placeborag.explore._export`) finds the :class:`Behaviour` records and writes the module,
the proof (:mod:`placeborag.explore._proof`) runs it and returns a :class:`Proof`, and neither
imports the other's side. :func:`verdict` is the one sentence both say: the exported module's
docstring before the proof, the app's verdict after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AS_EXPORTED",
    "RECALL",
    "STARVATION",
    "TIE",
    "Behaviour",
    "Proof",
    "claim",
    "mutant_key",
    "verdict",
]

#: The outcome key of the module as exported (a mutant's is :func:`mutant_key`).
AS_EXPORTED = "as exported"

STARVATION = "post-filter starvation"
TIE = "a tie decided by the profile's rule"
RECALL = "documents lost to recall"

_NO_QUIRK = "the test pins a ranking (ids and order) but no quirk"


@dataclass(frozen=True)
class Behaviour:
    """A behaviour the exported ranking shows, and the setting that causes it.

    ``setting`` is the store option, ``flipped`` the value that switches the behaviour off
    (the mutant's), ``ids`` the documents it is about (the ones starved out, tied, lost).
    """

    name: str
    setting: str
    value: Any
    flipped: Any
    ids: tuple[str, ...] = ()
    groups: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Proof:
    """What running the exported module under pytest gave: as exported, and per mutant.

    ``outcomes`` maps ``"as exported"`` and ``"<setting>=<value>"`` to ``"passed"`` or
    ``"failed"``; ``messages`` holds the first line of each failure; ``verdict`` is the sentence
    the app shows.
    """

    outcomes: Mapping[str, str]
    messages: Mapping[str, str]
    verdict: str
    ok: bool


def mutant_key(behaviour: Behaviour) -> str:
    """The name of the mutant that switches ``behaviour`` off: ``"filter_mode='pre'"``."""
    return f"{behaviour.setting}={behaviour.flipped!r}"


def verdict(behaviours: Sequence[Behaviour], outcomes: Mapping[str, str] | None = None) -> str:
    """What the test pins, one clause per behaviour, from the mutants' ``outcomes`` (None: as
    the export expects them, every mutant failing). Only setting names, their values and the
    behaviours' names appear: never a user's string."""
    if not behaviours:
        return _NO_QUIRK + ": it passes, and no setting on screen causes what it asserts"
    parts = []
    for b in behaviours:
        key = mutant_key(b)
        if outcomes is None or outcomes.get(key) == "failed":
            parts.append(f"this test fails if {b.setting} is {b.flipped!r} ({b.name})")
        else:
            parts.append(
                f"the test still passes if {b.setting} is {b.flipped!r}: it does not pin {b.name}"
            )
    return "; ".join(parts)


def claim(behaviours: Sequence[Behaviour]) -> str:
    """The behaviours found, before any proof (what :attr:`Export.verdict` says unproved)."""
    if not behaviours:
        return _NO_QUIRK
    return "the test pins " + ", ".join(b.name for b in behaviours)
