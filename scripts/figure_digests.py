"""SHA-256 of every figure's JSON over a set of scenarios: a move of figure code must leave
them all unchanged (``python scripts/figure_digests.py > before.txt``, move, compare).

Each display's ``spec()`` (traces and layout, numpy arrays by dtype, shape and bytes), its
``to_html()`` for the tables, and the widget app's figures as they go on the wire (the
``figure`` of each figure widget after the first drawing and after a few control changes).
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

import numpy as np


def plain(value: Any) -> Any:
    """A figure spec as JSON can hold it, arrays by dtype, shape and the SHA-256 of bytes."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return {"object": [plain(v) for v in value.tolist()], "shape": list(value.shape)}
        c = np.ascontiguousarray(value)
        return {
            "dtype": c.dtype.str,
            "shape": list(c.shape),
            "sha256": hashlib.sha256(c.tobytes()).hexdigest(),
        }
    if isinstance(value, memoryview):
        return {"bytes": hashlib.sha256(value.tobytes()).hexdigest()}
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float):
        return repr(value)
    return value


def digest(value: Any) -> str:
    text = json.dumps(plain(value), sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def displays(name: str, s: Any) -> list[tuple[str, str]]:
    from placeborag.explore import (
        AnchorsDisplay,
        FilterModesDisplay,
        ProjectionDisplay,
        RankingDisplay,
    )

    out = []
    store = s.store()
    for n_components in (2, 3):
        for color_by in ("cluster", "stage", "lang"):
            p = ProjectionDisplay.from_store(
                store, s.query, s.k, s.where, n_components=n_components, color_by=color_by
            )
            out.append((f"{name} projection {n_components}-D by {color_by}", digest(p.spec())))
            if n_components == 2:
                r = RankingDisplay(p.projection)
                out.append((f"{name} ranking by {color_by}", digest(r.spec())))
    f = FilterModesDisplay.from_scenario(s)
    out.append((f"{name} funnel", digest(f.spec())))
    out.append((f"{name} tables", digest(f.to_html(selected=[s.documents[0].id]))))
    if s.clusters:
        a = AnchorsDisplay.from_scenario(s)
        out.append((f"{name} anchors", digest(a.spec())))
        a = AnchorsDisplay.from_scenario(s, dimensions=64)
        out.append((f"{name} anchors one dimension", digest(a.spec())))
    return out


def app_figures(name: str, s: Any, changes: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    from placeborag.explore import Explorer

    out = []
    e = Explorer(s)
    step = "first"
    for control, value in [(None, None), *changes]:
        if control is not None:
            e.controls[control].value = value
            step = f"{control}={value}"
        assert not e.error, e.error
        for figure, view in e.figures.items():
            if view is not None:
                wire = {k: view.figure.get(k) for k in ("data", "layout", "config")}
                wire["buffers"] = [bytes(b) for b in view.figure.get("buffers", [])]
                wire["patch"] = {k: v for k, v in view.patch.items() if k != "buffers"}
                wire["patch buffers"] = [bytes(b) for b in view.patch.get("buffers", [])]
                out.append((f"{name} app {step} {figure}", digest(_bytes_hex(wire))))
        out.append((f"{name} app {step} tables", digest(e.results_html.value)))
    return out


def _bytes_hex(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _bytes_hex(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_bytes_hex(v) for v in value]
    if isinstance(value, (bytes, memoryview)):
        return hashlib.sha256(bytes(value)).hexdigest()
    return value


def main() -> None:
    from placeborag.explore import demo_scenario

    demo = demo_scenario()
    cases = [
        ("demo", demo),
        ("demo post k=2", demo.replace(filter_mode="post", k=2)),
        ("demo faiss no filter", demo.replace(profile="faiss", where=None, k=8)),
        ("demo spread 1 dim 128", demo.replace(cluster_spread=1.0, dimensions=128)),
        ("demo x600", demo_scenario(600)),
    ]
    if "--large" in sys.argv:
        cases.append(("demo x20000", demo_scenario(20_000)))
    rows: list[tuple[str, str]] = []
    for name, s in cases:
        rows += displays(name, s)
    rows += app_figures(
        "demo",
        demo,
        [("k", 3), ("filter_mode", "post"), ("color_by", "lang"), ("projection", "3-D")],
    )
    rows += app_figures("demo x600", demo_scenario(600), [("profile", "faiss"), ("k", 9)])
    for name, d in rows:
        print(f"{d}  {name}")


if __name__ == "__main__":
    main()
