"""The lower-bounds constraints file pins exactly the minimums pyproject.toml declares.

``make lower-bounds`` (run by ``make test``) installs the project with
``tests/constraints/lower-bounds.txt`` on Python 3.10; this test keeps that file and the
declared bounds from drifting apart, in either direction.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+: the lower-bounds run is on 3.10
requirements = pytest.importorskip("packaging.requirements")
version = pytest.importorskip("packaging.version")

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "tests" / "constraints" / "lower-bounds.txt"
MAKEFILE = ROOT / "Makefile"
# The runtime packages whose minimum the lower-bounds environment checks, by the extra that
# declares it; the test tools are pinned only where the plugin depends on them (pytest).
CHECKED = {
    "numpy": None,
    "pandas": "explore",
    "scikit-learn": "explore",
    "plotly": "explore",
    "ipywidgets": "explore",
    "anywidget": "explore",
    "langchain-core": "langchain",
    "llama-index-core": "llamaindex",
    "pytest": "test",
}


def _pins() -> dict[str, str]:
    pins = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, pinned = line.partition("==")
            assert pinned, f"{line!r} in {CONSTRAINTS.name} must pin one version with =="
            pins[name.strip()] = pinned.strip()
    return pins


def _minimums() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = {}
    for name, extra in CHECKED.items():
        declared = (
            project["dependencies"] if extra is None else project["optional-dependencies"][extra]
        )
        (requirement,) = [
            requirements.Requirement(r)
            for r in declared
            if requirements.Requirement(r).name == name
        ]
        (lowest,) = [s.version for s in requirement.specifier if s.operator == ">="]
        found[name] = lowest
    return found


def test_the_constraints_pin_every_declared_minimum_and_nothing_else():
    pins, minimums = _pins(), _minimums()
    assert sorted(pins) == sorted(minimums)
    for name, lowest in minimums.items():
        assert version.Version(pins[name]) == version.Version(lowest), (
            f"{name}: pyproject.toml declares >={lowest}, {CONSTRAINTS.name} pins {pins[name]}"
        )


def test_the_lower_bounds_run_is_on_the_lowest_python_requires_python_allows():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["requires-python"] == ">=3.10"
    assert "sys.version_info[:2] == (3, 10)" in MAKEFILE.read_text(encoding="utf-8")


def test_the_makefile_runs_the_lower_bounds_in_make_test():
    text = MAKEFILE.read_text(encoding="utf-8")
    recipe = re.search(r"^test:.*?(?=^\S)", text, re.MULTILINE | re.DOTALL)
    assert recipe is not None and "lower-bounds" in recipe.group(0)


HAYSTACK_CONSTRAINTS = ROOT / "tests" / "constraints" / "lower-bounds-haystack.txt"


def test_the_haystack_constraints_pin_its_declared_minimum_and_run_in_make_lower_bounds():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (declared,) = [
        requirements.Requirement(r) for r in project["optional-dependencies"]["haystack"]
    ]
    (lowest,) = [s.version for s in declared.specifier if s.operator == ">="]
    pins = {}
    for line in HAYSTACK_CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, pinned = line.partition("==")
            pins[name.strip()] = pinned.strip()

    assert version.Version(pins["haystack-ai"]) == version.Version(lowest)
    assert pins["numpy"] == _pins()["numpy"] and pins["pytest"] == _pins()["pytest"]
    (asyncio,) = [
        requirements.Requirement(r)
        for r in project["optional-dependencies"]["test"]
        if r.startswith("pytest-asyncio")
    ]
    (asyncio_lowest,) = [s.version for s in asyncio.specifier if s.operator == ">="]
    assert version.Version(pins["pytest-asyncio"]) == version.Version(asyncio_lowest)
    text = MAKEFILE.read_text(encoding="utf-8")
    assert re.search(r"^lower-bounds: .*lower-bounds-haystack", text, re.MULTILINE)
