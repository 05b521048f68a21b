"""The data a plot in the page draws, and the figure the kernel last showed, as plain JSON
values that compare equal when the page draws exactly the kernel's figure."""

from __future__ import annotations

import inspect
import json
import math
from typing import Any

import numpy as np

# The traces plotly holds for figure `name` (typed arrays as plain arrays; NaN as null), and
# the revision the widget drew.
PAGE_FIGURE = """(name) => {
    const gd = document.querySelector('.placeborag-figure-' + name + ' .js-plotly-plot');
    if (!gd || !gd.data) return null;
    const plain = (v) => ArrayBuffer.isView(v) ? Array.from(v)
        : Array.isArray(v) ? v.map(plain)
        : (v && typeof v === 'object') ? Object.fromEntries(
            Object.entries(v).map(([k, x]) => [k, plain(x)]))
        : v;
    return JSON.stringify({revision: Number(gd.dataset.revision), data: gd.data.map(plain)});
}"""


def plain(value: Any) -> Any:
    """Numpy arrays and scalars as Python values, NaN as None (as the page's JSON has it)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def differences(kernel_traces: list[dict[str, Any]], page_traces: list[dict[str, Any]]) -> list:
    """Where the page's traces differ from the kernel's: every property the kernel gave each
    trace must be in the page's trace, equal (plotly adds properties of its own, such as uid)."""
    out: list[Any] = []
    if len(kernel_traces) != len(page_traces):
        return [("trace count", len(kernel_traces), len(page_traces))]
    for i, (mine, drawn) in enumerate(zip(kernel_traces, page_traces)):
        for key, value in mine.items():
            if not _covers(json.loads(json.dumps(value)), drawn.get(key)):
                out.append((i, mine.get("name"), key))
    return out


def _covers(mine: Any, drawn: Any) -> bool:
    if isinstance(mine, dict):
        return isinstance(drawn, dict) and all(_covers(v, drawn.get(k)) for k, v in mine.items())
    return bool(mine == drawn)


# Python for the kernel: print the figure NAME of `explorer` as :func:`plain` has it.
KERNEL_FIGURE = (
    "import json, math\nimport numpy as np\nfrom typing import Any\n\n"
    + inspect.getsource(plain)
    + "\n_f = explorer.figures[NAME]\n"
    + 'print(json.dumps({"revision": _f.revision, "data": plain(_f.traces),'
    + ' "patched": "revision" in _f.patch}))\n'
)
