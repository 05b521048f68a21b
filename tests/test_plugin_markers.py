"""The placeborag_markers ini option registers a project's markers for -m and --strict-markers."""

import pytest

TESTS = """
import pytest

@pytest.mark.unit
@pytest.mark.p0
def test_routing():
    pass

@pytest.mark.integration
@pytest.mark.p1
def test_streaming():
    pass

@pytest.mark.integration
@pytest.mark.p0
def test_grounding():
    pass
"""


def test_minus_m_p0_selects_the_p0_tests_under_strict_markers(pytester):
    pytester.makeini(
        "[pytest]\naddopts = --strict-markers\nplaceborag_markers = unit integration p0 p1\n"
        "asyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(TESTS)

    result = pytester.runpytest("-p", "no:cacheprovider", "-m", "p0", "-v")

    result.assert_outcomes(passed=2, deselected=1)
    result.stdout.fnmatch_lines(["*test_routing PASSED*", "*test_grounding PASSED*"])


def test_the_option_reads_a_toml_list_from_pyproject(pytester):
    pytester.makepyprojecttoml(
        "[tool.pytest.ini_options]\naddopts = ['--strict-markers']\n"
        "placeborag_markers = ['unit', 'integration', 'p0', 'p1']\n"
        "asyncio_default_fixture_loop_scope = 'function'\n"
    )
    pytester.makepyfile(TESTS)

    result = pytester.runpytest("-p", "no:cacheprovider", "-m", "integration and not p0")

    result.assert_outcomes(passed=1, deselected=2)


def test_the_registered_markers_are_listed_by_pytest_markers(pytester):
    pytester.makeini(
        "[pytest]\nplaceborag_markers = unit p0\nasyncio_default_fixture_loop_scope = function\n"
    )

    result = pytester.runpytest("--markers")

    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.unit: registered by the placeborag_markers option",
            "@pytest.mark.p0: registered by the placeborag_markers option",
        ]
    )


def test_without_the_option_an_unregistered_marker_fails_under_strict_markers(pytester):
    pytester.makeini(
        "[pytest]\naddopts = --strict-markers\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(TESTS)

    result = pytester.runpytest("-p", "no:cacheprovider", "-m", "p0")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*Unknown marker(s) in '-m' expression: p0*"])


@pytest.mark.parametrize("bad", ["p0:", "2fast", "placeborag"])
def test_a_name_that_cannot_be_a_marker_stops_the_run(pytester, bad):
    pytester.makeini(
        f"[pytest]\nplaceborag_markers = unit {bad}\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile("def test_x():\n    pass\n")

    result = pytester.runpytest("-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*placeborag_markers: {bad!r} is not a marker name to register*"])
