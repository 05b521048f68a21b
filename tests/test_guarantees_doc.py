"""docs/guarantees.md names, for each promise, the test that holds it: every name must exist."""

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
PAGE = (ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")


def named_tests():
    """Each ``tests/....py::name`` on the page; ``::name`` alone refers to the last file named."""
    current = None
    for match in re.finditer(r"`(tests/[\w/]+\.py)?(?:::(\w+))?`", PAGE):
        path, name = match.groups()
        if path:
            current = path
        if name:
            yield current, name


def test_the_page_names_tests():
    assert len(list(named_tests())) >= 20


def test_every_test_the_guarantees_page_names_exists():
    missing = []
    for path, name in named_tests():
        source = (ROOT / path).read_text(encoding="utf-8")
        if not re.search(rf"^(async )?def {name}\b|^{name} = ", source, re.MULTILINE):
            missing.append(f"{path}::{name}")
    assert missing == []
