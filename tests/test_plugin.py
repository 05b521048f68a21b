"""The pytest plugin, driven through pytester as a user's project would meet it."""

import inspect
import subprocess
import sys

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


def test_a_misspelled_option_stops_the_run_with_the_known_options(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.placeborag(profle="qdrant")
        def test_typo(fake_vector_store):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: test_a_misspelled_option_stops_the_run_with_the_known_options.py::test_typo: "
            "unknown @pytest.mark.placeborag option 'profle' (did you mean 'profile'?); "
            "embedder options: model_name, dimensions, clusters, cluster_spread, cluster_match; "
            "store options: profile, filter_mode, recall, visibility, metric, tie_order, seed, "
            "on_existing_id, pad_missing, filter_semantics, orphans, churn"
        ]
    )


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
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*takes keyword options only, got positional ('qdrant',)"])


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
    assert out.stdout.strip() == "['placeborag._pytest_plugin']"
