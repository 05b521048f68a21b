import subprocess
import sys

import pytest

pytest.importorskip("pandas")

import placeborag.explore

HEAVY = ("pandas", "plotly", "sklearn", "ipywidgets", "anywidget", "umap", "numba", "pynndescent")


def test_all_is_exactly_the_public_surface():
    public = {n for n in dir(placeborag.explore) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(placeborag.explore, n)).__name__ == "module"}
    assert set(placeborag.explore.__all__) == public - modules - {"annotations"}


@pytest.mark.parametrize("module", ["placeborag", "placeborag.explore"])
def test_import_loads_no_heavy_library(module):
    code = f"import sys, {module}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_missing_extra_names_the_pip_extra(monkeypatch):
    from placeborag.explore._deps import optional

    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)
    with pytest.raises(ImportError, match=r"needs 'plotly'.*pip install 'placeborag\[explore\]'"):
        optional("plotly.graph_objects")
