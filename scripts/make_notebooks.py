"""Write the notebooks in notebooks/ from the cell sources below (outputs are never committed).

Run: ``python scripts/make_notebooks.py``. Edit the sources here, not the .ipynb files, so a
review sees Python and Markdown rather than JSON.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

OUT = Path(__file__).resolve().parent.parent / "notebooks"


def md(text: str):
    return new_markdown_cell(text.strip())


def code(text: str):
    return new_code_cell(text.strip())


NOTEBOOKS: dict[str, list] = {}

NOTEBOOKS["explorer.ipynb"] = [
    md("""
# placeborag explorer

The built-in demo scenario: a small support knowledge base (refund and shipping documents in
English and Hungarian, with `tier` and `year` metadata and three declared clusters: refund,
shipping, parcel). Change any control and every view redraws: the projection (PCA, or UMAP
with the `umap` extra: the "method" control), the query-centred ranking, the pre- versus post-filter tables with the funnel, and the cluster
anchors against jitter.

Run this cell (Shift+Enter). Drag a box or a lasso over points to select documents
(`explorer.selection`, `explorer.selected_frame`), then "export pytest" writes a test of the
ranking of just those documents. Click a point (or type an id or words in the find box) to
see where the query left that document and why: its stage, rank, score against the cut, tie
group and nearest documents; click a table row to select it. To explore your own data, pass a
store: `app(store=my_store, query="...")`, and your own 2-D coordinates with `coords=`. Large
stores draw a density layer under the points (see docs/explorer.md, "Large stores").
"""),
    code("""
from placeborag.explore import app

explorer = app()
explorer
"""),
]


# The first code cell of every teaching notebook sets this renderer: JupyterLab draws the
# plotly mimetype, an HTML export (nbconvert, mkdocs-jupyter) the self-contained "notebook" one.
RENDERER = """
import plotly.io as pio

pio.renderers.default = "plotly_mimetype+notebook"
"""

NOTEBOOKS["01-tour.ipynb"] = [
    md("""
# A tour of placeborag

Most mock embedders return random vectors of the right length. A pipeline tested against them
can only prove that it ran: any document may come back first, so an assertion about *which*
document came back means nothing. placeborag replaces the retrieval half of a RAG pipeline
with doubles whose geometry you can reason about: a deterministic embedder, an in-memory
vector store that can misbehave the way real backends do, and an explorer that draws why a
query ranked what it ranked.

This notebook touches each piece once. The numbered notebooks that follow each take one bug
that slips through tests built on random vectors.
"""),
    code(RENDERER),
    md("""
## The embedder

`FakeEmbedder` hashes character n-grams and words into a fixed number of dimensions. Texts that
share words land near each other, and the vector of a text depends only on the text, the model
name and the dimension: no model file, no network, no seed to manage.
"""),
    code("""
from placeborag import FakeEmbedder, cosine_similarity

embedder = FakeEmbedder()
question = embedder.embed("refund policy")
related = embedder.embed("what is your refund policy for orders")
unrelated = embedder.embed("delivery times to remote islands")

print(f"related:   {cosine_similarity(question, related):.3f}")
print(f"unrelated: {cosine_similarity(question, unrelated):.3f}")
"""),
    code("""
same_again = FakeEmbedder().embed("refund policy")
other_model = FakeEmbedder(model_name="text-embedding-3-large").embed("refund policy")

print("same text, new embedder, same vector:", same_again == question)
print("other model name, same vector:", other_model == question)
"""),
    md("""
## The store

`FakeVectorStore` keeps records in memory and ranks them exactly. The built-in demo scenario
is a small help desk: refund, shipping and account answers in English and Hungarian, with
`lang`, `tier` and `year` metadata and three declared clusters.
"""),
    code("""
from placeborag import FakeVectorStore
from placeborag.explore import demo_scenario

scenario = demo_scenario()
store = FakeVectorStore(embedder=scenario.embedder())
store.upsert_many(
    [doc.id for doc in scenario.documents],
    [doc.text for doc in scenario.documents],
    [doc.metadata for doc in scenario.documents],
)
store
"""),
    md("""
## A query

The default profile imitates Chroma: the score is a cosine *distance*, so smaller is better.
`where` takes a Chroma-style metadata filter.
"""),
    code("""
matches = store.query("refund policy", k=5, where={"lang": "hu"})
for rank, match in enumerate(matches, 1):
    print(f"{rank}. {match.id:12} {match.score:.4f}  {match.text}")
"""),
    md("""
## Why these five: `explain()`

`explain()` runs the same query and returns every stage it went through: the candidates, what
the filter removed, what a lossy index lost, the top-k cut and what a post-filter dropped after
it. It is not recorded in `store.queries`, so calling it does not disturb assertions about the
calls your code made.
"""),
    code("""
explanation = store.explain("refund policy", k=5, where={"lang": "hu"})

print("candidates:  ", len(explanation.candidates))
print("filtered out:", len(explanation.filtered_out))
print("lost to recall:", len(explanation.recall_lost))
print("top-k cut:   ", list(explanation.top_k))
print("queries recorded:", len(store.queries))
"""),
    md("""
## The explorer, in one cell

`app()` opens every view of a scenario behind one set of controls: change the query, the
filter, `k`, the profile, the filter mode, the recall or the embedder settings and each figure
redraws. Pass `store=` and `query=` to look at your own store instead of the demo. The app is a
live widget, so it needs a running kernel: a static copy of this notebook shows nothing here.
"""),
    code("""
from placeborag.explore import app

app()
"""),
    md("""
## The same views as plain figures

Each view of the explorer is also a display class: `from_scenario` (or `from_store`) computes
the arrays, `.plot()` draws them, and `figure_` is the plotly figure. The projection is a PCA
of every document vector, with the query as a star and the top-k circled in rank order.
"""),
    code("""
from placeborag.explore import ProjectionDisplay, RankingDisplay

ProjectionDisplay.from_scenario(scenario).plot().figure_
"""),
    md("""
Two dimensions of PCA can misplace points. The ranking view cannot: its x axis is each
document's score for the query, so left to right *is* the ranking, and the dashed line is the
top-k cut. Colour shows what happened to each document.
"""),
    code("""
RankingDisplay.from_scenario(scenario).plot().figure_
"""),
    md("""
## What to assert in your tests

Assert on identities and order (which ids, in what order, under which filter) and on the call
the code under test made. Do not assert stored coordinates: vectors are stable within a
placeborag version, not across versions.
"""),
    code("""
def test_a_hungarian_question_is_answered_from_hungarian_documents():
    store = demo_scenario().store()

    matches = store.query("refund policy", k=5, where={"lang": "hu"})

    assert matches[0].id == "hu-refund-1"
    assert {m.metadata["lang"] for m in matches} == {"hu"}
    assert store.queries[-1].where == {"lang": "hu"}


test_a_hungarian_question_is_answered_from_hungarian_documents()
print("test passed")
"""),
]

NOTEBOOKS["02-post-filter-starvation.ipynb"] = [
    md("""
# Post-filter starvation: fewer results than you asked for

Many approximate indexes take the `k` nearest vectors first and apply the metadata filter to
those `k` afterwards. When the documents that pass the filter are not among the nearest, the
query returns fewer than `k` matches, sometimes none. Nothing fails: the answer is just
quietly short, and the language model is handed less context than the pipeline was designed
for.

A fake that always filters first never shows this. `FakeVectorStore(filter_mode="post")`
does, deterministically, so a test can catch it and prove a fix.
"""),
    code(RENDERER),
    code("""
from placeborag.explore import demo_scenario

scenario = demo_scenario()
print(scenario.query, scenario.k, scenario.where)
print(sum(d.metadata["lang"] == "hu" for d in scenario.documents), "Hungarian documents of",
      len(scenario.documents))
"""),
    md("""
## Same query, same `k`, same data

Two stores over the same documents, differing only in when the filter runs.
"""),
    code("""
pre = scenario.store(filter_mode="pre")
post = scenario.store(filter_mode="post")

pre_matches = pre.query("refund policy", k=5, where={"lang": "hu"})
post_matches = post.query("refund policy", k=5, where={"lang": "hu"})

print(f"pre-filter returned {len(pre_matches)} of k=5")
print(f"post-filter returned {len(post_matches)} of k=5")
"""),
    md("""
`explain()` shows where the other three went: the top-5 cut was taken over every language, and
three English refund documents held places that the filter then emptied.
"""),
    code("""
explanation = post.explain("refund policy", k=5, where={"lang": "hu"})
print("top-5 before the filter:", list(explanation.top_k))
print("dropped by the filter:  ", list(explanation.post_filter_dropped))
print("returned:               ", [m.id for m in explanation.matches])
"""),
    md("""
## Side by side

`FilterModesDisplay` runs the query under both modes. Its tables list, for each mode, what was
returned and what the post-filter threw away after the cut.
"""),
    code("""
from IPython.display import HTML

from placeborag.explore import FilterModesDisplay

modes = FilterModesDisplay.from_scenario(scenario)
HTML(modes.to_html())
"""),
    md("""
The funnel counts the documents at each stage, in the order each mode takes the stages. Under
pre-filtering the filter narrows 38 candidates to the 16 Hungarian ones before the cut; under
post-filtering the cut comes first and the filter has only five to choose from.
"""),
    code("""
modes.plot().figure_
"""),
    md("""
On the ranking view of the post-filter store, better is to the right. The orange crosses on
the right of the dashed cut are the documents that took a place in the top 5 and were then
dropped by the filter.
"""),
    code("""
from placeborag.explore import RankingDisplay

RankingDisplay.from_store(post, "refund policy", k=5, where={"lang": "hu"}).plot().figure_
"""),
    md("""
## A fix, and a test that proves it

A common remedy is to over-fetch: ask the backend for several times `k` and cut to `k`
afterwards. How much is enough depends on how selective the filter is; here, four times is.
"""),
    code("""
def retrieve(store, question, k, where=None, overfetch=4):
    return store.query(question, k=k * overfetch, where=where)[:k]


for name, store in (("pre", pre), ("post", post)):
    matches = retrieve(store, "refund policy", 5, {"lang": "hu"})
    print(f"{name}-filter, over-fetching: {len(matches)} of k=5")
"""),
    md("""
## What to assert in your tests

Pin the backend behaviour once (under post-filtering a filtered query can return fewer than
`k`), then run your own retrieval function against a post-filter store and assert it still
fills `k` whenever enough documents pass the filter. A test that only ever sees a pre-filter
store passes for the broken and the fixed code alike.
"""),
    code("""
def test_post_filtering_returns_fewer_than_k():
    store = demo_scenario().store(filter_mode="post")

    matches = store.query("refund policy", k=5, where={"lang": "hu"})

    assert len(matches) < 5
    assert all(m.metadata["lang"] == "hu" for m in matches)


def test_retrieve_fills_k_even_when_the_backend_post_filters():
    store = demo_scenario().store(filter_mode="post")

    matches = retrieve(store, "refund policy", 5, {"lang": "hu"})

    assert len(matches) == 5
    assert all(m.metadata["lang"] == "hu" for m in matches)


test_post_filtering_returns_fewer_than_k()
test_retrieve_fills_k_even_when_the_backend_post_filters()
print("both tests passed")
"""),
]

NOTEBOOKS["03-cluster-anchors-and-jitter.ipynb"] = [
    md("""
# Cluster anchors and jitter: steering what is near what

Hashing makes texts that share words similar, but paraphrases share few words. When a test is
about paraphrases ("refund policy" and "money back" mean the same thing), declare them as a
cluster. Each cluster gets an anchor vector, and each member sits at a fixed angle from it.

The bug this guards against is a test that relies on an accident of geometry: an ordering that
holds at one dimension and silently flips at another, or a declaration that never applied
because a chunked pipeline never stores the exact declared text.
"""),
    code(RENDERER),
    code("""
from placeborag import FakeEmbedder, cosine_similarity

clusters = {
    "refund": ["refund policy", "money back", "hogyan kérek vissza pénzt", "return my order"],
    "shipping": ["delivery times", "szállítási idő", "when will my parcel arrive"],
}
embedder = FakeEmbedder(clusters=clusters)

same_cluster = cosine_similarity(embedder.embed("refund policy"), embedder.embed("money back"))
other_cluster = cosine_similarity(embedder.embed("refund policy"), embedder.embed("delivery times"))
print(f"refund policy ~ money back:     {same_cluster:.3f}")
print(f"refund policy ~ delivery times: {other_cluster:.3f}")
"""),
    md("""
## The anchor cosine has no dimension in it

Every member gets a jitter magnitude `m`, drawn deterministically from its text in
`[0.5, 1.5) × cluster_spread`. The member is the anchor plus a jitter vector orthogonal to it
and `m` times as long, so its cosine to the anchor is exactly `1 / sqrt(1 + m²)`, at any
dimension.
"""),
    code("""
import math

anchor = embedder.cluster_anchor("refund")
for text in clusters["refund"]:
    m = embedder.jitter_of(text)
    measured = cosine_similarity(anchor, embedder.embed(text))
    predicted = 1 / math.sqrt(1 + m * m)
    print(f"{text:28} m={m:.4f}  cosine={measured:.6f}  1/sqrt(1+m²)={predicted:.6f}")
"""),
    md("""
`AnchorsDisplay` builds the same declaration at 64, 256 and 1024 dimensions. On the left, every
member lands on the curve `1/√(1+m²)`, and its markers for the three dimensions sit on top of
each other. On the right, the cosines *between* members move with the dimension, because that
angle involves two independent jitter directions.
"""),
    code("""
from placeborag.explore import AnchorsDisplay

anchors = AnchorsDisplay.from_embedder(embedder, dimensions=(64, 256, 1024))
anchors.plot().figure_
"""),
    md("""
The arrays behind the figure say the same. Ranking members against their anchor gives one
order at every dimension:
"""),
    code("""
members = anchors.geometry.members
print("member-to-anchor order is the same at every dimension:", anchors.order_is_dimension_free)
members.pivot_table(index=["cluster", "text"], columns="dimensions", values="order").astype(int)
"""),
    md("""
Ranking members against *each other* does not. Take "refund policy" and ask which of its
cluster-mates is second nearest:
"""),
    code("""
pairs = anchors.geometry.pairs
mates = pairs[pairs["pair"].str.startswith("refund policy ↔")].pivot_table(
    index="pair", columns="dimensions", values="cosine"
)
second = {d: mates[d].sort_values(ascending=False).index[1].split(" ↔ ")[1] for d in mates.columns}
print("second-nearest mate of 'refund policy' by dimension:", second)
mates.round(4)
"""),
    md("""
So a test may assert "each member is nearer its own anchor than the other cluster's", or "member
A is nearer the anchor than member B", and keep passing when someone changes `dimensions`. A test
that asserts the order of two members relative to a third member is asserting an accident.

## Chunked pipelines: `cluster_match="substring"`

By default a declaration matches a whole text, byte for byte. A pipeline that chunks documents
stores chunks, never the declared sentence, so the cluster silently applies to nothing.
Substring mode puts any text that *contains* a declared member into that member's cluster.
The longest matching declaration wins, and matching is case-sensitive.
"""),
    code("""
declared = {"refund": ["refund policy allows returns"], "logistics": ["returns"]}
chunk = "Our refund policy allows returns within 30 days. Refunds are"

exact = FakeEmbedder(clusters=declared)
substring = FakeEmbedder(clusters=declared, cluster_match="substring")

print("exact mode:    ", exact.cluster_of(chunk))
print("substring mode:", substring.cluster_of(chunk))
print("upper case:    ", substring.cluster_of(chunk.upper()))
print("only 'returns':", substring.cluster_of("free returns on every order"))
"""),
    md("""
## A declaration the geometry cannot satisfy

The embedder checks the declaration when it is built. Two kinds of mistakes are refused with a
`ValueError` there, rather than turning into a puzzling test failure later: a text declared in
two clusters, and clusters too many or too loose for the dimension to keep every member closer
to its own cluster than to any other.
"""),
    code("""
try:
    FakeEmbedder(clusters={"a": ["same text"], "b": ["same text"]})
except ValueError as error:
    print(f"{type(error).__name__}: {error}")
"""),
    code("""
crowded = {"a": ["x1", "x2", "x3"], "b": ["y1", "y2", "y3"], "c": ["z1", "z2"], "d": ["w1", "w2"]}
try:
    FakeEmbedder(clusters=crowded, dimensions=8, cluster_spread=3.0)
except ValueError as error:
    print(f"{type(error).__name__}: {error}")

print("with the default spread at 256 dimensions:", FakeEmbedder(clusters=crowded).cluster_names)
"""),
    md("""
## What to assert in your tests

Assert member-to-anchor relations, which are dimension-free; assert that your chunks fall into
the cluster you meant (`cluster_of`), so a declaration that matches nothing fails loudly.
"""),
    code("""
def test_members_rank_against_their_anchor_alike_at_every_dimension():
    orders = []
    for dimensions in (64, 256, 1024):
        emb = FakeEmbedder(clusters=clusters, dimensions=dimensions)
        anchor = emb.cluster_anchor("refund")
        orders.append(
            sorted(clusters["refund"], key=lambda t: -cosine_similarity(anchor, emb.embed(t)))
        )

    assert orders[0] == orders[1] == orders[2]


def test_every_stored_chunk_falls_into_the_declared_cluster():
    emb = FakeEmbedder(clusters={"refund": ["refund policy"]}, cluster_match="substring")
    chunks = ["Our refund policy allows returns", "The refund policy for sale items"]

    assert [emb.cluster_of(c) for c in chunks] == ["refund", "refund"]


test_members_rank_against_their_anchor_alike_at_every_dimension()
test_every_stored_chunk_falls_into_the_declared_cluster()
print("both tests passed")
"""),
]

NOTEBOOKS["04-score-conventions-and-ties.ipynb"] = [
    md("""
# Score conventions and ties

Two quiet ways for retrieval code to be wrong on one backend and right on another:

* **Direction.** Chroma-style stores report a distance (lower is better); Qdrant-style stores
  report a similarity (higher is better). Code that re-sorts results, keeps a "best" match or
  applies a threshold has a direction built into it, and it is reversed on the other kind.
* **Ties.** When several documents score exactly the same, the order among them is whatever the
  backend's tie rule says: insertion order in one, id order in another. If a float rounding
  difference decides instead, a test flips between machines.

`FakeVectorStore(profile=...)` reproduces both conventions exactly.
"""),
    code(RENDERER),
    code("""
import pandas as pd

from placeborag.explore import demo_scenario

scenario = demo_scenario()
chroma = scenario.store(profile="chroma")
qdrant = scenario.store(profile="qdrant")
print("chroma higher_is_better:", chroma.profile.higher_is_better, "-", chroma.profile.score_label)
print("qdrant higher_is_better:", qdrant.profile.higher_is_better, "-", qdrant.profile.score_label)
"""),
    md("""
## Same order, different numbers

Both profiles rank by the same cosine, so the ids come back in the same order; only the
reported number differs (here, distance = 1 − similarity).
"""),
    code("""
c = chroma.query("delivery times", k=5)
q = qdrant.query("delivery times", k=5)
print("same ids in the same order:", [m.id for m in c] == [m.id for m in q])
pd.DataFrame(
    {"id": [m.id for m in c], "chroma distance": [m.score for m in c],
     "qdrant similarity": [m.score for m in q]}
)
"""),
    md("""
`RankingDisplay` always puts better on the right, so for Chroma the x axis is reversed: small
distances to the right.
"""),
    code("""
from placeborag.explore import RankingDisplay

RankingDisplay.from_store(chroma, "delivery times", k=5).plot().figure_
"""),
    code("""
RankingDisplay.from_store(qdrant, "delivery times", k=5).plot().figure_
"""),
    md("""
## A sort-direction bug

A reranking step written against a similarity backend keeps "the best" match with `max`. Run
the same function against both profiles:
"""),
    code("""
def best_match(matches):
    return max(matches, key=lambda m: m.score)  # assumes higher is better


print("qdrant:", best_match(q).id)
print("chroma:", best_match(c).id, "<- the worst of the five")
"""),
    code("""
def best_match_fixed(matches, profile):
    pick = max if profile.higher_is_better else min
    return pick(matches, key=lambda m: m.score)


print("qdrant:", best_match_fixed(q, qdrant.profile).id)
print("chroma:", best_match_fixed(c, chroma.profile).id)
"""),
    md("""
## Exact ties

With real models, exact ties are rare; with short texts, repeated chunks and hashing embedders
they are common. To show some, search short two-word texts for groups whose cosine to the query
is equal *in exact arithmetic*. The embedder's vectors are integer counts before normalisation,
so the comparison can be done in integers; this cell reads that integer form through the
embedder's exact extension (`exact_query`, `exact_vectors`), which is what a store ranks with.
"""),
    code("""
from collections import defaultdict
from fractions import Fraction

import numpy as np

from placeborag import FakeEmbedder, FakeVectorStore

WORDS = ["refund", "policy", "shipping", "order", "return",
         "money", "back", "days", "parcel", "invoice"]
embedder = FakeEmbedder(dimensions=32)
query = "refund policy"
texts = [f"{a} {b}{n}" for a in WORDS for b in WORDS for n in range(12)]

q_int = embedder.exact_query(query)[1]  # the integer counts before normalisation
d_int = embedder.exact_vectors(texts)[0]
q_int = [int(x) for x in q_int]
groups = defaultdict(list)
for text, row in zip(texts, d_int):
    row = [int(x) for x in row]
    dot = sum(a * b for a, b in zip(q_int, row))
    if dot > 0:  # cos² = dot² / (|d|² |q|²): equal fractions, equal cosines
        groups[Fraction(dot * dot, sum(x * x for x in row))].append(text)

largest_first = sorted(groups.items(), key=lambda kv: (-len(kv[1]), -kv[0]))
tied = largest_first[0][1][:8]
print(len(tied), "distinct texts with one exact cosine:", tied)
"""),
    md("""
In floating point the eight cosines need not come out as one number. Compute them three
reasonable ways (one matrix product, one dot product per text, a plain Python sum) and count the
distinct results: the last bits depend on the order the products were summed in, which depends
on the method, the CPU and the BLAS library. An order decided by those bits is an accident of
arithmetic, and a different machine has different accidents.
"""),
    code("""
q_vec = np.array(embedder.embed(query))
cosines = {
    "matrix product": (embedder.embed_batch(tied) @ q_vec).tolist(),
    "dot per text": [float(np.dot(embedder.embed_batch([t])[0], q_vec)) for t in tied],
    "Python sum": [sum(x * y for x, y in zip(embedder.embed(t), q_vec)) for t in tied],
}
for method, values in cosines.items():
    print(f"{method:15} {len(set(values))} distinct value(s)")
pd.DataFrame(cosines, index=tied).map(lambda value: f"{value:.17f}")
"""),
    md("""
The store never lets that noise decide. It detects scores too close for float32 to separate,
compares them in exact arithmetic, and breaks exact ties by the profile's rule: Chroma by
insertion order, Qdrant by id. Tied matches also report bit-identical scores.
"""),
    code("""
ids = ["doc-h", "doc-c", "doc-f", "doc-a", "doc-d", "doc-g", "doc-e", "doc-b"]
for profile in ("chroma", "qdrant"):
    store = FakeVectorStore(embedder=embedder, profile=profile)
    store.upsert_many(ids, tied)
    matches = store.query(query, k=8)
    scores = {m.score for m in matches}
    print(f"{profile}: {[m.id for m in matches]}  distinct scores: {len(scores)}")
"""),
    md("""
## What to assert in your tests

Assert orders that do not depend on the tie rule, or assert the tie rule itself when your code
depends on it (deduplication that keeps "the first", pagination across a tie). Run the
direction-sensitive code against both profiles: a test that passes on one and fails on the
other has found a sort-direction bug.
"""),
    code("""
def test_best_match_is_the_top_ranked_match_on_every_profile():
    for profile in ("chroma", "qdrant"):
        store = demo_scenario().store(profile=profile)
        matches = store.query("delivery times", k=5)

        assert best_match_fixed(matches, store.profile).id == matches[0].id


def test_exact_ties_follow_the_profile_tie_rule():
    chroma = FakeVectorStore(embedder=embedder, profile="chroma")
    qdrant = FakeVectorStore(embedder=embedder, profile="qdrant")
    for store in (chroma, qdrant):
        store.upsert_many(ids, tied)

    assert [m.id for m in chroma.query(query, k=8)] == ids
    assert [m.id for m in qdrant.query(query, k=8)] == sorted(ids)


test_best_match_is_the_top_ranked_match_on_every_profile()
test_exact_ties_follow_the_profile_tie_rule()
print("both tests passed")
"""),
]

NOTEBOOKS["05-recall-stale-reads-and-failures.ipynb"] = [
    md("""
# Recall loss, stale reads and failures

A clean in-memory fake answers every query perfectly, immediately and without fail. Production
retrieval does none of these reliably:

* an approximate index can miss the true nearest documents, and says nothing about it;
* a write may not be visible to the next read;
* a read can time out or be refused.

A pipeline that was never tested against these either degrades gracefully or falls over, and
you find out which in production. Each is a deterministic option of `FakeVectorStore`: the same
failure happens identically on every run, so a test can rely on it.
"""),
    code(RENDERER),
    md("""
## Degraded recall

`recall=r` keeps exactly `floor(r × n)` of the `n` candidates before the top-k cut (after a
pre-filter, if there is one). Which ones survive is a hash of the query and the id: the same
query loses the same documents every time, another query loses others.
"""),
    code("""
import math

from placeborag.explore import demo_scenario

scenario = demo_scenario()
perfect = scenario.store()
lossy = scenario.store(recall=0.5)

explanation = lossy.explain("refund policy", k=5)
n, lost = len(explanation.candidates), len(explanation.recall_lost)
print(f"{n} candidates, {lost} lost, floor(0.5 * {n}) = {math.floor(0.5 * n)} survive")
print("perfect index:", [m.id for m in perfect.query("refund policy", k=5)])
print("recall 0.5:   ", [m.id for m in lossy.query("refund policy", k=5)])
"""),
    code("""
again = lossy.explain("refund policy", k=5)
other = lossy.explain("delivery times", k=5)
print("same query, same losses:", again.recall_lost == explanation.recall_lost)
print("other query, same losses:", other.recall_lost == explanation.recall_lost)
"""),
    md("""
Pink crosses on the ranking view are documents the index lost; some of them would have made the
top 5.
"""),
    code("""
from placeborag.explore import RankingDisplay

RankingDisplay.from_store(lossy, "refund policy", k=5).plot().figure_
"""),
    md("""
With few candidates, loss shows up as a short answer too: six documents at `recall=0.4` leave
`floor(2.4) = 2`.
"""),
    code("""
from placeborag import FakeVectorStore

small = FakeVectorStore(recall=0.4)
small.upsert_many(
    [f"doc-{i}" for i in range(6)],
    ["our refund policy allows returns within 30 days", "refund policy exceptions for sale items",
     "how to request a refund", "refund policy for digital purchases",
     "money back guarantee", "delivery times to remote islands"],
)
print("asked for 5, got", len(small.query("refund policy", k=5)))
"""),
    md("""
## Stale reads

With `visibility="manual"`, writes wait until `refresh()`. This is the index-then-query-at-once
pattern that breaks on backends with eventual consistency.
"""),
    code("""
store = FakeVectorStore(visibility="manual")
store.upsert("doc", "our refund policy allows returns")

print("before refresh:", store.query("refund policy"), "| pending writes:", store.pending_writes)
store.refresh()
print("after refresh: ", [m.id for m in store.query("refund policy")])
"""),
    md("""
## Injected failures

`fail_next_query()` makes the next query raise `RetrievalTimeout`, which is also a
`TimeoutError`, so code that catches the builtin catches it. `times=` repeats it, and any
exception instance can be injected. Writes keep working. Every query is recorded in
`store.queries`, failed ones included, so a test can assert how often the code asked.
"""),
    code("""
from placeborag import RetrievalTimeout

store = scenario.store()
store.fail_next_query()
try:
    store.query("refund policy", k=3)
except TimeoutError as error:
    print("caught as TimeoutError:", type(error).__name__, isinstance(error, RetrievalTimeout))


class UpstreamRefused(Exception):
    pass


store.fail_next_query(RetrievalTimeout("slow"), times=2)
store.fail_next_query(UpstreamRefused("connection refused"))
for attempt in range(4):
    try:
        print(attempt, "ok", len(store.query("refund policy", k=3)), "matches")
    except Exception as error:
        print(attempt, type(error).__name__, error)
print("queries recorded:", len(store.queries))
"""),
    md("""
Now a retrieval function with one retry, and the assertions that prove it retries exactly once:
"""),
    code("""
def retrieve(store, question, k=3, attempts=2):
    for attempt in range(attempts):
        try:
            return store.query(question, k=k)
        except TimeoutError:
            if attempt == attempts - 1:
                raise


store = scenario.store()
store.fail_next_query()
matches = retrieve(store, "refund policy")
print(len(matches), "matches after", len(store.queries), "queries:")
print([r.text for r in store.queries])
"""),
    md("""
## A reranker that times out once, then recovers

`ScriptedScorer` is a double for a reranking model: each request gets the next step of a
script. This one fails the first request, scores every later one with a function of the text,
and `then_repeats()` keeps the last step for any further request. Its `requests` record what
the code under test sent.
"""),
    code("""
from placeborag import ScriptedScorer

scorer = (
    ScriptedScorer.failing(TimeoutError("read timed out"))
    .then_scores(lambda text: 0.9 if "money back" in text else 0.1)
    .then_repeats()
)


def rerank(scorer, question, matches, attempts=2):
    texts = [m.text for m in matches]
    for attempt in range(attempts):
        try:
            scores = scorer.score_all(question, texts)
            break
        except TimeoutError:
            if attempt == attempts - 1:
                return matches  # keep the retrieval order rather than fail the answer
    return [m for _, m in sorted(zip(scores, matches), key=lambda pair: -pair[0])]


matches = scenario.store().query("money back", k=4)
print("retrieved:", [m.id for m in matches])
print("reranked: ", [m.id for m in rerank(scorer, "money back", matches)])
print("scorer requests:", len(scorer.requests))
"""),
    md("""
## What to assert in your tests

Assert how the pipeline behaves under each failure (a shorter answer, a retry, a fallback),
and assert the calls it made: `store.queries` and `scorer.requests` turn "it retried" from a
hope into a fact.
"""),
    code("""
def test_recall_loss_is_exactly_floor_of_recall_times_candidates():
    store = demo_scenario().store(recall=0.5)

    explanation = store.explain("refund policy", k=5)

    survivors = len(explanation.candidates) - len(explanation.recall_lost)
    assert survivors == math.floor(0.5 * len(explanation.candidates))


def test_retrieve_retries_a_timeout_once():
    store = demo_scenario().store()
    store.fail_next_query()

    matches = retrieve(store, "refund policy")

    assert len(matches) == 3
    assert [r.text for r in store.queries] == ["refund policy", "refund policy"]


def test_rerank_survives_one_reranker_timeout():
    scorer = ScriptedScorer.failing(TimeoutError("read timed out")).then_scores(0.5).then_repeats()
    matches = demo_scenario().store().query("money back", k=4)

    reranked = rerank(scorer, "money back", matches)

    assert {m.id for m in reranked} == {m.id for m in matches}
    assert len(scorer.requests) == 2
    assert scorer.requests[0].documents == scorer.requests[1].documents


test_recall_loss_is_exactly_floor_of_recall_times_candidates()
test_retrieve_retries_a_timeout_once()
test_rerank_survives_one_reranker_timeout()
print("all three tests passed")
"""),
]

NOTEBOOKS["06-designing-a-fixture.ipynb"] = [
    md("""
# Designing a fixture with the explorer

A good retrieval test has a small knowledge base in which the behaviour under test actually
happens: the filter that starves, the tie that the rule decides, the document that recall loses.
Finding that small set by hand is slow. The explorer lets you try settings until the picture
shows the behaviour, then exports a pytest module that asserts it, proves that the module fails
when the behaviour's setting is switched off, and saves it. This notebook designs one for
post-filter starvation.
"""),
    code(RENDERER),
    md("""
## Set the scene

Open the explorer on the demo scenario with the settings to look at: `app()` takes every
setting of its controls as a keyword argument (`k`, `where`, `profile`, `metric`,
`filter_mode`, `filter_semantics`, `recall`, ...). Everything below drives it from code so the
notebook reruns identically; by hand, change the same controls.
"""),
    code("""
from placeborag.explore import app

explorer = app(filter_mode="post", k=5, where={"lang": "hu"})
explorer
"""),
    code("""
scenario = explorer.scenario
print(f"query={scenario.query!r} k={scenario.k} where={scenario.where}")
print(f"filter_mode={scenario.filter_mode}")
explorer.tables["post"][["rank", "id", "stage"]]
"""),
    md("""
## Keep only the documents that matter

Thirty-eight documents make a test hard to read. Select the ones that carry the story: the
Hungarian refund answers the query should find, and the English refund answers that crowd them
out of the top 5. (In the explorer, a box or lasso selection on either plot, or the select box,
does the same.)
"""),
    code("""
explorer.select(["hu-refund-1", "hu-refund-2", "hu-refund-4", "en-refund-1", "en-refund-4",
                 "en-refund-5", "en-refund-10"])
"""),
    md("""
## Export, proved

`explorer.export()` (the **export pytest** button) writes the module, then runs it under pytest
in a temporary folder, and runs it again with the setting that causes the behaviour switched
off. The sentence below is read from that second run's result.
"""),
    code("""
source = explorer.export()
export = explorer.last_export
print("preview:", [m.id for m in export.preview])
print("pins:", [b.name for b in export.behaviours])
print(export.verdict)
"""),
    md("""
## Save it, and read it

The panel's **save test** writes the module to the path typed (atomically; an existing file is
replaced only with **overwrite** ticked). From code, `explorer.save_export(path)`. The module is
the test a reviewer reads: the documents one per line, the options the test depends on, the ids
that must come back, and the behaviour in words. No score's value is asserted.
"""),
    code("""
import tempfile
from pathlib import Path

workdir = Path(tempfile.mkdtemp(prefix="placeborag-fixture-"))
saved = explorer.save_export(workdir / "test_post_filter_starvation.py")
print(saved[0].read_text(encoding="utf-8"))
"""),
    md("""
## Keep the scenario

The state behind the module is a `Scenario`, which saves to JSON and loads back, so the fixture
can be revisited in the explorer later (`app(Scenario.load(path))`). The module also offers its
store as a fixture; `explorer.save_export("conftest.py", conftest=True)` writes that fixture
alone, for an application's own tests.
"""),
    code("""
from placeborag.explore import Scenario

chosen = tuple(d for d in scenario.documents if d.id in explorer.selection)
small = scenario.replace(documents=chosen)
small.save(workdir / "scenario.json")
assert Scenario.load(workdir / "scenario.json") == small
explorer.save_export(workdir / "conftest.py", conftest=True)
print(sorted(p.name for p in workdir.iterdir() if not p.name.startswith(".")))
"""),
    md("""
## Run it, and its mutant

The saved module, run by pytest in a subprocess as CI would (only placeborag's own plugin
loaded, which keeps it quick in an environment full of plugins), passes. The same module with
`filter_mode="pre"`, as if the backend changed under the pipeline, fails: two Hungarian matches
become three.
"""),
    code("""
import os
import subprocess
import sys

test_file = saved[0]
(workdir / "conftest.py").unlink()  # the module carries its own fixture
mutant = workdir / "test_mutant.py"
mutant.write_text(
    test_file.read_text(encoding="utf-8").replace('filter_mode="post"', 'filter_mode="pre"'),
    encoding="utf-8",
)


def run_pytest(path, *options):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--color=no", "-p", "no:cacheprovider",
         "-p", "placeborag", str(path), *options],
        cwd=path.parent, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )


for path in (test_file, mutant):
    result = run_pytest(path)
    print(path.name, "exit code:", result.returncode, "|", result.stdout.strip().splitlines()[-1])
    for line in result.stdout.splitlines():
        if line.startswith("E ") and line[1:].strip():  # pytest's explanation of the failure
            print("   ", line[1:].strip())
"""),
    md("""
## Is it decorative?

That mutant was one setting, for one test. `pytest --placeborag-audit` makes a dozen of them
for every test of a suite: it runs each test that touches a placeborag double once as usual,
once more with nothing changed, then once per retrieval mutation that can reach what the test
receives: in the answers (ranking reversed, the filter moved across the top-k cut, ties
flipped, recall lost, stale reads, shape-only vectors with no semantic structure), in the
request the store receives (another question, the filter or `k` never passed on) and in the
writes (a record, a delete or a metadata key lost at ingestion). A test that misses every
mutation that reached it is *decorative*: it would pass with the retrieval broken. Mutations
that cannot reach the test are listed with the reason. See "Are your retrieval tests
decorative?" in the documentation.
"""),
    code("""
import json

audit_file = workdir / "audit.json"
run_pytest(test_file, "--placeborag-audit-json", str(audit_file))
(audited,) = json.loads(audit_file.read_text(encoding="utf-8"))["tests"]
print("verdict:", audited["verdict"], "| caught", "/".join(map(str, audited["score"])))
print("caught:", ", ".join(audited["caught"]))
for mutation, why in audited["skipped"].items():
    print(f"skipped {mutation}: {why}")
"""),
    md("""
## Break the code, read why, open it again

The exported store is a fixture for the application's own tests. Here is a piece of application
code that asks the store for exactly the answers it needs, and a test of it over that store.
The code has the bug the fixture was designed for: it asks a post-filtering store for its top 2,
which hold only one Hungarian answer. Run with `--placeborag-save-failures`, the failure's
report has a **placeborag** section saying why the id the assertion expects did not come back,
in the words of the stage that stopped it, and the lines that open the failing store again.
"""),
    code("""
(workdir / "answers.py").write_text('''
def hungarian_refunds(store, k):
    # The k best Hungarian refund answers. Broken: it asks for exactly k.
    return [m.id for m in store.query("refund policy", k=k, where={"lang": "hu"})]
''', encoding="utf-8")
(workdir / "test_answers.py").write_text('''
from answers import hungarian_refunds
from test_post_filter_starvation import build_store


def test_the_two_best_hungarian_refunds_are_answered():
    assert hungarian_refunds(build_store(), 2) == ["hu-refund-1", "hu-refund-4"]
''', encoding="utf-8")
result = run_pytest(workdir / "test_answers.py", "--placeborag-save-failures", "failures")
print("test_answers.py exit code:", result.returncode)
print(result.stdout.split("- placeborag -")[1].split("=====")[0].strip("-").strip())
"""),
    md("""
`hu-refund-4` passes the filter, but the index took the two best candidates before filtering.
The saved scenario opens in the explorer on the store and the query the test saw: the same
ranking, and the same sentence for `hu-refund-4` as the section's.
"""),
    code("""
(saved_failure,) = (workdir / "failures").glob("*.json")
again = app(Scenario.load(saved_failure))
print(again.explain("hu-refund-4")["why"])
again
"""),
    md("""
Fix the code (ask for more candidates until `k` Hungarian answers come back, as notebook 02
does) and the test passes, with no section: designed in the explorer, exported, broken, read,
opened again, fixed. The loop is closed.
"""),
    code("""
(workdir / "answers.py").write_text('''
def hungarian_refunds(store, k):
    # The k best Hungarian refund answers: over-fetch until k come back, or every record did.
    fetch = k
    while True:
        found = store.query("refund policy", k=fetch, where={"lang": "hu"})
        if len(found) >= k or fetch >= len(store):
            return [m.id for m in found[:k]]
        fetch *= 2
''', encoding="utf-8")
result = run_pytest(workdir / "test_answers.py")
print("fixed test_answers.py exit code:", result.returncode, "| placeborag section:",
      "- placeborag -" in result.stdout)
"""),
]

NOTEBOOKS["07-real-versus-fake-geometry.ipynb"] = [
    md("""
# Real versus fake geometry

placeborag ships a recording of a real model, all-MiniLM-L6-v2, embedding a small support
knowledge base (36 documents in English, German and Hungarian) and 12 questions.
`load_demo_recording().embedder()` replays those vectors without the model; any text that was
not recorded raises instead of being guessed.

This notebook puts the same documents in two stores, one over the recording and one over
`FakeEmbedder`, and compares them. The point is to be precise about what a fake can and cannot
tell you: it tests plumbing (filters, cuts, sort direction, ties, failures), not retrieval
quality.
"""),
    code(RENDERER),
    code("""
import pandas as pd

from placeborag import FakeEmbedder, FakeVectorStore, load_demo_recording

recording = load_demo_recording()
print(recording)


def build(embedder, **options):
    store = FakeVectorStore(embedder=embedder, profile="qdrant", **options)
    store.upsert_many(
        list(recording.document_ids),
        list(recording.document_texts),
        [dict(m) for m in recording.document_metadata],
    )
    return store


real = build(recording.embedder())
fake = build(FakeEmbedder())
"""),
    md("""
## Top 3 for each recorded question

The recording also kept, for each question, the ids the real model ranked first and a
hand-labelled set of relevant documents. Replay reproduces the recorded ranking exactly; the
fake agrees where the question shares words with its answer and misses paraphrases.
"""),
    code("""
rows = []
for text, meta in zip(recording.query_texts, recording.query_metadata):
    real_top = [m.id for m in real.query(text, k=3)]
    fake_top = [m.id for m in fake.query(text, k=3)]
    rows.append({
        "question": text,
        "real top 3": ", ".join(real_top),
        "fake top 3": ", ".join(fake_top),
        "real = recorded": real_top == list(meta["expected_top3"]),
        "same top 1": real_top[0] == fake_top[0],
    })
table = pd.DataFrame(rows)
n = len(table)
print(f"replay reproduces the recorded top 3 for {table['real = recorded'].sum()} of {n} questions")
print(f"fake and real agree on the top document for {table['same top 1'].sum()} of {n}")
table
"""),
    md("""
## The geometry, side by side

`store_from_vectors` puts the recorded vectors, queries included, in a store the displays can
draw. One question, real model first: the current and the 2023 refund-window documents lead
almost level, the current one, `refund-window`, on top.
"""),
    code("""
from placeborag.explore import RankingDisplay, store_from_vectors

question = "How many days do I have to return an item for a refund?"
real_view = store_from_vectors(
    recording.document_vectors,
    recording.document_ids,
    recording.document_texts,
    [dict(m) for m in recording.document_metadata],
    queries=dict(zip(recording.query_texts, recording.query_vectors)),
    profile="qdrant",
)
RankingDisplay.from_store(real_view, question, k=3, color_by="topic").plot().figure_
"""),
    md("""
The fake on the same question: every score is small, and the top three are simply the texts
that share the most character fragments with the question ("item", "refund", "order"), one of
them about invoices. The answer itself is further down.
"""),
    code("""
RankingDisplay.from_store(fake, question, k=3, color_by="topic").plot().figure_
"""),
    md("""
Where the answer and its translations rank under each embedder. Neither connects the question
to the German and Hungarian versions of the answer: hashing knows nothing of meaning, and
all-MiniLM-L6-v2 was trained on English. Real geometry has blind spots of its own.
"""),
    code("""
def rank_of(store, doc_id):
    return [m.id for m in store.query(question, k=len(store))].index(doc_id) + 1


for doc_id in ("refund-window", "refund-de", "refund-hu"):
    print(f"{doc_id:14} real rank {rank_of(real, doc_id):2}   fake rank {rank_of(fake, doc_id):2}")
"""),
    md("""
## Where they agree: the plumbing

Everything that does not depend on *which* documents are similar behaves identically under both
embedders: a filter only returns matching records, a post-filter can return fewer than `k`,
scores come back in the profile's direction, and the same query gives the same answer twice.
"""),
    code("""
def plumbing(embedder):
    store = build(embedder, filter_mode="post")
    question = recording.query_texts[0]
    matches = store.query(question, k=5, where={"lang": "hu"})
    scores = [m.score for m in store.query(question, k=5)]
    return {
        "only Hungarian": all(m.metadata["lang"] == "hu" for m in matches),
        "fewer than k": len(matches) < 5,
        "best first": scores == sorted(scores, reverse=True),
        "repeatable": store.query(question, k=5) == store.query(question, k=5),
    }


pd.DataFrame({"real (replay)": plumbing(recording.embedder()), "fake": plumbing(FakeEmbedder())})
"""),
    md("""
## What to assert in your tests

With the fake, assert plumbing: filters, cuts, direction, ties, retries. Where a test must rest
on real semantic geometry (a paraphrase the model is known to handle), replay a recording: it is
as deterministic and offline as the fake, and it raises for any text it has not seen. Neither
measures whether your retrieval is *good*; that is an evaluation job, run against the real
model.
"""),
    code("""
def test_the_recorded_model_finds_the_refund_window_for_a_paraphrase():
    store = build(recording.embedder())
    question = "How many days do I have to return an item for a refund?"

    matches = store.query(question, k=3)

    assert matches[0].id == "refund-window"


def test_post_filtering_starves_with_either_embedder():
    for embedder in (recording.embedder(), FakeEmbedder()):
        store = build(embedder, filter_mode="post")
        assert len(store.query(recording.query_texts[0], k=5, where={"lang": "hu"})) < 5


test_the_recorded_model_finds_the_refund_window_for_a_paraphrase()
test_post_filtering_starves_with_either_embedder()
print("both tests passed")
"""),
]


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        nb = new_notebook(cells=cells)
        nb.metadata["kernelspec"] = {
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "name": "python3",
        }
        nb.metadata["language_info"] = {"name": "python"}
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"{Path(name).stem[:20]}-{i:02d}"
        nbformat.write(nb, OUT / name)
        print("wrote", OUT / name)


if __name__ == "__main__":
    main()
