"""Driving the explorer in a real Jupyter front end, shared by the browser tests
(``tests/browser/``) and the browser benchmark (``benchmarks/bench_browser.py``).

A Jupyter server (JupyterLab 4 or Notebook 7) on 127.0.0.1 with a free port, a random token
and throwaway config, data and runtime directories, over a copy of a checkout's explorer
notebook, its kernel importing that checkout's placeborag; Debian's Chromium through
Playwright; and the page's own signals to wait on (the kernel's status, every plot holding
traces plotly has drawn), as JavaScript snippets. Nothing here sleeps to wait for the page.
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
FRONTS = {
    # front -> (jupyter subcommand, extra arguments, the URL path of a notebook)
    "lab": ("lab", ["--LabApp.expose_app_in_browser=True", "--LabApp.news_url="], "/lab/tree/"),
    "notebook": ("notebook", ["--JupyterNotebookApp.expose_app_in_browser=True"], "/notebooks/"),
}
# User settings (plugin id -> JSON): no "news" prompt over the notebook.
NO_NEWS = {
    "@jupyterlab/apputils-extension:notification": (
        '{"fetchNews": "false", "checkForUpdates": false}'
    )
}
PLAIN = "import plotly.graph_objects as go\n\ngo.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2]))"

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
# Replaces the source of the notebook's first code cell.
SET_CELL = """(source) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    for (let i = 0; i < nb.model.cells.length; i++) {
        const cell = nb.model.cells.get(i);
        if (cell.type === 'code') { cell.sharedModel.setSource(source); return true; }
    }
    return false;
}"""
# Resolves with the milliseconds from Run All to `want` plots in the notebook's outputs
# holding traces plotly has drawn (polled every animation frame), or null after `limit` ms.
RUN_ALL = """async ([want, limit]) => {
    const start = performance.now();
    window.jupyterapp.commands.execute('notebook:run-all-cells');
    const drawn = () => {
        const plots = Array.from(document.querySelectorAll('.jp-OutputArea .js-plotly-plot'));
        return plots.length >= want && plots.every(gd => (gd.data || []).length > 0
            && gd.querySelector('g.trace, canvas') !== null);
    };
    while (!drawn()) {
        if (performance.now() - start > limit) return null;
        await new Promise(r => requestAnimationFrame(r));
    }
    return performance.now() - start;
}"""
# Sends `code` to the kernel; resolves with the milliseconds until both the projection and
# the ranking have drawn anew (plotly's full data replaced, then one more frame), and until
# the kernel reported the cell done. `inside`: what the code printed (its own kernel time).
# An error, or no redraw within `limit` ms: {error}.
CHANGE = """async ([code, limit]) => {
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
    const deadline = start + limit;
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
    return {error: 'no redraw within ' + Math.round(limit / 1000) + ' s'};
}"""
# A change timed inside the kernel too: the code prints its own milliseconds.
TIMED = (
    "import time as _t; _t0 = _t.perf_counter(); {}; print(round((_t.perf_counter() - _t0) * 1000))"
)


def app_source(n: int | None) -> str:
    """The explorer notebook's code cell for an app over the demo grown to ``n`` documents
    (None: the demo's own 38)."""
    scenario = "" if n is None else str(n)
    return (
        "from placeborag.explore import app, demo_scenario\n\n"
        f"explorer = app(demo_scenario({scenario}))\nexplorer"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(front: str, checkout: Path, home: Path) -> Iterator[dict[str, Any]]:
    """``jupyter lab`` (``front`` "lab") or ``jupyter notebook`` ("notebook") over a copy of
    ``checkout``'s explorer notebook in ``home``; the kernel imports ``checkout``'s
    placeborag first, whatever the environment installed. Yields what a page needs to reach
    it (``base``, ``token``, ``url``, ``root``: the notebooks' folder, ``log``, ``front``);
    stops it after."""
    app, extra, url = FRONTS[front]
    root = home / "notebooks"
    root.mkdir(parents=True)
    # Only the explorer notebook: the others may be being rewritten by work in progress, and
    # copying a file while it is rewritten fails the whole run.
    shutil.copy2(checkout / "notebooks" / "explorer.ipynb", root / "explorer.ipynb")
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
        "PYTHONPATH": os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")])),
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
                        log.flush()
                        text = log_path.read_text()
                        raise RuntimeError(f"jupyter {app} did not start:\n{text}") from None
                    time.sleep(0.3)  # the server process starting: no page to wait on yet
            yield {
                "base": base,
                "token": token,
                "url": url,
                "root": root,
                "log": log_path,
                "front": front,
            }
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


def write_plain_notebook(server: dict[str, Any]) -> str:
    """A notebook of one plain plotly figure beside the explorer's; its name."""
    plain = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": PLAIN, "outputs": [], "id": "plain"}
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (server["root"] / "plain.ipynb").write_text(json.dumps(plain))
    return "plain.ipynb"


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
    """Debian's Chromium, headless, through Playwright."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
