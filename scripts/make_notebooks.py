"""Write the notebooks in notebooks/ from the cell sources below (outputs are never committed).

Run: ``python scripts/make_notebooks.py``. Edit the sources here, not the .ipynb files, so a
review sees Python and Markdown rather than JSON.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

OUT = Path(__file__).resolve().parent.parent / "notebooks"


def md(text: str):
    return new_markdown_cell(text.strip())


def code(text: str):
    return new_code_cell(text.strip())


NOTEBOOKS: dict[str, list] = {}

NOTEBOOKS["explorer.ipynb"] = [
    md("""
# placeborag explorer

The built-in demo scenario: a small support knowledge base (refund and shipping documents in
English and Hungarian, with `tier` and `year` metadata and two declared clusters). Change any
control and every view redraws: the PCA projection, the query-centred ranking, the pre- versus
post-filter tables with the funnel, and the cluster anchors against jitter.

Run this cell (Shift+Enter). To explore your own data, pass a store:
`app(store=my_store, query="...")`.
"""),
    code("""
from placeborag.explore import app

explorer = app()
explorer
"""),
]


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        nb = new_notebook(cells=cells)
        nb.metadata["kernelspec"] = {
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "name": "python3",
        }
        nb.metadata["language_info"] = {"name": "python"}
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"{Path(name).stem[:20]}-{i:02d}"
        nbformat.write(nb, OUT / name)
        print("wrote", OUT / name)


if __name__ == "__main__":
    main()
