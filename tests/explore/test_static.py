"""The static snapshot's picture of the projection: an inline SVG, drawn without plotly."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")

from placeborag.explore import Document, Explorer, Scenario, demo_scenario
from placeborag.explore._static import MAX_DOTS, projection_svg

SVG = "{http://www.w3.org/2000/svg}"


def parsed(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_the_snapshot_pictures_every_document_the_query_and_the_top_k(demo):
    explorer = Explorer(demo)
    page = explorer.static_html()
    svg = re.search(r"<svg.*?</svg>", page, re.S).group(0)
    root = parsed(svg)
    circles = root.findall(f"{SVG}circle")
    k = len(explorer.shown.trace.top_k)
    assert len(circles) == len(demo.documents) + k  # a dot each, a ring per top-k document
    ranks = [t.text for t in root.findall(f"{SVG}text") if t.text and t.text.isdigit()]
    assert sorted(ranks, key=int) == [str(r) for r in range(1, k + 1)]
    assert len(root.findall(f"{SVG}path")) == 1  # the query's star
    assert "<script" not in page


def test_a_large_store_is_pictured_by_a_fixed_stride_and_every_top_k_document():
    explorer = Explorer(demo_scenario(10_000))
    svg = projection_svg(explorer.shown.projection)
    circles = parsed(svg).findall(f"{SVG}circle")
    k = len(explorer.shown.trace.top_k)
    assert k < len(circles) - k <= MAX_DOTS
    assert svg == projection_svg(explorer.shown.projection)  # the same picture every time


def test_labels_in_the_picture_are_escaped():
    docs = [
        Document(id=f"d{i}", text=f"text {i}", metadata={"kind": "<b>&'\"</b>" if i % 2 else "x"})
        for i in range(6)
    ]
    explorer = Explorer(Scenario(name="esc", documents=docs, query="text", k=2))
    explorer.controls["color_by"].value = "kind"
    svg = projection_svg(explorer.shown.projection)
    assert "<b>" not in svg
    legend = [t.text for t in parsed(svg).findall(f"{SVG}text")]
    assert "<b>&'\"</b>" in legend  # parsed back to the label as given


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # PCA of identical vectors: no variance
def test_coordinates_all_equal_still_draw_inside_the_picture():
    docs = [Document(id=f"d{i}", text="same text") for i in range(4)]
    explorer = Explorer(Scenario(name="flat", documents=docs, query="same text", k=1))
    root = parsed(projection_svg(explorer.shown.projection))
    xs = [float(c.get("cx")) for c in root.findall(f"{SVG}circle")]
    assert all(np.isfinite(xs)) and all(0 <= x <= float(root.get("width")) for x in xs)


@pytest.mark.parametrize("mode", ["pre", "post"])
def test_the_snapshot_lists_what_the_store_returns_not_the_cut(demo, mode):
    scenario = demo.replace(filter_mode=mode)
    page = Explorer(scenario, mode="output").static_html()
    listed = re.search(r"<p>returned:</p><ol>(.*?)</ol>", page, re.S).group(1)
    expected = [m.id for m in scenario.store().query(scenario.query, scenario.k, scenario.where)]
    assert re.findall(r"<li>(.*?)</li>", listed) == expected
    if mode == "post":
        assert expected == ["hu-refund-1", "hu-refund-4"]  # the cut held three more
