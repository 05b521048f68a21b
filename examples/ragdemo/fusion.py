"""The keyword leg of hybrid retrieval (BM25) and reciprocal rank fusion of ranked id lists."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ragdemo.bugs import check_bugs

_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Case-folded word tokens, in any script."""
    return _WORD.findall(text.casefold())


class KeywordIndex:
    """BM25 over the chunks this pipeline wrote; ties go to the chunk written first."""

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self._k1 = k1
        self._b = b
        self._docs: dict[str, tuple[Counter[str], int, Mapping[str, Any]]] = {}

    def add(self, id: str, text: str, metadata: Mapping[str, Any]) -> None:
        tokens = tokenize(text)
        self._docs.pop(id, None)
        self._docs[id] = (Counter(tokens), len(tokens), dict(metadata))

    def search(self, query: str, k: int, where: Mapping[str, Any] | None = None) -> list[str]:
        """Ids of the best ``k`` chunks sharing a term with ``query`` that satisfy ``where``.

        ``where`` is read as equality on every key; an operator clause raises, because a
        keyword leg that ignored it would return documents the dense leg filtered out.
        """
        if where is not None:
            for key, value in where.items():
                if key.startswith("$") or isinstance(value, Mapping):
                    raise ValueError(
                        f"the keyword leg understands equality filters only, not {key!r}: {value!r}"
                    )
        docs = [
            (id, doc)
            for id, doc in self._docs.items()
            if where is None or all(doc[2].get(key) == value for key, value in where.items())
        ]
        if not docs:
            return []
        average = sum(doc[1] for _, doc in docs) / len(docs)
        terms = set(tokenize(query))
        frequency = {t: sum(1 for _, doc in docs if t in doc[0]) for t in terms}
        scored = []
        for position, (id, (counts, length, _)) in enumerate(docs):
            score = 0.0
            for term in sorted(terms):
                tf = counts.get(term, 0)
                if not tf:
                    continue
                idf = math.log(1 + (len(docs) - frequency[term] + 0.5) / (frequency[term] + 0.5))
                norm = self._k1 * (1 - self._b + self._b * length / (average or 1))
                score += idf * tf * (self._k1 + 1) / (tf + norm)
            if score > 0:
                scored.append((-score, position, id))
        return [id for _, _, id in sorted(scored)[:k]]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    constant: int = 60,
    limit: int | None = None,
    bugs: Iterable[str] = (),
) -> list[str]:
    """Fuse ranked id lists: each list adds ``1 / (constant + rank)`` to an id (ranks from 1).

    Sums are exact fractions and ties go to the id with the better best rank, then to the
    smaller id, so the result does not depend on the order of the lists. The result is cut to
    ``limit`` (the packing budget); no lists, or only empty ones, give ``[]``.
    """
    bugs = check_bugs(bugs)
    if "rrf_empty_raises" in bugs and not any(rankings):
        raise ValueError("nothing to fuse")
    totals: dict[str, Fraction] = {}
    best: dict[str, int] = {}
    for ranking in rankings:
        for rank, id in enumerate(dict.fromkeys(ranking), start=1):
            totals[id] = totals.get(id, Fraction(0)) + Fraction(1, constant + rank)
            best[id] = min(best.get(id, rank), rank)
    if "rrf_unstable_ties" in bugs:
        order = sorted(totals, key=lambda id: -totals[id])  # ties keep first-seen order
    else:
        order = sorted(totals, key=lambda id: (-totals[id], best[id], id))
    if limit is not None and "rrf_no_truncate" not in bugs:
        order = order[:limit]
    return order
