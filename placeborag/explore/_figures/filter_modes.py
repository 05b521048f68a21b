"""The pre- versus post-filter view: the two tables (HTML) and the funnel."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from placeborag import FakeVectorStore, PlaceboragTypeError
from placeborag.explore._access import (
    RETURNED,
    QueryTrace,
    StoreRows,
    check_instance,
    store_rows,
    trace_query,
)
from placeborag.explore._compute import (
    filter_mode_table,
    funnel_counts,
)
from placeborag.explore._deps import optional
from placeborag.explore._figures.base import (
    PALETTE,
    _Display,
)
from placeborag.explore._scenario import Scenario
from placeborag.toolkit import check_mapping, check_str, shown


class FilterModesDisplay(_Display):
    """The same query, k and where under pre- and post-filtering: two tables and a funnel."""

    def __init__(self, tables: dict[str, Any], funnels: dict[str, Any], score_label: str) -> None:
        for given, name in ((tables, "tables"), (funnels, "funnels")):
            if set(check_mapping(given, name)) != {"pre", "post"}:
                raise PlaceboragTypeError(
                    f"{name}={shown(given)} must map 'pre' and 'post' to frames"
                    " (filter_mode_table(), funnel_counts())"
                )
        check_str(score_label, "score_label")
        self.tables = tables
        self.funnels = funnels
        self.score_label = score_label

    @classmethod
    def from_stores(
        cls,
        stores: Mapping[str, FakeVectorStore],
        query: str,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
        *,
        rows: StoreRows | None = None,
        traces: Mapping[str, QueryTrace] | None = None,
    ) -> FilterModesDisplay:
        """``stores`` maps "pre" and "post" to stores holding the same records (``traces``:
        any of their traces already computed, by mode)."""
        check_mapping(stores, "stores")
        for mode in ("pre", "post"):
            check_instance(
                stores.get(mode), f"stores[{mode!r}]", FakeVectorStore, "a FakeVectorStore"
            )
        if traces is not None:
            check_mapping(traces, "traces")
        traces = dict(traces or {})
        tables, funnels = {}, {}
        for mode in ("pre", "post"):
            store = stores[mode]
            r = rows if rows is not None else store_rows(store)
            t = traces.get(mode) or trace_query(store, query, k, where, rows=r)
            tables[mode] = filter_mode_table(t, r)
            funnels[mode] = funnel_counts(t)
        return cls(tables, funnels, stores["pre"].profile.score_label)

    @classmethod
    def from_store(
        cls,
        store: FakeVectorStore,
        query: str,
        k: int = 5,
        where: Mapping[str, Any] | None = None,
    ) -> FilterModesDisplay:
        """Rebuild ``store``'s records under the other filter mode and compare the two."""
        check_instance(store, "store", FakeVectorStore, "a FakeVectorStore")
        scenario = Scenario.from_store(store, query)
        other = "post" if store.filter_mode == "pre" else "pre"
        twin = scenario.store(embedder=store.embedder, filter_mode=other)
        return cls.from_stores({store.filter_mode: store, other: twin}, query, k, where)

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> FilterModesDisplay:
        check_instance(scenario, "scenario", Scenario, "a Scenario")
        embedder = scenario.embedder()
        stores = {m: scenario.store(embedder=embedder, filter_mode=m) for m in ("pre", "post")}
        return cls.from_stores(stores, scenario.query, scenario.k, scenario.where)

    def plot(self, figure: Any = None) -> FilterModesDisplay:
        """Draw :meth:`spec` into ``figure`` (or a new ``go.Figure``): ``figure_``."""
        self._show(figure, *self.spec())
        return self

    def spec(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The figure as plain data: its traces and layout (numpy arrays inside)."""
        traces = []
        for i, mode in enumerate(("pre", "post")):
            f = self.funnels[mode]
            counts = f["documents"].to_numpy()
            top = max(int(counts.max()), 1) if len(counts) else 1
            traces.append(
                {
                    "type": "funnel",
                    "name": f"{mode}-filter",
                    "y": f["stage"].to_numpy(),
                    "x": counts,
                    "textinfo": "value",
                    # A bar too narrow for its count has it written beside it (plotly drops
                    # the text of a bar a fraction of a pixel wide: 5 of 100,000).
                    "textposition": [
                        "inside" if int(c) * 6 >= top else "outside" for c in counts.tolist()
                    ],
                    "marker": {"color": PALETTE[i]},
                    "xaxis": "x" if i == 0 else "x2",
                    "yaxis": "y" if i == 0 else "y2",
                }
            )
        returned = {m: int((t["stage"] == RETURNED).sum()) for m, t in self.tables.items()}
        layout = {
            "title": {
                "text": f"Where the documents go: pre-filter returns {returned['pre']}, "
                f"post-filter returns {returned['post']}",
                "x": 0.01,
            },
            # The post-filter funnel's stage names sit in the gap, clear of the widest pre bar.
            "xaxis": {"domain": [0.0, 0.4], "showticklabels": False},
            "xaxis2": {"domain": [0.6, 1.0], "showticklabels": False, "anchor": "y2"},
            # Top-down, widest first, wherever it is drawn (plotly.js reverses a funnel's
            # axis only by default, which an in-place update could lose).
            "yaxis": {"automargin": True, "autorange": "reversed"},
            "yaxis2": {"anchor": "x2", "automargin": True, "autorange": "reversed"},
            "annotations": [
                {
                    "text": f"<b>{m}-filter</b>",
                    "xref": f"x{'' if i == 0 else '2'} domain",
                    "yref": "paper",
                    "x": 0.5,
                    "y": 1.0,
                    "yanchor": "bottom",
                    "showarrow": False,
                }
                for i, m in enumerate(("pre", "post"))
            ],
            "showlegend": False,
            "margin": {"t": 80, "l": 120, "r": 20, "b": 30},
            "height": 360,
        }
        return traces, layout

    def to_html(self, selected: Sequence[str] = ()) -> str:
        """Both tables side by side, as HTML (CSS classes for styling and browser tests); the
        rows of ``selected`` ids carry ``data-selected``."""
        # The occurrence column tells the records of an id stored twice apart; where no id is,
        # it is all zeros and only the rows' data-occurrence keeps it.
        repeats = any(bool((t["occurrence"] > 0).any()) for t in self.tables.values())
        cells = "".join(
            f'<div class="placeborag-mode placeborag-mode-{m}"><h4>{m}-filter</h4>'
            + frame_to_html(
                self.tables[m],
                css_class=f"placeborag-table placeborag-table-{m}",
                headers={"score": f"score ({self.score_label})", "occurrence": "record"},
                selected=selected,
                hide=() if repeats else ("occurrence",),
            )
            + "</div>"
            for m in ("pre", "post")
        )
        return f'<div class="placeborag-results">{_TABLE_CSS}{cells}</div>'


# Every rule starts with `.placeborag-results table.placeborag-table`: JupyterLab styles the
# tables of an HTML output with more specific selectors (right-aligned cells, a fixed layout that
# lets cell text overlap, striped rows over the stage colours), and these must win there.
_TABLE_CSS = """<style>
.placeborag-results{display:flex;gap:16px;flex-wrap:wrap;font:13px/1.35 sans-serif}
.placeborag-mode{flex:1 1 420px;min-width:0}
.placeborag-results table.placeborag-table{border-collapse:collapse;width:100%;
table-layout:auto;margin:0}
.placeborag-results table.placeborag-table th,.placeborag-results table.placeborag-table td{
border-bottom:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top;
white-space:normal;overflow-wrap:break-word}
.placeborag-results table.placeborag-table td:nth-child(2){white-space:nowrap;
overflow-wrap:normal}
.placeborag-results table.placeborag-table td.num{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
.placeborag-results table.placeborag-table tbody tr{background:transparent}
.placeborag-results table.placeborag-table tr[data-stage="dropped by post-filter"]{
background:#fde8dc}
.placeborag-results table.placeborag-table tr[data-stage="lost to recall"]{background:#f6e3ef}
.placeborag-results table.placeborag-table tr[data-stage="tied at the cut"]{background:#fdf0d5}
.placeborag-results table.placeborag-table tr[data-stage="below the cut"]{color:#555}
.placeborag-results table.placeborag-table tr[data-stage="returned"] td:last-child{
color:#00704f}
</style>"""


def frame_to_html(
    frame: Any,
    *,
    css_class: str = "placeborag-table",
    headers: Mapping[str, str] | None = None,
    selected: Sequence[str] = (),
    hide: Sequence[str] = (),
) -> str:
    """A small, escaped HTML table; each row carries ``data-stage``, ``data-id`` and
    ``data-occurrence`` where the frame has them.

    ``headers`` renames columns in the header row (the frame keeps its names); the columns in
    ``hide`` get no cell (their values stay in the rows' data attributes)."""
    names = headers or {}
    chosen = set(selected)
    columns = [str(c) for c in frame.columns]
    cells_of = [c for c in columns if c not in hide]
    head = "".join(f"<th>{html.escape(names.get(c, c))}</th>" for c in cells_of)
    body = []
    values = [frame[c].tolist() for c in frame.columns]  # column by column: no row objects
    for rec in (dict(zip(columns, row)) for row in zip(*values)):
        cells = []
        for value in (rec[c] for c in cells_of):
            if isinstance(value, float):
                cells.append(f'<td class="num">{value:.6f}</td>')
            elif value is None or (not isinstance(value, str) and _isna(value)):
                cells.append("<td></td>")
            else:
                cells.append(f"<td>{html.escape(str(value))}</td>")
        attrs = "".join(
            f' data-{k}="{html.escape(str(rec[k]), quote=True)}"'
            for k in ("stage", "occurrence", "id")
            if k in rec
        )
        if chosen and rec.get("id") in chosen:
            attrs += " data-selected"
        body.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    empty = f'<tr><td colspan="{len(cells_of)}"><i>no documents</i></td></tr>' if not body else ""
    return (
        f'<table class="{css_class}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}{empty}</tbody></table>"
    )


def _isna(value: Any) -> bool:
    return bool(optional("pandas").isna(value))
