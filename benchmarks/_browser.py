"""Driving the explorer in a real Jupyter front end for the browser benchmark.

The server, the browser and the page's signals come from ``tests/jupyter_driver.py``, shared
with the browser tests; here: a page with a notebook open, the app run, and one change timed.
Nothing here sleeps to wait.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from jupyter_driver import (
    APP_DRAWN,
    CHANGE,
    CHROMIUM,
    FRONTS,
    KERNEL_IDLE,
    RUN_ALL,
    SET_CELL,
    TIMED,
    app_source,
    chromium,
    serve,
    stop_kernels,
    write_plain_notebook,
)

__all__ = [
    "APP_DRAWN",
    "CHROMIUM",
    "FRONTS",
    "KERNEL_IDLE",
    "RUN_ALL",
    "app_source",
    "chromium",
    "notebook_page",
    "run_all",
    "run_app",
    "serve",
    "time_change",
    "write_plain_notebook",
]

TIMEOUT_MS = 900_000
RUN_ALL_LIMIT_MS = 600_000
CHANGE_LIMIT_MS = 300_000


@contextlib.contextmanager
def notebook_page(
    browser: Any, server: dict[str, Any], name: str, width: int = 1400, height: int = 900
) -> Iterator[Any]:
    """A new page with notebook ``name`` open and its kernel idle; console errors collect in
    ``page.problems``. The page's sessions are ended when it closes."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.problems = problems
    try:
        reset = "&reset" if server["front"] == "lab" else ""
        page.goto(f"{server['base']}{server['url']}{name}?token={server['token']}{reset}")
        page.wait_for_function(KERNEL_IDLE)
        yield page
    finally:
        context.close()
        stop_kernels(server)


def run_all(page: Any, want: int) -> float | None:
    """Milliseconds from Run All to ``want`` figures drawn (None: not within 10 minutes)."""
    ms = page.evaluate(RUN_ALL, [want, RUN_ALL_LIMIT_MS])
    return None if ms is None else float(ms)


def run_app(page: Any, source: str | None) -> None:
    """Run the explorer notebook (its code cell replaced by ``source`` when given) and wait for
    every plot drawn and the kernel idle."""
    if source is not None and not page.evaluate(SET_CELL, source):
        raise RuntimeError("the explorer notebook has no code cell")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(APP_DRAWN, polling="raf")
    page.wait_for_function(KERNEL_IDLE)


def time_change(page: Any, code: str) -> dict[str, Any]:
    """One control change made from the kernel, timed in the page (``CHANGE``)."""
    page.wait_for_function(KERNEL_IDLE)
    out: dict[str, Any] = page.evaluate(CHANGE, [TIMED.format(code), CHANGE_LIMIT_MS])
    if "error" in out:
        raise RuntimeError(f"{code}: {out['error']}")
    return out
