"""The retrieval mutation audit's pytest side: ``pytest --placeborag-audit``.

Loaded by the plugin only when an audit option is given. Each test runs once as usual (its
reports are the ones pytest logs, so the session's outcome is unchanged) and then, if it
touched a placeborag double and passed, once more per retrieval mutation that could change one
of its answers (``placeborag._mutations`` says which, and why the others cannot). A rerun's
reports are never logged: a test *catches* a mutation when a rerun under it fails, and is
*decorative* when it catches none of those it ran under.

Under pytest-xdist the reruns happen in the worker that ran the test; the result travels to
the controller as an attribute of the test's last report, and the controller writes the table,
the JSON and the HTML.
"""

from __future__ import annotations

import html
import json
import warnings
from collections import Counter
from typing import Any

import pytest
from _pytest.nodes import Node
from _pytest.runner import runtestprotocol

from placeborag import _files, _mutations

__all__ = ["Audit", "render_html", "render_json", "render_table"]

_KEY = "placeborag_audit"  # the report attribute carrying one test's result
FORMAT = "placeborag-audit"
VERSION = 1
# Two-letter column names of the terminal table, in the order of MUTATIONS.
_CODES = dict(zip(_mutations.MUTATIONS, ("SH", "RV", "FI", "FC", "KI", "TF", "RL", "SR")))
REAL, DECORATIVE, INAPPLICABLE, NOT_AUDITED = (
    "real",
    "decorative",
    "no mutation applies",
    "not audited",
)


class _Parent:
    """Stands for "the next test" while the same test runs again: tearing down up to it ends
    the test's own function-scoped fixtures and keeps every wider one (module, session)."""

    def __init__(self, item: pytest.Item) -> None:
        self._chain = item.listchain()[:-1]
        self.nodeid = item.nodeid

    def listchain(self) -> list[Node]:
        return self._chain


def _close(item: pytest.Item, nextitem: pytest.Item | None) -> pytest.TestReport:
    """End the wider fixtures (module, session) the next test does not need, as the usual
    teardown would have: the test's own teardown hooks already ran (plugins that clean up
    there must not run twice), so only the fixture stack is unwound, and reported on."""
    state = item.session._setupstate  # the one stack pytest's own teardown unwinds
    call = pytest.CallInfo.from_call(lambda: state.teardown_exact(nextitem), when="teardown")
    item.funcargs = {}  # type: ignore[attr-defined]  # gone: a plugin reporting finds none
    try:
        report: pytest.TestReport = item.ihook.pytest_runtest_makereport(item=item, call=call)
    finally:
        item.funcargs = None  # type: ignore[attr-defined]
    return report


def _outcome(reports: list[pytest.TestReport]) -> str:
    for report in reports:
        if hasattr(report, "wasxfail"):
            return "xfailed" if report.skipped else "xpassed"
    for report in reports:
        if report.failed:
            return "failed"
    if any(report.skipped for report in reports):
        return "skipped"
    return "passed"


class Audit:
    """The audit plugin object (registered by ``placeborag._pytest_plugin``)."""

    def __init__(self, config: pytest.Config) -> None:
        if config.getoption("usepdb", False):
            # pytest enters the debugger on every failure, the reruns' included.
            raise pytest.UsageError(
                "--placeborag-audit cannot run with --pdb: every mutation a test catches is a "
                "failure of its rerun, and each would stop in the debugger"
            )
        self.config = config
        self.results: list[dict[str, Any]] = []
        self.untouched = 0
        self.json_path: str | None = config.getoption("placeborag_audit_json")
        self.html_path: str | None = config.getoption("placeborag_audit_html")
        self.strict: bool = config.getoption("placeborag_audit_strict")

    # -- the worker's side: run a test, then rerun it under the mutations ----------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool:
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        parent = _Parent(item)
        _mutations.begin(None)
        try:
            reports = runtestprotocol(item, log=False, nextitem=parent)  # type: ignore[arg-type]
        finally:
            usage = _mutations.end()
        result = self._rerun(item, reports, usage, parent) if usage.touched else None
        final = _close(item, nextitem)
        teardown = reports[-1]
        if teardown.passed and not final.passed:
            teardown = final
        logged = [*reports[:-1], teardown]
        setattr(logged[-1], _KEY, result if result is not None else {"untouched": True})
        for report in logged:
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def _rerun(
        self,
        item: pytest.Item,
        reports: list[pytest.TestReport],
        usage: _mutations.Usage,
        parent: _Parent,
    ) -> dict[str, Any]:
        baseline = _outcome(reports)
        result: dict[str, Any] = {
            "nodeid": item.nodeid,
            "baseline": baseline,
            "doubles": sorted(usage.doubles),
            "caught": [],
            "survived": [],
            "skipped": {},
        }
        if baseline != "passed":
            result["verdict"] = NOT_AUDITED
            return result
        for mutation in _mutations.MUTATIONS:
            reason = usage.skip_reason(mutation)
            if reason is not None:
                result["skipped"][mutation] = reason
                continue
            _mutations.begin(mutation)
            try:
                # A rerun's warnings are the baseline's again (or the mutation's): not shown.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rerun = runtestprotocol(item, log=False, nextitem=parent)  # type: ignore[arg-type]
            finally:
                _mutations.end()
            caught = _outcome(rerun) in ("failed", "xfailed")
            result["caught" if caught else "survived"].append(mutation)
        ran = len(result["caught"]) + len(result["survived"])
        result["verdict"] = REAL if result["caught"] else DECORATIVE if ran else INAPPLICABLE
        return result

    # -- the controller's side: collect, report ---------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = getattr(report, _KEY, None)
        if result is None:
            return
        if result.get("untouched"):
            self.untouched += 1
        else:
            self.results.append(result)

    def _controller(self) -> bool:
        return not hasattr(self.config, "workerinput")

    def decorative(self) -> list[str]:
        return sorted(r["nodeid"] for r in self.results if r["verdict"] == DECORATIVE)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self._controller():
            return
        results = sorted(self.results, key=lambda r: r["nodeid"])
        if self.json_path:
            _files.write_text(self.json_path, render_json(results, self.untouched))
        if self.html_path:
            _files.write_text(self.html_path, render_html(results, self.untouched))
        if self.strict and self.decorative() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self._controller():
            return
        results = sorted(self.results, key=lambda r: r["nodeid"])
        terminalreporter.write_sep("=", "placeborag audit: retrieval mutations")
        for line in render_table(results, self.untouched).splitlines():
            terminalreporter.write_line(line)
        if self.strict and self.decorative():
            terminalreporter.write_line(
                f"--placeborag-audit-strict: the session fails: {len(self.decorative())} "
                "decorative test(s)"
            )
        for path in (self.json_path, self.html_path):
            if path:
                terminalreporter.write_line(f"audit written to {path}")


def _score(result: dict[str, Any]) -> str:
    ran = len(result["caught"]) + len(result["survived"])
    return f"{len(result['caught'])}/{ran}" if ran else "-"


def _summary(results: list[dict[str, Any]], untouched: int) -> dict[str, int]:
    counts = Counter(r["verdict"] for r in results)
    return {
        "tests": len(results),
        "real": counts[REAL],
        "decorative": counts[DECORATIVE],
        "no_mutation_applies": counts[INAPPLICABLE],
        "not_audited": counts[NOT_AUDITED],
        "untouched": untouched,
    }


def render_table(results: list[dict[str, Any]], untouched: int) -> str:
    """The terminal table: one row per test that touched a double, one column per mutation."""
    lines = [
        "  ".join(f"{code} {name}" for name, code in _CODES.items()),
        "x caught (the test fails under it)   . survived   - skipped (cannot change an answer)",
        "",
        " ".join(_CODES.values()) + "  score  verdict              test",
    ]
    for r in results:
        cells = []
        for name in _mutations.MUTATIONS:
            mark = (
                "x"
                if name in r["caught"]
                else "."
                if name in r["survived"]
                else "-"
                if name in r["skipped"]
                else " "
            )
            cells.append(f" {mark}")
        verdict = r["verdict"] if r["verdict"] != DECORATIVE else "DECORATIVE"
        if r["verdict"] == NOT_AUDITED:
            verdict = f"not audited ({r['baseline']})"
        lines.append(f"{' '.join(cells)}  {_score(r):<5}  {verdict:<19}  {r['nodeid']}")
    s = _summary(results, untouched)
    lines += [
        "",
        f"{s['tests']} test(s) touched a placeborag double: {s['real']} real, "
        f"{s['decorative']} decorative, {s['no_mutation_applies']} with no mutation that "
        f"applies, {s['not_audited']} not audited (did not pass as usual); "
        f"{untouched} touched no embedder, vector store or scorer.",
    ]
    skipped = Counter((m, why) for r in results for m, why in r["skipped"].items())
    if skipped:
        lines.append("Skipped (the mutation cannot change any answer of the test):")
        for (mutation, why), n in sorted(skipped.items(), key=lambda e: (-e[1], e[0])):
            lines.append(f"  {mutation}: {why} ({n} test{'s' if n != 1 else ''})")
    decorative = [r["nodeid"] for r in results if r["verdict"] == DECORATIVE]
    if decorative:
        lines.append("Decorative (survive every mutation they ran under):")
        lines += [f"  {nodeid}" for nodeid in decorative]
    return "\n".join(lines) + "\n"


def render_json(results: list[dict[str, Any]], untouched: int) -> str:
    """The audit for CI: sorted keys, tests sorted by node id, nothing volatile."""
    tests = [
        {
            "nodeid": r["nodeid"],
            "verdict": r["verdict"],
            "baseline": r["baseline"],
            "doubles": r["doubles"],
            "caught": r["caught"],
            "survived": r["survived"],
            "skipped": r["skipped"],
            "score": [len(r["caught"]), len(r["caught"]) + len(r["survived"])],
        }
        for r in results
    ]
    document = {
        "format": FORMAT,
        "version": VERSION,
        "mutations": _mutations.MUTATIONS,
        "summary": _summary(results, untouched),
        "tests": tests,
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _e(value: object) -> str:
    """The page's one escaper: every string that reaches the HTML goes through it."""
    return html.escape(str(value), quote=True)


def render_html(results: list[dict[str, Any]], untouched: int) -> str:
    """A plain page (no script, no external resource) with the table of :func:`render_table`."""
    head = "".join(
        f'<th title="{_e(description)}">{_e(name)}</th>'
        for name, description in _mutations.MUTATIONS.items()
    )
    rows = []
    for r in results:
        cells = []
        for name in _mutations.MUTATIONS:
            if name in r["caught"]:
                cells.append('<td class="caught">caught</td>')
            elif name in r["survived"]:
                cells.append('<td class="survived">survived</td>')
            elif name in r["skipped"]:
                cells.append(f'<td class="skipped">skipped: {_e(r["skipped"][name])}</td>')
            else:
                cells.append("<td></td>")
        rows.append(
            f"<tr><td><code>{_e(r['nodeid'])}</code></td><td>{_e(r['verdict'])}</td>"
            f"<td>{_e(_score(r))}</td>{''.join(cells)}</tr>"
        )
    s = _summary(results, untouched)
    legend = "".join(
        f"<li><b>{_e(name)}</b>: {_e(description)}</li>"
        for name, description in _mutations.MUTATIONS.items()
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>placeborag audit: retrieval mutations</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 0.2em 0.5em; vertical-align: top; }}
.caught {{ background: #d4edda; }}
.survived {{ background: #f8d7da; }}
.skipped {{ color: #666; font-size: smaller; }}
</style>
</head>
<body>
<h1>placeborag audit: retrieval mutations</h1>
<p>{_e(s["tests"])} test(s) touched a placeborag double: {_e(s["real"])} real,
{_e(s["decorative"])} decorative, {_e(s["no_mutation_applies"])} with no mutation that applies,
{_e(s["not_audited"])} not audited; {_e(untouched)} touched no embedder, vector store or
scorer.</p>
<table>
<thead><tr><th>test</th><th>verdict</th><th>score</th>{head}</tr></thead>
<tbody>
{"".join(row + chr(10) for row in rows)}</tbody>
</table>
<h2>Mutations</h2>
<ul>{legend}</ul>
</body>
</html>
"""
