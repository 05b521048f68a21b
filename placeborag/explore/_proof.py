"""Prove an exported test before it is handed over: run it, then run its mutants.

The module goes into a temporary folder with one mutant per behaviour it pins (the same
module with that behaviour's setting switched off: ``filter_mode="pre"``, ``recall=1.0``,
another tie rule), and all of them run in one pytest subprocess (only the interpreter and
placeborag of this process; no other plugin is loaded). What the app then says ("this test
fails if filter_mode is 'pre'") is read from the mutant's actual result in pytest's JUnit XML
report, never assumed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

from placeborag.explore._verdict import AS_EXPORTED, Behaviour, Proof, mutant_key, verdict

__all__ = ["prove"]

_TIMEOUT = 300  # seconds: a subprocess that hangs is reported, not waited for forever


def prove(
    source: str,
    mutants: Mapping[str, str],
    behaviours: Sequence[Behaviour],
    *,
    vectors: Mapping[str, bytes] | None = None,
    import_roots: Sequence[str] = (),
) -> Proof:
    """Run ``source`` and every mutant under pytest (``vectors`` beside each, ``import_roots``
    on the path, for the application code a module calls) and say what the test pins."""
    files = {AS_EXPORTED: "test_exported.py"}
    files.update({key: f"test_mutant_{n}.py" for n, key in enumerate(mutants, 1)})
    with tempfile.TemporaryDirectory(prefix="placeborag-proof-") as folder:
        root = Path(folder)
        sources = {AS_EXPORTED: source, **mutants}
        for key, name in files.items():
            (root / name).write_text(sources[key], encoding="utf-8")
            if vectors is not None:
                side = (root / name).with_suffix(".vectors")
                side.mkdir()
                for file_name, data in vectors.items():
                    (side / file_name).write_bytes(data)
        outcomes, messages, error = _run(root, files, import_roots)
    if error:
        said = f"not proved: {error}"
        ok = False
    elif outcomes[AS_EXPORTED] != "passed":
        said = (
            "the exported test FAILS as exported (a bug in the export; please report it): "
            + messages.get(AS_EXPORTED, "")
        )
        ok = False
    else:
        said = verdict(behaviours, outcomes)
        ok = all(outcomes[mutant_key(b)] == "failed" for b in behaviours)
    return Proof(outcomes=outcomes, messages=messages, verdict=said, ok=ok)


def _run(
    root: Path, files: dict[str, str], import_roots: Sequence[str] = ()
) -> tuple[dict[str, str], dict[str, str], str]:
    """pytest over ``files`` in ``root``: each file's outcome and first failure line."""
    import placeborag

    report = root / "report.xml"
    package_root = str(Path(placeborag.__file__).resolve().parent.parent)
    env = {
        **os.environ,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONPATH": os.pathsep.join(
            [package_root, *import_roots, *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(root),
        "-c",
        os.devnull,
        f"--junitxml={report}",
        *files.values(),
    ]
    try:
        result = subprocess.run(
            command, cwd=root, env=env, capture_output=True, text=True, timeout=_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {}, {}, f"pytest could not run ({type(exc).__name__}: {exc})"
    if not report.exists():
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:]
        return {}, {}, f"pytest did not run ({' '.join(tail) or 'no output'}); is it installed?"
    outcomes = dict.fromkeys(files, "passed")
    messages: dict[str, str] = {}
    by_file = {Path(name).stem: key for key, name in files.items()}
    for case in ET.parse(report).getroot().iter("testcase"):
        key = by_file.get(str(case.get("classname", "")).split(".")[-1])
        if key is None:
            continue
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        if failure is not None:
            outcomes[key] = "failed"
            message = (failure.get("message") or "").strip().splitlines()
            messages.setdefault(key, message[0] if message else "failed")
    seen = {
        str(c.get("classname", "")).split(".")[-1]
        for c in ET.parse(report).getroot().iter("testcase")
    }
    for stem, key in by_file.items():
        if stem not in seen:  # nothing collected (an import error is a collection error)
            outcomes[key] = "failed"
            messages.setdefault(key, "no test ran")
    return outcomes, messages, ""
