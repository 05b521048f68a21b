"""The retrieval mutation audit's pytest side: ``pytest --placeborag-audit``.

Loaded by the plugin only when an audit option is given. Each test runs once as usual (its
reports are the ones pytest logs, so the session's outcome is unchanged). A test that touched a
placeborag double (or, with none, retrieved through a framework's seam: ``placeborag._seams``)
and passed then runs again:

1. a **control** run with nothing changed: a test that fails it is *not repeatable*, and no
   mutation is credited to it;
2. one run per mutation that could change something the test received (the usual run computed
   each answer- and request-side mutation's answer beside every query; ``placeborag.
   _mutations`` says when each cannot apply, and why).

The verdict rests on evidence only. A mutation *reached* a test when what the test received
from the doubles (answers, reads, the query log, embeddings it kept) differs from the control
run's; a test that passes under a mutation that reached it *missed* it; one that fails *caught*
it. A catch is *weak* when the mutation only emptied or shortened the answers the test got.

* ``real``: caught a mutation that changed what came back, not only how much;
* ``weak``: caught only mutations that emptied or shortened its answers;
* ``DECORATIVE``: missed every mutation that reached it;
* ``blind``: it retrieved through a double that answers the same to any query, filter and k;
* ``no mutation applies``: no mutation reached anything it received;
* ``not repeatable``: it fails when simply run again;
* ``not audited``: it did not pass as usual.

A rerun's reports are never logged. Under pytest-xdist the reruns happen in the worker that ran
the test; the result travels to the controller as an attribute of the test's last report.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import warnings
from collections import Counter
from typing import Any

import pytest
from _pytest.nodes import Node
from _pytest.runner import runtestprotocol

from placeborag import _files, _mutations, _recorder
from placeborag._recorder import Change, Run

__all__ = ["Audit", "render_html", "render_json", "render_table"]

_MISSED_SHOWN = 3  # per test in the terminal table; the JSON and HTML keep every one
_KEY = "placeborag_audit"  # the report attribute carrying one test's result
FORMAT = "placeborag-audit"
VERSION = 2
REAL, WEAK, DECORATIVE, BLIND, INAPPLICABLE, FLAKY, NOT_AUDITED = (
    "real",
    "weak",
    "decorative",
    "blind",
    "no mutation applies",
    "not repeatable",
    "not audited",
)
VERDICTS = (REAL, WEAK, DECORATIVE, BLIND, INAPPLICABLE, FLAKY, NOT_AUDITED)
REACHED_NOTHING = "changed nothing the test received"
BLIND_WORDS = (
    "its retrieval double answers the same to every {asked}: no bug on the way to it (the "
    "question, the filter, k, the index, the embedding) can fail it"
)
_SEAM_REQUESTS = {"seam-query": "query", "seam-filter": "filter", "seam-k": "k"}
# Under a random embedding, the mutations whose effect is how many documents come back.
_COUNTING = frozenset({"seam-k", "seam-emptied"})


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


def _literal(value: Any) -> str:
    """The audit's one way to write a user's value into a suggested line of Python: plain
    literals only (``repr`` of str, numbers, None, lists and dicts of them)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict) or hasattr(value, "items"):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(str(value))


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
        self.root = str(config.rootpath)
        _recorder.install()
        from placeborag import _seams

        self._seams = _seams

    # -- the worker's side: run a test, then rerun it under the mutations ----------------------

    def _begin(self, item: pytest.Item, mode: str | None, reference: Any = None) -> None:
        self._seams.install_available()
        _recorder.begin(mode, reference=reference, test_file=str(getattr(item, "path", "")))

    def _runs(
        self, item: pytest.Item, parent: _Parent, mode: str | None, reference: Any
    ) -> tuple[list[pytest.TestReport], Run]:
        self._begin(item, mode, reference)
        try:
            if mode is None:
                reports = runtestprotocol(item, log=False, nextitem=parent)  # type: ignore[arg-type]
            else:
                # A rerun's warnings are the baseline's again (or the mutation's): not shown.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    reports = runtestprotocol(item, log=False, nextitem=parent)  # type: ignore[arg-type]
        finally:
            run = _recorder.end()
        assert run is not None
        return reports, run

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool:
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        parent = _Parent(item)
        reports, baseline = self._runs(item, parent, None, None)
        touched = bool(baseline.doubles) or bool(baseline.facts.seam_calls)
        result = self._rerun(item, reports, baseline, parent) if touched else None
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
        self, item: pytest.Item, reports: list[pytest.TestReport], baseline: Run, parent: _Parent
    ) -> dict[str, Any]:
        outcome = _outcome(reports)
        seam = not baseline.doubles
        result: dict[str, Any] = {
            "nodeid": item.nodeid,
            "baseline": outcome,
            "doubles": sorted(self._seams.names(baseline) if seam else baseline.doubles),
            "seam": seam,
            "caught": [],
            "weak": [],
            "survived": [],
            "skipped": {},
            "missed": [],
            "note": "",
        }
        if outcome != "passed":
            result["verdict"] = NOT_AUDITED
            return result
        table = _mutations.seam_mutations() if seam else _mutations.store_mutations()
        candidates = _candidates(table, baseline, result)
        if not candidates:
            result["verdict"] = INAPPLICABLE
            return result
        control_reports, control = self._runs(item, parent, "control", baseline.facts)
        if _outcome(control_reports) != "passed":
            result["verdict"] = FLAKY
            result["note"] = (
                f"it {_outcome(control_reports)} when run again with nothing changed: no "
                "mutation can be credited to it"
            )
            return result
        embedding = self._seams.embedding_kind(baseline, control) if seam else None
        if seam and self._seams.answered_nothing(control):
            result["verdict"] = INAPPLICABLE
            result["note"] = "its retrieval double answered nothing to every call"
            for mutation in candidates:
                result["skipped"][mutation.name] = "the double answered nothing"
            return result
        if embedding == "random":
            # Which documents come back is chance; how many is not.
            for mutation in list(candidates):
                if mutation.name not in _COUNTING:
                    candidates.remove(mutation)
                    result["skipped"][mutation.name] = "its embedding answers at random"
        blind = self._mutate(item, parent, candidates, baseline, control, result)
        result["caught"] = [m.name for m in table if m.name in result["caught"]]
        if not (seam and _seam_verdict(result, embedding, blind)):
            _verdict(result)
        return result

    def _mutate(
        self,
        item: pytest.Item,
        parent: _Parent,
        candidates: list[Any],
        baseline: Run,
        control: Run,
        result: dict[str, Any],
    ) -> list[str]:
        """Rerun the test under each candidate; record catches and misses in ``result``.
        Returns the seam requests the double's answer ignored."""
        seam = result["seam"]
        # Metadata values that change with nothing changed (a timestamp) are no evidence.
        volatile = _recorder.volatile_between(baseline, control)
        usual = control.final_received(volatile)
        # Ids the application draws afresh each run are shown by write order instead.
        inverse = {n: v for v, n in baseline.canon.ids.items()}
        stable = {
            control.canon.text(v): (v if inverse.get(n) == v else _random_id(control, v, n))
            for v, n in control.canon.ids.items()
        }
        blind: list[str] = []
        for mutation in candidates:
            rerun, run = self._runs(item, parent, mutation.name, baseline.facts)
            caught = _outcome(rerun) in ("failed", "xfailed")
            changes = _changes(control, run, stable, volatile)
            reached = run.final_received(volatile) != usual or bool(changes)
            if seam:
                reached = reached or self._seams.request_reached(run)
            if caught:
                # Weak: every answer it changed only lost documents (emptied or cut short).
                weak = (bool(changes) and all(c.shortened() for c in changes)) or (
                    mutation.name == "seam-emptied"
                )
                result["weak" if weak else "caught"].append(mutation.name)
            elif reached:
                result["survived"].append(mutation.name)
                result["missed"].append(_missed(mutation, changes, baseline, control, self.root))
            else:
                result["skipped"][mutation.name] = REACHED_NOTHING
            if (
                seam
                and mutation.name in _SEAM_REQUESTS
                and not self._seams.answer_changed(control, run, volatile)
            ):
                blind.append(mutation.name)
        return blind

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

    def failing(self) -> list[str]:
        """The tests ``--placeborag-audit-strict`` fails the session for."""
        return sorted(r["nodeid"] for r in self.results if r["verdict"] in (DECORATIVE, BLIND))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self._controller():
            return
        results = sorted(self.results, key=lambda r: r["nodeid"])
        if self.json_path:
            _files.write_text(self.json_path, render_json(results, self.untouched))
        if self.html_path:
            _files.write_text(self.html_path, render_html(results, self.untouched))
        if self.strict and self.failing() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self._controller():
            return
        results = sorted(self.results, key=lambda r: r["nodeid"])
        terminalreporter.write_sep("=", "placeborag audit: retrieval mutations")
        for line in render_table(results, self.untouched).splitlines():
            terminalreporter.write_line(line)
        if self.strict and self.failing():
            terminalreporter.write_line(
                f"--placeborag-audit-strict: the session fails: {len(self.failing())} "
                "decorative or blind test(s)"
            )
        for path in (self.json_path, self.html_path):
            if path:
                terminalreporter.write_line(f"audit written to {path}")


# Metadata keys that name a document, in the order a report prefers them.
_NAMING_KEYS = ("file_name", "filename", "source", "path", "title", "name", "doc_id", "url")


def _random_id(run: Run, value: str, n: int) -> str:
    """How a report names a record whose id the application draws afresh each run: by a
    naming metadata key (``file_name='refund.txt'``), else by the order it was written."""
    _, meta = run.shown_as.get(run.canon.text(value), ("", None))
    if isinstance(meta, dict) or hasattr(meta, "get"):
        for key in _NAMING_KEYS:
            named = meta.get(key) if meta is not None else None
            if isinstance(named, str) and named:
                return f"<{key}={named!r}>"
    return f"<id #{n + 1}>"


def _candidates(table: Any, baseline: Run, result: dict[str, Any]) -> list[Any]:
    """The mutations that can reach the test; the others go to ``result["skipped"]``, with
    the reason."""
    facts = baseline.facts
    candidates = []
    for mutation in table:
        reason = mutation.skip_reason(facts)
        if reason is None and mutation.name in baseline.errors:
            reason = f"could not be applied ({baseline.errors[mutation.name]})"
        if (
            reason is None
            and mutation.side in ("embedder", "answer", "request")
            and mutation.name not in baseline.changes
            and not (mutation.side == "request" and facts.read_log)
        ):
            reason = (
                "no tie reached an answer"
                if mutation.name == "ties-flipped"
                else "no query's answer changes under it"
            )
        if reason is None and mutation.side == "write" and not facts.reads:
            reason = "never read a store"
        if reason is not None:
            result["skipped"][mutation.name] = reason
        else:
            candidates.append(mutation)
    return candidates


def _seam_verdict(result: dict[str, Any], embedding: str | None, blind: list[str]) -> bool:
    """The verdict of a seam test whose double is blind (True), or nothing (False)."""
    ignored = [name for name in _SEAM_REQUESTS if name in blind]
    if embedding == "constant" and "seam-query" not in ignored:
        ignored.insert(0, "seam-query")
    if not (embedding == "random" or "seam-query" in ignored):
        return False
    if embedding == "random":
        note = (
            "its retrieval double answers at random (its embedding gives one text different "
            "vectors): which documents come back is chance, so no bug that changes them can "
            "fail it reliably"
        )
    else:
        words = [_SEAM_REQUESTS[name] for name in ignored]
        listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
        note = BLIND_WORDS.format(asked=listed)
        if embedding == "constant":
            note += " (its embedding gives every text the same vector)"
    if "seam-reversed" in result["caught"]:
        # It checks what the application does with the answer's order: real, and said so.
        result["verdict"] = REAL
        note += "; it does check what your code does with the order of the answer"
    else:
        result["verdict"] = BLIND
        if result["caught"]:
            note += "; it notices only " + ", ".join(result["caught"])
    result["note"] = note
    return True


def _verdict(result: dict[str, Any]) -> None:
    if result["caught"]:
        result["verdict"] = REAL
    elif result["weak"]:
        result["verdict"] = WEAK
        result["note"] = (
            "it notices only an emptied or shortened answer ("
            + ", ".join(result["weak"])
            + "), not which documents come back"
        )
    elif result["survived"]:
        result["verdict"] = DECORATIVE
    else:
        result["verdict"] = INAPPLICABLE


def _changes(
    control: Run, run: Run, stable: dict[str, str], volatile: frozenset[str]
) -> list[Change]:
    """The query answers that differ between the control run and a mutated one, in a
    deterministic order (by question, then by occurrence)."""
    out = []
    ours, theirs = control.answer_lists(volatile), run.answer_lists(volatile)
    for described in sorted(ours.keys() | theirs.keys()):
        before = ours.get(described, [])
        after = theirs.get(described, [])
        for i in range(max(len(before), len(after))):
            u = before[i] if i < len(before) else None
            m = after[i] if i < len(after) else None
            if u != m:
                out.append(
                    Change(
                        described,
                        _shown(u, stable),
                        _shown(m, stable),
                        control.lines.get(described),
                        control.calls.get(described),
                    )
                )
    return out


def _shown(answer: list[tuple[str, str]] | None, names: dict[str, str]) -> list[str] | None:
    """Canonical ids as a report shows them: as they are, or by the order they were first
    written or seen where the application draws them afresh each run (the same name in every
    run)."""
    if answer is None:
        return None
    return [names.get(i, i.replace("\x00", "")) for i, _ in answer]


def _missed(
    mutation: Any, changes: list[Change], baseline: Run, control: Run, root: str
) -> dict[str, Any]:
    """What a test missed under one mutation, with a line a user can paste."""
    change = changes[0] if changes else None
    entry: dict[str, Any] = {"mutation": mutation.name, "stands_for": mutation.stands_for}
    if change is None and mutation.side == "request" and control.calls:
        first = min(control.calls)
        change = Change(first, None, None, control.lines.get(first), control.calls[first])
        entry["what"] = f"{first}: the request the store received (its log)"
        entry["suggest"] = _suggest(mutation, change)
        if change.line is not None:
            entry["line"] = _relative(change.line, root)
        return entry
    if change is None and mutation.side == "seam":
        entry["what"] = _SEAM_WHAT[mutation.name]
        entry["suggest"] = _SEAM_SUGGEST[mutation.name]
        return entry
    if change is None:
        entry["what"] = "a read of the store (len, get, ids, records or its query log) changed"
        entry["suggest"] = _suggest_read(mutation)
        return entry
    line = None if change.line is None else _relative(change.line, root)
    what = change.what
    if change.usual == change.mutated:
        what += " (the same records; their metadata changed)"
    entry.update(
        {
            "what": what,
            "usual": change.usual,
            "mutated": change.mutated,
            "line": line,
            "suggest": _suggest(mutation, change, baseline.facts.dropped_key()),
        }
    )
    return entry


_RANKING_DOUBLE = (
    "retrieve through a double that ranks (placeborag's PlaceboVectorStore, "
    "PlaceboLlamaVectorStore or PlaceboDocumentStore), so that a wrong request changes the answer"
)
_SEAM_WHAT = {
    "seam-query": "the retrieval call was asked another question",
    "seam-filter": "the retrieval call was sent no filter",
    "seam-k": "the retrieval call was sent another k",
    "seam-reversed": "the retrieval call's answer came back reversed",
    "seam-emptied": "the retrieval call answered nothing",
}
_SEAM_SUGGEST = {
    "seam-query": "assert on the question retrieval was asked (a mock: .assert_called_with(...)); "
    + _RANKING_DOUBLE,
    "seam-filter": "assert on the filter retrieval was sent; " + _RANKING_DOUBLE,
    "seam-k": "assert on how many documents your code asked for and used; " + _RANKING_DOUBLE,
    "seam-reversed": "assert which document your code cites first, not only that it cites one",
    "seam-emptied": "assert what your code answers when retrieval finds nothing",
}


def _relative(line: str, root: str) -> str:
    """``file:line`` relative to the rootdir, with forward slashes (the same on every
    machine)."""
    path, _, number = line.rpartition(":")
    with contextlib.suppress(ValueError):  # another drive (Windows): kept as it is
        path = os.path.relpath(path, root)
    return f"{path.replace(os.sep, '/')}:{number}"


def _suggest_read(mutation: Any) -> str:
    if mutation.name == "write-lost":
        return "assert len(store) == <the number of records your ingestion writes>"
    if mutation.name == "delete-ignored":
        return "assert <the deleted id> not in store"
    if mutation.name == "metadata-key-lost":
        return "assert store.get(<an id>).metadata[<the key>] == <its value>"
    return "assert on what your code returns from the store"


def _suggest(mutation: Any, change: Change, facts_key: str | None = None) -> str:
    usual = change.usual or []
    text, k, where, by_vector = change.call or (None, None, None, False)
    if mutation.name == "filter-dropped" and where is not None:
        return f"assert store.last_query.where == {_literal(where)}"
    if mutation.name == "metadata-key-lost" and facts_key is not None:
        return f"assert all({_literal(facts_key)} in m.metadata for m in matches)"
    if mutation.name == "k-dropped":
        return f"assert store.last_query.k == {_literal(k)}"
    if mutation.name == "query-changed" and text is not None:
        return f"assert store.last_query.text == {_literal(text)}"
    if usual and all(i.startswith("<") and "=" in i for i in usual):
        key = usual[0][1 : usual[0].index("=")]
        if all(i.startswith(f"<{key}=") for i in usual):
            values = [i[len(key) + 2 : -1] for i in usual]  # the repr of each str value
            return (
                f"assert [m.metadata[{_literal(key)}] for m in matches] == "
                f"[{', '.join(values)}]  # its ids are drawn afresh on every run"
            )
    if any(i.startswith("<") for i in usual):
        return (
            "assert [m.text for m in matches] == <the texts of the usual answer> "
            "(the ids are drawn afresh on every run: assert on texts or your own names)"
        )
    if by_vector or text is None:
        return f"assert [m.id for m in matches] == {_literal(usual)}"
    call = f"store.query({_literal(text)}, k={_literal(k)}"
    if where is not None:
        call += f", where={_literal(where)}"
    return f"assert [m.id for m in {call})] == {_literal(usual)}"


def _score(result: dict[str, Any]) -> str:
    caught = len(result["caught"]) + len(result["weak"])
    ran = caught + len(result["survived"])
    return f"{caught}/{ran}" if ran else "-"


def _summary(results: list[dict[str, Any]], untouched: int) -> dict[str, int]:
    counts = Counter(r["verdict"] for r in results)
    return {
        "tests": len(results),
        "real": counts[REAL],
        "weak": counts[WEAK],
        "decorative": counts[DECORATIVE],
        "blind": counts[BLIND],
        "no_mutation_applies": counts[INAPPLICABLE],
        "not_repeatable": counts[FLAKY],
        "not_audited": counts[NOT_AUDITED],
        "untouched": untouched,
    }


def _mark(r: dict[str, Any], name: str) -> str:
    if name in r["caught"]:
        return "x"
    if name in r["weak"]:
        return "w"
    if name in r["survived"]:
        return "."
    if name in r["skipped"]:
        return "-"
    return " "


def _shown_verdict(r: dict[str, Any]) -> str:
    if r["verdict"] == NOT_AUDITED:
        return f"not audited ({r['baseline']})"
    if r["verdict"] in (DECORATIVE, BLIND):
        return str(r["verdict"]).upper()
    return str(r["verdict"])


def render_table(results: list[dict[str, Any]], untouched: int) -> str:
    """The terminal table: a row per test that touched a double or a retrieval seam, a column
    per mutation; then what each decorative, weak or blind test missed."""
    store = [m for m in _mutations.store_mutations()]
    seam = [m for m in _mutations.seam_mutations()]
    lines = [
        "  ".join(f"{m.code} {m.name}" for m in store),
        "seams (tests that touch no placeborag double): "
        + "  ".join(f"{m.code} {m.name}" for m in seam),
        "x caught   w caught, weakly (only an emptied or shortened answer)   . missed   "
        "- cannot apply or reached nothing",
        "",
    ]
    store_rows = [r for r in results if not r.get("seam")]
    seam_rows = [r for r in results if r.get("seam")]
    if store_rows:
        lines.append(" ".join(m.code for m in store) + "  score  verdict                test")
        for r in store_rows:
            cells = " ".join(f" {_mark(r, m.name)}" for m in store)
            lines.append(f"{cells}  {_score(r):<5}  {_shown_verdict(r):<21}  {r['nodeid']}")
    if seam_rows:
        if store_rows:
            lines.append("")
        lines.append(" ".join(m.code for m in seam) + "  score  verdict                test")
        for r in seam_rows:
            cells = " ".join(f" {_mark(r, m.name)}" for m in seam)
            lines.append(f"{cells}  {_score(r):<5}  {_shown_verdict(r):<21}  {r['nodeid']}")
    s = _summary(results, untouched)
    lines += [
        "",
        f"{s['tests']} test(s) audited: {s['real']} real, {s['weak']} weak, {s['decorative']} "
        f"decorative, {s['blind']} blind, {s['no_mutation_applies']} with no mutation that "
        f"reaches them, {s['not_repeatable']} not repeatable, {s['not_audited']} not audited "
        f"(did not pass as usual); {untouched} touched no double and no retrieval seam.",
    ]
    skipped = Counter((m, why) for r in results for m, why in r["skipped"].items())
    if skipped:
        lines.append("Not run or reached nothing:")
        for (mutation, why), n in sorted(skipped.items(), key=lambda e: (-e[1], e[0])):
            lines.append(f"  {mutation}: {why} ({n} test{'s' if n != 1 else ''})")
    for r in results:
        if r["verdict"] not in (DECORATIVE, WEAK, BLIND, FLAKY):
            continue
        lines.append(f"{_shown_verdict(r)}: {r['nodeid']}")
        if r["note"]:
            lines.append(f"  {r['note']}")
        shown_missed = r["missed"][:_MISSED_SHOWN]
        for missed in shown_missed:
            lines.append(f"  missed {missed['mutation']} ({missed['stands_for']})")
            if missed.get("usual") is not None:
                where = f" at {missed['line']}" if missed.get("line") else ""
                lines.append(f"    {missed['what']}{where}")
                lines.append(f"    usual: {missed['usual']}   under it: {missed['mutated']}")
            else:
                lines.append(f"    {missed['what']}")
            lines.append(f"    try: {missed['suggest']}")
        more = len(r["missed"]) - len(shown_missed)
        if more > 0:
            lines.append(f"  and {more} more missed (every one in --placeborag-audit-json)")
    return "\n".join(lines) + "\n"


def render_json(results: list[dict[str, Any]], untouched: int) -> str:
    """The audit for CI: sorted keys, tests sorted by node id, nothing volatile."""
    tests = [
        {
            "nodeid": r["nodeid"],
            "verdict": r["verdict"],
            "baseline": r["baseline"],
            "doubles": r["doubles"],
            "seam": r["seam"],
            "caught": r["caught"],
            "weak": r["weak"],
            "survived": r["survived"],
            "skipped": r["skipped"],
            "missed": r["missed"],
            "note": r["note"],
            "score": [
                len(r["caught"]) + len(r["weak"]),
                len(r["caught"]) + len(r["weak"]) + len(r["survived"]),
            ],
        }
        for r in results
    ]
    document = {
        "format": FORMAT,
        "version": VERSION,
        "mutations": {
            m.name: {
                "code": m.code,
                "side": m.side,
                "stands_for": m.stands_for,
                "does": m.does,
                "log": m.log,
            }
            for m in _mutations.MUTATIONS
        },
        "summary": _summary(results, untouched),
        "tests": tests,
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _e(value: object) -> str:
    """The page's one escaper: every string that reaches the HTML goes through it."""
    return html.escape(str(value), quote=True)


def render_html(results: list[dict[str, Any]], untouched: int) -> str:
    """A plain page (no script, no external resource) with the table of :func:`render_table`."""
    mutations = _mutations.MUTATIONS
    head = "".join(f'<th title="{_e(m.does)}">{_e(m.name)}</th>' for m in mutations)
    rows = []
    for r in results:
        cells = []
        for m in mutations:
            name = m.name
            if name in r["caught"]:
                cells.append('<td class="caught">caught</td>')
            elif name in r["weak"]:
                cells.append('<td class="weak">caught, weakly</td>')
            elif name in r["survived"]:
                cells.append('<td class="survived">missed</td>')
            elif name in r["skipped"]:
                cells.append(f'<td class="skipped">{_e(r["skipped"][name])}</td>')
            else:
                cells.append("<td></td>")
        missed = "".join(
            f"<li>{_e(x['mutation'])}: {_e(x['what'])}"
            + (f" (usual {_e(x['usual'])}, under it {_e(x['mutated'])})" if "usual" in x else "")
            + f"; try <code>{_e(x['suggest'])}</code></li>"
            for x in r["missed"]
        )
        note = f"<br>{_e(r['note'])}" if r["note"] else ""
        rows.append(
            f"<tr><td><code>{_e(r['nodeid'])}</code>{note}"
            + (f"<ul>{missed}</ul>" if missed else "")
            + f"</td><td>{_e(r['verdict'])}</td><td>{_e(_score(r))}</td>{''.join(cells)}</tr>"
        )
    s = _summary(results, untouched)
    legend = "".join(
        f"<li><b>{_e(m.name)}</b> ({_e(m.side)}): {_e(m.does)}. Stands for: {_e(m.stands_for)}."
        f" The store's log shows: {_e(m.log)}.</li>"
        for m in mutations
    )
    counts = ", ".join(f"{_e(v)} {_e(k.replace('_', ' '))}" for k, v in s.items())
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
.weak {{ background: #fff3cd; }}
.survived {{ background: #f8d7da; }}
.skipped {{ color: #666; font-size: smaller; }}
</style>
</head>
<body>
<h1>placeborag audit: retrieval mutations</h1>
<p>{counts}.</p>
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
