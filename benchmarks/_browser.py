"""Driving the explorer in a real Jupyter front end for the browser benchmark.

A Jupyter server (JupyterLab 4 or Notebook 7) started on 127.0.0.1 with throwaway config,
data and runtime directories, over a copy of a checkout's explorer notebook, its kernel
importing that checkout's placeborag; a headless Chromium (Debian's, through Playwright) that
opens a notebook, runs it and waits on what the page itself shows: the kernel's status, and
every plot holding traces that plotly has rendered. Nothing here sleeps to wait.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("PLACEBORAG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
TIMEOUT_MS = 900_000
PLAIN = "import plotly.graph_objects as go\n\ngo.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2]))"
FRONTS = {
    # front -> (jupyter subcommand, extra arguments, the URL path of a notebook)
    "lab": ("lab", ["--LabApp.expose_app_in_browser=True", "--LabApp.news_url="], "/lab/tree/"),
    "notebook": ("notebook", ["--JupyterNotebookApp.expose_app_in_browser=True"], "/notebooks/"),
}
NO_NEWS = {
    "@jupyterlab/apputils-extension:notification": (
        '{"fetchNews": "false", "checkForUpdates": false}'
    )
}

KERNEL_IDLE = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && k.status === 'idle';
}"""
# Every explorer plot (projection, ranking, funnel, anchors) holds traces plotly has drawn.
APP_DRAWN = """() => {
    const plots = Array.from(document.querySelectorAll('.placeborag-app .js-plotly-plot'));
    return plots.length >= 4 && plots.every(gd => (gd.data || []).length > 0
        && gd.getBoundingClientRect().height > 0
        && gd.querySelector('g.trace, canvas') !== null);
}"""
SET_CELL = """(source) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    for (let i = 0; i < nb.model.cells.length; i++) {
        const cell = nb.model.cells.get(i);
        if (cell.type === 'code') { cell.sharedModel.setSource(source); return true; }
    }
    return false;
}"""
# Resolves with the milliseconds from Run All to `want` plots in the notebook's outputs
# holding traces plotly has drawn (polled every animation frame), or null after 10 minutes.
RUN_ALL = """async (want) => {
    const start = performance.now();
    window.jupyterapp.commands.execute('notebook:run-all-cells');
    const drawn = () => {
        const plots = Array.from(document.querySelectorAll('.jp-OutputArea .js-plotly-plot'));
        return plots.length >= want && plots.every(gd => (gd.data || []).length > 0
            && gd.querySelector('g.trace, canvas') !== null);
    };
    while (!drawn()) {
        if (performance.now() - start > 600000) return null;
        await new Promise(r => requestAnimationFrame(r));
    }
    return performance.now() - start;
}"""
# Sends `code` to the kernel; resolves with the milliseconds until both the projection and
# the ranking have drawn anew (plotly's full data replaced, then one more frame), and until
# the kernel reported the cell done. `inside`: what the code printed (its own kernel time).
CHANGE = """async (code) => {
    const plots = Array.from(document.querySelectorAll(
        '.placeborag-figure-projection .js-plotly-plot,'
        + ' .placeborag-figure-ranking .js-plotly-plot'));
    const before = plots.map(gd => gd._fullData);
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const start = performance.now();
    const future = kernel.requestExecute({code, store_history: false});
    let error = '', kernelMs = null, inside = '';
    future.done.then(() => { kernelMs = performance.now() - start; });
    future.onIOPub = (msg) => {
        if (msg.header.msg_type === 'error') error = msg.content.evalue;
        if (msg.header.msg_type === 'stream') inside += msg.content.text;
    };
    const deadline = start + 300000;
    while (performance.now() < deadline) {
        await new Promise(r => requestAnimationFrame(r));
        if (error) return {error};
        if (plots.length === 2 && plots.every((gd, i) => gd._fullData !== before[i])) {
            await new Promise(r => requestAnimationFrame(r));
            const ms = performance.now() - start;
            await future.done;
            return {ms, kernel_ms: kernelMs, inside: parseFloat(inside)};
        }
    }
    return {error: 'no redraw within 300 s'};
}"""
TIMED = (
    "import time as _t; _t0 = _t.perf_counter(); {}; print(round((_t.perf_counter() - _t0) * 1000))"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(front: str, checkout: Path, home: Path) -> Iterator[dict[str, Any]]:
    """``jupyter lab`` or ``jupyter notebook`` over a copy of ``checkout``'s explorer notebook
    and a notebook of one plain plotly figure; the kernel imports ``checkout``'s placeborag."""
    app, extra, url = FRONTS[front]
    root = home / "notebooks"
    root.mkdir(parents=True)
    shutil.copy2(checkout / "notebooks" / "explorer.ipynb", root / "explorer.ipynb")
    plain = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": PLAIN, "outputs": [], "id": "plain"}
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "plain.ipynb").write_text(json.dumps(plain))
    for name, text in NO_NEWS.items():
        package, plugin = name.split(":")
        folder = home / "settings" / package
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{plugin}.jupyterlab-settings").write_text(text)
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "IPYTHONDIR": str(home / "ipython"),
        "PYTHONPATH": str(checkout),
    }
    log_path = home / "server.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter",
                app,
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={port}",
                "--port-retries=0",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.root_dir={root}",
                "--allow-root",
                *extra,
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).read()
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        text = log_path.read_text()
                        raise RuntimeError(f"jupyter {app} did not start:\n{text}") from None
                    time.sleep(0.3)
            yield {"base": base, "token": token, "url": url, "log": log_path, "front": front}
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


def stop_kernels(server: dict[str, Any]) -> None:
    """End every session (and its kernel) of the server: the next notebook opens a fresh one."""
    auth = {"Authorization": f"token {server['token']}"}
    listing = urllib.request.Request(f"{server['base']}/api/sessions", headers=auth)
    for session in json.loads(urllib.request.urlopen(listing, timeout=30).read()):
        urllib.request.urlopen(
            urllib.request.Request(
                f"{server['base']}/api/sessions/{session['id']}", method="DELETE", headers=auth
            ),
            timeout=60,
        ).read()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


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


def run_app(page: Any, source: str | None) -> None:
    """Run the explorer notebook (its code cell replaced by ``source`` when given) and wait for
    every plot drawn and the kernel idle."""
    if source is not None and not page.evaluate(SET_CELL, source):
        raise RuntimeError("the explorer notebook has no code cell")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(APP_DRAWN, polling="raf")
    page.wait_for_function(KERNEL_IDLE)


def app_source(n: int | None) -> str:
    scenario = "" if n is None else str(n)
    return (
        "from placeborag.explore import app, demo_scenario\n\n"
        f"explorer = app(demo_scenario({scenario}))\nexplorer"
    )


def time_change(page: Any, code: str) -> dict[str, Any]:
    """One control change made from the kernel, timed in the page (:data:`CHANGE`)."""
    page.wait_for_function(KERNEL_IDLE)
    out: dict[str, Any] = page.evaluate(CHANGE, TIMED.format(code))
    if "error" in out:
        raise RuntimeError(f"{code}: {out['error']}")
    return out
