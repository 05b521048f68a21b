"""docs/profiles.md lists every difference the conformance suite accepts (no engine needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _differences import DIFFERENCES

DOC = Path(__file__).parents[2] / "docs" / "profiles.md"
SUFFIX = " (filter_semantics='engine')"


def _rows() -> list[str]:
    return [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]


@pytest.mark.parametrize(("engine", "behaviour"), sorted(DIFFERENCES))
def test_every_accepted_difference_is_documented(engine: str, behaviour: str) -> None:
    base = behaviour.removesuffix(SUFFIX)
    rows = [r for r in _rows() if f"`{engine}`" in r.split("|")[1] and f"| {base} |" in r]
    assert rows, f"docs/profiles.md has no row for {engine} / {base!r}"


def test_every_documented_profile_exists() -> None:
    from placeborag import PROFILES

    table = DOC.read_text(encoding="utf-8").split("## The profiles", 1)[1].split("##", 1)[0]
    named = {
        line.split("|")[1].strip().strip("`")
        for line in table.splitlines()
        if line.startswith("| `")
    }
    assert named == set(PROFILES)
