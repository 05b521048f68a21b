"""The context-window budget of one model call: history, utterance, retrieved context, reserve.

The order of the rules is the contract the query-engine tests pin:

1. the answer reserve is set aside first and nothing else may use it;
2. the current utterance goes in whole, never cut;
3. history keeps its newest turns that fit (at most ``history_limit``), dropping the oldest;
4. retrieved fragments fill what the history left, most important first, stopping at the
   first that does not fit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragdemo.bugs import check_bugs

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Word runs and single symbols: a stand-in tokenizer that is the same everywhere."""
    return len(_TOKEN.findall(text))


class UtteranceTooLong(ValueError):
    """The utterance and the answer reserve do not fit in the window together."""


@dataclass(frozen=True)
class Packed:
    history: tuple[Any, ...]  # turns with .content, oldest first
    dropped: tuple[Any, ...]
    utterance: str
    fragments: tuple[Any, ...]  # fragments with .text, most important first
    cut: tuple[Any, ...]
    tokens: int  # everything sent: history + utterance + fragments


class Budget:
    """``window`` tokens per call, ``reserve`` of them kept for the answer."""

    def __init__(
        self,
        *,
        window: int = 4096,
        reserve: int = 512,
        history_limit: int | None = None,
        bugs: Iterable[str] = (),
    ) -> None:
        if not 0 <= reserve < window:
            raise ValueError(f"reserve={reserve!r} must be >= 0 and < window={window!r}")
        self.window = window
        self.reserve = reserve
        self.history_limit = history_limit
        self._bugs = check_bugs(bugs)

    def pack(self, history: Sequence[Any], utterance: str, fragments: Sequence[Any]) -> Packed:
        spoken = count_tokens(utterance)
        reserve = 0 if "no_answer_reserve" in self._bugs else self.reserve
        room = self.window - reserve - spoken
        if room < 0:
            if "cut_utterance" not in self._bugs:
                raise UtteranceTooLong(
                    f"the utterance takes {spoken} tokens and the reserve {reserve};"
                    f" the window holds {self.window}"
                )
            words = utterance.split()
            while words and count_tokens(" ".join(words)) > self.window - reserve:
                words.pop()
            utterance, spoken, room = " ".join(words), count_tokens(" ".join(words)), 0
        limit = room if self.history_limit is None else min(room, self.history_limit)
        turns = list(history)
        newest_first = "history_from_newest" not in self._bugs
        kept_positions: list[int] = []
        used = 0
        for position in reversed(range(len(turns))) if newest_first else range(len(turns)):
            size = count_tokens(turns[position].content)
            if used + size > limit:
                break
            kept_positions.append(position)
            used += size
        kept = [turns[p] for p in sorted(kept_positions)]
        dropped = [turns[p] for p in range(len(turns)) if p not in kept_positions]
        remainder = room if "context_over_window" in self._bugs else room - used
        packed: list[Any] = []
        size_of_packed = 0
        for fragment in fragments:
            size = count_tokens(fragment.text)
            if size_of_packed + size > remainder:
                break
            packed.append(fragment)
            size_of_packed += size
        return Packed(
            tuple(kept),
            tuple(dropped),
            utterance,
            tuple(packed),
            tuple(fragments[len(packed) :]),
            used + spoken + size_of_packed,
        )
