"""The widgets' JavaScript is files of the package (shipped in the wheel beside the Python),
and each module a widget sends the page parses as an ES module under the system's node."""

from __future__ import annotations

import shutil
import subprocess
from importlib.resources import files

import pytest

pytest.importorskip("anywidget")

from placeborag.explore._figures import widgets

JS = files("placeborag.explore._figures").joinpath("js")
WIDGETS = [widgets.FigureView, widgets.PlotlyBundle, widgets.HtmlPanel, widgets.BusyStatus]
NODE = shutil.which("node")


def test_every_widget_module_is_made_of_the_package_s_own_js_files():
    names = sorted(p.name for p in JS.iterdir() if p.name.endswith(".js"))
    assert names == ["figure.js", "loader.js", "panel.js", "slot.js", "status.js"]
    sources = {name: JS.joinpath(name).read_text(encoding="utf-8") for name in names}
    for widget in WIDGETS:
        assert widget._esm.endswith(sources[widget._esm_files[-1]])
    used = {name for widget in WIDGETS for name in widget._esm_files}
    assert used == set(names)  # no file left behind, none missing


@pytest.mark.skipif(NODE is None, reason="no node on PATH: the syntax check needs it")
@pytest.mark.parametrize("widget", WIDGETS, ids=lambda w: w.__name__)
def test_the_module_a_widget_sends_parses_as_an_es_module(widget, tmp_path):
    module = tmp_path / f"{widget.__name__}.mjs"
    module.write_text(widget._esm, encoding="utf-8")
    checked = subprocess.run([NODE, "--check", str(module)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.skipif(NODE is None, reason="no node on PATH: the syntax check needs it")
def test_the_check_fails_on_a_syntax_error(tmp_path):
    module = tmp_path / "broken.mjs"
    module.write_text(widgets.FigureView._esm.replace("function render", "function (", 1))
    assert subprocess.run([NODE, "--check", str(module)], capture_output=True).returncode != 0
