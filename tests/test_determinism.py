"""Bit-identical vectors and rankings across processes, hash seeds, thread counts, SIMD paths
and pytest-xdist workers, checked against a golden digest kept in the repository."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
GOLDEN = json.loads((HERE / "data" / "golden-digest.json").read_text())
PROBE = HERE / "determinism_probe.py"


def golden_part():
    return {k: v for k, v in GOLDEN.items() if k == "all" or k.startswith("vectors")}


def run_probe(**env):
    full = {**os.environ, **env}
    out = subprocess.run(
        [sys.executable, str(PROBE)], capture_output=True, text=True, env=full, check=True
    )
    return json.loads(out.stdout)


def test_in_process_digest_matches_the_golden_digest():
    sys.path.insert(0, str(HERE))
    try:
        from determinism_probe import digest
    finally:
        sys.path.remove(str(HERE))
    assert digest() == golden_part()


def disable_all_dispatched_simd():
    from numpy._core._multiarray_umath import __cpu_dispatch__

    return " ".join(__cpu_dispatch__)


@pytest.mark.parametrize(
    "env",
    [
        {"PYTHONHASHSEED": "0"},
        {"PYTHONHASHSEED": "12345"},
        {"PYTHONHASHSEED": "random"},
        {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
        {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"},
        "no-simd",
    ],
    ids=["hashseed-0", "hashseed-12345", "hashseed-random", "threads-1", "threads-2", "no-simd"],
)
def test_fresh_processes_give_the_golden_digest(env):
    if env == "no-simd":
        env = {"NPY_DISABLE_CPU_FEATURES": disable_all_dispatched_simd()}
    assert run_probe(**env) == golden_part()


def test_pytest_xdist_workers_give_the_golden_digest(tmp_path):
    pytest.importorskip("xdist")
    test_file = tmp_path / "test_golden_in_workers.py"
    test_file.write_text(
        "import json, os, sys\n"
        "import pytest\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from determinism_probe import digest\n"
        "@pytest.mark.parametrize('i', range(4))\n"
        "def test_digest(i, tmp_path_factory):\n"
        f"    golden = json.load(open({str(HERE / 'data' / 'golden-digest.json')!r}))\n"
        "    d = digest()\n"
        "    assert d['all'] == golden['all']\n"
        f"    open(os.path.join({str(tmp_path)!r}, os.environ['PYTEST_XDIST_WORKER'] + f'-{{i}}'), 'w').close()\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "-p",
            "xdist",
            "-p",
            "no:cacheprovider",
            "-q",
            str(test_file),
            "-o",
            "asyncio_default_fixture_loop_scope=function",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    workers = {p.name.split("-")[0] for p in tmp_path.glob("gw*")}
    assert workers == {"gw0", "gw1"}
