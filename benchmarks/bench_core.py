"""Core benchmarks: embedding throughput, query latency, store memory, single-embed latency.

Run: ``python benchmarks/bench_core.py`` (or ``make bench``). Every speed target is a ratio to a
baseline measured in the same run.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tracemalloc
from collections.abc import Callable

import numpy as np
from _common import best_of, print_table, verdict

from placeborag import FakeEmbedder, FakeVectorStore, _embedder, _hashing

WORDS = (
    "refund policy shipping order return money back days parcel invoice account password "
    "delivery customs warranty exchange store credit tracking number express"
).split()


def corpus(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        text = ""
        while len(text) < 50:
            text += rng.choice(WORDS) + " "
        out.append(text[:50].strip())
    return out


def cold(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` with the embedder's memos of large batches emptied first: every round pays for
    the whole hashing, as a first embedding of a corpus does."""

    def run() -> object:
        _hashing._PLANS.clear()
        _embedder._MEMBER_DRAWS.clear()
        return fn()

    return run


def bench_embedding() -> list[tuple[str, str, str, str]]:
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.preprocessing import normalize

    texts = corpus(10_000)
    hv = HashingVectorizer(analyzer="char_wb", ngram_range=(3, 4), n_features=256, norm=None)
    sk = best_of(lambda: normalize(hv.transform(texts)), repeat=5)
    e256, e1024 = FakeEmbedder(dimensions=256), FakeEmbedder(dimensions=1024)
    ours = best_of(cold(lambda: e256.embed_batch(texts)), repeat=5)
    ours_1024 = best_of(cold(lambda: e1024.embed_batch(texts)), repeat=5)
    single = best_of(lambda: e256.embed("refund policy"), repeat=5, number=2000)
    speedup = sk / ours
    return [
        ("embed_batch 10k x ~50 chars, 256-d", f"{ours * 1e3:.1f} ms", "", ""),
        ("sklearn HashingVectorizer char_wb(3,4) + L2", f"{sk * 1e3:.1f} ms", "", ""),
        ("speed-up over sklearn", f"{speedup:.2f}x", ">= 1x (aim 3x)", verdict(speedup >= 1)),
        (
            "1024-d time / 256-d time",
            f"{ours_1024 / ours:.2f}x",
            "<= 1.5x",
            verdict(ours_1024 / ours <= 1.5),
        ),
        ("single embed('refund policy')", f"{single * 1e6:.1f} us/call", "report", ""),
    ]


def bench_query() -> list[tuple[str, str, str, str]]:
    n, d = 100_000, 256
    texts = corpus(n, seed=11)
    ids = [f"doc-{i:06d}" for i in range(n)]
    metas = [{"lang": ("en", "hu", "de")[i % 3], "year": 2015 + i % 12} for i in range(n)]
    embedder = FakeEmbedder(dimensions=d)
    store = FakeVectorStore(embedder=embedder)
    store.upsert_many(ids, texts, metas)
    matrix = embedder.embed_batch(texts).astype(np.float32)
    q = embedder.embed_batch(["refund policy for parcels"])[0].astype(np.float32)

    def floor():
        scores = matrix @ q
        top = np.argpartition(-scores, 9)[:10]
        return top[np.argsort(-scores[top])]

    base = best_of(floor, repeat=15)
    plain = best_of(lambda: store.query("refund policy for parcels", k=10), repeat=15)
    where = {"$and": [{"lang": {"$in": ["hu", "de"]}}, {"year": {"$gte": 2020}}]}
    store.query("refund policy for parcels", k=10, where=where)  # build the filter columns once
    filtered = best_of(lambda: store.query("refund policy for parcels", k=10, where=where), 15)
    tie_store = FakeVectorStore(embedder=embedder)
    tie_store.upsert_many(ids, ["identical refund text"] * n)
    ties = best_of(lambda: tie_store.query("refund", k=10), repeat=5)
    return [
        ("floor: float32 matvec + argpartition, 100k x 256", f"{base * 1e3:.2f} ms", "", ""),
        (
            "query(k=10)",
            f"{plain * 1e3:.2f} ms ({plain / base:.2f}x)",
            "<= 1.5x floor",
            verdict(plain / base <= 1.5),
        ),
        (
            "query(k=10, where=$and[$in, $gte])",
            f"{filtered * 1e3:.2f} ms ({filtered / base:.2f}x)",
            "<= 1.5x floor",
            verdict(filtered / base <= 1.5),
        ),
        ("query(k=10), 100k exact ties", f"{ties * 1e3:.2f} ms ({ties / base:.2f}x)", "report", ""),
    ]


def bench_trace() -> list[tuple[str, str, str, str]]:
    """trace() against query() on the same store: the trace should cost about a query."""
    n = 2_000
    texts = corpus(n, seed=17)
    ids = [f"doc-{i:05d}" for i in range(n)]
    metas = [{"lang": ("en", "hu", "de")[i % 3]} for i in range(n)]
    rows = []
    for label, options in (
        ("pre-filter", {}),
        ("post-filter", {"filter_mode": "post"}),
        ("recall=0.5", {"recall": 0.5}),
    ):
        store = FakeVectorStore(**options)
        store.upsert_many(ids, texts, metas)
        where = {"lang": "hu"}
        store.query("refund policy for parcels", 5, where)  # build the filter columns once
        query = best_of(lambda s=store: s.query("refund policy for parcels", 5, where), 15)
        trace = best_of(lambda s=store: s.trace("refund policy for parcels", 5, where), 15)
        explain = best_of(lambda s=store: s.explain("refund policy for parcels", 5, where), 3)
        ratio = trace / query
        rows += [
            (f"{label}: query(k=5), 2,000 records", f"{query * 1e3:.2f} ms", "", ""),
            (
                f"{label}: trace(k=5)",
                f"{trace * 1e3:.2f} ms ({ratio:.1f}x query)",
                "about a query (<= 5x)",
                verdict(ratio <= 5),
            ),
            (
                f"{label}: explain(k=5), every survivor ranked",
                f"{explain * 1e3:.1f} ms",
                "report",
                "",
            ),
        ]
    return rows


def bench_memory() -> list[tuple[str, str, str, str]]:
    n, d = 100_000, 256
    texts = corpus(n, seed=13)
    ids = [f"doc-{i:06d}" for i in range(n)]
    metas = [{"lang": ("en", "hu")[i % 2]} for i in range(n)]
    embedder = FakeEmbedder(dimensions=d)
    raw = n * d * 4
    tracemalloc.start()
    store = FakeVectorStore(embedder=embedder)
    for start in range(0, n, 10_000):
        store.upsert_many(
            ids[start : start + 10_000],
            texts[start : start + 10_000],
            metas[start : start + 10_000],
        )
    current, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ratio = current / raw
    return [
        ("raw float32 matrix, 100k x 256", f"{raw / 2**20:.1f} MiB", "", ""),
        ("store holding 100k records (texts, ids given)", f"{current / 2**20:.1f} MiB", "", ""),
        ("store / raw matrix", f"{ratio:.2f}x", "<= 1.5x", verdict(ratio <= 1.5)),
    ]


def bench_import() -> list[tuple[str, str, str, str]]:
    code = (
        "import sys, time; t = time.perf_counter(); import placeborag; "
        "t = time.perf_counter() - t; "
        "heavy = [m for m in ('numpy', 'pandas', 'plotly', 'sklearn') if m in sys.modules]; "
        "print(f'{t * 1e3:.1f}', ','.join(heavy) or '-')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    ms, heavy = out.stdout.split()
    return [
        (
            "import placeborag",
            f"{ms} ms, loads: {heavy}",
            "numpy at most",
            verdict(heavy in ("-", "numpy")),
        )
    ]


def main() -> None:
    print_table("Embedding (ratios against scikit-learn in this run)", bench_embedding())
    print_table("Query over 100,000 records", bench_query())
    print_table("Trace against query, 2,000 records", bench_trace())
    print_table("Memory", bench_memory())
    print_table("Import", bench_import())


if __name__ == "__main__":
    main()
