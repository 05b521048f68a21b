"""The extras a user installs hold what a user's test suite needs, and the docs say which."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")
requirements = pytest.importorskip("packaging.requirements")

ROOT = Path(__file__).resolve().parent.parent


def extras() -> dict[str, list[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        name: [requirements.Requirement(r).name for r in declared]
        for name, declared in project["optional-dependencies"].items()
    }


def test_the_user_extra_brings_pytest_and_nothing_of_the_projects_own_tools() -> None:
    found = extras()

    assert found["pytest"] == ["pytest"]
    assert {"pytest-asyncio", "playwright", "langchain-tests"} <= set(found["test"])


@pytest.mark.parametrize("path", ["README.md", "docs/integrations.md"])
def test_the_docs_name_the_user_extra_and_call_the_test_extra_the_projects(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")

    assert "placeborag[pytest," in text
    assert "The `test` extra is the project's own" in text
