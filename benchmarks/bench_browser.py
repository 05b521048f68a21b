"""The explorer in a real browser: Run All to every figure drawn, and change to redraw.

For each front end asked for (JupyterLab 4, ``lab``; Notebook 7, ``notebook``), a server over
the checkout's explorer notebook and headless Chromium, measured in the page:

- **first picture**: the milliseconds from Run All to every figure drawn, in a fresh kernel,
  for the explorer notebook (its four figures) and for a notebook of one plain plotly figure,
  rounds interleaved so a busy spell hits both alike; reported as the ratio of the medians.
- **change to redraw** at each size (the demo grown to N documents): a first-visit change of
  k, the query and colour by, each sent from the kernel and timed from the request to both
  the projection and the ranking drawn anew (and to the kernel reporting the cell done, and
  inside the kernel). Two changes per control; the median is reported.
- with ``--screens DIR``: screenshots of the app at 1400x900 and 1000x900 (notebook width)
  at each ``--screen-sizes`` size, the app scrolled to its top, then to each of the ranking,
  the funnels and the anchors view.

``--root DIR`` measures another checkout with the same script (an older commit, for a
before/after; its kernel imports that checkout's placeborag). Speed is reported, never
asserted: the load average is printed with the numbers. Needs Chromium (``make browser``),
Playwright, JupyterLab and Notebook 7; ``make bench`` skips it when they are missing.

Run: ``python benchmarks/bench_browser.py [--front lab notebook] [--sizes 2000 100000]
[--rounds 3] [--root DIR] [--screens DIR] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _browser as b  # noqa: E402

# Two first-visit values per control (neither is the demo's own).
CHANGES = {
    "k": ("explorer.controls['k'].value = 8", "explorer.controls['k'].value = 12"),
    "query": (
        "explorer.controls['query'].value = 'where is my parcel'",
        "explorer.controls['query'].value = 'money back please'",
    ),
    "colour by": (
        "explorer.controls['color_by'].value = 'lang'",
        "explorer.controls['color_by'].value = 'stage'",
    ),
}


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def first_picture(browser: Any, server: dict[str, Any], rounds: int) -> dict[str, Any]:
    plain, explorer = [], []
    plain_name = b.write_plain_notebook(server)
    for _ in range(rounds):
        for name, want, out in ((plain_name, 1, plain), ("explorer.ipynb", 4, explorer)):
            with b.notebook_page(browser, server, name) as page:
                ms = b.run_all(page, want)
                if ms is None:
                    raise RuntimeError(f"{name} did not draw {want} figure(s): {page.problems}")
                out.append(round(float(ms)))
                page.wait_for_function(b.KERNEL_IDLE)
    p, e = statistics.median(plain), statistics.median(explorer)
    return {"plain_ms": plain, "explorer_ms": explorer, "ratio_of_medians": round(e / p, 2)}


def change_to_redraw(browser: Any, server: dict[str, Any], n: int) -> dict[str, Any]:
    with b.notebook_page(browser, server, "explorer.ipynb", 1500, 1100) as page:
        b.run_app(page, b.app_source(n))
        out: dict[str, Any] = {}
        for control, codes in CHANGES.items():
            runs = [b.time_change(page, code) for code in codes]
            out[control] = {
                "change_to_redraw_ms": [round(r["ms"]) for r in runs],
                "kernel_done_ms": [
                    None if r["kernel_ms"] is None else round(r["kernel_ms"]) for r in runs
                ],
                "inside_kernel_ms": [r["inside"] for r in runs],
            }
        error = page.locator(".placeborag-error").inner_text()
        if error:
            raise RuntimeError(f"the app reported an error at {n} documents: {error}")
        return out


def screens(browser: Any, server: dict[str, Any], sizes: list[int], folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    saved = []
    for n in sizes:
        with b.notebook_page(browser, server, "explorer.ipynb") as page:
            b.run_app(page, b.app_source(None if n == 38 else n))
            for width in (1400, 1000):
                page.set_viewport_size({"width": width, "height": 900})
                page.wait_for_function(b.APP_DRAWN, polling="raf")
                page.evaluate(
                    "() => document.querySelector('.placeborag-app')"
                    ".scrollIntoView({block: 'start'})"
                )
                # Two frames: the plots resized to the new width have drawn.
                page.evaluate(
                    "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
                )
                path = folder / f"{server['front']}-{n}-{width}x900.png"
                page.screenshot(path=str(path))
                saved.append(str(path))
                # Then each view below the first screen, scrolled to its top.
                for view in ("ranking", "funnel", "anchors"):
                    page.evaluate(
                        "(v) => document.querySelector('.placeborag-figure-' + v)"
                        ".scrollIntoView({block: 'start'})",
                        view,
                    )
                    page.evaluate(
                        "() => new Promise(r => requestAnimationFrame("
                        "() => requestAnimationFrame(r)))"
                    )
                    path = folder / f"{server['front']}-{n}-{width}x900-{view}.png"
                    page.screenshot(path=str(path))
                    saved.append(str(path))
    return saved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--front", nargs="+", choices=sorted(b.FRONTS), default=["lab"])
    parser.add_argument("--sizes", nargs="*", type=int, default=[2000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--root", type=Path, default=HERE.parent)
    parser.add_argument("--screens", type=Path, default=None)
    parser.add_argument("--screen-sizes", nargs="*", type=int, default=[38, 20_000, 100_000])
    parser.add_argument("--no-first-picture", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    missing = [
        m for m in ("playwright", "jupyterlab", "notebook") if not importlib.util.find_spec(m)
    ]
    if missing or not Path(b.CHROMIUM).exists():
        print(f"skipped: needs {', '.join(missing) or b.CHROMIUM}")
        return
    root = args.root.resolve()
    report: dict[str, Any] = {"checkout": str(root), "fronts": {}}
    print(f"checkout: {root}; load average at start {_load()}", flush=True)
    with b.chromium() as browser:
        for front in args.front:
            with tempfile.TemporaryDirectory() as home, b.serve(front, root, Path(home)) as server:
                result: dict[str, Any] = {}
                if not args.no_first_picture:
                    result["first_picture"] = first_picture(browser, server, args.rounds)
                    print(front, "first picture:", json.dumps(result["first_picture"]), flush=True)
                    print("  load average", _load(), flush=True)
                for n in args.sizes:
                    result[f"change_at_{n}"] = change_to_redraw(browser, server, n)
                    print(front, n, "documents:", json.dumps(result[f"change_at_{n}"]), flush=True)
                    print("  load average", _load(), flush=True)
                if args.screens is not None:
                    result["screens"] = screens(browser, server, args.screen_sizes, args.screens)
                    print(front, "screens:", *result["screens"], sep="\n  ", flush=True)
                report["fronts"][front] = result
    report["load_average_at_end"] = _load()
    _summary(report)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1))


def _summary(report: dict[str, Any]) -> None:
    load = report["load_average_at_end"]
    print(f"\n## Browser ({report['checkout']}; load average at end {load})\n")
    for front, result in report["fronts"].items():
        fp = result.get("first_picture")
        if fp:
            print(
                f"- {front}: Run All to every figure drawn, explorer "
                f"{statistics.median(fp['explorer_ms']):.0f} ms vs plain plotly figure "
                f"{statistics.median(fp['plain_ms']):.0f} ms: {fp['ratio_of_medians']}x"
            )
        for key, changes in result.items():
            if not key.startswith("change_at_"):
                continue
            cells = ", ".join(
                f"{c} {statistics.median(v['change_to_redraw_ms']):.0f} ms"
                for c, v in changes.items()
            )
            n = int(key.removeprefix("change_at_"))
            print(f"- {front}, {n:,} documents, change to redraw: {cells}")


if __name__ == "__main__":
    main()
