"""The pytest plugin: the ``fake_embedder`` and ``fake_vector_store`` fixtures and the marker.

It also registers a project's own markers listed in the ``placeborag_markers`` ini option
(``placeborag_markers = unit integration p0 p1``), so ``pytest -m p0`` runs under
``--strict-markers`` with no conftest registration.

pytest loads this module in every run of every project that installs placeborag, so it imports
nothing but pytest and the option lists at load time: the core (and numpy) is imported only when
a fixture is used.

Marker options are checked when a test requests a fixture, as in 0.4.0: a misspelled option
fails that test with a ``pytest.UsageError`` listing the options there are, and the rest of the
session runs (``-k`` and ``--deselect`` can skip the test). A marker that has no effect (the test
uses no placeborag fixture, or overrides the one its options are for) gives a
``PlaceboragWarning`` once the test has run (a fixture it requests with
``request.getfixturevalue`` counts).

``--placeborag-audit`` (and ``--placeborag-audit-json/-html/-strict``, which imply it) registers
the retrieval mutation audit of ``placeborag._audit``; only then is the core imported at
configure time.

A failing test that queried a placeborag store gets a "placeborag" report section saying why the
ids its assertion names did not come back (``placeborag._failure_report``);
``--placeborag-save-failures DIR`` also saves each failing store as a scenario file.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

from placeborag._options import EMBEDDER_OPTIONS, STORE_OPTIONS

__all__ = ["EMBEDDER_OPTIONS", "STORE_OPTIONS"]


def shown(value: object) -> str:
    """The package's one way to show a value in a message, imported only when a message is
    built: loading the plugin (every pytest run) imports nothing but the option names."""
    from placeborag._validation import shown as shown_value

    return shown_value(value)


_MARKER = "placeborag"
# Which of placeborag's fixtures set a test up ("embedder", "store"): what the marker reached.
_USED = pytest.StashKey[set[str]]()


_PROJECT_MARKERS = "placeborag_markers"
_MARKER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        _PROJECT_MARKERS,
        type="args",
        default=[],
        help="marker names to register (e.g. 'unit integration p0 p1'), so that -m and "
        "--strict-markers work without registering them in a conftest",
    )
    group = parser.getgroup("placeborag", "placeborag retrieval mutation audit")
    group.addoption(
        "--placeborag-audit",
        action="store_true",
        help="rerun every test that touches a placeborag double once per retrieval mutation "
        "and report which mutations it catches; a test that catches none is decorative",
    )
    group.addoption(
        "--placeborag-audit-json",
        metavar="PATH",
        help="write the audit to PATH as JSON (implies --placeborag-audit)",
    )
    group.addoption(
        "--placeborag-audit-html",
        metavar="PATH",
        help="write the audit to PATH as a plain HTML page (implies --placeborag-audit)",
    )
    group.addoption(
        "--placeborag-audit-strict",
        action="store_true",
        help="fail the session when the audit finds a decorative test (implies --placeborag-audit)",
    )
    group.addoption(
        "--placeborag-save-failures",
        metavar="DIR",
        help="save the store of every failing test that queried one as a scenario file in DIR "
        "(opened by 'placeborag report --scenario' and placeborag.explore.app)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_MARKER}(**options): configure the placeborag fixtures for this test. Embedder "
        f"options: {', '.join(EMBEDDER_OPTIONS)}. Store options: {', '.join(STORE_OPTIONS)}.",
    )
    for name in _project_markers(config):
        config.addinivalue_line("markers", f"{name}: registered by the {_PROJECT_MARKERS} option")
    if _auditing(config):
        from placeborag._audit import Audit  # the core and numpy: only for an audit

        config.pluginmanager.register(Audit(config), "placeborag-audit")


def _auditing(config: pytest.Config) -> bool:
    return bool(
        config.getoption("placeborag_audit", False)
        or config.getoption("placeborag_audit_json", None)
        or config.getoption("placeborag_audit_html", None)
        or config.getoption("placeborag_audit_strict", False)
    )


def _project_markers(config: pytest.Config) -> list[str]:
    """The marker names of the ini option, checked: a bad name stops the run before collection."""
    names = [str(name) for name in config.getini(_PROJECT_MARKERS)]
    for name in names:
        if not _MARKER_NAME.fullmatch(name) or name == _MARKER:
            raise pytest.UsageError(
                f"{_PROJECT_MARKERS}: {shown(name)} is not a marker name to register; expected "
                "names made of letters, digits and underscores (not starting with a digit), "
                "separated by spaces, such as 'unit integration p0 p1', other than "
                f"{shown(_MARKER)}"
            )
    return list(dict.fromkeys(names))


def _options(node: pytest.Item | pytest.Collector) -> dict[str, Any]:
    """The marker options that apply to a node; the closest marker wins key by key."""
    # A usage error shows the user's message, not the plugin's source lines.
    __tracebackhide__ = True
    merged: dict[str, Any] = {}
    for marker in reversed(list(node.iter_markers(_MARKER))):
        if marker.args:
            raise pytest.UsageError(
                f"{node.nodeid}: @pytest.mark.{_MARKER} takes keyword options only, "
                f"got positional {shown(marker.args)}"
            )
        merged.update(marker.kwargs)
    known = EMBEDDER_OPTIONS + STORE_OPTIONS
    for name in merged:
        if name not in known:
            from placeborag._validation import nearest

            close = nearest(name, known, n=1)
            hint = f" (did you mean {shown(close[0])}?)" if close else ""
            raise pytest.UsageError(
                f"{node.nodeid}: unknown @pytest.mark.{_MARKER} option {shown(name)}{hint}; "
                f"embedder options: {', '.join(EMBEDDER_OPTIONS)}; "
                f"store options: {', '.join(STORE_OPTIONS)}"
            )
    return merged


def _mark_used(request: pytest.FixtureRequest, part: str) -> None:
    request.node.stash.setdefault(_USED, set()).add(part)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Warn when a marker put on this test had no effect: checked after the test body ran, so
    a fixture the test requests itself (``request.getfixturevalue``) counts as used."""
    _watch(item)
    try:
        return (yield)
    finally:
        _warn_if_unused(item)


# -- the failure report: watch the stores a test queries, explain them when it fails ----------

_WATCH = pytest.StashKey[Any]()


def _watch(item: pytest.Item) -> None:
    """Start watching ``item``'s queries once placeborag is imported (nothing to watch before)."""
    touched = sys.modules.get("placeborag._touched")
    if touched is not None and _WATCH not in item.stash:
        item.stash[_WATCH] = touched.start()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _watch(item)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    watch = item.stash.get(_WATCH, None)
    if watch is not None:
        sys.modules["placeborag._touched"].stop(watch)


def pytest_assertrepr_compare(op: str, left: object, right: object) -> None:
    touched = sys.modules.get("placeborag._touched")
    if touched is not None:
        touched.compared(op, left, right)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    watch = item.stash.get(_WATCH, None)
    if report.when == "call" and report.failed and watch is not None and watch.stores:
        from placeborag._failure_report import section

        save = item.config.getoption("placeborag_save_failures", None)
        report.sections.append(("placeborag", section(watch, item.nodeid, save)))
    return report


def _warn_if_unused(item: pytest.Item) -> None:
    own = [m for m in getattr(item, "own_markers", ()) if m.name == _MARKER]
    if not own:
        return  # a class or module marker also covers tests that do not use it: no warning
    used = item.stash.get(_USED, set())
    if not used:
        message = (
            f"{item.nodeid}: @pytest.mark.{_MARKER} has no effect: the test uses neither "
            "placeborag fixture (fake_embedder, fake_vector_store), or overrides them without "
            "requesting placeborag's"
        )
    else:
        names = [name for marker in own for name in marker.kwargs]
        ignored = [
            name
            for name in dict.fromkeys(names)
            if (name in EMBEDDER_OPTIONS and "embedder" not in used)
            or (name in STORE_OPTIONS and "store" not in used)
        ]
        if not ignored:
            return
        message = (
            f"{item.nodeid}: @pytest.mark.{_MARKER} option(s) {', '.join(ignored)} have no "
            "effect: the fixture they configure is not placeborag's here (overridden) or is not "
            "used by the test"
        )
    from placeborag._errors import PlaceboragWarning

    item.warn(PlaceboragWarning(message))


@pytest.fixture
def fake_embedder(request: pytest.FixtureRequest) -> Any:
    """A FakeEmbedder configured by the test's ``placeborag`` marker (embedder options)."""
    __tracebackhide__ = True
    from placeborag import FakeEmbedder

    options = _options(request.node)
    _mark_used(request, "embedder")
    _watch(request.node)
    return FakeEmbedder(**{k: v for k, v in options.items() if k in EMBEDDER_OPTIONS})


@pytest.fixture
def fake_vector_store(request: pytest.FixtureRequest, fake_embedder: Any) -> Any:
    """A FakeVectorStore over ``fake_embedder``, configured by the marker (store options)."""
    __tracebackhide__ = True
    from placeborag import FakeVectorStore

    options = _options(request.node)
    _mark_used(request, "store")
    return FakeVectorStore(
        embedder=fake_embedder, **{k: v for k, v in options.items() if k in STORE_OPTIONS}
    )
