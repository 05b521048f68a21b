"""The explorer notebook run as nbclient and ``nbconvert --execute`` run it: every cell, the
widget state saved with the notebook (their default). Shared by the notebook-size test and the
browser test that reopens the saved notebook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def execute_explorer_notebook(*then: str) -> Any:
    """notebooks/explorer.ipynb executed, as an nbformat notebook holding its widget state;
    ``then``: code cells run after its own (changes made to the app once drawn)."""
    import nbclient
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "explorer.ipynb", as_version=4)
    nb.cells.extend(nbformat.v4.new_code_cell(code) for code in then)
    nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        startup_timeout=120,
        store_widget_state=True,
        resources={"metadata": {"path": str(ROOT)}},
    ).execute()
    return nb
