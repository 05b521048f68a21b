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
_SCORE_SHIFT = 2 * _SCORE_BITS
_SCORE_SCALE = float(2**_SCORE_BITS)


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
    root = math.isqrt(((p * p) << _SCORE_SHIFT) // norm2_product)
    # float(root) / 2**64 is the correctly rounded quotient: the division by a power of two
    # is exact, so it is the same bits as the integer true division ``root / 2**64``.
    value = float(root) / _SCORE_SCALE
    if value > 1.0:
        value = 1.0
    return value if p > 0 else -value


class ExactScores:
    """Exact dot products and cosines of stored rows with one query, cached per row's source.

    ``by_text`` maps texts to exact integer vectors (a FakeEmbedder's) and, when it knows them,
    their exact squared norms (else None); without it a row's exact vector is its stored
    float32 vector, taken as the binary fraction it is.
    """

    def __init__(
        self,
        table: RecordTable,
        qexact: np.ndarray,
        by_text: Callable[[list[str]], tuple[np.ndarray, list[int] | None]] | None,
        qnorm: int | None = None,
    ) -> None:
        self._table = table
        self._qexact = qexact
        self._by_text = by_text
        self._texts = table.texts if by_text is not None else None
        self._cache: dict[object, tuple[int, int]] = {}
        self._keys: dict[object, Fraction] = {}
        self._cosines: dict[object, float] = {}
        self._qnorm = qnorm  # the query's exact squared norm, when the caller knows it

    def source(self, row: int) -> object:
        """What a row's exact vector is computed from: its text (a FakeEmbedder's) or itself."""
        return self._texts[row] if self._texts is not None else row

    def fill(self, rows: Sequence[int]) -> None:
        """Compute (exact dot with the query, exact squared norm) for rows not cached yet."""
        cache, texts = self._cache, self._texts
        missing: dict[object, int] = {}
        for row in rows:
            key: object = texts[row] if texts is not None else row
            if key not in cache and key not in missing:
                missing[key] = row
        if not missing:
            return
        norms: list[int] | None = None
        if self._by_text is not None:
            exact, norms = self._by_text(list(missing))  # type: ignore[arg-type]
        else:
            exact = float_to_exact(self._table.vectors[list(missing.values())])
        q = self._qexact
        qnorm = self.query_norm()
        if norms is not None and exact.dtype == np.int64 and q.dtype == np.int64:
            # By Cauchy-Schwarz every partial sum of a row's dot product is at most
            # sqrt(|a|**2 |q|**2) in magnitude: below 2**62, int64 cannot overflow.
            small = max(norms) * qnorm < 2**124
            dots = (exact @ q).tolist() if small else exact_dot(exact, q)
        else:
            dots, norms = exact_dot(exact, q), exact_products(exact, exact)
        for source, dot, norm in zip(missing, dots, norms):
            cache[source] = (dot, norm)

    def key(self, row: int) -> Fraction:
        """``sign(p) * p**2 / |d|**2``: orders rows exactly as their cosines do (one fraction
        per distinct source: a hundred thousand copies of one text share it)."""
        source = self.source(row)
        key = self._keys.get(source)
        if key is None:
            dot, norm = self._cache[source]
            key = self._keys[source] = Fraction(dot * abs(dot), norm)
        return key

    def query_norm(self) -> int:
        """The query's exact squared norm."""
        if self._qnorm is None:
            q = self._qexact
            if q.dtype == np.int64 and _magnitude(q) ** 2 * q.size < 2**62:
                self._qnorm = int(q @ q)
            else:
                self._qnorm = exact_dot(q[None, :], q)[0]
        return self._qnorm

    def cosines(self, rows: Sequence[int]) -> dict[int, float]:
        """The exact cosines of ``rows`` (one per distinct source)."""
        self.fill(rows)
        cache, done, texts = self._cache, self._cosines, self._texts
        qnorm = self.query_norm()
        out: dict[int, float] = {}
        for row in rows:
            source = texts[row] if texts is not None else row
            value = done.get(source)
            if value is None:
                dot, norm = cache[source]
                value = done[source] = sqrt_score(dot, norm * qnorm)
            out[row] = value
        return out


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
    scores = table.screen(qfloat)
    if mask is not None:
        scores = np.where(mask, scores, np.float32(-np.inf))
    # Proven bound on |float32 score - exact cosine| for unit vectors, doubled for safety.
    tol = 2.0 * (d + 8) * _UNIT_ROUNDOFF
    take = min(k, eligible)
    if eligible > take:  # the take-th best score
        threshold = float(np.partition(scores, count - take)[count - take])
    else:
        threshold = float(scores[scores > -np.inf].min())
    # Every row within 2 tol of the threshold is a contender; the extra 2**-20 keeps the
    # bound below that even after it is rounded to float32 for the comparison.
    low = threshold - 2 * tol - 2.0**-20
    contenders = np.flatnonzero(scores >= low)
    contenders = contenders[np.argsort(-scores[contenders], kind="stable")]
    values = scores[contenders].astype(np.float64)
    # Chains: runs of contenders whose neighbouring float scores are too close to order.
    cuts = (np.flatnonzero(values[:-1] - values[1:] > 2 * tol) + 1).tolist()
    rows = contenders.tolist()
    order: list[int] = []
    groups: list[TieGroup] = []
    for start, end in zip([0, *cuts], [*cuts, len(rows)]):
        if len(order) >= take:
            break
        if end - start == 1:
            order.append(rows[start])
        else:
            order.extend(_exact_order(rows[start:end], exact, take - len(order), ties, groups))
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
