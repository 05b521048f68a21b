"""Keyword search benchmark: a repeat BM25 query over an unchanged 16,000-document store.

``HybridRetriever``'s keyword half scores exactly (rational arithmetic, see
``placeborag/_fusion.py``). A query repeated over records that did not change rebuilds no index;
this measures what scoring it costs, against two floors measured in the same run:

- **float floor**: BM25 in float64 numpy over postings precomputed once (term -> positions and
  term frequencies), the least work a keyword scorer can do per query, without exactness;
- **vector half**: ``store.query(text, k=50)`` on the same store, the other half of the same
  hybrid query.

Two corpora: a vocabulary of 3,000 words drawn with Zipf weights (60 to 120 tokens a document,
as real chunks are), and the worst case for exactness: 20 words, every document holding most
of them, so thousands of documents tie with the 50th.

Run: ``python benchmarks/bench_keyword.py``. The target is a ratio to the float floor.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable

import numpy as np
from _common import best_of, print_table, verdict

from placeborag import FakeEmbedder, FakeVectorStore, HybridRetriever
from placeborag._fusion import tokenize

N = 16_000
K = 50
TARGET = 10.0  # exact scoring may cost at most this many float floors


def zipf_corpus(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3000)]
    weights = [1 / (i + 1) for i in range(len(vocabulary))]
    return [" ".join(rng.choices(vocabulary, weights, k=rng.randint(60, 120))) for _ in range(n)]


WORDS = (
    "refund policy shipping order return money back days parcel invoice account password "
    "delivery customs warranty exchange store credit tracking number express"
).split()


def small_vocabulary_corpus(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(n)]


def float_floor(texts: list[str], k1: float = 1.2, b: float = 0.75) -> Callable[[str], list[int]]:
    """A float64 BM25 over postings built once: the per-query work without exactness."""
    postings: dict[str, tuple[list[int], list[int]]] = {}
    lengths = np.zeros(len(texts))
    for position, text in enumerate(texts):
        tokens = tokenize(text)
        lengths[position] = len(tokens)
        counts: dict[str, int] = {}
        for token in tokens:
            counts[token] = counts.get(token, 0) + 1
        for token, tf in counts.items():
            entry = postings.setdefault(token, ([], []))
            entry[0].append(position)
            entry[1].append(tf)
    arrays = {t: (np.array(p), np.array(f, dtype=np.float64)) for t, (p, f) in postings.items()}
    n, avg = len(texts), float(lengths.mean())
    norm = k1 * (1 - b + b * lengths / avg)

    def search(query: str) -> list[int]:
        scores = np.zeros(n)
        for term in dict.fromkeys(tokenize(query)):
            if term not in arrays:
                continue
            positions, tf = arrays[term]
            df = len(positions)
            idf = np.log1p((n - df + 0.5) / (df + 0.5))
            scores[positions] += idf * tf * (k1 + 1) / (tf + norm[positions])
        top = np.argpartition(-scores, K)[:K]
        return top[np.lexsort((top, -scores[top]))].tolist()

    return search


def bench(label: str, texts: list[str], query: str) -> list[tuple[str, str, str, str]]:
    ids = [f"doc-{i:05d}" for i in range(len(texts))]
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=64))
    store.upsert_many(ids, texts, [{"lang": ("en", "hu")[i % 2]} for i in range(len(texts))])
    retriever = HybridRetriever(store, candidates=K)
    index = retriever._keyword_index()  # built once: the repeat query reuses it
    floor = float_floor(texts)
    floor_time = best_of(lambda: floor(query), repeat=7)
    vector = best_of(lambda: store.query(query, k=K), repeat=7)
    index._search(query, K, None)  # the first query of this index version
    repeat = 3 if "--quick" in sys.argv else 5
    keyword = best_of(lambda: index._search(query, K, None), repeat=repeat)
    ratio = keyword / floor_time
    written = iter(range(10**6))

    def after_write() -> None:  # a write lands: the index is rebuilt, the postings made again
        store.upsert(f"extra-{next(written)}", texts[0])
        retriever.query(query, k=10)

    rebuilt = best_of(after_write, repeat=3)
    return [
        (
            f"{label}: float floor (numpy BM25, postings built once)",
            f"{floor_time * 1e3:.2f} ms",
            "",
            "",
        ),
        (f"{label}: vector half, store.query(k={K})", f"{vector * 1e3:.2f} ms", "report", ""),
        (
            f"{label}: exact keyword search, repeat query",
            f"{keyword * 1e3:.2f} ms ({ratio:.1f}x floor)",
            f"<= {TARGET:.0f}x floor",
            verdict(ratio <= TARGET),
        ),
        (
            f"{label}: whole hybrid query, repeat",
            f"{best_of(lambda: retriever.query(query, k=10), repeat=repeat) * 1e3:.2f} ms",
            "report",
            "",
        ),
        (
            f"{label}: hybrid query after a write (index rebuilt)",
            f"{rebuilt * 1e3:.0f} ms",
            "report",
            "",
        ),
    ]


def main() -> None:
    rows = bench(f"zipf, {N:,} docs", zipf_corpus(N), "w3 w17 w250 w1200")
    rows += bench(f"20 words, {N:,} docs", small_vocabulary_corpus(N), "refund policy parcel")
    print_table(f"Repeat keyword query over an unchanged {N:,}-document store (k={K})", rows)


if __name__ == "__main__":
    main()
