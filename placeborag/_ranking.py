"""Exact ranking: the integer arithmetic and the tie rules behind every ranking a store gives.

Scores are screened in float32 (one matrix-vector product over every row), and any rows whose
float scores are too close for float32 to order (closer than twice its proven error bound) are
re-ranked from exact integer vectors, comparing ``sign(p) * p**2 / |d|**2`` (``p`` the exact dot
product with the query) as fractions. Exact ties are then ordered by the profile's tie rule,
never by floating-point noise, so the same store gives the same ranking on every machine.
Reported scores are computed from the same exact rationals, so tied rows report identical
numbers.

Exact integer vectors come from the embedder where it has them (a FakeEmbedder's hashed counts,
keyed by text) and otherwise from the float32 vectors the store holds, which are exact binary
fractions: the user's model is never called again to rank.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from placeborag._hashing import splitmix64
from placeborag._records import RecordTable

__all__ = [
    "ExactScores",
    "Ranking",
    "TieGroup",
    "exact_dot",
    "float_to_exact",
    "rank",
    "sqrt_score",
]

_UNIT_ROUNDOFF = 2.0**-24  # float32
_SCORE_BITS = 64


# -- exact arithmetic ---------------------------------------------------------------------


def float_to_exact(vectors: np.ndarray) -> np.ndarray:
    """Exact integer forms of float rows: each row scaled by one power of two (object dtype)."""
    rows = []
    for row in np.asarray(vectors, dtype=np.float64):
        ratios = [v.as_integer_ratio() for v in row.tolist()]
        den = max(d for _, d in ratios)
        rows.append([n * (den // d) for n, d in ratios])
    return np.array(rows, dtype=object).reshape(len(rows), -1)


def exact_dot(a: np.ndarray, b: np.ndarray) -> list[int]:
    """Rows of ``a`` dotted with ``b``, exactly (in Python integers where int64 could overflow)."""
    return exact_products(a, np.broadcast_to(b, a.shape))


def exact_products(a: np.ndarray, b: np.ndarray) -> list[int]:
    """``sum(a[i] * b[i])`` for every row ``i`` of two same-shape integer arrays, exactly.

    int64 sums when they cannot overflow; otherwise (a cluster member's ``2**52``-scaled
    entries) each int64 entry is cut into three limbs of 20, 20 and 24 signed bits, so every
    limb product is below ``2**46`` and a row of up to ``2**16`` of them below ``2**62``;
    the nine limb sums are then put together in Python integers. Object arrays (exact forms
    of arbitrary floats) are summed in Python integers directly.
    """
    if a.dtype != object and b.dtype != object:
        bound = _magnitude(a) * _magnitude(b) * a.shape[1]
        if bound < 2**62:
            return [int(x) for x in np.einsum("ij,ij->i", a, b)]
        if a.shape[1] <= 2**16:
            la, lb = _limbs(a), _limbs(b)
            sums = {
                (i, j): np.einsum("ij,ij->i", la[i], lb[j]).tolist()
                for i in range(3)
                for j in range(3)
            }
            return [
                sum(sums[i, j][row] << (20 * (i + j)) for i in range(3) for j in range(3))
                for row in range(a.shape[0])
            ]
    return [sum(map(operator.mul, x, y)) for x, y in zip(a.tolist(), b.tolist())]


def _magnitude(x: np.ndarray) -> int:
    """The largest absolute value in ``x``, as a Python int (``abs`` of int64 min overflows)."""
    if not x.size:
        return 0
    return max(int(x.max()), -int(x.min()))


def _limbs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x == l0 + l1 * 2**20 + l2 * 2**40`` with l0, l1 in [0, 2**20) and l2 signed."""
    x = x.astype(np.int64, copy=False)
    mask = np.int64(2**20 - 1)
    return x & mask, (x >> 20) & mask, x >> 40


def sqrt_score(p: int, norm2_product: int) -> float:
    """``p / sqrt(norm2_product)`` as a pure function of the rational ``p**2 / norm2_product``
    (so ties tie): ``floor(sqrt(r) * 2**64)``, taken exactly from the unreduced fraction (the
    floor of a rational does not depend on how it is written), then one correctly rounded
    division by ``2**64``."""
    if p == 0:
        return 0.0
    root = math.isqrt(((p * p) << (2 * _SCORE_BITS)) // norm2_product)
    value: float = min(1.0, root / 2**_SCORE_BITS)
    return value if p > 0 else -value


class ExactScores:
    """Exact dot products and cosines of stored rows with one query, cached per row's source.

    ``by_text`` maps texts to exact integer vectors (a FakeEmbedder's); without it a row's
    exact vector is its stored float32 vector, taken as the binary fraction it is.
    """

    def __init__(
        self,
        table: RecordTable,
        qexact: np.ndarray,
        by_text: Callable[[list[str]], np.ndarray] | None,
    ) -> None:
        self._table = table
        self._qexact = qexact
        self._by_text = by_text
        self._cache: dict[object, tuple[int, int]] = {}
        self._keys: dict[object, Fraction] = {}
        self._cosines: dict[object, float] = {}
        self._qnorm: int | None = None

    def _key(self, row: int) -> object:
        return self._table.texts[row] if self._by_text is not None else row

    def source(self, row: int) -> object:
        """What a row's exact vector is computed from: its text (a FakeEmbedder's) or itself."""
        return self._key(row)

    def fill(self, rows: Sequence[int]) -> None:
        """Compute (exact dot with the query, exact squared norm) for rows not cached yet."""
        missing: dict[object, int] = {}
        for row in rows:
            key = self._key(row)
            if key not in self._cache and key not in missing:
                missing[key] = row
        if not missing:
            return
        if self._by_text is not None:
            exact = self._by_text(list(missing))  # type: ignore[arg-type]
        else:
            exact = float_to_exact(self._table.vectors[list(missing.values())])
        dots = exact_dot(exact, self._qexact)
        norms = exact_products(exact, exact)
        for key, dot, norm in zip(missing, dots, norms):
            self._cache[key] = (dot, norm)

    def key(self, row: int) -> Fraction:
        """``sign(p) * p**2 / |d|**2``: orders rows exactly as their cosines do (one fraction
        per distinct source: a hundred thousand copies of one text share it)."""
        source = self._key(row)
        key = self._keys.get(source)
        if key is None:
            dot, norm = self._cache[source]
            key = self._keys[source] = Fraction(dot * abs(dot), norm)
        return key

    def cosine(self, row: int) -> float:
        """The exact cosine (one per distinct source, like :meth:`key`)."""
        source = self._key(row)
        value = self._cosines.get(source)
        if value is None:
            if self._qnorm is None:
                self._qnorm = exact_dot(self._qexact[None, :], self._qexact)[0]
            dot, norm = self._cache[source]
            value = self._cosines[source] = sqrt_score(dot, norm * self._qnorm)
        return value

    def cosines(self, rows: Sequence[int]) -> dict[int, float]:
        self.fill(rows)
        return {r: self.cosine(r) for r in rows}


# -- ranking ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TieGroup:
    """Rows whose exact scores are equal, in the order the tie rule gives them."""

    rows: tuple[int, ...]
    taken: int  # how many of them the ranking took before it stopped


@dataclass(frozen=True)
class Ranking:
    """The best rows in exact order, their exact cosines, and the exact ties the ranking met."""

    order: list[int]
    cosines: dict[int, float]
    ties: tuple[TieGroup, ...]


class TieRule:
    """A profile's order for exactly tied rows, over one table (``salt`` for ``shuffle``)."""

    def __init__(self, table: RecordTable, rule: str, salt: int = 0) -> None:
        self.table = table
        self.rule = rule
        self.salt = salt

    def order(self, rows: list[int], need: int) -> list[int]:
        """Exactly tied rows ordered by the rule; only the first ``need`` kept."""
        if len(rows) == 1:
            return rows
        table = self.table
        if self.rule == "id":
            return heapq.nsmallest(need, rows, key=table.ids.__getitem__)
        if self.rule == "shuffle":
            keys = splitmix64(table.id_hash[rows] ^ np.uint64(self.salt))
            order = np.lexsort((table.seq[rows], keys))[:need]
            return [rows[i] for i in order]
        seq = table.seq[rows] if self.rule == "insertion" else -table.seq[rows]
        if need < len(rows):
            part = np.argpartition(seq, need - 1)[:need]
            return [rows[i] for i in part[np.argsort(seq[part])]]
        return [rows[i] for i in np.argsort(seq)]


def rank(
    table: RecordTable,
    mask: np.ndarray | None,
    qfloat: np.ndarray,
    exact: ExactScores,
    k: int,
    ties: TieRule,
) -> Ranking:
    """The best ``k`` eligible rows in exact order (``mask`` marks the eligible rows among
    ``[0, count)``; None means every alive row), their exact cosines and the tie groups met."""
    count = table.count
    if mask is None:
        mask = table.alive[:count] if table.holes else None
    eligible = count if mask is None else int(np.count_nonzero(mask))
    if eligible == 0 or k == 0:
        return Ranking([], {}, ())
    d = table.vectors.shape[1]
    scores = table.vectors[:count] @ qfloat.astype(np.float32)
    if mask is not None:
        scores = np.where(mask, scores, np.float32(-np.inf))
    # Proven bound on |float32 score - exact cosine| for unit vectors, doubled for safety.
    tol = 2.0 * (d + 8) * _UNIT_ROUNDOFF
    take = min(k, eligible)
    if eligible > take:
        threshold = float(scores[np.argpartition(scores, count - take)[count - take :]].min())
    else:
        threshold = float(scores[scores > -np.inf].min())
    low = np.nextafter(np.float32(threshold - 2 * tol), np.float32(-np.inf))
    contenders = np.flatnonzero(scores >= low)
    contenders = contenders[np.argsort(-scores[contenders], kind="stable")]
    values = scores[contenders].astype(np.float64)
    chains = np.split(contenders, np.flatnonzero(values[:-1] - values[1:] > 2 * tol) + 1)
    order: list[int] = []
    groups: list[TieGroup] = []
    for chain in chains:
        if len(order) >= take:
            break
        if chain.size == 1:
            order.append(int(chain[0]))
        else:
            order.extend(_exact_order(chain.tolist(), exact, take - len(order), ties, groups))
    order = order[:take]
    return Ranking(order, exact.cosines(order), tuple(groups))


def _exact_order(
    chain: list[int], exact: ExactScores, need: int, ties: TieRule, groups: list[TieGroup]
) -> list[int]:
    """The best ``need`` rows of a chain of near-equal float scores, in exact order.

    Rows are grouped by their exact key; groups are taken best first, and within a group (an
    exact tie) the tie rule decides. Every tie group taken from is appended to ``groups``.
    """
    exact.fill(chain)
    # Rows of one source (a text) share a key: group by source first, so a hundred thousand
    # copies of one text cost one fraction, then merge the sources whose keys are equal.
    by_source: dict[object, list[int]] = {}
    for row in chain:
        by_source.setdefault(exact.source(row), []).append(row)
    by_key: dict[Fraction, list[int]] = {}
    merged = False
    for rows in by_source.values():
        group = by_key.setdefault(exact.key(rows[0]), [])
        merged |= bool(group)
        group.extend(rows)
    if merged:  # keep every group in the chain's order, as the tie rules expect
        place = {row: i for i, row in enumerate(chain)}
        for group in by_key.values():
            group.sort(key=place.__getitem__)
    out: list[int] = []
    for key in sorted(by_key, reverse=True):
        rows = by_key[key]
        want = need - len(out)
        if len(rows) > 1:
            ordered = ties.order(rows, len(rows))
            groups.append(TieGroup(tuple(ordered), min(want, len(rows))))
            out.extend(ordered[:want])
        else:
            out.extend(rows)
        if len(out) >= need:
            break
    return out
