"""A JupyterLab server started by the tests on 127.0.0.1, and a Playwright-driven Chromium.

The server runs with throwaway Jupyter config, data and runtime directories, a random token and
a free port, on a copy of the notebooks; it is stopped when the module's tests end.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
NOTEBOOK = "explorer.ipynb"
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    home = tmp_path_factory.mktemp("jupyter")
    root = home / "notebooks"
    root.mkdir()
    # Only the notebook under test: the others are being written by other work in progress,
    # and copying a file while it is rewritten fails the whole module.
    shutil.copy2(ROOT / "notebooks" / NOTEBOOK, root / NOTEBOOK)
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "IPYTHONDIR": str(home / "ipython"),
        # The kernel imports the placeborag of this checkout (a git worktree included), not
        # whichever one the environment has installed.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    (home / "settings" / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    # No "news" prompt over the notebook.
    (
        home
        / "settings"
        / "@jupyterlab"
        / "apputils-extension"
        / "notification.jupyterlab-settings"
    ).write_text('{"fetchNews": "false", "checkForUpdates": false}')
    log = open(home / "server.log", "w")  # noqa: SIM115 - closed at teardown
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--port-retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.news_url=",
            "--allow-root",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError(
                        "JupyterLab did not start:\n" + (home / "server.log").read_text()
                    ) from None
                time.sleep(0.3)
        yield {"base": base, "token": token, "root": root, "log": home / "server.log"}
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
