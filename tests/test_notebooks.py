"""The notebooks: generated from scripts/make_notebooks.py, committed bare, and run top to bottom.

Each notebook is executed once per session in a fresh python3 kernel with nbclient (any cell
error fails it); the teaching notebooks then have a few of their printed results checked, so
a notebook whose prose no longer matches what the code prints fails here rather than in a
reader's hands.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
for _module in ("ipykernel", "plotly", "pandas", "sklearn", "ipywidgets"):
    pytest.importorskip(_module)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb"))
PLOTLY = "application/vnd.plotly.v1+json"
CELL_TIMEOUT = 120


def _generator():
    spec = importlib.util.spec_from_file_location(
        "make_notebooks", ROOT / "scripts" / "make_notebooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _execute(name: str, workdir: Path):
    nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=CELL_TIMEOUT,
        startup_timeout=120,
        allow_errors=False,
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()
    return nb


@pytest.fixture(scope="session")
def executed(tmp_path_factory):
    """``executed(name)``: the notebook run top to bottom, with its outputs.

    Most of a run is a kernel importing plotly and pandas, so two notebooks run at a time;
    every notebook is started on first use and each test waits only for its own.
    """
    pool = ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1))
    futures = {}

    def run(name):
        if not futures:
            for each in NOTEBOOKS:
                futures[each] = pool.submit(
                    _execute, each, tmp_path_factory.mktemp(Path(each).stem)
                )
        return futures[name].result()

    yield run
    pool.shutdown(wait=True, cancel_futures=True)


def text_of(nb) -> str:
    """Everything the notebook printed or displayed as plain text, in order."""
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output["text"])
            elif "data" in output and "text/plain" in output["data"]:
                parts.append(output["data"]["text/plain"])
    return "\n".join(parts)


def figures_of(nb) -> list[dict]:
    return [
        output["data"][PLOTLY]
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if PLOTLY in output.get("data", {})
    ]


def values(array) -> list:
    """A figure array from notebook JSON: a list, or plotly's base64 typed array."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return list(array)


def test_every_notebook_is_listed_by_the_generator():
    assert sorted(_generator().NOTEBOOKS) == NOTEBOOKS


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_is_the_generated_one_without_outputs(name, tmp_path):
    generator = _generator()
    generator.OUT = tmp_path
    generator.main()
    committed = (NOTEBOOK_DIR / name).read_text(encoding="utf-8")
    assert committed == (tmp_path / name).read_text(encoding="utf-8"), (
        f"notebooks/{name} differs from scripts/make_notebooks.py; "
        "run `python scripts/make_notebooks.py`"
    )
    for cell in json.loads(committed)["cells"]:
        assert not cell.get("outputs") and cell.get("execution_count") is None


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom_without_error(name, executed):
    nb = executed(name)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code_cells)


# For each teaching notebook: lines it must print, and how many figures it must draw.
EXPECTED = {
    "01-tour.ipynb": (
        [
            "same text, new embedder, same vector: True",
            "other model name, same vector: False",
            "candidates:   38",
            "filtered out: 22",
            "queries recorded: 1",
            "test passed",
        ],
        2,
    ),
    "02-post-filter-starvation.ipynb": (
        [
            "16 Hungarian documents of 38",
            "pre-filter returned 5 of k=5",
            "post-filter returned 2 of k=5",
            "post-filter, over-fetching: 5 of k=5",
            "both tests passed",
        ],
        2,
    ),
    "03-cluster-anchors-and-jitter.ipynb": (
        [
            "member-to-anchor order is the same at every dimension: True",
            "exact mode:     None",
            "substring mode: refund",
            "upper case:     None",
            "only 'returns': logistics",
            "is declared in more than one cluster ('a' and 'b')",
            "clusters cannot be satisfied at dimensions=8",
            "both tests passed",
        ],
        1,
    ),
    "04-score-conventions-and-ties.ipynb": (
        [
            "same ids in the same order: True",
            "8 distinct texts with one exact cosine",
            "chroma: ['doc-h', 'doc-c', 'doc-f', 'doc-a', 'doc-d', 'doc-g', 'doc-e', 'doc-b']"
            "  distinct scores: 1",
            "qdrant: ['doc-a', 'doc-b', 'doc-c', 'doc-d', 'doc-e', 'doc-f', 'doc-g', 'doc-h']"
            "  distinct scores: 1",
            "both tests passed",
        ],
        2,
    ),
    "05-recall-stale-reads-and-failures.ipynb": (
        [
            "38 candidates, 19 lost, floor(0.5 * 38) = 19 survive",
            "same query, same losses: True",
            "other query, same losses: False",
            "asked for 5, got 2",
            "pending writes: 1",
            "caught as TimeoutError: RetrievalTimeout True",
            "queries recorded: 5",
            "3 matches after 2 queries",
            "retrieved: ['en-refund-4', 'hu-refund-4', 'hu-refund-1', 'en-refund-5']",
            "reranked:  ['en-refund-5', 'en-refund-4', 'hu-refund-4', 'hu-refund-1']",
            "scorer requests: 2",
            "all three tests passed",
        ],
        1,
    ),
    "06-designing-a-fixture.ipynb": (
        [
            "filter_mode=post",
            "this test fails if filter_mode is 'pre' (post-filter starvation)",
            "def test_post_filtering_starves_the_top_k(demo_help_desk_store):",
            "test_post_filter_starvation.py exit code: 0 | 1 passed in",
            "test_mutant.py exit code: 1 | 1 failed in",
            "Left contains one more item: 'hu-refund-2'",
            "verdict: real | caught 10/10",
            "caught: shape-only, reversed, query-changed, filter-dropped, filter-after-cut,"
            " k-dropped, recall-lost, stale-reads, write-lost, metadata-key-lost",
            "skipped ties-flipped: no tie reached an answer",
            "test_answers.py exit code: 1",
            "'hu-refund-4' (asserted at place 2): scores",
            "not good enough for the top-2 cut, taken before the post-filter",
            "placeborag report --scenario failures/",
            "fixed test_answers.py exit code: 0 | placeborag section: False",
        ],
        0,
    ),
    "07-real-versus-fake-geometry.ipynb": (
        [
            "replay reproduces the recorded top 3 for 12 of 12 questions",
            "refund-window  real rank  1",
            "both tests passed",
        ],
        2,
    ),
}


def test_every_teaching_notebook_has_expectations():
    assert sorted(EXPECTED) == [n for n in NOTEBOOKS if n != "explorer.ipynb"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_prints_what_its_prose_describes(name, executed):
    nb = executed(name)
    lines, n_figures = EXPECTED[name]
    text = text_of(nb)
    missing = [line for line in lines if line not in text]
    assert not missing, f"{name} did not print {missing!r}; it printed:\n{text}"
    assert len(figures_of(nb)) == n_figures


@pytest.mark.slow
def test_post_filter_funnel_counts_what_the_prose_says(executed):
    funnel = figures_of(executed("02-post-filter-starvation.ipynb"))[0]
    pre, post = funnel["data"]
    assert values(pre["x"]) == [38, 16, 16, 5]
    assert values(post["x"]) == [38, 38, 5, 2]


@pytest.mark.slow
def test_anchor_figure_puts_every_member_on_the_curve(executed):
    figure = figures_of(executed("03-cluster-anchors-and-jitter.ipynb"))[0]
    points = [
        (m, cosine)
        for trace in figure["data"]
        if trace.get("xaxis", "x") == "x" and trace.get("mode") == "markers"
        for m, cosine in zip(values(trace.get("x", [])), values(trace.get("y", [])))
        if m is not None and cosine is not None and np.isfinite([m, cosine]).all()
    ]
    assert len(points) == 7 * 3  # seven declared members at three dimensions
    for m, cosine in points:
        assert cosine == pytest.approx(1 / (1 + m * m) ** 0.5, abs=1e-12)
