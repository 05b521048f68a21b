"""Cutting documents into chunks that keep sentences, and so declared phrases, whole."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ragdemo.bugs import check_bugs

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CHAR_WINDOW = 40


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, verbatim, without the whitespace between them."""
    return [part for part in _SENTENCE_END.split(text.strip()) if part]


def chunk_text(text: str, *, max_words: int = 24, bugs: Iterable[str] = ()) -> list[str]:
    """Greedy chunks of whole sentences, each at most ``max_words`` words where possible.

    Sentences are kept unchanged (so a citation quotes the document's own words), and a
    sentence longer than the budget becomes a chunk of its own rather than being cut.
    """
    if max_words < 1:
        raise ValueError(f"max_words={max_words!r} must be >= 1")
    if "char_chunks" in check_bugs(bugs):
        flat = " ".join(text.split())
        return [flat[i : i + _CHAR_WINDOW] for i in range(0, len(flat), _CHAR_WINDOW)]
    chunks: list[str] = []
    current: list[str] = []
    words = 0
    for sentence in split_sentences(text):
        size = len(sentence.split())
        if current and words + size > max_words:
            chunks.append(" ".join(current))
            current, words = [], 0
        current.append(sentence)
        words += size
    if current:
        chunks.append(" ".join(current))
    return chunks
