"""Signed feature hashing of character n-grams and word tokens, in exact integer arithmetic.

This module owns the hashing layer of :class:`~placeborag.FakeEmbedder`: it turns a batch of
texts into a matrix of *integer* feature counts. Everything here is integer arithmetic on numpy
``uint64`` arrays (which wrap modulo 2**64 on every platform) and ``hashlib``, so the counts are
bit-identical across processes, ``PYTHONHASHSEED``, thread counts and CPU feature sets.

How a feature is hashed, without a Python loop per feature:

* every text is lower-cased and laid out in one ``uint32`` array of code points, each text
  between two sentinels (0x110000, one past the last Unicode code point);
* a polynomial prefix hash ``G[p] = sum(c[q] * P**q for q < p)`` (mod 2**64) lets the hash of any
  span ``[s, e)`` be read off as ``(G[e] - G[s]) * P**-s``; ``P`` is odd, so it is invertible
  modulo 2**64 and the span hash does not depend on where the span sits;
* the span hash is salted by its kind (3-gram, 4-gram, word) and the model seed and mixed with
  SplitMix64; the low bits pick a bucket and the top bit a sign.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from operator import itemgetter
from typing import Any, TypeVar

import numpy as np

__all__ = ["SENTINEL", "hashed_counts_norms", "model_seeds", "splitmix64"]

SENTINEL = 0x110000
_P = 0x100000001B3  # the FNV-64 prime: odd, so it has an inverse modulo 2**64
_P_INV = pow(_P, -1, 2**64)
_NGRAM_SIZES = (3, 4)
_NGRAM_WEIGHT = 1
_WORD_WEIGHT = 2

# Code points below 128 that belong to a word (ASCII letters and digits); index 128 stands for
# every larger code point, decided separately.
_ASCII_WORD_EXT = np.array([chr(c).isalnum() for c in range(128)] + [False], dtype=bool)


def model_seeds(model_name: str, dimensions: int) -> tuple[int, int, int, int]:
    """Four 64-bit salts (3-gram, 4-gram, word, fallback) derived from the model and dimension."""
    digest = hashlib.blake2b(
        f"placeborag/hash/v1\x00{model_name}\x00{dimensions}".encode("utf-8", "surrogatepass"),
        digest_size=32,
    ).digest()
    return tuple(int.from_bytes(digest[i : i + 8], "little") for i in range(0, 32, 8))  # type: ignore[return-value]


def splitmix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser of every entry of a uint64 array (a new array)."""
    z = np.add(np.asarray(z, dtype=np.uint64), _MIX[0])
    if z.ndim == 0:  # a scalar: no buffer to work in
        z = z ^ (z >> _SHIFTS[0])
        z = z * _MIX[1]
        z = z ^ (z >> _SHIFTS[1])
        z = z * _MIX[2]
        mixed: np.ndarray = z ^ (z >> _SHIFTS[2])
        return mixed
    tmp = np.empty_like(z)
    np.bitwise_xor(z, np.right_shift(z, _SHIFTS[0], out=tmp), out=z)
    np.multiply(z, _MIX[1], out=z)
    np.bitwise_xor(z, np.right_shift(z, _SHIFTS[1], out=tmp), out=z)
    np.multiply(z, _MIX[2], out=z)
    np.bitwise_xor(z, np.right_shift(z, _SHIFTS[2], out=tmp), out=z)
    return z


# numpy operations with a 0-d array operand are cheaper than with a numpy scalar one
_MIX = tuple(
    np.array(m, dtype=np.uint64)
    for m in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
)
_SHIFTS = tuple(np.array(k, dtype=np.uint64) for k in (30, 27, 31))


_power_tables: tuple[np.ndarray, np.ndarray] = (np.ones(1, np.uint64), np.ones(1, np.uint64))


def _powers(base: int, n: int) -> np.ndarray:
    """``base**i mod 2**64`` for i in range(n): a wrapping uint64 running product, exact."""
    out = np.full(n, base, dtype=np.uint64)
    out[0] = 1
    return np.cumprod(out, out=out)


def _power_table(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``P**i`` and ``P**-i`` for i < n, from a module-level cache grown by doubling.

    Rebinding the cached tuple is atomic, so concurrent callers see an old or a new table,
    both correct.
    """
    global _power_tables
    tables = _power_tables
    if n > _CACHED_POWERS:  # a huge batch: its own tables, not kept by the module
        return _powers(_P, n), _powers(_P_INV, n)
    if tables[0].size < n:
        size = min(max(n, 2 * tables[0].size, 4096), _CACHED_POWERS)
        tables = (_powers(_P, size), _powers(_P_INV, size))
        _power_tables = tables
    return tables


def _word_mask(cp: np.ndarray) -> np.ndarray:
    """True where a code point belongs to a word token.

    ASCII uses ``str.isalnum``; beyond ASCII every code point counts as a word character except
    the spaces and punctuation blocks that commonly separate words (Latin-1 punctuation, General
    Punctuation, CJK Symbols and Punctuation, the ideographic space and the fullwidth ASCII
    punctuation), so accented Latin, Cyrillic, CJK and emoji all form words. Sentinels are not.
    """
    word: np.ndarray = _ASCII_WORD_EXT[np.minimum(cp, 128)]
    high = np.flatnonzero((cp >= 128) & (cp != SENTINEL))
    if high.size:
        hc = cp[high]
        separators = (
            ((hc <= 0xBF) & (hc != 0xAA) & (hc != 0xB5) & (hc != 0xBA))
            | (hc == 0xD7)
            | (hc == 0xF7)
            | ((hc >= 0x2000) & (hc <= 0x206F))
            | ((hc >= 0x3000) & (hc <= 0x303F))
            | ((hc >= 0xFF00) & (hc <= 0xFF0F))
            | (hc == 0x1680)
            | (hc == 0xFEFF)
        )
        word[high] = ~separators
    return word


def _layout(texts: list[str]) -> np.ndarray:
    """Code points of the lower-cased texts, each text between two sentinels."""
    lowered = [t.lower() for t in texts]
    lengths = np.fromiter((len(t) for t in lowered), dtype=np.int64, count=len(lowered))
    body = np.frombuffer("\x00".join(lowered).encode("utf-32-le", "surrogatepass"), np.uint32)
    cp = np.empty(body.size + 2, dtype=np.uint32)
    cp[0] = SENTINEL
    cp[1:-1] = body
    cp[-1] = SENTINEL
    # Separators sit after each text; set them by position, so a real "\x00" in a text is kept.
    cp[np.cumsum(lengths[:-1] + 1)] = SENTINEL
    return cp


class _Plan:
    """The model-independent part of hashing a batch: every feature's unsalted span hash, in
    kind order (3-grams, 4-grams, words) and within a kind in text order, and how many
    features of each kind each text has (from which a feature's row is rebuilt: 12 bytes per
    text instead of 8 per feature, so a corpus's plan is small enough to keep).

    A plan used a second time (the same corpus under another model or dimension) is made
    *distinct* (:meth:`distinct`): ``span`` then holds each kind's distinct span hashes once
    (sorted, kind after kind, ``per_kind`` of them per kind) and ``inverse`` each feature's
    index into them. A corpus repeats its n-grams and words many times over (100,000 help-desk
    texts: 4.8 million features, 40,000 distinct ones), so a new model salts and mixes only
    the distinct hashes and gathers the buckets and signs back: the same counts, exactly.
    """

    __slots__ = ("inverse", "kinds", "per_kind", "per_text", "span", "tried")

    def __init__(
        self,
        span: np.ndarray,
        per_text: np.ndarray,
        inverse: np.ndarray | None = None,
        per_kind: list[int] | None = None,
    ) -> None:
        self.span = span
        self.per_text = per_text  # (kinds, texts) int64
        self.kinds = per_text.sum(axis=1).tolist()  # features per kind, in kind order
        self.inverse = inverse
        self.per_kind = per_kind if per_kind is not None else self.kinds
        self.tried = inverse is not None  # whether distinct() has looked at this plan

    @property
    def nbytes(self) -> int:
        extra = 0 if self.inverse is None else self.inverse.nbytes
        return self.span.nbytes + self.per_text.nbytes + extra

    def flat_offsets(self, dimensions: int) -> np.ndarray:
        """Each feature's row times ``dimensions``: where its text's counts start in the
        flattened count matrix."""
        starts = np.arange(self.per_text.shape[1], dtype=np.int64) * dimensions
        return np.concatenate([np.repeat(starts, counts) for counts in self.per_text])

    def distinct(self) -> _Plan | None:
        """This plan with each kind's span hashes kept once (a new plan; this one is not
        changed, so a thread reading it is not disturbed), or None when that would not
        save at least half of the features."""
        self.tried = True
        spans, inverses, per_kind, start, offset = [], [], [], 0, 0
        for count in self.kinds:
            part = self.span[start : start + count]
            start += count
            ordered = np.sort(part)
            first = np.ones(ordered.size, dtype=bool)
            np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
            unique = ordered[first]
            inverse = np.searchsorted(unique, part)
            inverse += offset
            spans.append(unique)
            inverses.append(inverse)
            per_kind.append(int(unique.size))
            offset += unique.size
        if 2 * offset > start:
            return None  # mostly distinct already: the gathers would cost more than they save
        # intp: numpy's gathers take it as it is (an int32 index would be converted each time)
        inverse = np.concatenate(inverses).astype(np.intp, copy=False)
        return _Plan(np.concatenate(spans), self.per_text, inverse, per_kind)


_V = TypeVar("_V")


class BatchMemo:
    """Results computed for large batches, looked up by an exact key, within a byte budget.

    A corpus embedded again under another model, dimension or spread (a store rebuilt per
    configuration, the explorer's controls) skips the work that does not depend on what
    changed. The key holds the texts themselves (compared for equality), so a hit is always
    the right result; the least recently used results go first once the budget is spent.
    """

    def __init__(self, max_bytes: int, min_batch: int = 256) -> None:
        self.max_bytes = max_bytes
        self.min_batch = min_batch
        self._items: dict[Any, tuple[Any, int]] = {}  # most recent last
        self._lock = threading.Lock()

    def get_or(self, key: Any, size: int, make: Callable[[], _V]) -> _V:
        """The result for ``key``, made by ``make()`` if absent; batches under ``min_batch``
        (``size``) and results over half the budget are not kept."""
        if size < self.min_batch:
            return make()
        found = self.get(key)
        if found is not None:
            kept: _V = found  # what `make` built for this key
            return kept
        value = make()
        self.put(key, size, value)
        return value

    def get(self, key: Any) -> Any:
        """The result kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            item = self._items.pop(key, None)
            if item is None:
                return None
            self._items[key] = item
            return item[0]

    def put(self, key: Any, size: int, value: Any) -> None:
        """Keep ``value`` for ``key`` (a batch of ``size``), by the rules of :meth:`get_or`.
        The weight counts the key's texts too: the key holds them, so they are kept alive."""
        if size < self.min_batch:
            return
        weight = _nbytes(value) + _text_bytes(key)
        if weight > self.max_bytes // 2:
            return
        with self._lock:
            self._items[key] = (value, weight)
            while sum(w for _, w in self._items.values()) > self.max_bytes:
                del self._items[next(iter(self._items))]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(w for _, w in self._items.values())

    def __contains__(self, key: Any) -> bool:
        with self._lock:
            return key in self._items


def _text_bytes(key: Any) -> int:
    """The characters of the texts a memo key holds: a str, a long tuple of texts or of
    (cluster, text) pairs (a batch), or a short tuple of any of those."""
    if isinstance(key, (str, bytes)):
        return len(key)
    if not isinstance(key, tuple):
        return 0
    if len(key) <= 8:
        return sum(_text_bytes(part) for part in key)
    first = key[0]
    if isinstance(first, str):  # a batch of texts
        return sum(map(len, key))
    if isinstance(first, tuple) and len(first) == 2:  # a batch of (cluster, text) pairs
        return sum(map(len, map(itemgetter(0), key))) + sum(map(len, map(itemgetter(1), key)))
    return sum(_text_bytes(part) for part in key)


def _nbytes(value: Any) -> int:
    """The bytes of an array, of an object with ``nbytes``, or of a tuple of those."""
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return int(value.nbytes)


# A corpus of ~27k texts of ~80 characters has a 38 MB plan: kept, so a new model or
# dimension over the same corpus (the explorer's controls) skips its ~100 ms.
_PLANS = BatchMemo(96 << 20)


def _plan(texts: list[str]) -> _Plan:
    """The plan of a batch: kept for a large one, and made distinct when it is used again."""
    if len(texts) < _PLANS.min_batch:
        return _make_plan(texts)
    key = tuple(texts)
    plan: _Plan | None = _PLANS.get(key)
    if plan is None:
        plan = _make_plan(texts)
        _PLANS.put(key, len(texts), plan)
    elif not plan.tried:
        # a corpus hashed again (another model or dimension): the distinct form from now on
        distinct = plan.distinct()
        if distinct is not None:
            plan = distinct
            _PLANS.put(key, len(texts), plan)
    return plan


def _make_plan(texts: list[str]) -> _Plan:
    cp = _layout(texts)
    size = cp.size
    pw, pw_inv = _power_table(size + 1)
    prefix = np.zeros(size + 1, dtype=np.uint64)
    np.cumsum(cp.astype(np.uint64) * pw[:size], out=prefix[1:])
    is_sentinel = cp == SENTINEL
    sentinels = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(is_sentinel, out=sentinels[1:])

    spans: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    for n in _NGRAM_SIZES:
        windows = max(size - n + 1, 0)
        # A window may begin or end on a sentinel (a word at the edge of the text) but may not
        # hold one inside: that would join two texts, or be an empty text's "S S". Every
        # window is hashed with contiguous slices; the valid ones are then kept.
        inside = is_sentinel[1 : 1 + windows].copy()
        for j in range(2, n - 1):
            inside |= is_sentinel[j : j + windows]
        valid = ~inside
        span = prefix[n : n + windows] - prefix[:windows]
        span *= pw_inv[:windows]
        spans.append(span[valid])
        rows.append(sentinels[1 : 1 + windows][valid] - 1)  # the (i+1)-th sentinel opens text i
    word = _word_mask(cp)
    start = np.flatnonzero(~word[:-1] & word[1:]) + 1
    end = np.flatnonzero(word[:-1] & ~word[1:]) + 1
    spans.append((prefix[end] - prefix[start]) * pw_inv[start])
    rows.append(sentinels[start + 1] - 1)
    per_text = np.stack([np.bincount(r, minlength=len(texts)) for r in rows]).astype(np.int64)
    return _Plan(np.concatenate(spans), per_text)


def hashed_counts_norms(
    texts: list[str], dimensions: int, seeds: tuple[int, int, int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Signed feature counts, shape ``(len(texts), dimensions)`` (float64 holding exact
    integers), and each row's squared norm (exact: sums of small integers).

    Every row has at least one non-zero count: a text with no features (the empty string) or
    whose signed features cancel exactly gets one count in a bucket chosen by hashing the whole
    text, so every text can be L2-normalised.
    """
    counts = _counts(texts, dimensions, seeds)
    norms = np.einsum("ij,ij->i", counts, counts)
    empty = np.flatnonzero(norms == 0)
    for i in empty.tolist():
        counts[i, _fallback_bucket(texts[i], dimensions, seeds)] = 1.0
        norms[i] = 1.0
    return counts, norms


def _counts(texts: list[str], dimensions: int, seeds: tuple[int, int, int, int]) -> np.ndarray:
    """The counts of :func:`hashed_counts_norms`, rows without features left at zero."""
    n = len(texts)
    if n == 0:
        return np.zeros((0, dimensions))
    if n <= _FEW:  # a few texts (a store re-ranking its top k) cost less one at a time
        return np.stack([hashed_counts_one(t, dimensions, seeds) for t in texts])
    large = [i for i, t in enumerate(texts) if len(t) > _LARGE_TEXT]
    if large:  # long texts one by one, in bounded memory; the rest as a batch
        out = np.empty((n, dimensions))
        for i in large:
            out[i] = hashed_counts_one(texts[i], dimensions, seeds)
        rest = [i for i in range(n) if len(texts[i]) <= _LARGE_TEXT]
        if rest:
            out[rest] = _counts([texts[i] for i in rest], dimensions, seeds)
        return out
    plan = _plan(texts)
    kinds = plan.per_kind  # one entry per span hash: per feature, or per distinct one
    salt = np.repeat(np.array(seeds[:3], dtype=np.uint64), kinds)
    weight = np.repeat(
        np.array((_NGRAM_WEIGHT,) * len(_NGRAM_SIZES) + (_WORD_WEIGHT,), dtype=np.float64), kinds
    )
    z = splitmix64(plan.span ^ salt)
    # The top bit is the sign: as an int64 the hash is negative exactly when it is set.
    np.copysign(weight, z.view(np.int64), out=weight)
    if dimensions & (dimensions - 1):
        np.remainder(z, np.uint64(dimensions), out=z)
    else:  # a power of two: the low bits are the remainder, and cheaper to take
        np.bitwise_and(z, np.uint64(dimensions - 1), out=z)
    bucket = z.view(np.int64)  # every bucket is below dimensions: exact as int64
    if plan.inverse is not None:  # the distinct hashes' buckets and signs, back per feature
        bucket = np.take(bucket, plan.inverse)
        weight = np.take(weight, plan.inverse)
    # bincount sums in float64; every partial sum is an integer far below 2**53, so it is exact.
    bucket += plan.flat_offsets(dimensions)  # the flat index of each feature's count
    counts: np.ndarray = np.bincount(bucket, weights=weight, minlength=n * dimensions)
    # (bincount returns int64 when there is nothing to count, as for a lone empty string)
    return counts.astype(np.float64, copy=False).reshape(n, dimensions)


def _fallback_bucket(text: str, dimensions: int, seeds: tuple[int, int, int, int]) -> int:
    """The bucket of the one count a text without features (or whose features cancel) gets."""
    digest = hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=8, key=seeds[3].to_bytes(8, "little")
    ).digest()
    return int.from_bytes(digest, "little") % dimensions


# -- one text: the path of embed(), a query and a single upsert ---------------------------------
#
# The same features and arithmetic as the batch path (so the same bits), with the batch's
# general machinery left out: one text has sentinels only at its two ends, so every n-gram
# window is valid and its index depends only on the text's length; the code points come from
# one UTF-32 encoding with the sentinels already in place; an ASCII text's word edges come from
# one bytes.translate; the salts and weights of a text's features depend only on how many there
# are of each kind, so they are kept per count. About 25 numpy calls: at the size of one text
# their fixed cost is the time, so every call saved counts.

_TOP_BIT = np.array(1 << 63, dtype=np.uint64)
_SENTINEL_U64 = np.array(SENTINEL, dtype=np.uint64)
_ASCII_WORD_TABLE = bytes(int(_ASCII_WORD_EXT[c]) for c in range(128)) + bytes(128)
_ONE_CACHE_LIMIT = 1024  # entries of at most ~40 kB each (texts up to _SMALL_TEXT)
_SMALL_TEXT = 512  # longer texts take the chunked path, with no per-length cache
_SHIFTED_POWERS = np.concatenate((np.zeros(1, np.uint64), _powers(_P, _SMALL_TEXT + 2)))
_SMALL_INVERSES = _powers(_P_INV, _SMALL_TEXT + 3)
_SENTINEL_BYTES = SENTINEL.to_bytes(4, "little")
_ZERO_AND_SENTINEL = bytes(4) + _SENTINEL_BYTES
_LARGE_TEXT = 1 << 16  # a batch hashes texts longer than this one by one (bounded memory)
_CACHED_POWERS = 1 << 20  # the module's power table grows to this many entries at most
_CHUNK = 1 << 15
_FEW = 4
_one_cache: dict[Any, Any] = {}


def _kept(key: Any, make: Callable[[], Any]) -> Any:
    """A small per-shape cache (salts, weights, n-gram index arrays); cleared when full."""
    found = _one_cache.get(key)
    if found is None:
        found = make()
        if len(_one_cache) >= _ONE_CACHE_LIMIT:
            _one_cache.clear()
        _one_cache[key] = found
    return found


def _one_text_tables(
    seeds: tuple[int, int, int, int], size: int, nw: int, dimensions: int
) -> tuple[Any, ...]:
    """What hashing one text of ``size`` code points and ``nw`` words needs beyond the text:
    the starts and ends of its 3- and 4-grams, interleaved (``s0, e0, s1, e1, ...``, as a
    text's word edges are, so the two join in one flat concatenation; every window is valid:
    the sentinels sit at the ends), the salt and weight of every feature, the modulus and the
    low-bit mask."""
    n3, n4 = size, max(size - 1, 0)
    starts = np.concatenate((np.arange(n3), np.arange(n4))).astype(np.intp)
    ends = starts + np.repeat(np.array([3, 4], dtype=np.intp), (n3, n4))
    ngrams = np.stack((starts, ends), axis=1).reshape(-1)
    salt = np.repeat(np.array(seeds[:3], dtype=np.uint64), (n3, n4, nw))
    weight = np.repeat(
        np.array((_NGRAM_WEIGHT, _NGRAM_WEIGHT, _WORD_WEIGHT), dtype=np.float64), (n3, n4, nw)
    )
    modulus = np.array(dimensions, dtype=np.uint64)
    low_bits = np.array(dimensions - 1, dtype=np.uint64)
    return ngrams, salt, weight, modulus, low_bits


def hashed_counts_one(text: str, dimensions: int, seeds: tuple[int, int, int, int]) -> np.ndarray:
    """The signed feature counts of one text, shape ``(dimensions,)``: the same float64 values
    as its row of :func:`hashed_counts_norms`."""
    return hashed_counts_norm(text, dimensions, seeds)[0]


def hashed_counts_norm(
    text: str, dimensions: int, seeds: tuple[int, int, int, int]
) -> tuple[np.ndarray, float]:
    """:func:`hashed_counts_one` and the squared norm of the counts (an exact integer held in
    a float: the counts are integers small enough for every partial sum to be exact)."""
    low = text.lower()
    size = len(low)
    if size > _SMALL_TEXT:
        long_counts = _hashed_counts_long(text, low, dimensions, seeds)
        return long_counts, float(long_counts.dot(long_counts))
    # A zero, then the code points between their sentinels, times 0, P**0, P**1, ...: summed
    # in place, prefix[i] is the hash of the first i code points (prefix[0] = 0).
    padded = _ZERO_AND_SENTINEL + low.encode("utf-32-le", "surrogatepass") + _SENTINEL_BYTES
    prefix = np.multiply(np.frombuffer(padded, np.uint32), _SHIFTED_POWERS[: size + 3])
    np.add.accumulate(prefix, 0, None, prefix)
    pw_inv = _SMALL_INVERSES
    if low.isascii():
        # 1 for a word character (every byte mapped; the sentinels and the zero bytes of the
        # code points map to 0), one place before the padded text: a change between places i
        # and i + 1 is a word edge at position i of the padded text.
        word = np.frombuffer(padded.translate(_ASCII_WORD_TABLE), np.uint32)
        edges = (word[1:] != word[:-1]).nonzero()[0]
    else:
        word = _word_mask(np.frombuffer(padded, np.uint32)[1:])
        edges = (word[1:] != word[:-1]).nonzero()[0]
        edges += 1
    nw = edges.size // 2  # runs start and end in turn: s0, e0, s1, e1, ...
    key = (seeds, size, nw, dimensions)
    found = _one_cache.get(key)
    if found is None:
        found = _kept(key, lambda: _one_text_tables(seeds, size, nw, dimensions))
    ngrams, salt, weight, modulus, low_bits = found
    span = np.concatenate((ngrams, edges))  # every feature's start and end, interleaved
    at = prefix[span]
    z = at[1::2] - at[0::2]
    z *= pw_inv[span[0::2]]
    z ^= salt
    # SplitMix64, in place (the first half of ``at`` is the scratch buffer)
    tmp = at[: z.size]
    # (outputs passed by position: the keyword costs more than these small arrays do)
    np.add(z, _MIX[0], z)
    np.bitwise_xor(z, np.right_shift(z, _SHIFTS[0], tmp), z)
    np.multiply(z, _MIX[1], z)
    np.bitwise_xor(z, np.right_shift(z, _SHIFTS[1], tmp), z)
    np.multiply(z, _MIX[2], z)
    np.bitwise_xor(z, np.right_shift(z, _SHIFTS[2], tmp), z)
    # The top bit is the sign: as an int64 the hash is negative exactly when it is set.
    signed = np.copysign(weight, z.view(np.int64))
    if dimensions & (dimensions - 1):
        np.remainder(z, modulus, tmp)
    else:  # a power of two: the low bits are the remainder, and cheaper to take
        np.bitwise_and(z, low_bits, tmp)
    # every bucket is below dimensions: exact as int64
    counts: np.ndarray = np.bincount(tmp.view(np.int64), signed, dimensions)
    norm2 = float(counts.dot(counts))
    if not norm2:  # no features, or features that cancel exactly
        counts = np.zeros(dimensions)
        counts[_fallback_bucket(text, dimensions, seeds)] = 1.0
        norm2 = 1.0
    return counts, norm2


def _hashed_counts_long(
    text: str, low: str, dimensions: int, seeds: tuple[int, int, int, int]
) -> np.ndarray:
    """:func:`hashed_counts_one` for a long text: the features are hashed in chunks of
    ``_CHUNK``, so time is linear in the text's length and memory about 40 bytes per character
    (the code points, their prefix hashes and the inverse powers, 8 bytes each, and transients)."""
    size = len(low)
    cp = np.empty(size + 2, dtype=np.uint64)
    cp[0] = cp[-1] = _SENTINEL_U64
    cp[1:-1] = cp_of(low)
    word = _word_mask(cp.astype(np.uint32))
    edges = np.nonzero(word[1:] != word[:-1])[0]
    del word
    edges += 1
    word_start, word_end = edges[0::2], edges[1::2]
    if size + 3 <= _CACHED_POWERS:
        pw, pw_inv = _power_table(size + 3)
    else:  # not kept: the module's table stays small
        pw, pw_inv = _powers(_P, size + 2), _powers(_P_INV, size + 1)
    prefix = np.empty(size + 3, dtype=np.uint64)
    prefix[0] = 0
    np.add.accumulate(np.multiply(cp, pw[: size + 2], out=cp), out=prefix[1:])
    del cp, pw
    counts = np.zeros(dimensions)
    modulus = np.array(dimensions, dtype=np.uint64)
    for kind, n in enumerate(_NGRAM_SIZES):
        windows = size + 3 - n
        for a in range(0, max(windows, 0), _CHUNK):
            b = min(windows, a + _CHUNK)
            z = prefix[a + n : b + n] - prefix[a:b]
            z *= pw_inv[a:b]
            _add_features(counts, z, seeds[kind], _NGRAM_WEIGHT, modulus)
    for a in range(0, word_start.size, _CHUNK):
        start, end = word_start[a : a + _CHUNK], word_end[a : a + _CHUNK]
        z = prefix[end] - prefix[start]
        z *= pw_inv[start]
        _add_features(counts, z, seeds[2], _WORD_WEIGHT, modulus)
    if not counts.any():
        counts[_fallback_bucket(text, dimensions, seeds)] = 1.0
    return counts


def _add_features(
    counts: np.ndarray, z: np.ndarray, salt: int, weight: int, modulus: np.ndarray
) -> None:
    """Add the signed, weighted buckets of span hashes ``z`` (changed in place) to ``counts``.
    Every partial sum is an integer far below 2**53, so adding in chunks is exact."""
    z ^= np.array(salt, dtype=np.uint64)
    tmp = np.empty_like(z)
    np.add(z, _MIX[0], out=z)
    np.bitwise_xor(z, np.right_shift(z, _SHIFTS[0], out=tmp), out=z)
    np.multiply(z, _MIX[1], out=z)
    np.bitwise_xor(z, np.right_shift(z, _SHIFTS[1], out=tmp), out=z)
    np.multiply(z, _MIX[2], out=z)
    np.bitwise_xor(z, np.right_shift(z, _SHIFTS[2], out=tmp), out=z)
    signed = np.where(z >= _TOP_BIT, -float(weight), float(weight))
    bucket = np.remainder(z, modulus, out=tmp).view(np.int64)
    counts += np.bincount(bucket, weights=signed, minlength=counts.size)


def cp_of(text: str) -> np.ndarray:
    """The code points of a text, as uint32."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
