"""A pure-Python reference of the doubles' unit-test-scale work, the baseline of bench_core's
"unit-test scale" table (0.4.0 was pure Python).

``embed_exact`` computes FakeEmbedder's vectors with Python integers only: the same features
(3- and 4-grams of the lower-cased text between two sentinels, and word tokens), the same
polynomial span hash, salts, SplitMix64, buckets, signs and weights. The benchmark checks that
it returns the very same floats, so the two sides do the same work.

``embed_light`` is the cheapest pure-Python version of that work I could write: the same
features, each hashed with ``zlib.crc32`` (one C call on a bytes slice) instead of SplitMix64
arithmetic on Python integers. On this kind of machine it takes about what the issue measured
for 0.4.0's ``embed()`` (38 us). Its vectors differ from FakeEmbedder's; it is the baseline
the targets are set against, so a ratio is not flattered by a slow reference.

``ReferenceStore`` is a plain list-of-records store over ``embed_light``: ``upsert`` embeds and
appends (or replaces), ``query`` embeds the query, filters with a small interpreter of the
filter language (equality, ``$in``, ranges, ``$and``/``$or``), scores every record with a Python
dot product and sorts, ties broken by insertion order.
"""

from __future__ import annotations

import math
import re
import zlib
from typing import Any

from placeborag._hashing import _NGRAM_WEIGHT, _P, _P_INV, _WORD_WEIGHT, SENTINEL

_MASK = (1 << 64) - 1


def _is_word(ch: str) -> bool:
    c = ord(ch)
    if c < 128:
        return ch.isalnum()
    return not (
        (c <= 0xBF and c not in (0xAA, 0xB5, 0xBA))
        or c in (0xD7, 0xF7, 0x1680, 0xFEFF)
        or 0x2000 <= c <= 0x206F
        or 0x3000 <= c <= 0x303F
        or 0xFF00 <= c <= 0xFF0F
    )


def _features(
    text: str,
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]:
    """Spans (start, end) in the padded text of the 3-grams, the 4-grams and the words."""
    size = len(text) + 2
    grams = [[(s, s + n) for s in range(size - n + 1)] for n in (3, 4)]
    words = []
    start = None
    for i, ch in enumerate(text, start=1):
        if _is_word(ch):
            if start is None:
                start = i
        elif start is not None:
            words.append((start, i))
            start = None
    if start is not None:
        words.append((start, size - 1))
    return grams[0], grams[1], words


def _splitmix64(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def embed_exact(text: str, dimensions: int, seeds: tuple[int, int, int, int]) -> list[float]:
    """FakeEmbedder's vector of an undeclared text, in pure Python (the same floats)."""
    low = text.lower()
    cps = [SENTINEL, *(ord(c) for c in low), SENTINEL]
    prefix = [0]
    power = 1
    for c in cps:
        prefix.append((prefix[-1] + c * power) & _MASK)
        power = (power * _P) & _MASK
    counts = [0] * dimensions
    for kind, (spans, weight) in enumerate(
        zip(_features(low), (_NGRAM_WEIGHT, _NGRAM_WEIGHT, _WORD_WEIGHT))
    ):
        salt = seeds[kind]
        for s, e in spans:
            span = ((prefix[e] - prefix[s]) * pow(_P_INV, s, 1 << 64)) & _MASK
            z = _splitmix64(span ^ salt)
            counts[z % dimensions] += -weight if z >> 63 else weight
    if not any(counts):
        import hashlib

        digest = hashlib.blake2b(
            text.encode("utf-8", "surrogatepass"), digest_size=8, key=seeds[3].to_bytes(8, "little")
        ).digest()
        counts[int.from_bytes(digest, "little") % dimensions] = 1
    norm = math.sqrt(float(sum(c * c for c in counts)))
    return [c / norm for c in counts]


_WORD = re.compile(r"[^\W_]+")  # runs of letters and digits: str.isalnum's words


def embed_light(text: str, dimensions: int = 256, seed: int = 0) -> list[float]:
    """The same features, each hashed by one ``zlib.crc32`` call on a slice of the UTF-8
    bytes: the light baseline, as fast as plain Python does this work (for ASCII text, as in the
    benchmark, the byte n-grams are the character n-grams)."""
    low = text.lower()
    padded = ("\x00" + low + "\x00").encode("utf-8", "surrogatepass")
    counts = [0] * dimensions
    crc = zlib.crc32
    for size in (3, 4):
        salt = seed + size
        for s in range(len(padded) - size + 1):
            h = crc(padded[s : s + size], salt)
            counts[h % dimensions] += -1 if h & 0x80000000 else 1
    for word in _WORD.findall(low):
        h = crc(word.encode("utf-8", "surrogatepass"), seed + 7)
        counts[h % dimensions] += -2 if h & 0x80000000 else 2
    norm = math.sqrt(sum(c * c for c in counts)) or 1.0
    return [c / norm for c in counts]


def _holds(where: dict[str, Any], meta: dict[str, Any]) -> bool:
    for key, cond in where.items():
        if key == "$and":
            if not all(_holds(c, meta) for c in cond):
                return False
        elif key == "$or":
            if not any(_holds(c, meta) for c in cond):
                return False
        else:
            if key not in meta:
                return False
            value = meta[key]
            ops = cond if isinstance(cond, dict) else {"$eq": cond}
            for op, bound in ops.items():
                if op == "$eq" and value != bound:
                    return False
                if op == "$in" and value not in bound:
                    return False
                if op == "$gt" and not value > bound:
                    return False
                if op == "$gte" and not value >= bound:
                    return False
                if op == "$lt" and not value < bound:
                    return False
                if op == "$lte" and not value <= bound:
                    return False
    return True


class ReferenceStore:
    """A pure-Python store: a list of records, a full scan per query."""

    def __init__(self, dimensions: int = 256) -> None:
        self.dimensions = dimensions
        self.records: list[tuple[str, str, list[float], dict[str, Any]]] = []
        self.position: dict[str, int] = {}

    def upsert(self, id: str, text: str, metadata: dict[str, Any] | None = None) -> None:
        record = (id, text, embed_light(text, self.dimensions), dict(metadata or {}))
        if id in self.position:
            self.records[self.position[id]] = record
        else:
            self.position[id] = len(self.records)
            self.records.append(record)

    def query(
        self, text: str, k: int = 4, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        q = embed_light(text, self.dimensions)
        scored = [
            (-sum(a * b for a, b in zip(q, vector)), i, id)
            for i, (id, _, vector, meta) in enumerate(self.records)
            if where is None or _holds(where, meta)
        ]
        scored.sort()
        return [(id, -score) for score, _, id in scored[:k]]
