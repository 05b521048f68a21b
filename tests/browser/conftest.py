"""Jupyter servers started by the tests on 127.0.0.1 (JupyterLab, and Notebook 7), and a
Playwright-driven Chromium (both from ``tests/jupyter_driver.py``, shared with the browser
benchmark).

Each server runs with throwaway Jupyter config, data and runtime directories, a random token and
a free port, on a copy of the explorer notebook; it is stopped when the module's tests end.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jupyter_driver import CHROMIUM, chromium, serve

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    with serve("lab", ROOT, tmp_path_factory.mktemp("jupyter")) as server:
        yield server


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    """Jupyter Notebook 7 (the classic-looking front end built on JupyterLab's components)."""
    notebook = pytest.importorskip("notebook")
    if int(notebook.__version__.split(".")[0]) < 7:
        pytest.skip(f"notebook {notebook.__version__} is not Notebook 7")
    with serve("notebook", ROOT, tmp_path_factory.mktemp("notebook7")) as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium")
    with chromium() as b:
        yield b
