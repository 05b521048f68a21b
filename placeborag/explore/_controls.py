"""The explorer's controls, declared once: :data:`CONTROLS` is a tuple of :class:`Control` rows.

Everything else about a control is derived from its row: the widget the app makes and the
group it is laid out in, its CSS class (:data:`CSS_CLASSES`), ``app()``'s keyword argument and
its check (:data:`SETTINGS`, :func:`checked_settings`), the scenario field it reads back into
(:func:`scenario_values`), and the part of the explorer state's cache keys it belongs to
(:func:`store_options`, :func:`query_values`, :func:`anchor_values`). A new control is one
row: a scenario field the app did not show becomes a widget, a keyword of ``app()`` checked
before the app is built, and a part of the keys of the views it changes.

This module imports no widget library: :func:`make_widget` is given ``ipywidgets``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from placeborag import PROFILES, PlaceboragTypeError, PlaceboragValueError, get_profile
from placeborag._validation import did_you_mean, json_text, load_json
from placeborag.explore._scenario import EMBEDDER_FIELDS, Scenario
from placeborag.toolkit import check_bool, check_choice, check_int, check_k, check_str, shown

__all__ = [
    "CONTROLS",
    "CSS_CLASSES",
    "GROUPS",
    "SETTINGS",
    "Control",
    "Room",
    "anchor_values",
    "checked_settings",
    "control",
    "grouped",
    "make_widget",
    "plain_store_options",
    "query_values",
    "scenario_values",
    "store_options",
]

#: The groups the controls are laid out in, in order: three above the views (their scenario
#: fields: what to ask, how the store answers, how the documents are embedded), and the view
#: choices in one row right above the views (no scenario field: they change only the picture).
GROUPS = ("query", "store", "embedder", "view")


@dataclass(frozen=True)
class Room:
    """What a widget is made with besides the scenario: the app's own choices."""

    dimension_choices: Sequence[int] = (32, 64, 128, 256, 512, 1024)
    max_k: int = 50
    projection: str = "pca"
    metadata_keys: Sequence[str] = ()


Check = Callable[[Any, Mapping[str, Any], Scenario], Any]


@dataclass(frozen=True)
class Control:
    """One control of the app.

    ``name`` is the scenario field it shows (groups query, store, embedder) or the view choice
    (group view), and ``app()``'s keyword when it has a ``check``; ``label`` its widget's
    description. ``kind`` the widget: ``text``, ``int`` (a slider from 1 to ``max_k``),
    ``float`` (a slider from 0 to ``high`` by ``step``), ``choice`` (a dropdown) or ``toggle``
    (buttons), the last two over ``options(scenario, room)``. ``shown(scenario, room)`` is the
    widget's value for a scenario and ``read(value)`` the scenario's for the widget's.
    ``check(value, given, scenario)`` checks (and normalises) the keyword argument, ``given``
    being every setting passed with it. ``resets``: the controls a change of this one sets back
    to their default under the new value (a profile brings its own metrics). ``anchors``: the
    anchors view is drawn anew when it changes (an embedder option). ``redraws``: the views a
    view choice changes. ``after``: an app widget laid out right after this one.
    """

    name: str
    group: str
    label: str
    kind: str
    shown: Callable[[Scenario, Room], Any]
    check: Check | None = None
    read: Callable[[Any], Any] = lambda value: value
    options: Callable[[Scenario, Room], list[Any]] | None = None
    high: float = 1.0
    step: float = 0.05
    placeholder: str = ""
    tooltips: tuple[str, ...] = ()
    css: str = ""
    width: str = ""  # the widget's width when not the app's usual one
    button_width: str = "72px"
    resets: tuple[str, ...] = ()
    anchors: bool = True
    redraws: tuple[str, ...] = ()
    after: str = ""
    annotation: Any = Any

    @property
    def css_class(self) -> str:
        return self.css or f"placeborag-{self.name.replace('_', '-')}"

    @property
    def field(self) -> bool:
        """Whether the control shows a scenario field (and reads back into it)."""
        return self.group != "view"


# -- checks of app()'s keyword arguments -------------------------------------------------------


def _choice(name: str, allowed: Callable[[Mapping[str, Any], Scenario], Sequence[str]]) -> Check:
    """A check that ``name``'s value is one of ``allowed(given, scenario)``."""

    def check(value: Any, given: Mapping[str, Any], s: Scenario) -> Any:
        return check_choice(value, name, tuple(allowed(given, s)))

    return check


def _fixed(name: str, *allowed: str) -> Check:
    return _choice(name, lambda _given, _s: allowed)


def _number_up_to(name: str, top: float) -> Check:
    """A check that ``name``'s value is a number from 0 to ``top`` (a float from then on)."""

    def check(value: Any, _given: Mapping[str, Any], _s: Scenario) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PlaceboragTypeError(f"{name}={shown(value)} must be a number")
        if not 0.0 <= float(value) <= top:
            raise PlaceboragValueError(f"{name}={shown(value)} must be between 0 and {top}")
        return float(value)

    return check


def _check_where(value: Any, _given: Mapping[str, Any], _s: Scenario) -> Any:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise PlaceboragTypeError(f"where={shown(value)} must be a mapping or None")
    return dict(value)


def _metrics(given: Mapping[str, Any], s: Scenario) -> Sequence[str]:
    return tuple(get_profile(given.get("profile", s.profile)).supported_metrics)


# The tie orders a store takes, as the profiles name them (every one is some profile's own).
TIE_ORDERS = tuple(sorted({get_profile(name).tie_order for name in PROFILES}))


def _profile_label(name: str) -> str:
    """``"faiss (L2 distance, ties by insertion)"``: the profile with its metric and tie rule."""
    profile = get_profile(name)
    return f"{name} ({profile.score_label}, ties by {profile.tie_order})"


# -- the table ---------------------------------------------------------------------------------

CONTROLS: tuple[Control, ...] = (
    Control(
        "query",
        "query",
        "query",
        "text",
        shown=lambda s, _: s.query,
        annotation=str,
    ),
    Control(
        "where",
        "query",
        "where",
        "text",
        shown=lambda s, _: "" if s.where is None else json_text(s.where),
        read=lambda text: _where(text),
        check=_check_where,
        placeholder='{"lang": "hu"}  (JSON; Enter applies; empty for no filter)',
        width="200px",
        after="apply",
        annotation="Mapping[str, Any] | None",
    ),
    Control(
        "k",
        "query",
        "k",
        "int",
        shown=lambda s, _: s.k,
        read=int,
        check=lambda value, _given, _s: check_k(value, "k"),
        annotation=int,
    ),
    Control(
        "profile",
        "store",
        "profile",
        "choice",
        shown=lambda s, _: s.profile,
        options=lambda _s, _room: [(_profile_label(name), name) for name in sorted(PROFILES)],
        check=_choice("profile", lambda _given, _s: sorted(PROFILES)),
        resets=("metric",),
        annotation=str,
    ),
    Control(
        "metric",
        "store",
        "metric",
        "choice",
        shown=lambda s, _: s.metric or get_profile(s.profile).metric,
        options=lambda s, _room: list(get_profile(s.profile).supported_metrics),
        check=_choice("metric", _metrics),
        annotation=str,
    ),
    Control(
        "tie_order",
        "store",
        "ties",
        "choice",
        # "profile" in the dropdown is the scenario's None: the profile's own order.
        shown=lambda s, _: s.tie_order or "profile",
        read=lambda value: None if value == "profile" else value,
        options=lambda _s, _room: [("the profile's own", "profile"), *zip(TIE_ORDERS, TIE_ORDERS)],
        check=lambda value, _given, _s: (
            None if value is None else check_choice(value, "tie_order", TIE_ORDERS)
        ),
        annotation="str | None",
    ),
    Control(
        "seed",
        "store",
        "tie seed",
        "text",
        # Which way a shuffled tie falls (tie order "shuffle"); empty: the profile's own.
        shown=lambda s, _: "" if s.seed is None else str(s.seed),
        read=lambda text: _seed(text),
        placeholder="the profile's own (an int)",
        check=lambda value, _given, _s: None if value is None else check_int(value, "seed"),
        annotation="int | None",
    ),
    Control(
        "pad_missing",
        "store",
        "padding",
        "choice",
        # Whether a short answer is padded to k with id "-1" and score -1, as FAISS does.
        shown=lambda s, _: "profile" if s.pad_missing is None else s.pad_missing,
        read=lambda value: None if value == "profile" else value,
        options=lambda _s, _room: [
            ("the profile's own", "profile"),
            ("pad to k", True),
            ("no padding", False),
        ],
        check=lambda value, _given, _s: None if value is None else check_bool(value, "pad_missing"),
        annotation="bool | None",
    ),
    Control(
        "filter_mode",
        "store",
        "filter mode",
        "toggle",
        shown=lambda s, _: s.filter_mode,
        options=lambda _s, _room: ["pre", "post"],
        check=_fixed("filter_mode", "pre", "post"),
        annotation=str,
    ),
    Control(
        "filter_semantics",
        "store",
        "semantics",
        "toggle",
        shown=lambda s, _: s.filter_semantics,
        options=lambda _s, _room: ["strict", "engine"],
        tooltips=(
            "$ne/$nin never match a record without the key",
            "$ne/$nin match a record without the key where the profile's engine does",
        ),
        check=_fixed("filter_semantics", "strict", "engine"),
        after="semantics_note",
        annotation=str,
    ),
    Control(
        "recall",
        "store",
        "recall",
        "float",
        shown=lambda s, _: s.recall,
        read=float,
        high=1.0,
        check=_number_up_to("recall", 1.0),
        annotation=float,
    ),
    Control(
        "dimensions",
        "embedder",
        "dimensions",
        "choice",
        shown=lambda s, _: s.dimensions,
        read=int,
        options=lambda s, room: sorted({*room.dimension_choices, s.dimensions}),
        check=lambda value, _given, _s: check_int(value, "dimensions", minimum=2),
        # The anchors view draws every cluster at its own dimensions (64, 256, 1024).
        anchors=False,
        annotation=int,
    ),
    Control(
        "cluster_spread",
        "embedder",
        "spread",
        "float",
        shown=lambda s, _: s.cluster_spread,
        read=float,
        high=2.0,
        check=_number_up_to("cluster_spread", 2.0),
        annotation=float,
    ),
    Control(
        "model_name",
        "embedder",
        "model name",
        "text",
        shown=lambda s, _: s.model_name,
        check=lambda value, _given, _s: check_str(value, "model_name"),
        annotation=str,
    ),
    Control(
        "color_by",
        "view",
        "colour by",
        "choice",
        shown=lambda s, _: "cluster" if s.clusters else "stage",
        options=lambda s, room: [
            *(["cluster"] if s.clusters else []),
            "stage",
            *room.metadata_keys,
        ],
        width="230px",
        redraws=("projection", "ranking"),
    ),
    Control(
        "projection",
        "view",
        "projection",
        "toggle",
        shown=lambda _s, _room: "2-D",
        options=lambda _s, _room: ["2-D", "3-D"],
        css="placeborag-projection-mode",
        button_width="60px",
        redraws=("projection",),
    ),
    Control(
        "method",
        "view",
        "method",
        "toggle",
        shown=lambda _s, room: room.projection,
        options=lambda _s, _room: [("PCA", "pca"), ("UMAP", "umap")],
        tooltips=(
            "deterministic everywhere",
            "seeded from the vectors; needs pip install 'placeborag[umap]'",
        ),
        css="placeborag-projection-method",
        button_width="60px",
        redraws=("projection",),
    ),
)

_BY_NAME = {c.name: c for c in CONTROLS}
#: The settings :func:`placeborag.explore.app` takes, each a control of the app.
SETTINGS = tuple(c.name for c in CONTROLS if c.check is not None)
#: Stable hooks for browser tests: control name -> CSS class (and the other key widgets).
CSS_CLASSES = {
    **{c.name: c.css_class for c in CONTROLS},
    "error": "placeborag-error",
    "results": "placeborag-results",
    "selection": "placeborag-selection",
    "select_box": "placeborag-select-box",
    "clear": "placeborag-clear-selection",
    "apply": "placeborag-apply",
    "stale": "placeborag-stale-note",
    "export_button": "placeborag-export-button",
    "export": "placeborag-export",
    "app": "placeborag-app",
    "find": "placeborag-find",
    "inspect": "placeborag-inspect",
}


def control(name: str) -> Control:
    return _BY_NAME[name]


def grouped(group: str) -> tuple[Control, ...]:
    """The controls of ``group``, in the table's order."""
    return tuple(c for c in CONTROLS if c.group == group)


# -- what the table derives --------------------------------------------------------------------


def checked_settings(settings: Mapping[str, Any], scenario: Scenario) -> dict[str, Any]:
    """``settings`` checked against what each control can show; a bad one raises, naming it.
    A control left out that a given one resets (the metric, when only a profile is given)
    becomes None: the new value's own."""
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise PlaceboragTypeError(
            f"unknown setting(s) {', '.join(map(repr, unknown))}; expected some of "
            f"{', '.join(SETTINGS)}{did_you_mean(unknown[0], SETTINGS)}"
        )
    out: dict[str, Any] = {}
    for c in CONTROLS:
        if c.name in settings and c.check is not None:
            out[c.name] = c.check(settings[c.name], settings, scenario)
    for c in CONTROLS:
        if c.name in out:
            out.update({name: None for name in c.resets if name not in settings})
    return out


def scenario_values(widgets: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario fields the control ``widgets`` (by name) show, read back."""
    return {c.name: c.read(widgets[c.name].value) for c in CONTROLS if c.field}


def store_options(s: Scenario, filter_mode: str | None = None) -> dict[str, Any]:
    """The store options the store group's controls set, as ``s`` has them (``filter_mode``:
    that mode instead): what a store twin of the embedded documents is made with."""
    options = {c.name: getattr(s, c.name) for c in grouped("store")}
    if filter_mode is not None:
        options["filter_mode"] = filter_mode
    return options


def plain_store_options() -> dict[str, Any]:
    """The store group's options at the scenario's defaults: the first store holding the
    embedded documents is built with these, and twinned under the controls' options."""
    defaults = {f.name: f.default for f in dataclasses.fields(Scenario)}
    return {c.name: defaults[c.name] for c in grouped("store")}


def query_values(s: Scenario) -> dict[str, Any]:
    """What the query group's controls ask of the store, as ``s`` has it."""
    return {c.name: getattr(s, c.name) for c in grouped("query")}


def anchor_values(s: Scenario) -> dict[str, Any]:
    """What the anchors view is drawn from: the embedder's options but those of the
    embedder controls it does not depend on."""
    left_out = {c.name for c in grouped("embedder") if not c.anchors}
    return {name: getattr(s, name) for name in EMBEDDER_FIELDS if name not in left_out}


# -- widgets -----------------------------------------------------------------------------------

_STYLE = {"description_width": "84px"}
_CONTROL_WIDTH = "264px"


def make_widget(w: Any, c: Control, s: Scenario, room: Room) -> Any:
    """The widget of control ``c`` (``w`` is ipywidgets) showing ``s``, styled and classed."""
    value = c.shown(s, room)
    if c.kind == "text":
        widget = w.Text(
            value=value, description=c.label, placeholder=c.placeholder, continuous_update=False
        )
    elif c.kind == "int":
        widget = w.IntSlider(
            value=value,
            min=1,
            max=max(room.max_k, value),
            description=c.label,
            continuous_update=False,
        )
    elif c.kind == "float":
        widget = _float_slider(w, value, c.high, c.step, c.label)
    elif c.kind == "choice":
        assert c.options is not None
        widget = w.Dropdown(options=c.options(s, room), value=value, description=c.label)
    else:
        assert c.options is not None
        widget = w.ToggleButtons(
            options=c.options(s, room), value=value, description=c.label, tooltips=[*c.tooltips]
        )
    if c.kind == "toggle":
        widget.style = {**_STYLE, "button_width": c.button_width}
    else:
        widget.style = {**_STYLE}
        widget.layout = w.Layout(width=c.width or _CONTROL_WIDTH)
    widget.add_class(c.css_class)
    return widget


def _decimals(value: float) -> int:
    """The decimals ``value`` needs to be written exactly (up to 6)."""
    text = f"{value:.6f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def _float_slider(w: Any, value: float, high: float, step: float, description: str) -> Any:
    """A slider from 0 that holds ``value`` exactly: wider than ``high`` when it must be,
    with a finer step and readout when ``value`` is not on the usual step."""
    places = max(2, _decimals(value))
    on_step = abs(round(value / step) * step - value) < 1e-12
    return w.FloatSlider(
        value=value,
        min=0.0,
        max=max(high, value),
        step=step if on_step else 10.0**-places,
        readout_format=f".{places}f",
        description=description,
        continuous_update=False,
    )


def _seed(text: str) -> int | None:
    """The seed box's text as a seed: an int, or None when empty."""
    raw = text.strip()
    try:
        return int(raw) if raw else None
    except ValueError:
        raise PlaceboragValueError(
            f"seed={shown(text)} must be an int, or empty for the profile's own"
        ) from None


def _where(text: str) -> Any:
    """The where box's text as a filter: JSON, or None when empty."""
    raw = text.strip()
    try:
        return load_json(raw) if raw else None
    except json.JSONDecodeError as exc:
        raise ValueError(f"where is not valid JSON: {exc}") from None
