"""The documentation site builds with ``mkdocs build --strict`` and logs no warning.

The build executes every notebook in ``notebooks/`` (mkdocs-jupyter, ``allow_errors: false``),
so this test also fails when a notebook stops running.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent

# ipykernel logs this on every kernel start over TCP (the kernels the build starts to execute
# the notebooks listen on 127.0.0.1 only); it is the kernel's notice, not MkDocs'.
KERNEL_NOTICE = "[IPKernelApp] WARNING | Kernel is running over TCP without encryption."


def warnings_in(output):
    return [
        line
        for line in output.splitlines()
        if "WARNING" in line and not line.startswith(KERNEL_NOTICE)
    ]


def test_warnings_in_keeps_every_warning_but_the_kernel_notice():
    output = f"INFO    -  Building\n{KERNEL_NOTICE} All communication ...\nWARNING -  oops\n"
    assert warnings_in(output) == ["WARNING -  oops"]


@pytest.mark.slow
def test_the_site_builds_strictly_without_warnings(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocs_jupyter")
    pytest.importorskip("mkdocstrings")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=900,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert warnings_in(output) == [], output
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "api" / "placeborag" / "index.html").is_file()
