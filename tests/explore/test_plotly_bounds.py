"""The explorer with the plotly in use: the declared lower bound and the newest release.

A fresh process builds the widget app (the demo and a store past the density threshold),
the output-mode app, every display's plain figure and the static report. By default it
uses the installed plotly; ``PLACEBORAG_PLOTLY_TARGET=DIR`` puts a plotly installed with
``pip install --target DIR plotly==X`` first (how the lower bound is checked).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("plotly")
pytest.importorskip("anywidget")

ROOT = Path(__file__).resolve().parent.parent.parent
SMOKE = """
import plotly
from placeborag.explore import (AnchorsDisplay, FilterModesDisplay, ProjectionDisplay,
    RankingDisplay, app, demo_scenario, render_report)
explorer = app()
explorer.controls["k"].value = 3
assert explorer.error == "", explorer.error
big = demo_scenario(20_000)
assert app(big).error == ""
assert app(mode="output").error == ""
s = demo_scenario()
for display in (ProjectionDisplay.from_scenario(s), RankingDisplay.from_scenario(s),
                FilterModesDisplay.from_scenario(s), ProjectionDisplay.from_scenario(big),
                AnchorsDisplay.from_scenario(s, dimensions=(64,))):
    assert display.plot().figure_.data
assert "<html" in render_report(s).lower()
print("ok", plotly.__version__)
"""


def test_the_explorer_builds_with_the_plotly_in_use():
    target = os.environ.get("PLACEBORAG_PLOTLY_TARGET")
    path = [str(ROOT), *([target] if target else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    done = subprocess.run(
        [sys.executable, "-c", SMOKE], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1].startswith("ok ")
