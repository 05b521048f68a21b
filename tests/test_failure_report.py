"""The failure report: a failing retrieval test says why the asserted ids did not come back.

Each inner project below fails one test per reason a record can stop at (the filter, the top-k
cut, the post-filter window, recall, a tie, a write not yet visible, an injected failure),
queried directly and through the LangChain, LlamaIndex and Haystack adapters; the tests read
the "placeborag" section pytest prints for it.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placeborag import FakeVectorStore, Match, _touched
from placeborag._failure_report import asserted_ids, section

# The inner project's helpers: one corpus, written and queried through one front end.
FRONTS = '''
import os

from placeborag import FakeVectorStore

FRONT = os.environ["FRONT"]
DOCS = [
    ("a", "refund policy hu", {"lang": "hu"}),
    ("b", "refund policy en", {"lang": "en"}),
    ("c", "shipping times", {"lang": "en"}),
    ("d", "refund money back", {"lang": "en"}),
    ("t1", "exact twin text", {"lang": "en"}),
    ("t2", "exact twin text", {"lang": "en"}),
]
ALL = [doc_id for doc_id, _, _ in DOCS]


class Front:
    """A store holding DOCS, written and queried through FRONT."""

    def __init__(self, **options):
        if FRONT == "haystack":
            from placeborag.integrations.haystack import PlaceboDocumentStore

            self.adapter = PlaceboDocumentStore(profile="chroma", **options)
            self.store = self.adapter.store
        else:
            self.store = FakeVectorStore(**options)
            if FRONT == "langchain":
                from placeborag.integrations.langchain import PlaceboVectorStore

                self.adapter = PlaceboVectorStore(store=self.store)
            elif FRONT == "llama_index":
                from placeborag.integrations.llama_index import PlaceboLlamaVectorStore

                self.adapter = PlaceboLlamaVectorStore(store=self.store)
        for doc_id, text, meta in DOCS:
            self.write(doc_id, text, meta)
        self.store.refresh()

    def write(self, doc_id, text, meta):
        if FRONT == "langchain":
            self.adapter.add_texts([text], [meta], ids=[doc_id])
        elif FRONT == "haystack":
            from haystack import Document

            self.adapter.write_documents([Document(id=doc_id, content=text, meta=meta)])
        elif FRONT == "llama_index":
            from llama_index.core.schema import TextNode

            self.adapter.add([TextNode(id_=doc_id, text=text, metadata=meta)])
        else:
            self.store.upsert(doc_id, text, meta)

    def ask(self, text, k, lang=None):
        """The ids the front end returns for ``text`` (``lang``: a metadata filter)."""
        if FRONT == "direct":
            where = None if lang is None else {"lang": {"$eq": lang}}
            return [m.id for m in self.store.query(text, k, where)]
        if FRONT == "langchain":
            where = None if lang is None else {"lang": {"$eq": lang}}
            return [d.id for d in self.adapter.similarity_search(text, k=k, filter=where)]
        if FRONT == "llama_index":
            from llama_index.core.vector_stores.types import (
                MetadataFilter,
                MetadataFilters,
                VectorStoreQuery,
            )

            filters = None if lang is None else MetadataFilters(
                filters=[MetadataFilter(key="lang", value=lang)]
            )
            query = VectorStoreQuery(query_str=text, similarity_top_k=k, filters=filters)
            return list(self.adapter.query(query).ids)
        from placeborag.integrations.haystack import PlaceboTextEmbedder

        vector = PlaceboTextEmbedder(self.adapter.embedder).run(text)["embedding"]
        filters = None if lang is None else {"field": "meta.lang", "operator": "==", "value": lang}
        return [d.id for d in self.adapter.embedding_retrieval(vector, filters, top_k=k)]
'''

# One failing test per reason; REASONS says which id each one asserts and what the section
# must say of it.
REASONS_MODULE = """
from fronts import ALL, Front


def test_filter():
    ids = Front().ask("refund policy", 2, lang="en")
    assert ids == ["a", "b"]


def test_cut():
    ids = Front().ask("refund policy", 1)
    assert "d" in ids


def test_post_filter_window():
    ids = Front(filter_mode="post").ask("exact twin text", 1, lang="hu")
    assert ids == ["a"]


def test_recall():
    ids = Front(recall=0.5).ask("refund policy", 6)
    assert set(ids) == set(ALL)


def test_tie():
    ids = Front().ask("exact twin text", 1)
    assert ids == ["t2"]


def test_stale_write():
    front = Front(visibility="manual")
    front.write("e", "refund policy new", {"lang": "en"})
    ids = front.ask("refund policy new", 1)
    assert ids == ["e"]


def test_injected_failure():
    front = Front()
    front.store.fail_next_query()
    assert front.ask("refund policy", 1) == ["b"]
"""

#: test name -> (the asserted id, words of the reason its line must hold).
REASONS = {
    "test_filter": ("'a'", "fails the where filter at {'lang': {'$eq': 'en'}}"),
    "test_cut": ("'d'", "not good enough for the top-1 cut (lower is better; the edge is at"),
    "test_post_filter_window": ("'a'", "taken before the post-filter"),
    "test_recall": (None, "the approximate index (recall 0.5) lost it"),
    "test_tie": ("'t2'", "ties exactly with 1 other record(s) at score"),
    "test_stale_write": ("'e'", "not visible yet: it was written under visibility='manual'"),
    "test_injected_failure": (None, "a failure injected with fail_next_query()"),
}
# What differs through Haystack: its adapter turns a filter into an id restriction before the
# store ranks, and post-filters the store's window itself: the store sees no filter, so the
# section says where the store's own cut left the id.
HAYSTACK = {
    "test_filter": ("'a'", "outside the ids the query was restricted to (ids=...)"),
    "test_post_filter_window": ("'a'", "not good enough for the top-1 cut (lower is better"),
}


def sections(output: str) -> dict[str, str]:
    """Each failed test's "placeborag" section, by test name."""
    found: dict[str, str] = {}
    for match in re.finditer(
        r"_{3,} (test_\w+) _{3,}\n(.*?)(?=\n_{3,} test_|\n={3,})", output, re.S
    ):
        name, body = match.groups()
        part = re.split(r"\n-+ placeborag -+\n", body)
        if len(part) == 2:
            found[name] = part[1]
    return found


def run(
    tmp_path: Path,
    front: str,
    *args: str,
    module: str = REASONS_MODULE,
    seed: str = "0",
    name: str = "test_reasons.py",
) -> str:
    """Run the inner project in a subprocess (adapters imported afresh), with ``FRONT``."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "fronts.py").write_text(FRONTS)
    (tmp_path / name).write_text(textwrap.dedent(module))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "FRONT": front, "PYTHONPATH": _path(), "PYTHONHASHSEED": seed},
    )
    return result.stdout


def _path() -> str:
    root = str(Path(__file__).resolve().parents[1])
    return os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])


@pytest.mark.parametrize("front", ["direct", "langchain", "llama_index", "haystack"])
def test_each_reason_is_named_for_the_asserted_id(tmp_path, front):
    if front != "direct":
        modules = {"langchain": "langchain_core", "llama_index": "llama_index.core"}
        pytest.importorskip(modules.get(front, front))
    expected = dict(REASONS)
    if front == "haystack":
        expected.update(HAYSTACK)
    output = run(tmp_path, front)
    found = sections(output)
    assert f"{len(expected)} failed" in output, output
    assert sorted(found) == sorted(expected), output
    for name, (asserted, words) in expected.items():
        lines = found[name].splitlines()
        if asserted is None:
            assert any(words in line for line in lines), (name, found[name])
        else:
            line = next((ln for ln in lines if ln.strip().startswith(asserted)), None)
            assert line is not None and words in line, (name, found[name])


# -- what is printed, and when ----------------------------------------------------------------

ONE_FAILURE = """
import json

from fronts import Front


def test_the_hungarian_policy_comes_first():
    ids = Front().ask("refund policy", 2, lang="en")
    json.dump(ids, open("seen.json", "w"))
    assert ids == ["a", "b"]


def test_a_passing_query(fake_vector_store):
    fake_vector_store.upsert("x", "refund policy")
    assert [m.id for m in fake_vector_store.query("refund")] == ["x"]


def test_a_failure_that_queried_no_store():
    assert 1 == 2
"""


def test_only_a_failing_test_that_queried_a_store_gets_a_section(tmp_path):
    output = run(tmp_path, "direct", module=ONE_FAILURE)
    assert "2 failed, 1 passed" in output, output
    assert sorted(sections(output)) == ["test_the_hungarian_policy_comes_first"], output
    assert output.count("- placeborag -") == 1


def test_the_same_failure_prints_the_same_bytes(tmp_path):
    first = sections(run(tmp_path / "one", "direct", module=REASONS_MODULE))
    again = sections(run(tmp_path / "two", "direct", module=REASONS_MODULE, seed="12345"))
    assert sorted(first) == sorted(REASONS)
    assert again == first


HOSTILE = """
from placeborag import FakeVectorStore


def test_hostile_values():
    store = FakeVectorStore()
    store.upsert("a\\x1b[31mred\\nline", "refund policy", {"lang": "<b>hu</b>\\x07"})
    store.upsert("b", "refund policy en", {"lang": "en"})
    ids = [m.id for m in store.query("refund\\x1b[2J\\npolicy", 1, {"lang": "en"})]
    assert ids == ["a\\x1b[31mred\\nline"]
"""


def test_every_user_value_is_escaped(tmp_path):
    output = run(tmp_path, "direct", module=HOSTILE)
    section = sections(output)["test_hostile_values"]
    assert "\x1b" not in section and "\x07" not in section
    assert "'refund\\x1b[2J\\npolicy', k=1, where={'lang': 'en'}" in section
    line = next(
        ln for ln in section.splitlines() if ln.strip().startswith("'a\\x1b[31mred\\nline'")
    )
    assert "fails the where filter at {'lang': 'en'}" in line


def test_under_xdist_each_worker_reports_and_saves_its_failures(tmp_path):
    pytest.importorskip("xdist")
    output = run(tmp_path, "direct", "-n", "2", "--placeborag-save-failures", "saved")
    found = sections(output)
    assert sorted(found) == sorted(REASONS), output
    assert "fails the where filter at {'lang': {'$eq': 'en'}}" in found["test_filter"]
    saved = sorted(p.name for p in (tmp_path / "saved").iterdir())
    assert len(saved) == len(REASONS) and all(name.endswith(".json") for name in saved)


# -- the failing store, saved and opened again -------------------------------------------------


def test_a_saved_failing_store_reopens_with_the_ranking_the_test_saw(tmp_path):
    explore = pytest.importorskip("placeborag.explore")
    output = run(tmp_path, "direct", "--placeborag-save-failures", "saved", module=ONE_FAILURE)
    section = sections(output)["test_the_hungarian_policy_comes_first"]
    seen = json.loads((tmp_path / "seen.json").read_text())
    path = re.search(r"app\(Scenario\.load\('([^']+)'\)\)", section).group(1)
    command = re.search(r"placeborag report --scenario (\S+) --out report.html", section)
    assert command.group(1) == path

    scenario = explore.Scenario.load(tmp_path / path)
    assert (scenario.query, scenario.k, scenario.where) == (
        "refund policy",
        2,
        {"lang": {"$eq": "en"}},
    )
    matches = scenario.store().query(scenario.query, scenario.k, scenario.where)
    assert [m.id for m in matches] == seen == ["b", "d"]

    app = explore.app(explore.Scenario.load(tmp_path / path), mode="output")
    assert [app.explain(i)["rank"] for i in seen] == [1, 2]
    assert app.explain("a")["why"] in section

    from placeborag._cli import main

    assert (
        main(["report", "--scenario", str(tmp_path / path), "--out", str(tmp_path / "r.html")]) == 0
    )
    page = html.unescape((tmp_path / "r.html").read_text())
    assert f"assert [m.id for m in matches] == {json.dumps(seen)}" in page


OWN_VECTORS = """
import json

import numpy as np
from placeborag.explore import store_from_vectors


def test_over_my_own_vectors():
    vectors = np.array([[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.0, 1.0, 0.0], [0.6, 0.0, 0.8]])
    store = store_from_vectors(
        vectors,
        ["a", "b", "c", "d"],
        ["alpha", "beta", "gamma", "delta"],
        [{"lang": "en"}, {"lang": "hu"}, {"lang": "en"}, {"lang": "en"}],
        queries={"my question": [0.9, 0.3, 0.1]},
    )
    ids = [m.id for m in store.query("my question", 2, {"lang": "en"})]
    json.dump(ids, open("seen.json", "w"))
    assert ids == ["b", "a"]
"""


def test_a_store_over_its_own_vectors_is_saved_with_their_recording(tmp_path, capsys):
    pytest.importorskip("placeborag.explore")
    output = run(tmp_path, "direct", "--placeborag-save-failures", "saved", module=OWN_VECTORS)
    section = sections(output)["test_over_my_own_vectors"]
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert "'b' (asserted at place 1): fails the where filter at {'lang': 'en'}" in section
    opening = section.split("open it with\n", 1)[1].splitlines()
    assert opening[-1].strip() == (
        "app(store=s.store(embedder=embedder), query=s.query, k=s.k, where=s.where)"
    )
    names: dict[str, object] = {}
    cwd = os.getcwd()
    os.chdir(tmp_path)  # the printed lines name the files as the run was given them
    try:
        exec("\n".join(line.strip() for line in opening[:-1]), names)
        store = eval("s.store(embedder=embedder)", names)
        scenario = names["s"]
        app = names["app"](
            store=store, query=scenario.query, k=scenario.k, where=scenario.where, mode="output"
        )
    finally:
        os.chdir(cwd)
    capsys.readouterr()  # the output-mode app prints its figures
    assert [m.id for m in store.query(scenario.query, scenario.k, scenario.where)] == seen
    assert [app.explain(i)["rank"] for i in seen] == [1, 2]
    assert app.explain("b")["why"] in section


def test_the_docs_page_shows_the_section_the_plugin_prints(tmp_path):
    page = (Path(__file__).resolve().parents[1] / "docs" / "failures.md").read_text()
    test = re.search(r"```py\n# test_refunds.py.*?\n(.*?)```", page, re.S).group(1)
    shown = re.search(r"```text\n-+ placeborag -+\n(.*?)```", page, re.S).group(1)
    output = run(
        tmp_path,
        "direct",
        "--placeborag-save-failures",
        "failures",
        module=test,
        name="test_refunds.py",
    )
    assert sections(output) == {"test_the_hungarian_refund_policy_is_found": shown.rstrip("\n")}


# -- the section, built in process --------------------------------------------------------------


def watched_section(store_setup, comparison) -> str:
    """The section of a test that ran ``store_setup`` under a watch and then compared."""
    watch = _touched.start()
    try:
        store_setup()
        watch.comparison = comparison
    finally:
        _touched.stop(watch)
    return section(watch, "test_x.py::test_x")


class Node:
    node_id = "b"


@pytest.mark.parametrize(
    ("operand", "ids", "ordered"),
    [
        ("a", ["a"], False),
        (["b", "a"], ["b", "a"], True),
        ({"b", "a"}, ["a", "b"], False),
        ({"b": 1, "a": 2}, ["a", "b"], False),
        ([Match("a", "t", {}, 0.1), Node()], ["a", "b"], True),
        ([(Match("a", "t", {}, 0.1), 0.1)], ["a"], True),
        ([1, 2.0, None], None, None),
    ],
)
def test_the_ids_of_an_operand_are_read_from_ids_matches_and_documents(operand, ids, ordered):
    op, sides = asserted_ids(("==", operand, 7))
    assert op == "=="
    if ids is None:
        assert sides == []
    else:
        assert [(s.ids, s.ordered) for s in sides] == [(ids, ordered)]


def hostile_store(ids, text):
    store = FakeVectorStore()
    store.upsert_many(list(ids), [f"doc {i}" for i in range(len(ids))])

    def setup():
        store.query(text, k=1)

    return setup


@given(
    ids=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=5, unique=True),
    text=st.text(max_size=20),
    operand=st.recursive(
        st.none() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=4) | st.frozensets(st.text(max_size=4), max_size=3),
        max_leaves=8,
    ),
)
def test_any_assertion_gives_one_escaped_deterministic_section(ids, text, operand):
    comparison = ("==", list(ids) + [operand], operand)
    first = watched_section(hostile_store(ids, text), comparison)
    again = watched_section(hostile_store(ids, text), comparison)
    assert first == again
    assert first.startswith("this test queried 1 store") and first.endswith("\n")
    assert all(line.isprintable() for line in first.splitlines())
