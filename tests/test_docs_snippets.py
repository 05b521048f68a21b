"""Every Python snippet in the README and the docs runs.

Plain snippets of one file run in order in one namespace; a snippet that defines pytest tests is
written to a file and run by pytest (through pytester), so its tests must pass too. A snippet
whose first line names a file (``# rag_app.py``, ``# conftest.py``) is that file of the page's
project: it is written beside the test snippets, which import it (or, for a conftest, get its
fixtures).
"""

import contextlib
import importlib
import re
from pathlib import Path

# pytester unloads the modules a test imported. numpy cannot be loaded twice in one process, and
# placeborag caches its lazily loaded names, so load both fully here, before any snippet runs.
import numpy  # noqa: F401
import pytest

import placeborag
import placeborag.query_engine

for _namespace in (placeborag, placeborag.query_engine):
    for _name in _namespace.__all__:
        getattr(_namespace, _name)

# So does the explorer: it makes its widget classes once per process, over anywidget's and
# ipywidgets' own. Were those first imported in one page's snippets and unloaded after it, a
# later page's app would lay out widgets of the unloaded ipywidgets' Widget class in a VBox of
# the reloaded one (TraitError), whenever placeborag.explore itself stayed loaded (a test
# module of this session imported it first).
for _module in ("traitlets", "ipywidgets", "anywidget", "IPython.display"):
    with contextlib.suppress(ImportError):  # without the explore extra: nothing to keep
        importlib.import_module(_module)

ROOT = Path(__file__).parent.parent
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
NAMED_FILE = re.compile(r"\A# (\w+)\.py\n")
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def snippets(path):
    return FENCE.findall(path.read_text(encoding="utf-8"))


def run_snippet(code, name, namespace):
    """Run ``code`` in ``namespace``. An explorer shows a failed build in the app instead of
    raising it, so a snippet that then fails on what was not drawn (a figure that is None)
    gets each of its explorers' errors added to its own, naming the cause."""
    try:
        exec(compile(code, name, "exec"), namespace)
    except Exception as exc:
        for variable, value in namespace.items():
            # by name, not isinstance: a snippet may hold an Explorer of a re-imported module
            if type(value).__name__ == "Explorer" and getattr(value, "error", ""):
                exc.add_note(f"{variable}.error, as the app shows it: {value.error}")
        raise


def test_a_failing_snippet_names_the_error_its_explorer_shows():
    code = (
        "from placeborag.explore import app\n"
        "explorer = app()\n"
        "explorer.controls['where'].value = '{not json'\n"
        "raise AssertionError('a check of the snippet')\n"
    )
    with pytest.raises(AssertionError) as caught:
        run_snippet(code, "a snippet", {})
    assert any("where is not valid JSON" in note for note in caught.value.__notes__)


def test_the_readme_has_snippets():
    assert len(snippets(ROOT / "README.md")) >= 3


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_snippet_runs(path, pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    namespace: dict = {"__name__": f"snippets_of_{path.stem}"}
    untested: list[str] = []  # files written since the last test snippet ran
    for i, code in enumerate(snippets(path)):
        if named := NAMED_FILE.match(code):
            pytester.makepyfile(**{named.group(1): code})
            untested.append(f"{named.group(1)}.py")
        elif re.search(r"^def test_|^async def test_", code, re.MULTILINE):
            pytester.makepyfile(**{f"test_snippet_{i}": code})
            result = pytester.runpytest("-p", "no:cacheprovider", f"test_snippet_{i}.py")
            assert result.ret == 0, f"{path.name} snippet {i}:\n{result.stdout.str()}"
            untested = []
        else:
            run_snippet(code, f"{path.name}[snippet {i}]", namespace)
    assert not untested, f"{path.name}: no test snippet after {', '.join(untested)} uses it"
