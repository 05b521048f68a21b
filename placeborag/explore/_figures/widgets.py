"""The explorer's widgets: small anywidgets of our own, each a module-level class whose
JavaScript is a file in ``js/`` (shipped in the wheel).

Nothing of plotly's widget or renderer code is used (no ``FigureWidget``, no
``plotly.io._renderers``, which pulls in nbformat and jsonschema): :class:`FigureView` sends
the figure JSON the displays build (:mod:`.wire`), numeric arrays as binary buffers, and the
page draws it with plotly.js's public ``Plotly.react``. plotly.js is the plotly package's own
bundled file, gzipped, shipped once per kernel in one hidden :class:`PlotlyBundle` that every
app shows; the page imports it once and hands it to every figure through a promise on
``globalThis`` keyed by the bundle's SHA-256 (``js/slot.js``), so two plotly versions in one
page never mix. A notebook saved with its widget state restores the loader with the figures,
so they draw again without a kernel.

A redraw sends only what changed: the widget's ``figure`` is the last figure sent whole, its
``patch`` what differs from it (:func:`.wire.patch`), naming the revision of the figure it
applies to and its own. The page applies a patch only to the figure it names (otherwise it
asks for the whole figure again, and draws nothing meanwhile); together the two always make
the figure on screen, so a saved notebook shows the final figures.

Events come back through the widget's own messages, each naming the figure revision it was
drawn on: a box or lasso selection (every trace's points at once), a click on a point, and the
view range after a zoom or pan. :func:`.wire.read_message` refuses anything malformed (logged
once per widget, never a selection, never an exception); a message about a revision that is
no longer on screen is ignored.

This module imports anywidget: only the app imports it, when it builds its widgets.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files
from typing import Any

from placeborag.explore._deps import optional

# A missing extra raises here, naming the pip extra that installs it.
optional("traitlets")
optional("anywidget")

import anywidget  # noqa: E402
import traitlets  # noqa: E402

from placeborag.explore._figures.wire import (  # noqa: E402
    FONT,
    NO_PATCH,
    NOT_A_POINT,
    NOT_POINTS,
    Attrs,
    Wire,
    buffered,
    patch,
    plotly_bundle,
    plotly_key,
    read_message,
    read_row_click,
    whole,
    wire,
    wired_template,
)

__all__ = ["BusyStatus", "FigureView", "HtmlPanel", "PlotlyBundle", "bundle_loader"]

LOG = logging.getLogger("placeborag.explore")


def _module(names: tuple[str, ...]) -> str:
    """The ES module made of the files ``names`` of ``js/``, in order (``slot.js`` is the
    promise of plotly.js that the loader and every figure share)."""
    folder = files("placeborag.explore._figures").joinpath("js")
    return "".join(folder.joinpath(name).read_text(encoding="utf-8") for name in names)


class PlotlyBundle(anywidget.AnyWidget):
    """The kernel's hidden loader: plotly.js gzipped, for every figure of the page."""

    _esm_files = ("slot.js", "loader.js")
    _esm = _module(_esm_files)
    bundle_key = traitlets.Unicode("").tag(sync=True)
    bundle = traitlets.Bytes(b"").tag(sync=True)


_LOADER: list[PlotlyBundle] = []  # the kernel's loader widget, once made


def bundle_loader() -> PlotlyBundle:
    """The kernel's one loader widget (hidden): it carries plotly.js for every
    :class:`FigureView`. Every app puts it in its layout, so a front end that shows an app
    (or restores a saved notebook) creates its model. A closed one is replaced."""
    if _LOADER and _LOADER[0].comm is not None:
        return _LOADER[0]
    source, _ = plotly_bundle()
    loader = PlotlyBundle(bundle_key=plotly_key(), bundle=source)
    loader.layout.display = "none"
    _LOADER[:] = [loader]
    return loader


class FigureView(anywidget.AnyWidget):
    """One figure of the explorer: the kernel sends it (:meth:`show`: whole, or a patch of
    what changed), the page draws it with ``Plotly.react`` and reports selections, clicks
    and view ranges."""

    _esm_files = ("slot.js", "figure.js")
    _esm = _module(_esm_files)
    bundle_key = traitlets.Unicode("").tag(sync=True)
    figure = traitlets.Dict({}).tag(sync=True)
    patch = traitlets.Dict(NO_PATCH).tag(sync=True)
    selected = traitlets.Dict({}).tag(sync=True)

    def __init__(self) -> None:
        super().__init__(bundle_key=plotly_key())
        self.revision = 0
        self.traces: list[dict[str, Any]] = []
        self.spec_layout: dict[str, Any] = {}
        self.view: dict[str, tuple[float, float]] = {}  # axis ranges on screen
        self.refused = 0  # malformed messages from the page
        self.stale = 0  # messages about a revision no longer on screen
        self.resent = 0  # whole figures sent again because the page held another one
        self._base: Wire | None = None  # the figure last sent whole
        self._current: Wire | None = None  # the figure last shown
        self.on_select: Callable[[list[tuple[int, int]]], None] | None = None
        self.on_click: Callable[[tuple[int, int]], None] | None = None
        self._shows_selection = False
        self.on_msg(self._handle)

    # -- what the kernel sends --

    def show(
        self,
        traces: Sequence[dict[str, Any]],
        layout: dict[str, Any],
        config: dict[str, Any] | None = None,
    ) -> None:
        """Draw ``traces`` and ``layout`` (a display's spec) as the next revision.

        Only what differs from the whole figure the page holds is sent
        (:meth:`_send_figure`)."""
        self.revision += 1
        self.traces = list(traces)
        self.spec_layout = {"font": FONT, **layout}
        self._shows_selection = False
        self._current = Wire(
            self.revision,
            wire(self.traces),
            # The template wired once (and printed once: layout_print knows it).
            {"template": wired_template()[0], **wire(self.spec_layout)},
            wire(config) if config else None,
        )
        self._send_figure(self._current)

    def _send_figure(self, now: Wire) -> None:
        """``patch``: what of ``now`` differs from ``figure``, the last figure sent whole
        (:func:`.wire.patch`); or ``now`` sent whole (and no patch)."""
        changes = patch(self._base, now)
        if changes is not None:
            self.patch = buffered(changes)
            return
        with self.hold_sync():
            self.figure = buffered(whole(now))
            self.patch = dict(NO_PATCH)
        self._base = now

    def _resend(self) -> None:
        """The page holds another whole figure than the patch's: send it whole again."""
        if self._current is None:
            return
        self.resent += 1
        same = (
            "revision" not in self.patch and self.figure.get("revision") == self._current.revision
        )
        self._base = None
        self._send_figure(self._current)
        if same:  # the figure sent last: traitlets sees no change, so nothing went
            self.send_state(["figure", "patch"])

    def show_selection(self, points: Mapping[int, Sequence[int] | None]) -> None:
        """Highlight ``points`` (trace index -> point indexes; None: no highlight on that
        trace) on the revision on screen; all None also removes a box or lasso drawn."""
        chosen = any(v is not None for v in points.values())
        if not chosen and not self._shows_selection:
            return  # nothing highlighted, nothing to clear (a redraw starts clean)
        self._shows_selection = chosen
        self.selected = {
            "revision": self.revision,
            "points": [[t, None if v is None else list(v)] for t, v in points.items()],
            "clear": not chosen,
        }

    # -- what a test or a script reads --

    @property
    def data(self) -> tuple[Attrs, ...]:
        return tuple(Attrs(t) for t in self.traces)

    @property
    def figure_layout(self) -> Attrs:
        """The layout last shown (``layout`` is the widget's own CSS layout)."""
        return Attrs(self.spec_layout)

    def to_plotly_json(self) -> dict[str, Any]:
        """The figure last shown, as its spec (numpy arrays inside), template aside."""
        return {"data": list(self.traces), "layout": dict(self.spec_layout)}

    # -- what the page sends --

    def _refuse(self, content: Any, why: str) -> None:
        self.refused += 1
        if self.refused == 1:
            text = json.dumps(content, default=repr)[:200]
            LOG.warning(
                "placeborag explorer: ignored a malformed message from the page (%s): %s; "
                "further ones are ignored silently",
                why,
                text,
            )

    def _handle(self, _widget: Any, content: Any, _buffers: Any) -> None:
        try:
            self._dispatch(content)
        except Exception:  # a message must never break the kernel's comm handling
            LOG.exception("placeborag explorer: handling a message from the page failed")

    def _dispatch(self, content: Any) -> None:
        message = read_message(content)
        if isinstance(message, str):
            return self._refuse(content, message)
        current = message.revision == self.revision
        if message.kind == "resend":
            if current:
                self._resend()
            else:  # about a patch since replaced: the page has the newer one coming
                self.stale += 1
        elif message.kind == "view":
            if current:
                self.view = message.payload
            else:
                self.stale += 1
        elif message.kind == "click":
            if not self._on_screen(message.payload):
                return self._refuse(content, NOT_A_POINT)
            if not current:
                self.stale += 1
            elif self.on_click is not None:
                self.on_click(message.payload)
        else:
            points: list[tuple[int, int]] = message.payload
            if not all(self._on_screen(p) for p in points):
                return self._refuse(content, NOT_POINTS)
            if not current:
                self.stale += 1
            elif self.on_select is not None:
                self.on_select(points)
        return None

    def _on_screen(self, point: tuple[int, int]) -> bool:
        trace, index = point
        if trace >= len(self.traces):
            return False
        x = self.traces[trace].get("x")
        return x is not None and index < len(x)


class HtmlPanel(anywidget.AnyWidget):
    """HTML (the app's tables) whose row clicks (``tr[data-id]``) come back as the row's id
    and ``data-occurrence`` (which record of an id stored more than once)."""

    _esm_files = ("panel.js",)
    _esm = _module(_esm_files)
    value = traitlets.Unicode("").tag(sync=True)
    revision = traitlets.Int(0).tag(sync=True)

    def __init__(self, on_row: Callable[[str, int], None] | None = None) -> None:
        super().__init__()
        self.on_row = on_row
        self.refused = 0
        self.observe(self._next, names="value")
        self.on_msg(self._handle)

    def _next(self, _change: Any) -> None:
        self.revision += 1

    def _handle(self, _widget: Any, content: Any, _buffers: Any) -> None:
        row = read_row_click(content)
        if row is None:
            self.refused += 1
            if self.refused == 1:
                LOG.warning("placeborag explorer: ignored a malformed row click")
            return
        revision, doc_id, occurrence = row
        if revision == self.revision and self.on_row is not None:
            try:
                self.on_row(doc_id, occurrence)
            except Exception:
                LOG.exception("placeborag explorer: handling a row click failed")


class BusyStatus(anywidget.AnyWidget):
    """What the kernel is busy with (empty: idle) and the step it is at; the page shows them
    after 0.5 s, with the seconds elapsed."""

    _esm_files = ("status.js",)
    _esm = _module(_esm_files)
    busy = traitlets.Unicode("").tag(sync=True)
    step = traitlets.Unicode("").tag(sync=True)
