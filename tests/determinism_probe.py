"""Digests of a fixed set of vectors and rankings: run in fresh processes by test_determinism.

Kept importable (no test functions) so the same digest is computed in-process, in subprocesses
with different environments, and in pytest-xdist workers.
"""

import hashlib
import json
import sys

TEXTS = [
    "",
    " ",
    "refund policy",
    "Refund Policy!",
    "what is your refund policy for orders",
    "delivery times to remote islands",
    "hogyan kérek vissza pénzt",
    "szállítási idő",
    "返金ポリシー",
    "🙂 emoji 🙃",
    "\ud800 lone surrogate",
    "a\x00b",
    "x" * 300,
    "money back",
    "money back guarantee within thirty days",
]
CLUSTERS = {
    "refund": ["refund policy", "money back", "hogyan kérek vissza pénzt"],
    "shipping": ["delivery times", "szállítási idő"],
}
CONFIGS = [
    {"dimensions": 256},
    {"dimensions": 64, "model_name": "text-embedding-3-small"},
    {"dimensions": 1024, "clusters": CLUSTERS},
    {"dimensions": 128, "clusters": CLUSTERS, "cluster_match": "substring", "cluster_spread": 0.3},
]
QUERIES = ["refund policy", "money back", "delivery", "pénz", "identical"]


def digest() -> dict:
    from placeborag import FakeEmbedder, FakeVectorStore

    out: dict = {}
    for i, config in enumerate(CONFIGS):
        embedder = FakeEmbedder(**config)
        vectors = embedder.embed_array(TEXTS)
        out[f"vectors-{i}"] = hashlib.sha256(vectors.astype("<f8").tobytes()).hexdigest()
        for profile in ("chroma", "qdrant"):
            for mode, recall in (("pre", 1.0), ("post", 0.6)):
                store = FakeVectorStore(
                    embedder=embedder, profile=profile, filter_mode=mode, recall=recall
                )
                ids = [f"d{j:02d}" for j in range(len(TEXTS))] + [f"t{j}" for j in range(6)]
                texts = TEXTS + ["identical text"] * 6
                metas = [{"n": j % 3, "lang": ("en", "hu")[j % 2]} for j in range(len(ids))]
                store.upsert_many(ids, texts, metas)
                for q in QUERIES:
                    for where in (None, {"lang": "hu"}, {"n": {"$gte": 1}}):
                        matches = store.query(q, k=7, where=where)
                        key = f"rank-{i}-{profile}-{mode}-{q}-{where}"
                        out[key] = [(m.id, m.score.hex()) for m in matches]
    blob = json.dumps(out, sort_keys=True).encode()
    return {
        "all": hashlib.sha256(blob).hexdigest(),
        **{k: v for k, v in out.items() if k.startswith("vectors")},
    }


if __name__ == "__main__":
    json.dump(digest(), sys.stdout, sort_keys=True)
