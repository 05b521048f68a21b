"""Adapters that drive each real engine through one small interface, for the conformance suite.

Every adapter builds a collection from hand-made records, writes to it the way that engine's
users do (its upsert, its plain insert) and answers ``query(vector, k, where)`` with
``(id, score)`` pairs, exactly as the engine reported them. ``where`` is placeborag's filter
language; each adapter translates it into the engine's own, the way an integration would.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest


@dataclass(frozen=True)
class Record:
    id: str
    text: str
    vector: tuple[float, ...]
    metadata: dict[str, Any] | None = None


Hits = list[tuple[str, float]]
_names = itertools.count()


def _collection_name() -> str:
    return f"conformance-{next(_names)}"


def _clauses(where: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """(key, operator, value) triples of a flat filter: the subset the suite uses."""
    out = []
    for key, condition in where.items():
        if isinstance(condition, Mapping):
            out.extend((key, op, value) for op, value in condition.items())
        else:
            out.append((key, "$eq", condition))
    return out


class EngineError(Exception):
    """The engine refused the request (the suite records this as the outcome 'error')."""


class Handle:
    """One collection in one engine."""

    def query(
        self,
        vector: Sequence[float],
        k: int | None,
        where: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Hits:
        raise NotImplementedError

    def upsert(self, records: Sequence[Record]) -> None:
        raise NotImplementedError

    def add(self, records: Sequence[Record]) -> None:
        raise NotImplementedError


class Engine:
    """An engine under test: opened once per module, then one collection per scenario."""

    name: str = ""
    profile: str = ""
    metrics: tuple[str, ...] = ("cosine",)
    filters: bool = True
    default_k: int | None = None  # None: the engine has no default; k is required
    tie_rule = True  # False: equal scores come back in an order the engine does not define
    tie_rule_when_cut = "count"  # "order", "set" or "count": what a k cutting ties can be held to
    upsert_option: dict[str, Any] = {}  # store options under which the fake writes like the engine
    add_option: dict[str, Any] = {}
    add_is_upsert = False  # the engine has a single write operation
    filter_checks: tuple[str, ...] = (
        "$eq",
        "$ne, key missing",
        "$nin, key missing",
        "$gt, a str value stored",
        "int stored, float asked",
        "int stored, str asked",
    )
    # (label, engine query options, fake store options) for the filtered top-k check
    under_return_variants: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = (("", {}, {}),)

    def open(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        pass

    def close(self) -> None:
        pass

    def build(self, records: Sequence[Record], metric: str = "cosine") -> Handle:
        raise NotImplementedError

    def stored_metadata(self, metadata: dict[str, Any] | None) -> dict[str, Any] | None:
        """The metadata as the engine can hold it (a typed column drops what its type cannot)."""
        return metadata


# -- chroma ---------------------------------------------------------------------------------------


class _ChromaHandle(Handle):
    def __init__(self, collection: Any) -> None:
        self.c = collection

    def _columns(self, records: Sequence[Record]) -> dict[str, Any]:
        return {
            "ids": [r.id for r in records],
            "embeddings": [list(r.vector) for r in records],
            "documents": [r.text for r in records],
            "metadatas": [r.metadata for r in records],
        }

    def query(self, vector, k, where=None, **options):
        kwargs: dict[str, Any] = {"query_embeddings": [list(vector)]}
        if k is not None:
            kwargs["n_results"] = k
        if where is not None:
            kwargs["where"] = dict(where)
        try:
            result = self.c.query(**kwargs, include=["distances"])
        except ValueError as error:
            raise EngineError(str(error)) from error
        return list(zip(result["ids"][0], result["distances"][0]))

    def upsert(self, records):
        self.c.upsert(**self._columns(records))

    def add(self, records):
        self.c.add(**self._columns(records))


class Chroma(Engine):
    name = "chroma"
    profile = "chroma"
    metrics = ("cosine", "l2", "ip")
    default_k = 10
    add_option = {"on_existing_id": "ignore"}

    def open(self, tmp_path_factory):
        chromadb = pytest.importorskip("chromadb")
        self.client = chromadb.PersistentClient(path=str(tmp_path_factory.mktemp("chroma")))

    def build(self, records, metric="cosine"):
        collection = self.client.create_collection(
            _collection_name(), configuration={"hnsw": {"space": metric}}, embedding_function=None
        )
        handle = _ChromaHandle(collection)
        handle.add(records)
        return handle


# -- qdrant: the client's local mode and the Rust engine in-process (qdrant-edge) ---------------


def _point_id(value: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, value))


class _QdrantFilters:
    """Translate a flat where into qdrant's must / must_not conditions (models from one module)."""

    def __init__(self, models: Any, edge: bool) -> None:
        self.m, self.edge = models, edge

    def match_value(self, value: Any) -> Any:
        return self.m.MatchValue(value) if self.edge else self.m.MatchValue(value=value)

    def match_any(self, values: Any) -> Any:
        return self.m.MatchAny(list(values)) if self.edge else self.m.MatchAny(any=list(values))

    def condition(self, key: str, **kwargs: Any) -> Any:
        return self.m.FieldCondition(key=key, **kwargs)

    def __call__(self, where: Mapping[str, Any] | None) -> Any:
        if where is None:
            return None
        must, must_not = [], []
        for key, op, value in _clauses(where):
            if op == "$eq":
                must.append(self.condition(key, match=self.match_value(value)))
            elif op == "$ne":
                must_not.append(self.condition(key, match=self.match_value(value)))
            elif op == "$in":
                must.append(self.condition(key, match=self.match_any(value)))
            elif op == "$nin":
                must_not.append(self.condition(key, match=self.match_any(value)))
            else:
                bound = {op[1:]: value}
                rng = self.m.RangeFloat(**bound) if self.edge else self.m.Range(**bound)
                must.append(self.condition(key, range=rng))
        return self.m.Filter(must=must or None, must_not=must_not or None)


class _QdrantLocalHandle(Handle):
    def __init__(self, engine: QdrantLocal, name: str) -> None:
        self.e, self.name = engine, name

    def query(self, vector, k, where=None, **options):
        kwargs: dict[str, Any] = {"query": list(vector), "with_payload": True}
        if k is not None:
            kwargs["limit"] = k
        try:
            kwargs["query_filter"] = self.e.filters(where)
            points = self.e.client.query_points(self.name, **kwargs).points
        except Exception as error:  # pydantic's ValidationError, ValueError
            raise EngineError(str(error)) from error
        return [(p.payload["_id"], p.score) for p in points]

    def upsert(self, records):
        m = self.e.models
        self.e.client.upsert(
            self.name,
            points=[
                m.PointStruct(
                    id=_point_id(r.id),
                    vector=list(r.vector),
                    payload={**(r.metadata or {}), "_id": r.id},
                )
                for r in records
            ],
        )

    add = upsert  # qdrant has no separate insert: writing an id always overwrites it


class QdrantLocal(Engine):
    name = "qdrant (local mode)"
    profile = "qdrant"
    metrics = ("cosine", "l2", "ip")
    default_k = 10
    tie_rule = False
    add_is_upsert = True

    def open(self, tmp_path_factory):
        qdrant_client = pytest.importorskip("qdrant_client")
        from qdrant_client import models

        self.models = models
        self.client = qdrant_client.QdrantClient(path=str(tmp_path_factory.mktemp("qdrant")))
        self.filters = _QdrantFilters(models, edge=False)

    def close(self):
        self.client.close()

    def build(self, records, metric="cosine"):
        m = self.models
        distance = {"cosine": m.Distance.COSINE, "l2": m.Distance.EUCLID, "ip": m.Distance.DOT}
        name = _collection_name()
        self.client.create_collection(
            name,
            vectors_config=m.VectorParams(size=len(records[0].vector), distance=distance[metric]),
        )
        handle = _QdrantLocalHandle(self, name)
        handle.upsert(records)
        return handle


class _QdrantEdgeHandle(Handle):
    def __init__(self, engine: QdrantEdge, shard: Any) -> None:
        self.e, self.shard = engine, shard

    def query(self, vector, k, where=None, **options):
        qe = self.e.qe
        try:
            request = qe.QueryRequest(
                limit=k if k is not None else 10,
                query=qe.Query.Nearest([float(x) for x in vector]),
                with_payload=True,
                filter=self.e.filters(where),
            )
            points = self.shard.query(request)
        except Exception as error:  # the Rust binding raises TypeError/ValueError
            raise EngineError(str(error)) from error
        return [(p.payload["_id"], p.score) for p in points]

    def upsert(self, records):
        qe = self.e.qe
        points = [
            qe.Point(
                _point_id(r.id), [float(x) for x in r.vector], {**(r.metadata or {}), "_id": r.id}
            )
            for r in records
        ]
        # One point per operation: a batch leaves the order of equal scores to the heap.
        for point in points:
            self.shard.update(qe.UpdateOperation.upsert_points([point]))

    add = upsert


class QdrantEdge(Engine):
    name = "qdrant (edge, Rust engine)"
    profile = "qdrant"
    metrics = ("cosine", "l2", "ip")
    default_k = None  # QueryRequest needs a limit
    tie_rule = False
    add_is_upsert = True

    def open(self, tmp_path_factory):
        self.qe = pytest.importorskip("qdrant_edge")
        self.root = tmp_path_factory.mktemp("qdrant-edge")
        self.filters = _QdrantFilters(self.qe, edge=True)
        self.shards: list[Any] = []

    def close(self):
        for shard in self.shards:
            shard.close()

    def build(self, records, metric="cosine"):
        qe = self.qe
        distance = {"cosine": qe.Distance.Cosine, "l2": qe.Distance.Euclid, "ip": qe.Distance.Dot}
        config = qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=len(records[0].vector), distance=distance[metric])
        )
        shard = qe.EdgeShard.create(str(self.root / _collection_name()), config)
        self.shards.append(shard)
        handle = _QdrantEdgeHandle(self, shard)
        handle.upsert(records)
        return handle


# -- faiss ----------------------------------------------------------------------------------------


class _FaissHandle(Handle):
    """IndexIDMap2 over a flat index; string ids map to int64 labels in first-write order."""

    def __init__(self, engine: Faiss, metric: str, d: int) -> None:
        faiss = engine.faiss
        flat = faiss.IndexFlatL2(d) if metric == "l2" else faiss.IndexFlatIP(d)
        self.faiss, self.index = faiss, faiss.IndexIDMap2(flat)
        self.labels: dict[str, int] = {}
        self.names: dict[int, str] = {-1: "-1"}

    def _label(self, value: str) -> int:
        if value not in self.labels:
            self.labels[value] = len(self.labels)
            self.names[self.labels[value]] = value
        return self.labels[value]

    def query(self, vector, k, where=None, **options):
        q = np.asarray([vector], dtype=np.float32)
        params = None
        if "allowed" in options:
            allowed = np.asarray([self.labels[i] for i in options["allowed"]], dtype=np.int64)
            params = self.faiss.SearchParameters(sel=self.faiss.IDSelectorBatch(allowed))
        distances, labels = self.index.search(q, k, params=params)
        return [(self.names[int(label)], float(d)) for d, label in zip(distances[0], labels[0])]

    def add(self, records):
        vectors = np.asarray([r.vector for r in records], dtype=np.float32)
        labels = np.asarray([self._label(r.id) for r in records], dtype=np.int64)
        self.index.add_with_ids(vectors, labels)

    def upsert(self, records):
        # FAISS has no upsert; the usual emulation is remove_ids then add.
        labels = np.asarray([self._label(r.id) for r in records], dtype=np.int64)
        self.index.remove_ids(labels)
        self.add(records)


class Faiss(Engine):
    name = "faiss (IndexIDMap2 + flat)"
    profile = "faiss"
    metrics = ("cosine", "l2", "ip")
    filters = False  # no metadata; an IDSelector restricts the search to given ids
    filter_checks = ()
    tie_rule_when_cut = "set"
    upsert_option = {"on_existing_id": "move_to_end"}  # remove_ids + add
    under_return_variants = ((" (IDSelectorBatch)", {"allowed": True}, {}),)

    def open(self, tmp_path_factory):
        self.faiss = pytest.importorskip("faiss")

    def build(self, records, metric="cosine"):
        handle = _FaissHandle(self, metric, len(records[0].vector))
        handle.add(records)
        return handle


# -- lancedb --------------------------------------------------------------------------------------


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def _sql_in(column: str, op: str, values: Sequence[Any]) -> str:
    """``column IN (...)`` as a hand-written query spells it: an empty list gives ``IN ()``."""
    items = ", ".join(_sql_literal(v) for v in values)
    return f"{column} {'IN' if op == '$in' else 'NOT IN'} ({items})"


def _sqlalchemy_in(column: str, op: str, values: Sequence[Any]) -> str:
    """``column IN (...)`` as SQLAlchemy compiles it for PostgreSQL, as langchain-postgres's
    ``PGVector`` builds ``$in``/``$nin`` (``field.in_(values)``, ``field.not_in(values)``): an
    empty list becomes an always-false (``$in``) or always-true (``$nin``) clause."""
    import sqlalchemy
    from sqlalchemy.dialects import postgresql

    field = sqlalchemy.literal_column(column)
    clause = field.in_(list(values)) if op == "$in" else field.not_in(list(values))
    compiled = clause.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})
    return str(compiled)


def _sql_where(where: Mapping[str, Any], column: Any, membership: Any = _sql_in) -> str:
    ops = {"$eq": "=", "$ne": "<>", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
    parts = []
    for key, op, value in _clauses(where):
        if op in ("$in", "$nin"):
            parts.append(membership(column(key, value[0] if value else ""), op, value))
        else:
            parts.append(f"{column(key, value)} {ops[op]} {_sql_literal(value)}")
    return " AND ".join(parts)


class _LanceHandle(Handle):
    def __init__(self, engine: LanceDB, table: Any, metric: str) -> None:
        self.e, self.t, self.metric = engine, table, metric

    def query(self, vector, k, where=None, **options):
        search = self.t.search(list(vector)).distance_type(self.metric)
        if where is not None:
            sql = _sql_where(where, lambda key, value: key)
            search = search.where(sql, prefilter=options.get("prefilter", True))
        if k is not None:
            search = search.limit(k)
        try:
            rows = search.to_list()
        except Exception as error:  # lance raises plain ValueError / RuntimeError on bad SQL
            raise EngineError(str(error)) from error
        return [(row["id"], row["_distance"]) for row in rows]

    def add(self, records):
        self.t.add(self.e.rows(records))

    def upsert(self, records):
        (
            self.t.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(self.e.rows(records))
        )


class LanceDB(Engine):
    name = "lancedb (flat)"
    profile = "lancedb"
    metrics = ("cosine", "l2", "ip")
    default_k = 10
    tie_rule_when_cut = "order"
    add_option = {"on_existing_id": "duplicate"}
    under_return_variants = (
        ("", {}, {}),
        (" (prefilter=False)", {"prefilter": False}, {"filter_mode": "post"}),
    )
    columns = {"color": "string", "n": "int64", "grp": "string"}

    def open(self, tmp_path_factory):
        self.lancedb = pytest.importorskip("lancedb")
        import pyarrow as pa

        self.pa = pa
        self.db = self.lancedb.connect(str(tmp_path_factory.mktemp("lancedb")))

    def stored_metadata(self, metadata):
        if not metadata:
            return metadata
        kept = {}
        for key, value in metadata.items():
            wanted = str if self.columns[key] == "string" else int
            if type(value) is wanted:
                kept[key] = value
        return kept or None

    def rows(self, records: Sequence[Record]) -> list[dict[str, Any]]:
        out = []
        for r in records:
            meta = self.stored_metadata(r.metadata) or {}
            row = {"id": r.id, "text": r.text, "vector": [float(x) for x in r.vector]}
            row.update({key: meta.get(key) for key in self.columns})
            out.append(row)
        return out

    def build(self, records, metric="cosine"):
        pa = self.pa
        d = len(records[0].vector)
        schema = pa.schema(
            [("id", pa.string()), ("text", pa.string()), ("vector", pa.list_(pa.float32(), d))]
            + [(key, getattr(pa, kind)()) for key, kind in self.columns.items()]
        )
        table = self.db.create_table(_collection_name(), data=self.rows(records), schema=schema)
        return _LanceHandle(self, table, {"ip": "dot"}.get(metric, metric))


# -- pgvector (PostgreSQL started by pgserver) -----------------------------------------------------


class _PgHandle(Handle):
    OPERATOR = {"cosine": "<=>", "l2": "<->", "ip": "<#>"}

    def __init__(self, engine: PgVector, table: str, metric: str) -> None:
        self.e, self.table, self.op = engine, table, self.OPERATOR[metric]

    def query(self, vector, k, where=None, **options):
        def column(key: str, value: Any) -> str:
            text = f"(meta->>'{key}')"
            return text if isinstance(value, str) else f"{text}::numeric"

        clause = f"WHERE {_sql_where(where, column, _sqlalchemy_in)}" if where is not None else ""
        limit = f"LIMIT {int(k)}" if k is not None else ""
        literal = "[" + ",".join(repr(float(x)) for x in vector) + "]"
        sql = (
            f"SELECT id, embedding {self.op} %s::vector AS d FROM {self.table} {clause} "
            f"ORDER BY d {limit}"
        )
        conn = self.e.conn
        try:
            with conn.transaction():
                if options.get("index_scan"):
                    conn.execute("SET LOCAL enable_seqscan = off")
                return [(row[0], float(row[1])) for row in conn.execute(sql, (literal,)).fetchall()]
        except self.e.psycopg.Error as error:
            raise EngineError(str(error)) from error

    def _rows(self, records):
        import json

        for r in records:
            meta = json.dumps(r.metadata) if r.metadata is not None else None
            vector = "[" + ",".join(repr(float(x)) for x in r.vector) + "]"
            yield (r.id, r.text, meta, vector)

    def add(self, records):
        try:
            with self.e.conn.transaction():
                for row in self._rows(records):
                    self.e.conn.execute(f"INSERT INTO {self.table} VALUES (%s, %s, %s, %s)", row)
        except self.e.psycopg.Error as error:
            raise EngineError(str(error)) from error

    def upsert(self, records):
        with self.e.conn.transaction():
            for row in self._rows(records):
                self.e.conn.execute(
                    f"INSERT INTO {self.table} VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO UPDATE "
                    "SET body = excluded.body, meta = excluded.meta, embedding = excluded.embedding",
                    row,
                )

    def create_hnsw_index(self) -> None:
        ops = {"<=>": "vector_cosine_ops", "<->": "vector_l2_ops", "<#>": "vector_ip_ops"}[self.op]
        self.e.conn.execute(f"CREATE INDEX ON {self.table} USING hnsw (embedding {ops})")


class PgVector(Engine):
    name = "pgvector (PostgreSQL, no index)"
    profile = "pgvector"
    metrics = ("cosine", "l2", "ip")
    tie_rule_when_cut = "set"
    add_option = {"on_existing_id": "error"}
    under_return_variants = (
        (" (no index: exact scan)", {}, {"filter_mode": "pre"}),
        (" (HNSW index)", {"index_scan": True}, {}),
    )

    def open(self, tmp_path_factory):
        pgserver = pytest.importorskip("pgserver")
        self.psycopg = pytest.importorskip("psycopg")
        # pgserver runs postgres as its own system user when the tests run as root. Starting
        # the server is infrastructure, not the behaviour under test: on a loaded machine the
        # first start has been seen to fail once (pg_ctl exit 1, before writing its log), so a
        # start is tried up to three times, each in a fresh data directory, and every failed
        # attempt is reported as a warning rather than hidden.
        failures = []
        for attempt in range(3):
            pgdata = tmp_path_factory.mktemp("pgdata")
            try:
                self.server = pgserver.get_server(pgdata, cleanup_mode="stop")
                break
            except Exception as error:  # reported below
                failures.append(f"attempt {attempt + 1} in {pgdata}: {error!r}")
        else:
            pytest.fail("PostgreSQL did not start:\n" + "\n".join(failures))
        if failures:
            import warnings

            warnings.warn("PostgreSQL started after " + "; ".join(failures), stacklevel=1)
        self.server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        self.conn = self.psycopg.connect(self.server.get_uri(), autocommit=True)
        self.version = self.conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()[0]

    def close(self):
        self.conn.close()
        self.server.cleanup()

    def build(self, records, metric="cosine"):
        table = _collection_name().replace("-", "_")
        d = len(records[0].vector)
        self.conn.execute(
            f"CREATE TABLE {table} (id text PRIMARY KEY, body text, meta jsonb, embedding vector({d}))"
        )
        handle = _PgHandle(self, table, metric)
        handle.add(records)
        return handle


# -- langchain InMemoryVectorStore ----------------------------------------------------------------


class _LangchainHandle(Handle):
    def __init__(self, engine: LangChain, store: Any) -> None:
        self.e, self.s = engine, store

    def query(self, vector, k, where=None, **options):
        kwargs: dict[str, Any] = {}
        if k is not None:
            kwargs["k"] = k
        if where is not None:
            clauses = _clauses(where)

            def keep(doc: Any) -> bool:  # the usual hand-written callable, with .get()
                for key, op, value in clauses:
                    stored = doc.metadata.get(key)
                    if op == "$eq" and stored != value:
                        return False
                    if op == "$ne" and stored == value:
                        return False
                    if op == "$in" and stored not in value:
                        return False
                    if op == "$nin" and stored in value:
                        return False
                return True

            kwargs["filter"] = keep
        pairs = self.s.similarity_search_with_score_by_vector(list(vector), **kwargs)
        return [(doc.id, score) for doc, score in pairs]

    def upsert(self, records):
        self.vectors.update({r.text: list(r.vector) for r in records})
        self.s.add_documents(
            [
                self.e.Document(id=r.id, page_content=r.text, metadata=r.metadata or {})
                for r in records
            ]
        )

    add = upsert


class LangChain(Engine):
    name = "langchain InMemoryVectorStore"
    profile = "langchain"
    default_k = 4
    tie_rule = False
    add_is_upsert = True
    filter_checks = ("$eq", "$ne, key missing")

    def open(self, tmp_path_factory):
        pytest.importorskip("langchain_core")
        from langchain_core.documents import Document
        from langchain_core.embeddings import Embeddings
        from langchain_core.vectorstores import InMemoryVectorStore

        class Table(Embeddings):
            """Hand-made vectors looked up by text: no model."""

            def __init__(self) -> None:
                self.vectors: dict[str, list[float]] = {}

            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                return [self.vectors[t] for t in texts]

            def embed_query(self, text: str) -> list[float]:
                return self.vectors[text]

        self.Document, self.Store, self.Table = Document, InMemoryVectorStore, Table

    def build(self, records, metric="cosine"):
        table = self.Table()
        handle = _LangchainHandle(self, self.Store(table))
        handle.vectors = table.vectors
        handle.upsert(records)
        return handle


ENGINES = {
    "chroma": Chroma,
    "qdrant_local": QdrantLocal,
    "qdrant_edge": QdrantEdge,
    "faiss": Faiss,
    "lancedb": LanceDB,
    "pgvector": PgVector,
    "langchain": LangChain,
}


class VectorTable:
    """The fake store's embedder for the suite: each text maps to a hand-made vector, no model."""

    def __init__(self, vectors: Mapping[str, Sequence[float]]) -> None:
        self.vectors = {text: tuple(float(x) for x in v) for text, v in vectors.items()}
        self.dimensions = len(next(iter(self.vectors.values())))

    def add(self, records: Sequence[Record]) -> None:
        self.vectors.update({r.text: r.vector for r in records})

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray([self.vectors[t] for t in texts], dtype=np.float64).reshape(
            len(texts), self.dimensions
        )
