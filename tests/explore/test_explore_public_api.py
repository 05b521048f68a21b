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


def test_an_installed_package_that_fails_to_import_is_not_called_missing(tmp_path, monkeypatch):
    # numpy's extension modules refuse a second load in one process: the package is there.
    from placeborag.explore._deps import optional

    (tmp_path / "halfloaded").mkdir()
    (tmp_path / "halfloaded" / "__init__.py").write_text(
        "raise ImportError('cannot load module more than once per process')\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError) as caught:
        optional("halfloaded")
    assert "not installed" not in str(caught.value)
    assert "'halfloaded', which is installed but failed to import 'halfloaded'" in str(caught.value)
    assert "ImportError: cannot load module more than once per process" in str(caught.value)


def test_a_missing_module_inside_an_installed_package_is_its_own_error(tmp_path, monkeypatch):
    # plotly there, but one of its own imports missing: the error names that module.
    from placeborag.explore._deps import optional

    (tmp_path / "partial").mkdir()
    (tmp_path / "partial" / "__init__.py").write_text("import partial_dependency\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match=r"failed to import 'partial'.*'partial_dependency'"):
        optional("partial")
