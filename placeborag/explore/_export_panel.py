"""The explorer's export panel: export, prove, preview and save the test the screen designs.

The panel owns its widgets and the last :class:`~placeborag.explore.Export`; the app gives it
a function that builds an export from the screen (store, query, ``k``, ``where``, selection)
and tells it when the screen changed, which marks a shown export stale (dimmed, saving
disabled) until it is exported again. Every user string reaches the page through
``html.escape``, and the module's text only as a text area's value.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from pathlib import Path

from placeborag import PlaceboragError
from placeborag.explore._deps import optional
from placeborag.explore._export import MAX_DOCUMENTS, Export
from placeborag.explore._verdict import RECALL, STARVATION, TIE

__all__ = ["PANEL_CLASSES", "ExportPanel"]

PANEL_CLASSES = {
    "export_button": "placeborag-export-button",
    "export": "placeborag-export",
    "verdict": "placeborag-export-verdict",
    "preview": "placeborag-export-preview",
    "warning": "placeborag-export-warning",
    "smallest": "placeborag-export-smallest",
    "everything": "placeborag-export-everything",
    "keep_metadata": "placeborag-export-keep-metadata",
    "path": "placeborag-export-path",
    "overwrite": "placeborag-export-overwrite",
    "save": "placeborag-export-save",
    "save_conftest": "placeborag-export-save-conftest",
    "saved": "placeborag-export-saved",
    "panel": "placeborag-export-panel",
}
_CSS = (
    ".placeborag-export-stale .placeborag-export, .placeborag-export-stale"
    " .placeborag-export-preview {opacity: 0.4;}"
    " .placeborag-export-verdict {font-weight: bold;}"
    " .placeborag-export-warning {color: #8a4b00;}"
)


class ExportPanel:
    """The widgets under the app's views that export, prove and save a test."""

    def __init__(self, build: Callable[..., Export]) -> None:
        w = optional("ipywidgets")
        self._build = build
        self.export: Export | None = None
        self.stale = False
        self.button = w.Button(
            description="export pytest",
            icon="check",
            tooltip="write a pytest module for this state, run it and its mutants",
        ).add_class(PANEL_CLASSES["export_button"])
        self.button.on_click(lambda _: self.run())
        self.keep_metadata = w.Checkbox(
            value=False, description="keep every metadata key", indent=False
        ).add_class(PANEL_CLASSES["keep_metadata"])
        self.verdict_html = w.HTML("").add_class(PANEL_CLASSES["verdict"])
        self.warning_html = w.HTML("").add_class(PANEL_CLASSES["warning"])
        self.smallest_button = w.Button(description="export the smallest corpus")
        self.smallest_button.add_class(PANEL_CLASSES["smallest"])
        self.smallest_button.on_click(lambda _: self.run(smallest=True))
        self.everything_button = w.Button(description="export all of it anyway")
        self.everything_button.add_class(PANEL_CLASSES["everything"])
        self.everything_button.on_click(lambda _: self.run(max_documents=None))
        self.choice = w.HBox([self.smallest_button, self.everything_button])
        self.choice.layout.display = "none"
        self.preview_html = w.HTML("").add_class(PANEL_CLASSES["preview"])
        self.area = w.Textarea(layout=w.Layout(width="100%", height="320px"))
        self.area.add_class(PANEL_CLASSES["export"])
        self.area.layout.display = "none"  # an empty box until there is a test to show
        self.path = w.Text(
            description="save to",
            placeholder="tests/test_designed.py",
            layout=w.Layout(width="420px"),
            style={"description_width": "100px"},
        ).add_class(PANEL_CLASSES["path"])
        self.overwrite = w.Checkbox(value=False, description="overwrite", indent=False)
        self.overwrite.add_class(PANEL_CLASSES["overwrite"])
        self.save_button = w.Button(description="save test", icon="save", disabled=True)
        self.save_button.add_class(PANEL_CLASSES["save"])
        self.save_button.on_click(lambda _: self._save_clicked(conftest=False))
        self.conftest_button = w.Button(description="save fixture only", disabled=True)
        self.conftest_button.add_class(PANEL_CLASSES["save_conftest"])
        self.conftest_button.on_click(lambda _: self._save_clicked(conftest=True))
        self.saved_html = w.HTML("").add_class(PANEL_CLASSES["saved"])
        self.widget = w.VBox(
            [
                w.HTML(f"<style>{_CSS}</style><h4>Export a test</h4>"),
                w.HBox([self.button, self.keep_metadata]),
                self.warning_html,
                self.choice,
                self.verdict_html,
                self.preview_html,
                self.area,
                w.HBox([self.path, self.overwrite, self.save_button, self.conftest_button]),
                self.saved_html,
            ],
            layout=w.Layout(width="100%"),
        ).add_class(PANEL_CLASSES["panel"])

    # -- exporting ---------------------------------------------------------------------------

    def run(self, *, smallest: bool = False, max_documents: int | None = MAX_DOCUMENTS) -> None:
        """Export from the screen (what the button does); errors and warnings are shown."""
        try:
            self.show(
                self._build(
                    smallest=smallest,
                    max_documents=max_documents,
                    keep_metadata=True if self.keep_metadata.value else None,
                )
            )
        except PlaceboragError as exc:
            self.warn(str(exc), large="max_documents" in str(exc))

    def warn(self, message: str, *, large: bool = False) -> None:
        self.warning_html.value = f"<div>{html.escape(message)}</div>"
        self.choice.layout.display = "flex" if large else "none"

    def show(self, export: Export) -> None:
        """Show ``export``: its verdict, its preview and its source; saving is enabled."""
        self.export = export
        self.stale = False
        self.widget.remove_class("placeborag-export-stale")
        self.warning_html.value = ""
        self.choice.layout.display = "none"
        ok = export.proof is not None and export.proof.ok
        colour = "#1b7f3b" if ok else "#B00020"
        self.verdict_html.value = (
            f'<div style="color:{colour}">{html.escape(_sentence(export.verdict))}</div>'
        )
        self.preview_html.value = preview_html(export)
        self.area.value = export.source
        self.area.layout.display = ""
        self.saved_html.value = ""
        self.save_button.disabled = self.conftest_button.disabled = False

    def mark_stale(self) -> None:
        """The screen changed: a shown export no longer describes it."""
        if self.export is None or self.stale:
            return
        self.stale = True
        self.widget.add_class("placeborag-export-stale")
        self.verdict_html.value = (
            '<div style="color:#B00020">stale: the controls or the selection changed since '
            "this export; press export pytest again</div>"
        )
        self.save_button.disabled = self.conftest_button.disabled = True

    # -- saving ------------------------------------------------------------------------------

    def save(
        self, path: str | os.PathLike[str], *, overwrite: bool = False, conftest: bool = False
    ) -> list[Path]:
        """Write the export shown (the module, or the fixture alone) atomically to ``path``."""
        if self.export is None or self.stale:
            from placeborag import PlaceboragValueError

            raise PlaceboragValueError(
                "nothing current to save: press export pytest first"
                if self.export is None
                else "the export shown is stale (the screen changed since): export again"
            )
        save = self.export.save_conftest if conftest else self.export.save
        written = save(path, overwrite=overwrite)
        self.saved_html.value = "wrote " + ", ".join(
            f"<code>{html.escape(str(p))}</code>" for p in written
        )
        return written

    def _save_clicked(self, *, conftest: bool) -> None:
        raw = self.path.value.strip()
        if not raw:
            self.saved_html.value = '<span style="color:#B00020">type a path to save to</span>'
            return
        try:
            self.save(raw, overwrite=bool(self.overwrite.value), conftest=conftest)
        except (PlaceboragError, OSError) as exc:
            self.saved_html.value = f'<span style="color:#B00020">{html.escape(str(exc))}</span>'


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


#: What a behaviour's ids are, in the preview.
_WHAT = {
    STARVATION: "pre-filtering would also return",
    TIE: "tied",
    RECALL: "lost by the index",
}


def preview_html(export: Export) -> str:
    """The ranking the exported test asserts and what it is about, before anyone runs it."""
    e = html.escape
    items = "".join(
        f'<li data-id="{e(m.id, quote=True)}"><code>{e(m.id)}</code></li>' for m in export.preview
    )
    about = "".join(
        f"<li>{e(b.name)} ({e(b.setting)}={e(repr(b.value))}); {_WHAT.get(b.name, 'about')}: "
        f"{', '.join(f'<code>{e(i)}</code>' for i in b.ids)}</li>"
        for b in export.behaviours
    )
    return (
        f'<div class="placeborag-export-preview"><b>Preview</b>: the test carries '
        f"{len(export.ids)} documents and asserts this ranking:"
        f"<ol>{items or '<i>nothing is returned</i>'}</ol>"
        + (f"It pins<ul>{about}</ul>" if about else "It pins no quirk of the store.")
        + (
            "<br><small>with its vectors beside it, in <code>&lt;module&gt;.vectors/</code></small>"
            if export.vectors is not None
            else ""
        )
        + "</div>"
    )
