"""Export what the explorer shows as a pytest module that asserts it, as inert data.

:func:`build_export` takes the store on screen (every option it was built with), the query,
``k`` and ``where``, and a corpus to export (a selection of ids, or by default the top-k window,
its ties and the next ``k`` records below the cut). It returns the module's source and the
*preview*: the ranking the module asserts, ids and scores, computed by running the very code
the module runs (``_RUNTIME`` below) on the very data it carries.

Every value that comes from the user (ids, texts, metadata, the name, the query, ``where``, the
vectors) reaches the module only inside one JSON document, written as the ``repr`` of an ASCII
string and read with ``json.loads`` when the module runs. Nothing the user typed lands in a
docstring, a comment or an identifier (the test's name keeps only ``[a-z0-9_]`` of the query).

A store over a :class:`~placeborag.FakeEmbedder` is rebuilt from its public options and the
texts; a store over any other embedder (the user's vectors, a replay recording) is rebuilt
with :meth:`~placeborag.FakeVectorStore.from_vectors` from the stored float32 rows, and the
query becomes the vector the store ranks the query text with.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    Match,
    PlaceboragTypeError,
    PlaceboragValueError,
)
from placeborag._validation import DATE_TAG, DATETIME_TAG, load_json, shown
from placeborag.explore._scenario import Scenario

__all__ = ["Export", "build_export", "export_pytest"]

#: The part of every exported module that builds the store and runs the query. The exporter
#: runs this same text to compute the preview, so the module asserts what it computes.
_RUNTIME = '''

def build_store(data):
    """The exported records in a new store with the exported options."""
    if data["embedder"] is not None:
        store = FakeVectorStore(embedder=FakeEmbedder(**data["embedder"]), **data["store"])
        store.upsert_many(data["ids"], data["texts"], data["metadatas"])
    else:
        vectors = np.asarray(data["vectors"], dtype=np.float32)
        store = FakeVectorStore.from_vectors(
            data["ids"], vectors, data["texts"], data["metadatas"], **data["store"]
        )
    store.refresh()
    return store


def run_query(store, data):
    """The exported query: its text, or the vector the explorer's store ranked it with."""
    if data["query_vector"] is None:
        return store.query(data["query"], k=data["k"], where=data["where"])
    return store.query_by_vector(
        data["query_vector"], k=data["k"], where=data["where"], text=data["query"]
    )
'''

_HEAD = '''"""A pytest module exported by placeborag's explorer.

DATA holds everything exported (records, options, query, expected ranking) as one JSON
document; the test rebuilds the store from it, runs the query and asserts the exact ids and
scores the explorer previewed for these records.
"""

import json

import numpy as np

from placeborag import FakeEmbedder, FakeVectorStore

DATA = json.loads(
{blob}
)
'''

# The head of a module whose data holds a datetime or date (metadata, a where): JSON has no
# such type, so the data tags them as placeborag's scenario files do, and the module reads the
# tags back. Only such modules carry the hook.
_HEAD_TAGGED = _HEAD.replace(
    "import json\n",
    "import datetime\nimport json\n",
).replace(
    "DATA = json.loads(\n{blob}\n)\n",
    '''
def _placeborag_value(obj):
    """An object of DATA tagged "$datetime" or "$date" as the value it was exported from."""
    if len(obj) == 1 and "$datetime" in obj:
        return datetime.datetime.fromisoformat(obj["$datetime"])
    if len(obj) == 1 and "$date" in obj:
        return datetime.date.fromisoformat(obj["$date"])
    return obj


DATA = json.loads(
{blob},
    object_hook=_placeborag_value,
)
''',
)

_TEST = """

def {name}():
    matches = run_query(build_store(DATA), DATA)
    assert [m.id for m in matches] == DATA["expected_ids"]
    assert [m.score for m in matches] == DATA["expected_scores"]
"""

_RUNTIME_NAMES: dict[str, Any] = {}
exec(  # our own constant text (no user data): the preview runs what the module runs
    compile(_RUNTIME, "<placeborag export runtime>", "exec"),
    {"np": np, "FakeEmbedder": FakeEmbedder, "FakeVectorStore": FakeVectorStore},
    _RUNTIME_NAMES,
)


@dataclass(frozen=True)
class Export:
    """An exported test: the module's text, the corpus it carries, the ranking it asserts."""

    source: str
    ids: tuple[str, ...]
    preview: tuple[Match, ...]


def build_export(
    store: FakeVectorStore,
    query: str,
    k: int,
    where: Mapping[str, Any] | None = None,
    *,
    selection: Sequence[str] | None = None,
    name: str = "scenario",
) -> Export:
    """A pytest module asserting the ranking of ``store``'s records for ``query``.

    ``selection`` (ids of ``store``) is the corpus to export; without it, the records of the
    top-k window (the post-filter's window in post mode), what the other filter mode returns
    (so the test fails if the mode is flipped), every member of a tie the ranking met, and the
    next ``k`` reachable records below the cut by score. The module rebuilds a store
    with every option of ``store`` over that corpus, and asserts the ids and scores it returns:
    :attr:`Export.preview`, which is computed here by the same code.
    """
    if not isinstance(store, FakeVectorStore):
        raise PlaceboragTypeError(
            f"store={shown(store)} must be a FakeVectorStore, not {type(store).__name__}"
        )
    if not isinstance(query, str):
        raise PlaceboragTypeError(f"query={shown(query)} must be a str, not {type(query).__name__}")
    if not isinstance(name, str):
        raise PlaceboragTypeError(f"name={shown(name)} must be a str, not {type(name).__name__}")
    options = store.options
    if not isinstance(options["profile"], str):
        raise PlaceboragTypeError(
            f"the store's profile={options['profile']!r} is a Profile object; an export "
            "rebuilds the store from a profile name: build it with profile='<name>' and the "
            "options that change the profile (metric=, tie_order=, ...)"
        )
    records = store.records()
    trace = store.trace(query, k, where)  # checks k and where as a query does
    other: tuple[str, ...] = ()
    if selection is None and where:
        # What the other filter mode returns: the records that decide which mode the test
        # asserts (in post mode, the filter's best matches that a pre-filter returns).
        flipped = "pre" if store.filter_mode == "post" else "post"
        other = store.with_options(filter_mode=flipped).trace(query, k, where).returned
    chosen = _chosen_ids(records, trace, selection, other)
    positions = [records.position(i) for i in chosen]
    fake = type(store.embedder) is FakeEmbedder
    data: dict[str, Any] = {
        "name": _plain(name, "name"),
        "query": _plain(query, "query"),
        "k": int(trace.k),
        "where": _plain(where, "where"),
        "store": {key: _plain(value, f"option {key}") for key, value in options.items()},
        "embedder": _embedder_options(store.embedder) if fake else None,
        "ids": [_plain(i, "id") for i in chosen],
        "texts": [
            _plain(records.texts[p], f"text of id {chosen[n]!r}") for n, p in enumerate(positions)
        ],
        "metadatas": [
            _plain(dict(records.metadata[p]), f"metadata of id {chosen[n]!r}") or None
            for n, p in enumerate(positions)
        ],
        "vectors": None if fake else _float32_rows(records.vectors[positions]),
        "query_vector": None if fake else store.embed_query(query).tolist(),
    }
    preview = _run(data)
    data["expected_ids"] = [m.id for m in preview]
    data["expected_scores"] = [float(m.score) for m in preview]
    text = json.dumps(data, ensure_ascii=True)
    tagged = f'"{DATETIME_TAG}":' in text or f'"{DATE_TAG}":' in text
    blob = _json_literal(data)
    head = _HEAD_TAGGED if tagged else _HEAD
    source = head.format(blob=blob) + _RUNTIME + _TEST.format(name=_test_name(query))
    return Export(source=source, ids=tuple(chosen), preview=tuple(preview))


def export_pytest(scenario: Scenario, *, selection: Sequence[str] | None = None) -> str:
    """The source of a pytest module asserting ``scenario``'s ranking (see :func:`build_export`)."""
    if not isinstance(scenario, Scenario):
        raise PlaceboragTypeError(f"scenario={shown(scenario)} must be a Scenario")
    return build_export(
        scenario.store(),
        scenario.query,
        scenario.k,
        scenario.where,
        selection=selection,
        name=scenario.name,
    ).source


# -- the corpus ------------------------------------------------------------------------------


def _chosen_ids(
    records: Any, trace: Any, selection: Sequence[str] | None, other: Sequence[str] = ()
) -> list[str]:
    """The exported ids, in the store's insertion order (``other``: what the other filter
    mode returns, kept with the default corpus)."""
    if selection is not None:
        if isinstance(selection, (str, bytes, Mapping)) or not isinstance(
            selection, (Sequence, set, frozenset)
        ):
            raise PlaceboragTypeError(
                f"selection={shown(selection)} must be a list of ids, not"
                f" {type(selection).__name__}"
            )
        wanted = list(selection)
        if not wanted:
            raise PlaceboragValueError(
                "selection=[] is empty: select at least one id (or pass selection=None to "
                "export the top-k window and its neighbours)"
            )
        for i, value in enumerate(wanted):
            if not isinstance(value, str):
                raise PlaceboragTypeError(
                    f"selection[{i}]={shown(value)} must be a str id, not {type(value).__name__}"
                )
            records.position(value)  # an unknown id raises, naming the nearest ones
        keep = set(wanted)
        return [i for i in records.ids if i in keep]
    keep = set(trace.top_k)
    keep.update(other)
    for tie in trace.ties:
        keep.update(tie.ids)
    order = sorted(
        (p for p, i in enumerate(trace.ids) if i not in keep and records.reachable[p]),
        key=lambda p: (_badness(trace, p), p),
    )
    keep.update(trace.ids[p] for p in order[: trace.k])
    return [i for i in records.ids if i in keep]


def _badness(trace: Any, position: int) -> float:
    score = float(trace.score[position])
    if math.isnan(score):
        return math.inf
    return -score if trace.higher_is_better else score


# -- the data --------------------------------------------------------------------------------


def _embedder_options(embedder: FakeEmbedder) -> dict[str, Any]:
    clusters = {str(k): [str(t) for t in v] for k, v in embedder.clusters.items()}
    return {
        "model_name": str(embedder.model_name),
        "dimensions": int(embedder.dimensions),
        "clusters": clusters or None,
        "cluster_spread": _plain(embedder.cluster_spread, "cluster_spread"),
        "cluster_match": str(embedder.cluster_match),
    }


#: A high then a low surrogate as two code points: JSON would read them back as one character.
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _float32_rows(vectors: np.ndarray) -> list[list[float]]:
    """float32 rows as the shortest decimals that read back (as float32) to the same bits."""
    return [[float(str(value)) for value in row] for row in np.asarray(vectors, np.float32)]


def _plain(value: Any, what: str) -> Any:
    """``value`` as plain JSON values (numpy scalars unwrapped); anything else raises."""
    if isinstance(value, str):
        # str.__str__, not str() or .item(): numpy's str_ drops trailing NULs in both.
        text = str.__str__(value)
        if _SURROGATE_PAIR.search(text):
            raise PlaceboragValueError(
                f"{what}: {text!r} holds a surrogate pair as two code points, which JSON reads "
                "back as one character; it cannot be exported as it is"
            )
        return text
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PlaceboragValueError(f"{what}: {value!r} cannot be exported (not finite)")
        return float(value)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise PlaceboragTypeError(
                    f"{what}: key {key!r} cannot be exported (keys must be str, "
                    f"not {type(key).__name__})"
                )
            out[_plain(key, f"{what} key")] = _plain(item, f"{what}[{key!r}]")
        return out
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(item, f"{what}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, _dt.datetime):  # tagged as a scenario file tags it
        return {DATETIME_TAG: value.isoformat()}
    if isinstance(value, _dt.date):
        return {DATE_TAG: value.isoformat()}
    raise PlaceboragTypeError(
        f"{what}: {value!r} cannot be exported: a {type(value).__name__} is not a str, int, "
        "float, bool, None, list or dict"
    )


def _json_literal(data: dict[str, Any]) -> str:
    """The JSON text of ``data`` as Python string literals: a line per key, 88 characters at most.

    ``ensure_ascii`` escapes every non-ASCII character (lone surrogates included) and each
    piece is written by ``repr``, so no character of user data can end a literal; the pieces
    join into one JSON document.
    """
    order = ("name", "query", "k", "where", "expected_ids", "expected_scores")
    keys = [*order, *(key for key in data if key not in order)]
    pieces: list[str] = []
    for n, key in enumerate(keys):
        item = json.dumps(
            {key: data[key]}, ensure_ascii=True, allow_nan=False, separators=(",", ":")
        )
        text = ("{" if n == 0 else "") + item[1:-1] + ("}" if n == len(keys) - 1 else ",")
        pieces += [text[i : i + 88] for i in range(0, len(text), 88)]
    return "\n".join(f"    {piece!r}" for piece in pieces)


def _run(data: dict[str, Any]) -> list[Match]:
    """What the exported module computes: ``data`` read back from its JSON, then run."""
    loaded = load_json(json.dumps(data, ensure_ascii=True, allow_nan=False))
    store = _RUNTIME_NAMES["build_store"](loaded)
    return list(_RUNTIME_NAMES["run_query"](store, loaded))


def _test_name(query: str) -> str:
    words = re.findall(r"[a-z0-9]+", query.lower(), flags=re.ASCII)[:6]
    name = "test_ranking_for_" + ("_".join(words) or "the_query")
    assert re.fullmatch(r"[a-z0-9_]+", name)
    return name
