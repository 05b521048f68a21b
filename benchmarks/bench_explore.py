"""Explorer timings: kernel time per control change at 2,000 documents, and figure builds up
to 100,000 points. Prints tables; run with ``python benchmarks/bench_explore.py [--quick]``
(``--quick`` stops the figure builds at 20,000 points).

"first visit" is a change to a value the app has not seen (nothing about it cached): for the
embedder controls that means embedding every document again, fitting the PCA and, for the
model and the spread, rebuilding the anchors view. Each control gets several new values;
the table gives the median and the worst, wall-clock and process CPU time, with the phases
of the median visit. "seen" is the median of changes back and forth between two values
already drawn. Measured around the traitlets change, so it is compute + redraw into the
long-lived figure widgets, with no front end attached. The machine's speed at the time is
printed beside (a fixed numpy + Python workload) because the target is an absolute one.

``--controls N`` times the embedder controls (model name, dimensions, spread) at ``N``
documents in an IPython kernel, each change beside its floor measured just before it: a fresh
FakeEmbedder at the new setting embedding what the change must embed again. The target is
500 ms per change at 100,000 documents.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

# The placeborag of this checkout, also when this file is run directly (python puts only
# benchmarks/ on the path, and an installed placeborag would be measured instead).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from placeborag.explore import Explorer, ProjectionDisplay, RankingDisplay, demo_scenario
from placeborag.explore._compute import one_blas_thread

TARGET_MS = 100.0
HERE = Path(__file__).resolve().parent
# control -> (two values to go back and forth between, new values for first visits)
CONTROLS: dict[str, tuple[tuple[Any, Any], list[Any]]] = {
    "k": ((4, 8), [3, 6, 7, 9, 10]),
    "query": (
        ("money back", "delivery times"),
        ["refund please", "where is my parcel", "csomag", "invoice", "tracking"],
    ),
    "where": (
        ('{"tier": "public"}', '{"lang": "hu"}'),
        [
            '{"lang": "en"}',
            '{"year": {"$gte": 2022}}',
            '{"tier": "internal"}',
            '{"year": 2021}',
            '{"$or": [{"lang": "hu"}, {"year": 2020}]}',
        ],
    ),
    "profile": (("qdrant", "chroma"), []),
    "filter_mode": (("post", "pre"), []),
    "recall": ((0.5, 0.8), [0.55, 0.6, 0.65, 0.7, 0.75]),
    "color_by": (("lang", "cluster"), []),
    "projection": (("3-D", "2-D"), []),
    "cluster_spread": ((0.3, 0.5), [0.35, 0.4, 0.45, 0.55, 0.6]),
    "model_name": (
        ("placebo-embed-v2", "placebo-embed-v1"),
        ["model-a", "model-b", "model-c", "model-d", "model-e"],
    ),
    "dimensions": ((128, 256), [64, 32, 512]),
    # Each first visit to 1024 is made under a new model name (set beforehand, not timed):
    # the only way to see 1024 dimensions for the first time more than once.
    "dimensions (to 1024)": ((1024, 256), [1024] * 5),
}
FRESH_MODEL_FIRST = {"dimensions (to 1024)"}


def calibration_ms(rounds: int = 5) -> float:
    """A fixed workload (numpy products and a Python loop): how fast the machine is now."""
    rng = np.random.default_rng(0)
    x = rng.random((2000, 256), dtype=np.float32)
    best = float("inf")
    # On one BLAS thread, as the app computes: idle BLAS workers spin for a while after a
    # threaded product and would eat the second core during the change timed next.
    with one_blas_thread():
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(20):
                x @ x[0]
            sum(i * i for i in range(100_000))
            best = min(best, time.perf_counter() - start)
    return best * 1e3


def _change(app: Explorer, control: str, value: Any) -> dict[str, Any]:
    """One timed change, with the calibration workload timed just before it."""
    calibration = calibration_ms(rounds=3)
    w0, c0 = time.perf_counter(), time.process_time()
    app.controls[control].value = value
    wall, cpu = (time.perf_counter() - w0) * 1e3, (time.process_time() - c0) * 1e3
    assert not app.error, app.error
    return {"wall": wall, "cpu": cpu, "phases": dict(app.phases), "calibration": calibration}


def bench_app(n: int, repeats: int) -> list[dict[str, Any]]:
    app = Explorer(demo_scenario(n))
    app.controls["k"].value = 6  # the first redraw after construction warms plotly up
    rows = []
    for name, (pair, fresh) in CONTROLS.items():
        control = name.split(" ")[0]
        firsts = []
        for i, value in enumerate(fresh):
            if name in FRESH_MODEL_FIRST:
                app.controls[control].value = pair[1]
                app.controls["model_name"].value = f"bench-{control}-{i}"
            if value != app.controls[control].value:
                firsts.append(_change(app, control, value))
        if name in FRESH_MODEL_FIRST:
            app.controls["model_name"].value = CONTROLS["model_name"][0][1]
        seen = [_change(app, control, pair[i % 2]) for i in range(2 * repeats + 2)][2:]
        rows.append((name, firsts or seen[:1], seen))
        app.controls[control].value = pair[1]
    # The quickest the machine was during the run: each change is also given at that speed
    # (its time times quickest / its own calibration), a ratio to a baseline of the same run.
    quickest = min(c["calibration"] for _, firsts, seen in rows for c in firsts + seen)
    out = []
    for name, firsts, seen in rows:
        for c in firsts + seen:
            c["quiet"] = c["wall"] * quickest / c["calibration"]
        middle = sorted(firsts, key=lambda r: r["wall"])[len(firsts) // 2]
        out.append(
            {
                "control": name,
                "first": middle["wall"],
                "first_cpu": middle["cpu"],
                "first_max": max(r["wall"] for r in firsts),
                "first_quiet": statistics.median(r["quiet"] for r in firsts),
                "phases": {k: v for k, v in middle["phases"].items() if v >= 1.0},
                "seen": statistics.median(r["wall"] for r in seen),
                "seen_quiet": statistics.median(r["quiet"] for r in seen),
                "quickest": quickest,
            }
        )
    return out


def bench_figure(n: int) -> tuple[float, float, float]:
    s = demo_scenario(n)
    t0 = time.perf_counter()
    store = s.store()
    t1 = time.perf_counter()
    projection = ProjectionDisplay.from_store(store, s.query, s.k, s.where)
    t2 = time.perf_counter()
    projection.plot()
    RankingDisplay(projection.projection).plot()
    t3 = time.perf_counter()
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3


def bench_in_kernel(n: int, repeats: int) -> list[dict[str, Any]]:
    """:func:`bench_app` run inside an IPython kernel started for it (jupyter_client).

    There every widget has a live comm: each redraw's messages are serialised and sent
    over ZeroMQ to the kernel's iopub channel, as in a notebook (no front end listens).
    """
    code = (
        f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import bench_explore; "
        f"print(json.dumps(bench_explore.bench_app({n}, {repeats})))"
    )
    out: list[dict[str, Any]] = json.loads(in_kernel(code))
    return out


def in_kernel(code: str) -> str:
    """What ``code`` prints, run in an IPython kernel started for it (jupyter_client)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        msg_id = client.execute(code)
        output, error = [], []
        while True:
            msg = client.get_iopub_msg(timeout=600)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind == "stream" and msg["content"]["name"] == "stdout":
                output.append(msg["content"]["text"])
            elif kind == "error":
                error.append("\n".join(msg["content"]["traceback"]))
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                break
        if error:
            raise RuntimeError(f"the benchmark failed in the kernel: {error[0]}")
        return "".join(output)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def print_rows(rows: list[dict[str, Any]]) -> None:
    head = (
        "control",
        "first visit (median)",
        "CPU",
        "worst",
        "seen",
        "first visit at the quickest",
        "seen at the quickest",
        "verdict",
        "phases of the median first visit (ms)",
    )
    print(
        f"quickest calibration during the run: {rows[0]['quickest']:.1f} ms "
        "(each change is timed after its own calibration)"
    )
    print()
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        raw = r["first"] < TARGET_MS and r["seen"] < TARGET_MS
        quiet = r["first_quiet"] < TARGET_MS and r["seen_quiet"] < TARGET_MS
        verdict = "met" if raw else ("met at the quickest" if quiet else "MISSED")
        phases = ", ".join(f"{k} {v:.0f}" for k, v in r["phases"].items())
        print(
            f"| {r['control']} | {r['first']:.1f} | {r['first_cpu']:.1f} | "
            f"{r['first_max']:.1f} | {r['seen']:.1f} | {r['first_quiet']:.1f} | "
            f"{r['seen_quiet']:.1f} | {verdict} | {phases} |"
        )


# -- at scale: 2k to 1M documents, one subprocess per size -----------------------------------

SCALE_SIZES = (2000, 20_000, 100_000, 1_000_000)
SCALE_TARGETS = {"build_s": 4.0, "change_ms": 500.0, "figure_mb": 6.0, "rss_mb": 900.0}
# One new value per control (a first visit: nothing about it cached), in this order.
SCALE_CHANGES: tuple[tuple[str, Any], ...] = (
    ("k", 8),
    ("query", "where is my parcel"),
    ("where", '{"tier": "public"}'),
    ("profile", "qdrant"),
    ("filter_mode", "post"),
    ("recall", 0.7),
    ("color_by", "lang"),
    ("color_by", "stage"),
    ("projection", "3-D"),
    ("projection", "2-D"),
    ("cluster_spread", 0.4),
    ("model_name", "placebo-embed-v2"),
    ("dimensions", 128),
)
# Over precomputed vectors the embedder controls do nothing: the others are timed.
VECTOR_CHANGES = tuple(c for c in SCALE_CHANGES if c[0] not in ("query", "where", "color_by")) + (
    ("where", '{"part": "a"}'),
)


def payload_bytes(value: Any) -> int:
    """What a figure widget message weighs: numeric arrays go as binary buffers (the widget's
    ``{"dtype", "bdata"}`` specs hold them as memoryviews), everything else as JSON."""
    buffers: list[int] = []

    def strip(v: Any) -> Any:
        if isinstance(v, memoryview):
            buffers.append(v.nbytes)
            return None
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [strip(x) for x in v]
        return v

    plain = strip(value)
    return sum(buffers) + len(json.dumps(plain, default=str).encode())


class SentMeter:
    """Counts the bytes each figure widget of an app sends: its whole state once (what a
    front end gets when it displays the figure), then every update (a new figure, a
    selection shown on it)."""

    TRAITS = ("figure", "selected")

    def __init__(self, app: Explorer) -> None:
        self.app = app
        self.sent: dict[str, int] = {}
        self.watched: set[int] = set()

    def state(self) -> dict[str, float]:
        """MB of each figure's whole state now."""
        out = {}
        for name, fig in self.app.figures.items():
            if fig is not None:
                out[name] = sum(payload_bytes(getattr(fig, t)) for t in self.TRAITS) / 1e6
        return out

    def watch(self) -> None:
        for name, fig in self.app.figures.items():
            if fig is None or id(fig) in self.watched:
                continue
            self.watched.add(id(fig))
            fig.observe(lambda c, name=name: self._count(name, c["new"]), names=self.TRAITS)

    def _count(self, name: str, message: Any) -> None:
        if message:
            self.sent[name] = self.sent.get(name, 0) + payload_bytes(message)

    def take(self) -> dict[str, float]:
        out = {k: v / 1e6 for k, v in self.sent.items()}
        self.sent = {}
        return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def random_vectors(
    n: int, dimensions: int = 32
) -> tuple[np.ndarray, list[str], list[str], list[dict[str, Any]]]:
    """``n`` seeded random unit float32 vectors in 12 loose groups, with ids, texts and two
    metadata keys (made in float32 throughout: cheap at a million rows)."""
    rng = np.random.default_rng(17)
    centres = rng.standard_normal((12, dimensions), dtype=np.float32)
    group = rng.integers(0, 12, n)
    vectors = rng.standard_normal((n, dimensions), dtype=np.float32)
    vectors *= np.float32(0.6)
    vectors += centres[group]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"v{i}" for i in range(n)]
    texts = [f"vector {i}" for i in range(n)]
    parts = ("a", "b")
    metas = [{"group": g, "part": parts[i & 1]} for i, g in enumerate(group.tolist())]
    return vectors, ids, texts, metas


def vector_store(n: int, dimensions: int = 32) -> tuple[Any, str]:
    """:func:`random_vectors` as a store over precomputed vectors, and the text of a query
    among them."""
    from placeborag.explore import store_from_vectors

    vectors, ids, texts, metas = random_vectors(n, dimensions)
    return store_from_vectors(vectors, ids, texts, metas), texts[0]


def bench_scale_one(n: int, vectors: bool) -> dict[str, Any]:
    """Build the app over ``n`` documents and time one first visit per control (this process
    only: run it in a fresh one per size, so peak RSS is this size's)."""
    i0 = time.perf_counter()
    # What the app imports once per kernel (ipywidgets, anywidget, pandas): timed apart from
    # the build. scikit-learn (and scipy) are not imported for the PCA of many rows.
    import anywidget  # noqa: F401
    import ipywidgets  # noqa: F401
    import pandas  # noqa: F401

    imports = time.perf_counter() - i0
    rss_imports = peak_rss_mb()
    t0 = time.perf_counter()
    made = 0.0
    if vectors:
        from placeborag.explore import store_from_vectors

        columns = random_vectors(n)
        made = time.perf_counter() - t0
        store, query = store_from_vectors(*columns), columns[2][0]
        del columns
        t1 = time.perf_counter()
        rss_data = peak_rss_mb()
        app = Explorer(store=store, query=query)
        changes = VECTOR_CHANGES
    else:
        scenario = demo_scenario(n)
        t1 = time.perf_counter()
        rss_data = peak_rss_mb()
        app = Explorer(scenario)
        changes = SCALE_CHANGES
    t2 = time.perf_counter()
    rss_build = peak_rss_mb()
    meter = SentMeter(app)
    state = meter.state()
    meter.watch()
    out: dict[str, Any] = {
        "n": n,
        "vectors": vectors,
        "imports_s": imports,
        "data_s": t1 - t0,
        "vectors_s": made,  # of data_s: making the random vectors (the rest: the store)
        "build_s": t2 - t1,
        "figure_mb": state,
        # peak RSS (MB) once each phase is over: imports, data, build, then per change
        "rss_phases": {"imports": rss_imports, "data": rss_data, "build": rss_build},
        "changes": [],
    }
    for control, value in changes:
        if control in app.controls and not app.controls[control].disabled:
            w0 = time.perf_counter()
            app.controls[control].value = value
            ms = (time.perf_counter() - w0) * 1e3
            meter.watch()  # a figure drawn for the first time (3-D) is watched from now
            out["changes"].append(
                {
                    "control": f"{control}={value}",
                    "ms": ms,
                    "error": app.error,
                    "sent_mb": meter.take(),
                    "phases": {k: round(v) for k, v in app.phases.items() if v >= 5},
                    "rss_mb": peak_rss_mb(),
                }
            )
    out["figure_mb_after"] = meter.state()
    out["rss_mb"] = peak_rss_mb()
    return out


def bench_scale(sizes: Sequence[int]) -> list[dict[str, Any]]:
    """:func:`bench_scale_one` for each size in its own process (the last size: vectors)."""
    results = []
    for n in sizes:
        vectors = n >= 1_000_000
        cmd = [sys.executable, str(Path(__file__).resolve()), "--one", str(n)]
        if vectors:
            cmd.append("--vectors")
        # The placeborag next to this file (not an installed one) is the one measured.
        env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
        if done.returncode:
            results.append({"n": n, "vectors": vectors, "failed": done.stderr[-2000:]})
            continue
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return results


def print_scale(results: list[dict[str, Any]]) -> None:
    t = SCALE_TARGETS

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    print(
        f"targets at 100k: build <= {t['build_s']:g} s, change <= {t['change_ms']:g} ms, "
        f"<= {t['figure_mb']:g} MB per figure, peak RSS <= {t['rss_mb']:g} MB"
    )
    print()
    head = (
        "n",
        "data",
        "imports once per kernel (ipywidgets, anywidget, pandas)",
        "build app",
        "largest figure (MB)",
        "peak RSS (MB)",
        "slowest change",
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in results:
        label = f"{r['n']:,}" + (" vectors" if r["vectors"] else "")
        if "failed" in r:
            print(f"| {label} | FAILED: {r['failed'].splitlines()[-1]} |")
            continue
        figs = {**r["figure_mb"], **r["figure_mb_after"]}
        big = max(figs.items(), key=lambda kv: kv[1])
        slow = max(r["changes"], key=lambda c: c["ms"])
        check = r["n"] == 100_000
        print(
            f"| {label} | {r['data_s']:.1f} s"
            + (f" ({r['vectors_s']:.1f} s making vectors)" if r.get("vectors_s") else "")
            + f" | {r.get('imports_s', 0.0):.1f} s"
            f" | {r['build_s']:.2f} s"
            + (f" ({verdict(r['build_s'] <= t['build_s'])})" if check else "")
            + f" | {big[1]:.2f} ({big[0]})"
            + (f" ({verdict(big[1] <= t['figure_mb'])})" if check else "")
            + f" | {r['rss_mb']:.0f}"
            + (f" ({verdict(r['rss_mb'] <= t['rss_mb'])})" if check else "")
            + f" | {slow['ms']:.0f} ms ({slow['control']})"
            + (f" ({verdict(slow['ms'] <= t['change_ms'])})" if check else "")
            + " |"
        )
    print()
    print("peak RSS (MB) at the end of each phase (the largest change named)")
    print()
    print("| n | imports | data | build | changes |")
    print("|---|---|---|---|---|")
    for r in results:
        if "failed" in r or "rss_phases" not in r:
            continue
        p = r["rss_phases"]
        worst = max(r["changes"], key=lambda c: c.get("rss_mb", 0.0), default=None)
        grew = next((c for c in r["changes"] if c.get("rss_mb", 0.0) >= r["rss_mb"]), worst)
        last = f"{r['rss_mb']:.0f}" + (f" (reached at {grew['control']})" if grew else "")
        print(f"| {r['n']:,} | {p['imports']:.0f} | {p['data']:.0f} | {p['build']:.0f} | {last} |")
    print()
    print("each control change (kernel ms, MB sent, by figure)")
    print()
    head = ("control", *(f"{r['n']:,}" for r in results if "failed" not in r))
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    names = list(
        dict.fromkeys(c["control"] for r in results if "failed" not in r for c in r["changes"])
    )
    for name in names:
        cells = []
        for r in results:
            if "failed" in r:
                continue
            c = next((c for c in r["changes"] if c["control"] == name), None)
            if c is None:
                cells.append("")
                continue
            mb = sum(c["sent_mb"].values())
            flag = " ERROR" if c["error"] else ""
            cells.append(f"{c['ms']:.0f} ms, {mb:.2f} MB{flag}")
        print(f"| {name} | " + " | ".join(cells) + " |")


CONTROLS_TARGET_MS = 500.0
# Spreads on the slider's 0.05 step for the app, and off it for the floor: every one is a
# first visit (nothing of it cached), as the app's are.
_APP_SPREADS = (0.35, 0.4, 0.45, 0.55, 0.6, 0.65, 0.7)


def bench_controls(n: int, rounds: int) -> None:
    """The embedder controls at ``n`` documents (run in an IPython kernel by ``--controls``,
    so every redraw is serialised and sent over the widgets' comms; warm: the app built and
    each control changed once first), each change against its floor measured just before it in
    the same run: a fresh FakeEmbedder at the new setting embedding what the change must
    embed again (every text for a model name or a dimension, the cluster members for a
    spread), the least any app could do. The dimension is changed under a model name set
    just before (untimed), so every visit to it is a first one."""
    from placeborag import FakeEmbedder

    app = Explorer(demo_scenario(n))
    app.controls["k"].value = 6
    texts = [d.text for d in app.scenario.documents]
    members = [t for t, c in zip(texts, app.scenario.embedder().clusters_of(texts)) if c]
    base = app.scenario.embedder_options
    timings: dict[str, list[tuple[float, float]]] = {}

    def timed(work: Any) -> float:
        start = time.perf_counter()
        work()
        return (time.perf_counter() - start) * 1e3

    phases: dict[str, list[dict[str, float]]] = {}  # reporting only: app.phases per change

    def change(control: str, value: Any) -> float:
        ms = timed(lambda: setattr(app.controls[control], "value", value))
        assert not app.error, app.error
        phases.setdefault(control, []).append(dict(app.phases))
        return ms

    def floor(texts_: list[str], **options: Any) -> float:
        return timed(lambda: FakeEmbedder(**{**base, **options}).embed_rows(texts_))

    loads = []
    for i in range(rounds + 1):  # round 0 warms up every path, untimed
        loads.append(os.getloadavg()[0])
        model = f"bench-model-{i}"
        f = floor(texts, model_name=f"floor-model-{i}")
        a = change("model_name", model)
        timings.setdefault("model name", []).append((a, f))
        change("model_name", f"bench-dims-{i}")  # untimed: a first visit to the dimension
        dims = 64 if i % 2 else 128
        f = floor(texts, model_name=f"floor-dims-{i}", dimensions=dims)
        a = change("dimensions", dims)
        timings.setdefault("dimensions", []).append((a, f))
        change("dimensions", 256)  # untimed: back to the scenario's
        f = floor(members, cluster_spread=0.3 + 0.01 * i + 0.003)
        a = change("cluster_spread", _APP_SPREADS[i % len(_APP_SPREADS)])
        timings.setdefault("cluster spread", []).append((a, f))
    print(
        f"embedder controls at {n:,} documents, ms (no front end), {rounds} rounds; "
        "load average (1 min) at each round: " + ", ".join(f"{v:.1f}" for v in loads[1:])
    )
    rows = []
    for name, pairs in timings.items():
        pairs = pairs[1:]
        a = statistics.median(p[0] for p in pairs)
        f = statistics.median(p[1] for p in pairs)
        print(f"{name}: app " + ", ".join(f"{p[0]:.0f}" for p in pairs))
        print(f"{name}: floor " + ", ".join(f"{p[1]:.0f}" for p in pairs))
        rows.append(
            (
                f"{name} (median)",
                f"{a:.0f} ms; floor {f:.0f} ms ({a / f:.2f}x)",
                f"<= {CONTROLS_TARGET_MS:.0f} ms",
                "met" if a <= CONTROLS_TARGET_MS else "MISSED",
            )
        )
    # The phases (app.phases) of the timed changes: a model name or a dimension change is
    # followed by an untimed one in each round, and round 0 warms up.
    print()
    print("phases of the timed changes, ms: median (each round)")
    for name, control, timed_ones in (
        ("model name", "model_name", slice(2, None, 2)),
        ("dimensions", "dimensions", slice(2, None, 2)),
        ("cluster spread", "cluster_spread", slice(1, None)),
    ):
        runs = phases.get(control, [])[timed_ones]
        cells = []
        for k in dict.fromkeys(k for r in runs for k in r):
            values = [r.get(k, 0.0) for r in runs]
            if max(values) >= 0.5:
                each = "/".join(f"{v:.0f}" for v in values)
                cells.append(f"{k} {statistics.median(values):.0f} ({each})")
        print(f"{name}: " + ", ".join(cells))
    from _common import print_table

    print_table(f"Embedder controls at {n:,} documents", rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip the 100,000-point figures")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--scale",
        nargs="*",
        type=int,
        metavar="N",
        help="time the app at these sizes (default 2000 20000 100000 1000000; 1M is vectors)",
    )
    parser.add_argument(
        "--controls",
        type=int,
        metavar="N",
        help="time the embedder controls at N documents against their floor (e.g. 100000)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds for --controls")
    parser.add_argument(
        "--no-kernel", action="store_true", help="--controls in this process, not in a kernel"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--vectors", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(bench_scale_one(args.one, args.vectors)))
        return
    if args.controls:
        if args.no_kernel:
            bench_controls(args.controls, args.rounds)
        else:  # in an IPython kernel: every redraw serialised and sent over its comms
            print(
                in_kernel(
                    f"import sys; sys.path.insert(0, {str(HERE)!r}); import bench_explore; "
                    f"bench_explore.bench_controls({args.controls}, {args.rounds})"
                ),
                end="",
            )
        return
    if args.scale is not None:
        results = bench_scale(args.scale or SCALE_SIZES)
        Path(HERE / "explore_scale.json").write_text(json.dumps(results, indent=1))
        print_scale(results)
        return
    print(f"control change at 2,000 documents (ms of kernel time; target {TARGET_MS:.0f} ms)")
    print(
        f"machine now: calibration workload {calibration_ms():.1f} ms "
        "(lower is faster; see docs/benchmarks.md)"
    )
    print()
    print("### in this process (widgets without a kernel: nothing is sent)")
    print()
    print_rows(bench_app(2000, args.repeats))
    print()
    print("### in an IPython kernel (live comms: every message serialised and sent)")
    print()
    print_rows(bench_in_kernel(2000, args.repeats))
    print()
    print("figures (ms): build store / compute projection+trace / build both figures")
    sizes = (2000, 20_000) if args.quick else (2000, 20_000, 100_000)
    for n in sizes:
        build, compute, draw = bench_figure(n)
        print(f"{n:>8} docs {build:>10.0f} {compute:>10.0f} {draw:>10.0f}")


if __name__ == "__main__":
    main()
