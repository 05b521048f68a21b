"""Reading an exported module the way a reviewer does: by its syntax tree, never by running it."""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys
from typing import Any

import placeborag
from placeborag.explore._literals import read_node

#: Module-level names whose values are the user's data (floats in them are the user's too).
DATA_NAMES = ("DOCUMENTS", "EMBEDDED", "HEADERS", "QUERY", "K", "WHERE", "RECORDING_SHA256")


def parse(source: str) -> dict[str, Any]:
    """The literals, imports, store options, tests and asserted ids of an exported module."""
    tree = ast.parse(source)
    out: dict[str, Any] = {"imports": [], "tests": [], "expected": {}, "fixtures": []}
    data_nodes: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in DATA_NAMES:
                out[name] = read_node(node.value)
                data_nodes.append(node.value)
        elif isinstance(node, ast.Import):
            out["imports"] += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out["imports"] += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.FunctionDef):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if "pytest.fixture" in decorators:
                out["fixtures"].append(node.name)
            elif node.name.startswith("test_"):
                out["tests"].append(node.name)
                out["expected"][node.name] = _asserted_ids(node)
            elif node.name == "build_store":
                out["store_kwargs"] = _store_kwargs(node)
    inside = {id(n) for d in data_nodes for n in ast.walk(d)}
    out["floats"] = [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, float) and id(n) not in inside
    ]
    out["strings_outside_data"] = [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in inside
    ]
    return out


def _asserted_ids(test: ast.FunctionDef) -> list[str] | None:
    """The list literal of the test's ``assert [m.id for m in matches] == [...]``."""
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Assert)
            and isinstance(node.test, ast.Compare)
            and ast.unparse(node.test.left) == "[m.id for m in matches]"
            and isinstance(node.test.comparators[0], ast.List)
        ):
            return ast.literal_eval(node.test.comparators[0])
    return None


def _store_kwargs(function: ast.FunctionDef) -> dict[str, Any]:
    call = next(
        n
        for n in ast.walk(function)
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "FakeVectorStore"
    )
    kwargs = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            continue  # **changes
        if keyword.arg == "embedder":
            value = keyword.value
            if isinstance(value, ast.Call) and ast.unparse(value.func) == "FakeEmbedder":
                kwargs["embedder"] = {
                    k.arg: ast.literal_eval(k.value) for k in value.keywords if k.arg
                }
            else:
                kwargs["embedder"] = ast.unparse(value)
            continue
        kwargs[keyword.arg] = ast.literal_eval(keyword.value)
    return kwargs


def decimals(value: float) -> int:
    text = repr(value)
    if "e" in text or "E" in text:
        return 99
    return len(text.split(".")[1]) if "." in text else 0


def ruff_check(folder: pathlib.Path) -> subprocess.CompletedProcess[str]:
    """``ruff format --check`` with ruff's defaults (no project settings)."""
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--isolated", "--check", "--diff", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_pytest(folder: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    root = str(pathlib.Path(placeborag.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            os.devnull,
            "--rootdir",
            str(folder),
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=300,
    )


def run_in_process(source: str, vectors: dict[str, bytes] | None, folder: pathlib.Path) -> None:
    """Run every test of the module with its fixture, as pytest would (for many examples)."""
    path = folder / "test_exported.py"
    path.write_text(source, encoding="utf-8")
    if vectors is not None:
        side = path.with_suffix(".vectors")
        side.mkdir(exist_ok=True)
        for name, data in vectors.items():
            (side / name).write_bytes(data)
    namespace: dict[str, Any] = {"__name__": "exported", "__file__": str(path)}
    exec(compile(source, str(path), "exec"), namespace)
    fixture = next(v for k, v in namespace.items() if k.endswith("_store") and callable(v))
    for name, test in list(namespace.items()):
        if name.startswith("test_"):
            test(
                fixture.__wrapped__()
                if hasattr(fixture, "__wrapped__")
                else namespace["build_store"]()
            )
