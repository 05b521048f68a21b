"""The public surface: an exact __all__ for every public namespace, each name importable and on
an API reference page, and imports that stay light."""

import ast
import functools
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import placeborag

ROOT = Path(__file__).parent.parent
API_PAGES = ROOT / "docs" / "api"

PUBLIC = {
    "placeborag": {
        "__version__",
        # embedding, and the contract a store asks of an embedder
        "FakeEmbedder",
        "cosine_similarity",
        "Embedder",
        "ExactEmbedder",
        # the store and what it answers
        "FakeVectorStore",
        "StoreOptions",
        "Match",
        "QueryRecord",
        "QueryExplanation",
        "QueryTrace",
        "StoreRecords",
        "STAGES",
        # hybrid retrieval
        "HybridRetriever",
        "KeywordIndex",
        "reciprocal_rank_fusion",
        "HybridExplanation",
        # profiles and limits
        "Profile",
        "PROFILES",
        "get_profile",
        "MAX_K",
        "MAX_DIMENSIONS",
        # scoring doubles
        "ScriptedScorer",
        "GeometryScorer",
        "ScoringRequest",
        "ScoringResponse",
        "ScoringListener",
        # recorded vectors
        "ReplayEmbedder",
        "Recording",
        "record_vectors",
        "load_demo_recording",
        # errors
        "PlaceboragError",
        "PlaceboragTypeError",
        "PlaceboragValueError",
        "FilterError",
        "FilterTypeError",
        "MissingExtra",
        "PlaceboragWarning",
        "RetrievalError",
        "RetrievalTimeout",
        "WriteError",
        "ScriptExhausted",
        "ScriptError",
        "UnrecordedText",
        "RecordingNotFound",
    },
    "placeborag.query_engine": {
        "ScriptedChatModel",
        "ChatMessage",
        "ChatReply",
        "ChatRequest",
        "ToolCall",
        "ToolNotOffered",
        "tool_call",
        "count_tokens",
        "stream_tokens",
        "search_on_topics",
        "answer_from_results",
        "StubKnowledgeStore",
        "KnowledgeResult",
        "KnowledgeCall",
        "WithheldRecord",
        "UnscriptedQuery",
        "CandidateCache",
        "CacheEvent",
        "Conversation",
        "Turn",
        "conversation",
        "Session",
        "Sessions",
        "WindowBudget",
        "Packing",
        "BudgetExceeded",
    },
    "placeborag.toolkit": {
        "check_bool",
        "check_choice",
        "check_int",
        "check_mapping",
        "check_path",
        "check_real",
        "check_str",
        "check_texts",
        "check_unicode",
        "check_unicode_tree",
        "check_vector",
        "check_k",
        "check_id",
        "check_metadatas",
        "replace_directory",
        "check_metadata",
        "checked_model",
        "shown",
        "write_text",
        "compile_filter",
        "FilterRules",
        "filter_rules",
        "STRICT",
        "RETURNED",
        "DROPPED",
        "TIED",
        "BELOW",
        "LOST",
        "FILTERED",
        "UNREACHABLE",
    },
    "placeborag.explore": {
        "CSS_CLASSES",
        "FIGURE_IDS",
        "AnchorGeometry",
        "AnchorsDisplay",
        "Document",
        "Explorer",
        "Export",
        "FilterModesDisplay",
        "Projection",
        "ProjectionDisplay",
        "Projector",
        "RankingDisplay",
        "smallest_corpus",
        "Scenario",
        "StoreRows",
        "VectorTable",
        "anchor_geometry",
        "app",
        "build_export",
        "demo_scenario",
        "export_pytest",
        "filter_mode_table",
        "fit_projector",
        "funnel_counts",
        "project",
        "render_report",
        "store_from_vectors",
        "store_rows",
        "trace_query",
        "write_report",
    },
    "placeborag.integrations": {"document_metadata", "document_text"},
    "placeborag.integrations.langchain": {
        "PlaceboChatModel",
        "PlaceboEmbeddings",
        "PlaceboKnowledgeRetriever",
        "PlaceboReranker",
        "PlaceboRetriever",
        "PlaceboVectorStore",
    },
    "placeborag.integrations.llama_index": {
        "PlaceboEmbedding",
        "PlaceboFunctionCallingLLM",
        "PlaceboLlamaKnowledgeRetriever",
        "PlaceboLlamaVectorStore",
        "PlaceboNodePostprocessor",
        "metadata_filter_function",
        "metadata_filters_to_where",
    },
    "placeborag.integrations.haystack": {
        "PlaceboDocumentEmbedder",
        "PlaceboDocumentStore",
        "PlaceboDuplicateDocumentError",
        "PlaceboEmbeddingRetriever",
        "PlaceboFilterError",
        "PlaceboTextEmbedder",
    },
}
# The namespaces whose import needs an optional extra, and the module that stands for it.
NEEDS = {
    "placeborag.explore": "pandas",
    "placeborag.integrations.langchain": "langchain_core",
    "placeborag.integrations.llama_index": "llama_index.core",
    "placeborag.integrations.haystack": "haystack",
}
NAMES = [(ns, name) for ns, names in PUBLIC.items() for name in sorted(names)]


def namespace(ns):
    if ns in NEEDS:
        pytest.importorskip(NEEDS[ns])
    return importlib.import_module(ns)


@pytest.mark.parametrize("ns", sorted(PUBLIC))
def test_all_is_exactly_the_public_names(ns):
    exported = namespace(ns).__all__
    assert sorted(exported) == sorted(PUBLIC[ns])
    assert len(exported) == len(set(exported))


@pytest.mark.parametrize(("ns", "name"), NAMES)
def test_every_public_name_resolves(ns, name):
    assert getattr(namespace(ns), name) is not None


def directives(page):
    """The ``::: target`` directives of an API page, each with the options written under it."""
    out = []
    for block in re.split(r"^(?=::: )", page.read_text(encoding="utf-8"), flags=re.M)[1:]:
        target, _, rest = block.partition("\n")
        options = rest.split("\n\n", 1)[0]
        out.append((target.removeprefix("::: ").strip(), options))
    return out


def own_docstring(value):
    """What mkdocstrings renders for a name of a whole-namespace directive: a class or a function
    with a docstring of its own (a constant needs a directive of its own)."""
    if inspect.isclass(value):
        return bool(value.__dict__.get("__doc__"))
    return inspect.isroutine(value) and bool(value.__doc__)


@functools.cache
def documented():
    """Every ``namespace.name`` an API page documents: its own directive, or a directive for the
    whole namespace (mkdocstrings then renders each name of its ``__all__`` that has a
    docstring); a dunder counts when the page's text names it."""
    out = set()
    for page in sorted(API_PAGES.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for target, options in directives(page):
            if target in PUBLIC and "members: false" not in options:
                module = namespace(target)
                out |= {
                    f"{target}.{name}"
                    for name in module.__all__
                    if own_docstring(getattr(module, name))
                }
            out.add(target)
        out |= {f"{ns}.{dunder}" for ns in PUBLIC for dunder in re.findall(r"__\w+__", text)}
    return out


@pytest.mark.parametrize(("ns", "name"), NAMES)
def test_every_public_name_is_on_an_api_reference_page(ns, name):
    assert f"{ns}.{name}" in documented(), f"no page of docs/api documents {ns}.{name}"


def test_every_api_reference_directive_names_a_public_name():
    public = set(PUBLIC) | {f"{ns}.{name}" for ns, name in NAMES}
    targets = [t for page in API_PAGES.glob("*.md") for t, _ in directives(page)]
    assert sorted(set(targets) - public) == []
    assert len(targets) == len(set(targets)), "a name is documented twice"


def test_every_api_reference_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert sorted(p.name for p in API_PAGES.glob("*.md")) == sorted(
        re.findall(r"api/(\w+\.md)", nav)
    )


@pytest.mark.slow
def test_the_api_reference_renders_every_public_name(tmp_path):
    # The pages alone, with the site's mkdocstrings options: each public name gets an anchor.
    pytest.importorskip("mkdocstrings")
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    plugin = next(p for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    plugin["mkdocstrings"]["handlers"]["python"]["paths"] = [str(ROOT)]
    docs = tmp_path / "docs"
    (docs / "api").mkdir(parents=True)
    (docs / "index.md").write_text("# API\n", encoding="utf-8")
    for page in API_PAGES.glob("*.md"):
        # Links out of the reference point at pages this small site does not have.
        text = re.sub(r"\]\(\.\./[^)]*\)", "](index.md)", page.read_text(encoding="utf-8"))
        (docs / "api" / page.name).write_text(text, encoding="utf-8")
    site = {"site_name": "api", "docs_dir": str(docs), "plugins": [plugin]}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(site), encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(tmp_path / "mkdocs.yml")],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    anchors = set()
    for html in (tmp_path / "site").rglob("*.html"):
        anchors |= set(re.findall(r'id="(placeborag[\w.]*)"', html.read_text(encoding="utf-8")))
    missing = [
        f"{ns}.{name}"
        for ns, name in NAMES
        if not name.startswith("__") and f"{ns}.{name}" not in anchors
    ]
    assert missing == []


def test_an_unknown_name_is_an_attribute_error_naming_the_nearest():
    with pytest.raises(AttributeError) as excinfo:
        placeborag.FakeEmbeder
    assert excinfo.value.args == (
        "module 'placeborag' has no attribute 'FakeEmbeder'; "
        "did you mean 'FakeEmbedder', 'Embedder', 'ExactEmbedder'?",
    )


@pytest.mark.parametrize("name", sorted(PUBLIC["placeborag.query_engine"]))
def test_a_query_engine_name_read_from_the_top_level_says_where_it_lives(name):
    with pytest.raises(AttributeError) as excinfo:
        getattr(placeborag, name)
    assert excinfo.value.args == (
        f"module 'placeborag' has no attribute {name!r}; it is in placeborag.query_engine",
    )


def test_a_probe_for_a_dunder_gets_a_plain_attribute_error():
    assert not hasattr(placeborag, "__wrapped__")
    with pytest.raises(AttributeError) as excinfo:
        placeborag.toolkit.__wrapped__
    assert excinfo.value.args == ("module 'placeborag.toolkit' has no attribute '__wrapped__'",)


def test_errors_are_also_the_builtins_a_caller_catches():
    assert issubclass(placeborag.PlaceboragTypeError, TypeError)
    assert issubclass(placeborag.PlaceboragValueError, ValueError)
    assert issubclass(placeborag.FilterError, ValueError)
    assert issubclass(placeborag.RetrievalTimeout, TimeoutError)
    assert issubclass(placeborag.MissingExtra, ImportError)
    for name in ("PlaceboragTypeError", "FilterError", "RetrievalError", "MissingExtra"):
        assert issubclass(getattr(placeborag, name), placeborag.PlaceboragError)


# -- the limits ---------------------------------------------------------------------------------


def test_max_k_is_the_largest_k_a_query_takes():
    store = placeborag.FakeVectorStore()
    store.upsert("a", "refund policy")
    assert [m.id for m in store.query("refund", k=placeborag.MAX_K)] == ["a"]
    with pytest.raises(placeborag.PlaceboragValueError, match=f"must be <= {placeborag.MAX_K:,}"):
        store.query("refund", k=placeborag.MAX_K + 1)


def test_max_dimensions_is_the_most_an_embedder_takes():
    top = placeborag.FakeEmbedder(dimensions=placeborag.MAX_DIMENSIONS)
    assert len(top.embed("refund")) == placeborag.MAX_DIMENSIONS
    with pytest.raises(placeborag.PlaceboragValueError) as excinfo:
        placeborag.FakeEmbedder(dimensions=placeborag.MAX_DIMENSIONS + 1)
    assert excinfo.value.args == (
        f"dimensions={placeborag.MAX_DIMENSIONS + 1} must be between 2 and "
        f"{placeborag.MAX_DIMENSIONS}",
    )


# -- names that left ---------------------------------------------------------------------------

# Each name that left a namespace, and the module that defines it.
DEPRECATED = {
    "placeborag": {
        "keyword_scores": "placeborag._fusion",
        "FusedMatch": "placeborag._fusion",
        "MetricScore": "placeborag._profiles",
        "TieInfo": "placeborag._trace",
    },
    "placeborag.toolkit": {
        "record_index": "placeborag._trace",
        "splitmix64": "placeborag._hashing",
        "beside": "placeborag._threads",
        "FreshLocks": "placeborag._threads",
        "gc_paused": "placeborag._threads",
        "nearest": "placeborag._validation",
        "did_you_mean": "placeborag._validation",
        "dump_json": "placeborag._validation",
        "load_json": "placeborag._validation",
        "json_text": "placeborag._validation",
        "read_regular": "placeborag._files",
    },
}
GONE = [(ns, name) for ns, names in DEPRECATED.items() for name in sorted(names)]


@pytest.mark.parametrize(("ns", "name"), GONE)
def test_a_name_that_left_still_resolves_with_a_deprecation_warning(ns, name):
    module = importlib.import_module(ns)
    with pytest.warns(DeprecationWarning) as caught:
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(DEPRECATED[ns][name]), name)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(
        f"{ns}.{name} is deprecated and will be removed in a future release: "
    )
    assert caught[0].filename == __file__  # it points at the line that read the name
    assert name not in module.__all__
    assert name not in dir(module)


@pytest.mark.parametrize(("ns", "name"), GONE)
def test_a_name_that_left_is_on_the_migration_page(ns, name):
    page = (ROOT / "docs" / "migrating.md").read_text(encoding="utf-8")
    assert f"| `{ns}.{name}" in page


def test_a_name_that_left_says_what_to_use_instead():
    with pytest.warns(DeprecationWarning) as caught:
        from placeborag.toolkit import record_index  # noqa: F401
    assert [str(w.message) for w in caught] == [
        "placeborag.toolkit.record_index is deprecated and will be removed in a future release: "
        "use records.position(id, occurrence=n) or trace.position(id, occurrence=n) "
        "(placeborag.StoreRecords, placeborag.QueryTrace)"
    ]
    assert caught[0].filename == __file__


def test_every_read_of_a_name_that_left_warns():
    for _ in range(2):
        with pytest.warns(DeprecationWarning):
            placeborag.TieInfo


def deprecated_reads(source):
    """(line, name) of every name that left a namespace which ``source`` reads from it:
    ``from placeborag import TieInfo``, ``from placeborag.toolkit import gc_paused``,
    ``placeborag.TieInfo`` and ``placeborag.toolkit.gc_paused``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in DEPRECATED:
            gone = DEPRECATED[node.module]
            found += [(node.lineno, a.name) for a in node.names if a.name in gone]
        elif isinstance(node, ast.Attribute):
            owner = ast.unparse(node.value)
            if node.attr in DEPRECATED.get(owner, ()):
                found.append((node.lineno, f"{owner}.{node.attr}"))
    return found


def test_the_check_finds_each_form_of_a_read_of_a_name_that_left():
    source = (
        "from placeborag import TieInfo, Match\n"
        "from placeborag.toolkit import gc_paused, shown\n"
        "x = placeborag.keyword_scores\n"
        "y = placeborag.toolkit.splitmix64\n"
        "from placeborag._threads import gc_paused\n"
        "z = placeborag.toolkit.shown\n"
    )
    assert deprecated_reads(source) == [
        (1, "TieInfo"),
        (2, "gc_paused"),
        (3, "placeborag.keyword_scores"),
        (4, "placeborag.toolkit.splitmix64"),
    ]


PACKAGE_FILES = sorted((ROOT / "placeborag").rglob("*.py"))


@pytest.mark.parametrize(
    "path", PACKAGE_FILES, ids=lambda p: str(p.relative_to(ROOT / "placeborag"))
)
def test_no_module_of_the_package_reads_a_name_that_left(path):
    # the package's own layers import such a name from its private module
    assert deprecated_reads(path.read_text(encoding="utf-8")) == []


# -- import cost --------------------------------------------------------------------------------

HEAVY = (
    "pandas",
    "plotly",
    "sklearn",
    "ipywidgets",
    "langchain_core",
    "llama_index",
    "haystack",
    "scipy",
)


def loaded_after(code):
    probe = (
        f"{code}\nimport sys\n"
        f"print(' '.join(sorted(m for m in {HEAVY + ('numpy',)!r} if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_import_placeborag_loads_nothing_heavy():
    assert loaded_after("import placeborag") == []


def test_importing_the_query_engine_and_toolkit_namespaces_loads_nothing_heavy():
    assert loaded_after("import placeborag.query_engine, placeborag.toolkit") == []


def test_using_every_core_double_loads_numpy_at_most():
    code = (
        "import placeborag as p\n"
        "import placeborag.query_engine as qe\n"
        "s = p.FakeVectorStore(); s.upsert('a', 'refund'); s.query('refund', where={'x': 1})\n"
        "p.ScriptedScorer.scoring(0.5).score('q', ['d'])\n"
        "p.GeometryScorer().score('q', ['d'])\n"
        "p.ReplayEmbedder, p.record_vectors\n"
        "p.reciprocal_rank_fusion([['a', 'b'], ['b']])\n"
        "qe.ScriptedChatModel.answering('ok'), qe.StubKnowledgeStore(), qe.Sessions()\n"
    )
    assert loaded_after(code) == ["numpy"]
