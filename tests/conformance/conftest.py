"""The conformance suite's shared state: one client per engine, and the agree/differ table.

Each check records one cell (engine x behaviour). At the end of the session the table is written
to ``artifacts/conformance.md`` and printed in the terminal summary, whether or not ``-s`` is
given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _differences import DIFFERENCES, Cell, results
from _engines import ENGINES, Engine


@pytest.fixture(scope="session")
def opened_engines() -> Iterator[dict[str, Engine]]:
    """Every engine opened so far, shared by the whole session and closed at its end."""
    opened: dict[str, Engine] = {}
    yield opened
    for instance in opened.values():
        instance.close()


@pytest.fixture(scope="module", params=list(ENGINES))
def engine(
    request: pytest.FixtureRequest,
    opened_engines: dict[str, Engine],
    tmp_path_factory: pytest.TempPathFactory,
) -> Engine:
    """Each engine, opened once per session (skipped when it is not installed)."""
    key = request.param
    if key not in opened_engines:
        instance = ENGINES[key]()
        instance.key = key  # type: ignore[attr-defined]
        instance.open(tmp_path_factory)
        opened_engines[key] = instance
    return opened_engines[key]


@pytest.fixture
def check() -> Callable[..., None]:
    """Record one cell of the table and assert it: agreement, or the documented difference."""

    def check_(
        engine: Engine,
        behaviour: str,
        engine_outcome: Any,
        fake_outcome: Any,
        *,
        same: Callable[[Any, Any], bool] | None = None,
        how: str = "",
    ) -> None:
        key = (engine.key, behaviour)  # type: ignore[attr-defined]
        agree = (same or (lambda a, b: a == b))(engine_outcome, fake_outcome)
        documented = DIFFERENCES.get(key)
        results[key] = Cell(agree, how, engine_outcome, fake_outcome)
        if documented is None:
            assert agree, (
                f"{engine.name} and its profile disagree on {behaviour!r}:\n"
                f"  engine: {engine_outcome!r}\n  fake:   {fake_outcome!r}\n"
                "Fix the profile, or document the difference in docs/profiles.md and "
                "tests/conformance/_differences.py."
            )
        else:
            assert not agree, (
                f"{engine.name} now agrees with its profile on {behaviour!r} ({engine_outcome!r}); "
                "remove the stale entry from docs/profiles.md and tests/conformance/_differences.py"
            )

    return check_


def _table() -> str:
    engines = [key for key in ENGINES if any(k[0] == key for k in results)]
    behaviours = list(dict.fromkeys(b for _, b in results))
    lines = [
        "| behaviour | " + " | ".join(engines) + " |",
        "|---|" + "---|" * len(engines),
    ]
    for behaviour in behaviours:
        cells = []
        for key in engines:
            cell = results.get((key, behaviour))
            cells.append("n/a" if cell is None else cell.label)
        lines.append(f"| {behaviour} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if not results:
        return
    table = _table()
    notes = "\n".join(
        f"- {engine} / {behaviour}: {DIFFERENCES[(engine, behaviour)]}"
        for engine, behaviour in results
        if (engine, behaviour) in DIFFERENCES
    )
    text = (
        "# Conformance: placeborag profiles against the real engines\n\n"
        "agree: same outcome. agree (opt-in ...): same outcome with that store option. "
        "as a set / count only: the engine defines no order, so only the members (or their "
        "number) are compared. differ: a documented, deliberate difference (docs/profiles.md). "
        "n/a: the engine cannot express the check.\n\n"
        f"{table}\n\n## Documented differences seen in this run\n\n{notes or '- none'}\n"
    )
    out = Path(config.rootpath) / "artifacts" / "conformance.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text, encoding="utf-8")
    terminalreporter.write_sep("=", "conformance: profiles vs real engines")
    terminalreporter.write_line(table)
    terminalreporter.write_line(f"(written to {out})")
