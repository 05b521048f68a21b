"""The pytest plugin, driven through pytester as a user's project would meet it."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from placeborag import FakeVectorStore
from placeborag._pytest_plugin import EMBEDDER_OPTIONS, STORE_OPTIONS


@pytest.fixture
def pytester(pytester):
    """A user's project: strict pytest config, as ours."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester


def test_the_fixtures_work_with_no_marker(pytester):
    pytester.makepyfile(
        """
        def test_retrieval(fake_vector_store, fake_embedder):
            fake_vector_store.upsert("doc", "our refund policy allows returns")
            assert fake_vector_store.query("refund policy", k=1)[0].id == "doc"
            assert fake_vector_store.embedder is fake_embedder
            assert fake_vector_store.profile.name == "chroma"
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_marker_options_are_routed_to_the_embedder_and_the_store(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag(
            model_name="m2", dimensions=64, clusters={"refund": ["money back"]},
            cluster_spread=0.2, cluster_match="substring",
            profile="qdrant", filter_mode="post", recall=0.5, visibility="manual",
        )
        def test_options(fake_embedder, fake_vector_store):
            assert (fake_embedder.model_name, fake_embedder.dimensions) == ("m2", 64)
            assert fake_embedder.cluster_spread == 0.2
            assert fake_embedder.cluster_match == "substring"
            assert fake_embedder.cluster_of("get money back now") == "refund"
            s = fake_vector_store
            assert (s.profile.name, s.filter_mode, s.recall, s.visibility) == (
                "qdrant", "post", 0.5, "manual")
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_closest_marker_wins_option_by_option(pytester):
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.placeborag(profile="qdrant", dimensions=32)

        @pytest.mark.placeborag(dimensions=64)
        def test_closest(fake_vector_store):
            assert fake_vector_store.profile.name == "qdrant"
            assert fake_vector_store.embedder.dimensions == 64
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_misspelled_option_fails_that_test_and_the_session_runs_on(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag(profle="qdrant")
        def test_typo(fake_vector_store):
            pass

        def test_other(fake_vector_store):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*UsageError: test_a_misspelled_option_fails_that_test_and_the_session_runs_on.py"
            "::test_typo: unknown @pytest.mark.placeborag option 'profle' (did you mean "
            "'profile'?); embedder options: model_name, dimensions, clusters, cluster_spread, "
            "cluster_match; store options: profile, filter_mode, recall, visibility, metric, "
            "tie_order, seed, on_existing_id, pad_missing, filter_semantics, orphans, churn, "
            "query_log"
        ]
    )
    deselected = pytester.runpytest("-p", "no:cacheprovider", "-k", "not typo")
    deselected.assert_outcomes(passed=1, deselected=1)
    assert deselected.ret == pytest.ExitCode.OK


def test_a_usage_error_shows_its_message_not_the_plugins_source_lines(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag(profle="qdrant")
        def test_typo(fake_vector_store):
            pass

        @pytest.mark.placeborag("qdrant")
        def test_positional(fake_embedder):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    output = result.stdout.str()
    assert "unknown @pytest.mark.placeborag option 'profle'" in output
    assert "takes keyword options only" in output
    for source in ("_pytest_plugin.py", "def _options", "raise pytest.UsageError(", "known ="):
        assert source not in output


GETTING_STARTED = Path(__file__).resolve().parent.parent / "docs" / "getting-started.md"


def test_getting_started_lists_every_option_the_marker_accepts():
    text = GETTING_STARTED.read_text(encoding="utf-8")
    header = "| embedder options | store options |\n|---|---|\n"
    row = text[text.index(header) + len(header) :].splitlines()[0]
    embedder, store = (re.findall(r"`(\w+)`", cell) for cell in row.strip("|").split("|"))
    assert (tuple(embedder), tuple(store)) == (EMBEDDER_OPTIONS, STORE_OPTIONS)


def test_getting_started_shows_the_usage_error_the_marker_gives(pytester):
    text = GETTING_STARTED.read_text(encoding="utf-8")
    shown = re.search(
        r"```text\nE   (pytest\.UsageError: test_x\.py::test_y: .*?)\n```", text, re.DOTALL
    )
    assert shown is not None
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.placeborag(profle="chroma")
        def test_y(fake_vector_store):
            pass
        """
    )
    output = pytester.runpytest("-p", "no:cacheprovider").stdout.str()
    message = " ".join(shown.group(1).split())
    assert message in [line.strip().removeprefix("E").strip() for line in output.splitlines()]


def test_positional_marker_arguments_are_a_usage_error(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag("qdrant")
        def test_positional(fake_vector_store):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*takes keyword options only, got positional ('qdrant',)"])


def test_a_bad_option_value_fails_the_test_with_the_librarys_error(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag(profile="pinecone")
        def test_bad_value(fake_vector_store):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*profile='pinecone' must be one of 'chroma', 'qdrant'*"])


def test_the_marker_is_registered_so_strict_markers_accepts_it(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag(profile="qdrant")
        def test_strict(fake_vector_store):
            assert fake_vector_store.profile.name == "qdrant"
        """
    )
    pytester.runpytest("--strict-markers", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.placeborag(**options)*"])


def test_store_options_are_every_keyword_of_the_store_but_the_embedder():
    params = inspect.signature(FakeVectorStore.__init__).parameters
    keyword = {n for n, p in params.items() if p.kind is p.KEYWORD_ONLY}
    assert keyword - {"embedder"} == set(STORE_OPTIONS)


def test_embedder_options_are_every_keyword_of_the_embedder():
    from placeborag import FakeEmbedder

    params = inspect.signature(FakeEmbedder.__init__).parameters
    assert {n for n, p in params.items() if p.kind is p.KEYWORD_ONLY} == set(EMBEDDER_OPTIONS)


def test_loading_the_plugin_imports_neither_numpy_nor_the_core():
    code = (
        "import sys, placeborag._pytest_plugin\n"
        "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith('placeborag.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # placeborag._lazy is the namespaces' name table (it imports nothing of its own).
    assert out.stdout.strip() == (
        "['placeborag._lazy', 'placeborag._options', 'placeborag._pytest_plugin']"
    )


def test_the_option_names_are_listed_once():
    from placeborag import _embedder, _options, _pytest_plugin

    assert _pytest_plugin.EMBEDDER_OPTIONS is _options.EMBEDDER_OPTIONS
    assert _embedder.EMBEDDER_OPTIONS is _options.EMBEDDER_OPTIONS
    assert _pytest_plugin.STORE_OPTIONS is _options.STORE_OPTIONS


@pytest.mark.parametrize(
    ("body", "warning"),
    [
        (
            """
            @pytest.mark.placeborag(profile="qdrant")
            def test_no_fixture():
                pass
            """,
            "*has no effect: the test uses neither placeborag fixture*",
        ),
        (
            """
            @pytest.fixture
            def fake_vector_store():
                return "mine"

            @pytest.mark.placeborag(profile="qdrant")
            def test_overridden(fake_vector_store):
                assert fake_vector_store == "mine"
            """,
            "*has no effect: the test uses neither placeborag fixture*",
        ),
        (
            """
            @pytest.mark.placeborag(profile="qdrant", dimensions=8)
            def test_embedder_only(fake_embedder):
                assert fake_embedder.dimensions == 8
            """,
            "*option(s) profile have no effect*",
        ),
    ],
)
def test_a_marker_with_no_effect_warns(pytester, body, warning):
    import textwrap

    pytester.makepyfile("import pytest\n" + textwrap.dedent(body))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*PlaceboragWarning: *" + warning])


def test_a_marker_whose_fixture_the_test_requests_itself_does_not_warn(pytester):
    # The check once ran before the test body, so this marker "had no effect".
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag(dimensions=48, profile="qdrant")
        def test_dynamic(request):
            store = request.getfixturevalue("fake_vector_store")
            assert store.embedder.dimensions == 48 and store.profile.name == "qdrant"
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "error::UserWarning")
    result.assert_outcomes(passed=1)


def test_a_marker_with_no_effect_fails_a_test_that_makes_its_warnings_errors(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag(profile="qdrant")
        def test_no_fixture():
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "error::UserWarning")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*PlaceboragWarning*has no effect*"])


def test_a_marker_that_reaches_its_fixtures_does_not_warn(pytester):
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.placeborag(profile="qdrant")

        def test_module_marker_without_fixture():
            pass

        @pytest.fixture
        def fake_vector_store(fake_vector_store):
            return fake_vector_store

        @pytest.mark.placeborag(dimensions=8, profile="qdrant")
        def test_wrapped(fake_vector_store):
            assert fake_vector_store.profile.name == "qdrant"
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "error::UserWarning")
    result.assert_outcomes(passed=2)
