"""FakeEmbedder: a hashing embedder whose geometry can be reasoned about, with declared clusters.

Every vector has an *exact* integer form: the signed n-gram counts of the hashing layer, or,
for a declared cluster member, ``A * 2**52 + J * t`` where ``A`` is the cluster's ±1 anchor,
``J`` an integer jitter direction exactly orthogonal to ``A`` and ``t`` the integer that scales
it to the member's jitter magnitude ``m``. The float vector a caller sees is that integer
vector divided by its norm, so the cosine between a member and its anchor is
``1 / sqrt(1 + m**2)`` whatever the dimension, and a store can break ties in exact arithmetic.

This module is the double's public surface and its cluster declarations: the checks of its
arguments, the anchors' choice and the geometry check. The vectors themselves, by every fast
path, with the caches and memos that make them fast, come from
:class:`~placeborag._embedder_engine.EmbedderEngine`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, cast

import numpy as np

from placeborag._embedder_engine import CACHED_BATCH, ROW_BLOCK, EmbedderEngine
from placeborag._errors import PlaceboragTypeError, PlaceboragValueError, PlaceboragWarning
from placeborag._limits import MAX_DIMENSIONS as _MAX_DIMENSIONS
from placeborag._options import EMBEDDER_OPTIONS
from placeborag._validation import check_vector, shown

__all__ = ["EMBEDDER_OPTIONS", "FakeEmbedder", "cosine_similarity"]

_MAX_SPREAD = 50.0
_GEOMETRY_ATTEMPTS = 8
_MARGIN = 1e-9
_CLUSTER_MATCH = ("exact", "substring")
_GRAM_BLOCK_BYTES = 16 << 20  # the cluster check compares members in blocks of this size
# Comparisons x dimensions the constructor's cluster check may spend (about 0.4 s here): beyond
# it the check is narrowed, with a warning, so its cost is bounded whatever the declaration.
_CHECK_BUDGET = 1 << 32


def _check_text(text: object, name: str = "text") -> str:
    if not isinstance(text, str):
        raise PlaceboragTypeError(f"{name}={shown(text)} must be a str, not {type(text).__name__}")
    return text


def _check_texts(texts: object, name: str = "texts") -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise PlaceboragTypeError(
            f"{name}={shown(texts)} must be a sequence of str, not a single "
            f"{type(texts).__name__}; "
            "wrap it in a list"
        )
    if not isinstance(texts, Iterable):
        raise PlaceboragTypeError(
            f"{name}={shown(texts)} must be a sequence of str, not {type(texts).__name__}"
        )
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise PlaceboragTypeError(
                f"{name}[{i}]={shown(text)} must be a str, not {type(text).__name__}"
            )
    return out


def _text_list(texts: object) -> list[str]:
    """``texts`` itself when it is a list of str (a store's batch: not copied), else checked."""
    if type(texts) is list and set(map(type, texts)) <= {str}:
        return texts
    return _check_texts(texts)


def _plain_texts(texts: object) -> Sequence[str]:
    """``texts`` as given when it is a list or tuple of str (a store's own column: a batch
    memo key, not copied), else checked into a list."""
    if isinstance(texts, (list, tuple)) and set(map(type, texts)) <= {str}:
        return texts
    return _check_texts(texts)


class FakeEmbedder:
    """A deterministic embedder: the same text, model name and dimension give the same vector.

    Undeclared texts are hashed (character 3- and 4-grams of the lower-cased text plus word
    tokens, signed feature hashing, L2-normalised). Texts declared in ``clusters`` are placed
    around their cluster's anchor with a per-text jitter of magnitude ``m`` in
    ``[0.5, 1.5) * cluster_spread``, so that ``cosine(anchor, member) == 1 / sqrt(1 + m**2)``.
    """

    __slots__ = (
        "_cluster_spread",
        "_clusters",
        "_dimensions",
        "_engine",
        "_match",
        "_model_name",
    )

    def __init__(
        self,
        *,
        model_name: str = "placebo-embed-v1",
        dimensions: int = 256,
        clusters: Mapping[str, Sequence[str]] | None = None,
        cluster_spread: float = 0.5,
        cluster_match: Literal["exact", "substring"] = "exact",
    ) -> None:
        if not isinstance(model_name, str):
            raise PlaceboragTypeError(
                f"model_name={shown(model_name)} must be a str, not {type(model_name).__name__}"
            )
        if not model_name:
            raise PlaceboragValueError("model_name='' must be a non-empty str")
        if isinstance(dimensions, bool) or not isinstance(dimensions, (int, np.integer)):
            raise PlaceboragTypeError(
                f"dimensions={shown(dimensions)} must be an int, not {type(dimensions).__name__}"
            )
        if not 2 <= dimensions <= _MAX_DIMENSIONS:
            raise PlaceboragValueError(
                f"dimensions={shown(dimensions)} must be between 2 and {_MAX_DIMENSIONS}"
            )
        if isinstance(cluster_spread, bool) or not isinstance(
            cluster_spread, (int, float, np.integer, np.floating)
        ):
            raise PlaceboragTypeError(
                f"cluster_spread={shown(cluster_spread)} must be a number, "
                f"not {type(cluster_spread).__name__}"
            )
        if isinstance(cluster_spread, (int, np.integer)):  # any size, never made a float first
            in_range = 0 <= int(cluster_spread) <= _MAX_SPREAD
        else:
            in_range = math.isfinite(cluster_spread) and 0 <= cluster_spread <= _MAX_SPREAD
        if not in_range:
            raise PlaceboragValueError(
                f"cluster_spread={shown(cluster_spread)} must be a finite number between 0 and "
                f"{_MAX_SPREAD:g}"
            )
        if not isinstance(cluster_match, str) or cluster_match not in _CLUSTER_MATCH:
            raise PlaceboragValueError(
                f"cluster_match={shown(cluster_match)} must be one of 'exact', 'substring'"
            )
        self._model_name = model_name
        self._dimensions = int(dimensions)
        self._cluster_spread = float(cluster_spread)
        self._match = cluster_match
        self._clusters = _validate_clusters(clusters)
        self._engine = EmbedderEngine(
            self._model_name, self._dimensions, self._clusters, self._cluster_spread, self._match
        )
        if self._clusters:
            self._settle_geometry()

    # -- configuration -------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def clusters(self) -> dict[str, tuple[str, ...]]:
        """The declared clusters (a copy): name -> member texts in declaration order."""
        return dict(self._clusters)

    @property
    def cluster_spread(self) -> float:
        return self._cluster_spread

    @property
    def cluster_match(self) -> str:
        return self._match

    @property
    def cluster_names(self) -> list[str]:
        """The declared cluster names, in declaration order (a new list each time)."""
        return list(self._clusters)

    def __repr__(self) -> str:
        parts = [f"model_name={self._model_name!r}", f"dimensions={self._dimensions}"]
        if self._clusters:
            parts.append(f"clusters={self.clusters!r}")
            parts.append(f"cluster_spread={self._cluster_spread!r}")
            parts.append(f"cluster_match={self._match!r}")
        return f"FakeEmbedder({', '.join(parts)})"

    # -- embedding -------------------------------------------------------------------------

    def embed(self, text: str) -> list[float]:
        """The L2-normalised vector of one text, as a list of floats."""
        if type(text) is not str:  # anything but a plain str goes through the check
            text = _check_text(text)
        return self._engine.embed_text(text)

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        """The L2-normalised vectors of many texts, as lists of floats: ``[embed(t) for t in
        texts]``, computed in one pass. :meth:`embed_array` gives the same values as an array."""
        texts = _check_texts(texts)
        return cast("list[list[float]]", self._engine.embed_floats(texts).tolist())

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of :meth:`embed_batch` as a float64 array of shape (n, dimensions).

        The faster form for code that computes with the vectors (a store, a projection): no
        Python lists are built. Row ``i`` holds the same values as ``embed(texts[i])``.
        """
        texts = _check_texts(texts)
        return self._engine.embed_floats(texts)

    # -- the exact extension (placeborag.ExactEmbedder) -------------------------------------
    # What a store needs to rank exactly (docs/embedder.md, "The embedder contract"). A store
    # chooses its strategy from these methods, never from the class, so a subclass keeps them.

    def exact_vectors(self, texts: Sequence[str]) -> tuple[np.ndarray, list[int] | None]:
        """The exact integer forms (int64 rows) of ``texts``' vectors, and their exact squared
        norms when known without more work (else None): each vector is its form, normalised."""
        return self._engine.embed_ints(_text_list(texts))

    def exact_query(self, text: str) -> tuple[np.ndarray, np.ndarray, int | None]:
        """A query's unit float64 vector, its exact integer form and, when known, that form's
        exact squared norm (else None)."""
        return self._engine.embed_query(_check_text(text))

    def embed_rows(self, texts: Sequence[str], dtype: Any = np.float32) -> np.ndarray:
        """:meth:`embed_array` rounded once to ``dtype`` (a store's float32 matrix: the same
        bits as casting the float64 rows), for a batch a store will rank again."""
        return self._engine.embed_floats(_text_list(texts), dtype=dtype, keep=True)

    def embed_into(self, texts: Sequence[str], out: np.ndarray, rows: np.ndarray) -> None:
        """Write the unit vector of ``texts[i]`` (rounded to ``out.dtype``) into
        ``out[rows[i]]``: a store's matrix filled in place, with no batch beside it."""
        self._engine.embed_into(_plain_texts(texts), out, rows)

    def cluster_of(self, text: str) -> str | None:
        """The cluster a text belongs to under ``cluster_match``, or None."""
        return self._engine.clusters_of([_check_text(text)])[0]

    def cluster_anchor(self, name: str) -> list[float] | None:
        """The unit anchor vector of a declared cluster, or None for a name not declared."""
        if not isinstance(name, str):
            raise PlaceboragTypeError(
                f"name={shown(name)} must be a str, not {type(name).__name__}"
            )
        anchor = self._engine.anchors.get(name)
        if anchor is None:
            return None
        return cast("list[float]", (anchor / math.sqrt(self._dimensions)).tolist())

    def jitter_of(self, text: str) -> float | None:
        """The jitter magnitude ``m`` of a cluster member (None for an undeclared text)."""
        name = self.cluster_of(text)
        if name is None:
            return None
        return float(self._engine.jitter_magnitudes([(name, text)])[0])

    def clusters_of(self, texts: Sequence[str]) -> list[str | None]:
        """:meth:`cluster_of` of many texts, in one pass."""
        return self._engine.clusters_of(_check_texts(texts))

    def jitters_of(self, texts: Sequence[str]) -> np.ndarray:
        """:meth:`jitter_of` of many texts: a float64 array, NaN for an undeclared text."""
        checked = _check_texts(texts)
        names = self._engine.clusters_of(checked)
        out = np.full(len(checked), np.nan)
        members = [i for i, name in enumerate(names) if name is not None]
        if members:
            keys = [(names[i], checked[i]) for i in members]
            out[members] = self._engine.jitter_magnitudes(keys)  # type: ignore[arg-type]
        return out

    def cluster_anchors(self) -> np.ndarray:
        """The unit anchor vectors of the declared clusters, one row each, in
        :attr:`cluster_names` order (shape ``(len(cluster_names), dimensions)``)."""
        if not self._clusters:
            return np.zeros((0, self._dimensions))
        anchors = self._engine.anchors
        rows = np.stack([anchors[n] for n in self._clusters]) / math.sqrt(self._dimensions)
        rows.flags.writeable = False
        return rows

    # -- the declaration's geometry ------------------------------------------------------

    def _check_scope(self) -> Literal["pairs", "anchors", "none"]:
        """How much of the declaration the constructor checks, from its size alone.

        Every pair of members when ``members**2 * dimensions`` is within :data:`_CHECK_BUDGET`;
        else every member against every anchor when ``members * clusters * dimensions`` is;
        else nothing beyond what holds by construction (each member's cosine to its own
        anchor). The cost of the check is then bounded whatever the declaration's size.
        """
        n, c, d = len(self._engine.declared), len(self._clusters), self._dimensions
        if n * n * d <= _CHECK_BUDGET:
            return "pairs"
        if n * c * d <= _CHECK_BUDGET:
            return "anchors"
        return "none"

    def _settle_geometry(self) -> None:
        """Choose anchors so every declared member is nearer its own cluster than any other.

        The anchors and jitters are a pure function of the declaration and an attempt number;
        attempts are tried in order, so the outcome is deterministic. If none satisfies the
        declaration, the first attempt's worst violation is reported. A declaration too large
        to check every pair (:meth:`_check_scope`) is checked against the anchors only, or not
        at all, with a :class:`PlaceboragWarning` naming what was not checked.
        """
        scope = self._check_scope()
        first_violation = None
        for attempt in range(_GEOMETRY_ATTEMPTS):
            self._engine.place(attempt)
            violation = self._worst_violation(scope)
            if violation is None:
                if scope != "pairs":
                    self._warn_unchecked(scope)
                return
            if first_violation is None:
                first_violation = violation
        raise PlaceboragValueError(
            f"clusters cannot be satisfied at dimensions={self._dimensions} with "
            f"cluster_spread={shown(self._cluster_spread)}: {first_violation}; "
            "raise dimensions, lower cluster_spread or declare fewer clusters"
        )

    def _warn_unchecked(self, scope: str) -> None:
        n, c, d = len(self._engine.declared), len(self._clusters), self._dimensions
        if scope == "anchors":
            what = (
                "were checked against the cluster anchors only (each member nearer its own "
                "anchor than any other), not pair by pair: that would take "
                f"{n:,}**2 x {d:,} > 2**32 operations; call verify_clusters() to check every pair"
            )
        else:
            what = (
                "were not checked beyond their own anchors: comparing every member with every "
                f"anchor would take {n:,} x {c:,} x {d:,} > 2**32 operations; call "
                "verify_clusters(pairs=False) to check them against the anchors, "
                "verify_clusters() to check every pair"
            )
        warnings.warn(
            f"clusters: {n:,} declared members in {c:,} clusters at dimensions={d} {what}",
            PlaceboragWarning,
            stacklevel=4,  # _warn_unchecked <- _settle_geometry <- __init__ <- the caller
        )

    def verify_clusters(self, *, pairs: bool = True) -> None:
        """Check that every declared member is nearer its own anchor than any other anchor
        and, with ``pairs=True``, nearer its least similar cluster-mate than any member of
        another cluster.

        The constructor does this itself while ``members**2 * dimensions <= 2**32`` (4,096
        members at 256 dimensions) and warns when it checked less. This method always checks
        what it is asked: every pair in time ``O(members**2 * dimensions)``, or with
        ``pairs=False`` every member against every anchor in ``O(members * clusters *
        dimensions)``; memory stays linear (12 bytes per member and dimension, and blocks of
        16 MB). Raises :class:`PlaceboragValueError` naming the offending texts and cosines;
        returns None when the declaration holds.
        """
        if not isinstance(pairs, bool):
            raise PlaceboragTypeError(
                f"pairs={shown(pairs)} must be True or False, not {type(pairs).__name__}"
            )
        if not self._clusters:
            return
        violation = self._worst_violation("pairs" if pairs else "anchors")
        if violation is not None:
            raise PlaceboragValueError(
                f"clusters do not hold at dimensions={self._dimensions} with "
                f"cluster_spread={shown(self._cluster_spread)}: {violation}; "
                "raise dimensions, lower cluster_spread or declare fewer clusters"
            )

    def _worst_violation(self, scope: str) -> str | None:
        if scope == "none":
            return None
        declared = self._engine.declared
        texts = list(declared)
        names = [declared[t] for t in texts]
        keys = list(zip(names, texts))
        cluster_names = list(self._clusters)
        anchors = self.cluster_anchors()
        position = {n: i for i, n in enumerate(cluster_names)}
        label = np.array([position[n] for n in names], dtype=np.intp)
        n, c = len(texts), len(cluster_names)

        def anchor_violation(i: int, own_cos: float, j: int, other_cos: float) -> str:
            return (
                f"{shown(texts[i])} (cluster {shown(cluster_names[label[i]])}) is as close to the "
                f"anchor of cluster {shown(cluster_names[j])} (cosine {other_cos:.3f}) as to its "
                f"own anchor (cosine {own_cos:.3f})"
            )

        def anchor_check(vectors: np.ndarray, at: int) -> tuple[np.ndarray, np.ndarray]:
            """Per member of the block: whether another anchor is as near as its own, and
            the nearest other anchor (the first one on a tie, as argmax gives)."""
            to_anchor = vectors @ anchors.T
            rows = np.arange(len(vectors))
            own = label[at : at + len(vectors)]
            others = np.where(own[:, None] == np.arange(c)[None, :], -np.inf, to_anchor)
            near = np.argmax(others, axis=1) if c > 1 else np.zeros(len(vectors), np.intp)
            if c == 1:
                return np.zeros(len(vectors), dtype=bool), near
            return others[rows, near] >= to_anchor[rows, own] - _MARGIN, near

        if scope == "anchors":  # a block of members at a time: memory stays bounded
            for a in range(0, n, ROW_BLOCK):
                vectors = self._engine.compute_members(keys[a : a + ROW_BLOCK], exact=False)[1]
                bad, near = anchor_check(vectors, a)
                for i in np.flatnonzero(bad)[:1].tolist():
                    own, other = anchors[label[a + i]], anchors[near[i]]
                    return anchor_violation(
                        a + i, float(vectors[i] @ own), int(near[i]), float(vectors[i] @ other)
                    )
            return None
        # Small declarations keep their members' vectors for the queries that follow.
        vectors = self._engine.compute_members(keys, exact=n <= CACHED_BATCH)[1]
        anchor_bad, near = anchor_check(vectors, 0)
        # The member-to-member cosines, a block of rows at a time: memory stays linear in the
        # number of members (16k members at d=256 took 2 GB as one matrix). The time is
        # O(n**2 * d): a float32 product screens every row (members of a cluster are
        # contiguous, so mates and strangers are column ranges), and a row the screen cannot
        # clear is checked again exactly in float64, so the outcome is the float64 one.
        screen = 4.0 * self._dimensions * 2.0**-24 + _MARGIN  # float32 error bound, and then some
        v32 = vectors.astype(np.float32)
        bounds = np.searchsorted(label, np.arange(c + 1))
        starts, ends = bounds[label], bounds[label + 1]  # each member's cluster: its columns
        columns = np.arange(n)
        block = max(1, _GRAM_BLOCK_BYTES // (4 * max(n, 1)))
        # Blocks of rows run across clusters, so many small clusters still make few large
        # products (one product per cluster of 16 members took 1 s for 4,096 members).
        for r0 in range(0, n, block):
            r1 = min(n, r0 + block)
            gram = v32[r0:r1] @ v32.T
            own = (columns >= starts[r0:r1, None]) & (columns < ends[r0:r1, None])
            stranger_max = np.where(own, -np.inf, gram).max(axis=1)  # -inf: no stranger
            own[np.arange(r1 - r0), np.arange(r0, r1)] = False  # a member is not its own mate
            mate_min = np.where(own, gram, np.inf).min(axis=1)  # inf: no mate
            maybe = stranger_max >= mate_min - screen
            for i in (np.flatnonzero(anchor_bad[r0:r1] | maybe) + r0).tolist():
                own_cluster = label[i]
                if anchor_bad[i]:
                    j = int(near[i])
                    return anchor_violation(
                        i,
                        float(vectors[i] @ anchors[own_cluster]),
                        j,
                        float(vectors[i] @ anchors[j]),
                    )
                found = _pair_violation(vectors, i, (int(starts[i]), int(ends[i])), keys)
                if found is not None:
                    return found
        return None


def _pair_violation(
    vectors: np.ndarray, i: int, mates_at: tuple[int, int], keys: Sequence[tuple[str, str]]
) -> str | None:
    """Whether member ``i`` (its cluster's members at rows ``mates_at``) is as close to a
    stranger as to its least close mate, checked exactly in float64; the message if so."""
    a, b = mates_at
    row = vectors[i] @ vectors.T  # exactly as the float64 check always was
    mates = np.r_[a:i, i + 1 : b]
    strangers = np.r_[0:a, b : len(keys)]
    mate = mates[np.argmin(row[mates])]
    stranger = strangers[np.argmax(row[strangers])]
    if row[stranger] < row[mate] - _MARGIN:
        return None
    (name, text), (other, other_text) = keys[i], keys[stranger]
    return (
        f"{shown(text)} (cluster {shown(name)}) is as close to {shown(other_text)} (cluster "
        f"{shown(other)}, cosine {row[stranger]:.3f}) as to its cluster-mate "
        f"{shown(keys[mate][1])} (cosine {row[mate]:.3f})"
    )


def _validate_clusters(
    clusters: Mapping[str, Sequence[str]] | None,
) -> dict[str, tuple[str, ...]]:
    if clusters is None:
        return {}
    if not isinstance(clusters, Mapping):
        raise PlaceboragTypeError(
            f"clusters={shown(clusters)} must be a mapping of cluster name to a list of texts, "
            f"not {type(clusters).__name__}"
        )
    out: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for name, members in clusters.items():
        if not isinstance(name, str):
            raise PlaceboragTypeError(
                f"cluster name {shown(name)} must be a str, not {type(name).__name__}"
            )
        if not name:
            raise PlaceboragValueError("cluster name '' must be a non-empty str")
        if isinstance(members, (str, bytes)) or not isinstance(members, Iterable):
            raise PlaceboragTypeError(
                f"clusters[{shown(name)}]={shown(members)} must be a list of texts, "
                f"not {type(members).__name__}"
            )
        members = tuple(members)
        if not members:
            raise PlaceboragValueError(
                f"clusters[{shown(name)}] is empty; declare at least one text"
            )
        for text in members:
            if not isinstance(text, str):
                raise PlaceboragTypeError(
                    f"clusters[{shown(name)}] holds {shown(text)}, which must be a str, "
                    f"not {type(text).__name__}"
                )
            if not text:
                raise PlaceboragValueError(
                    f"clusters[{shown(name)}] holds the empty string; declare non-empty texts"
                )
            if text in owner:
                if owner[text] == name:
                    raise PlaceboragValueError(
                        f"{shown(text)} is declared twice in cluster {shown(name)}"
                    )
                raise PlaceboragValueError(
                    f"{shown(text)} is declared in more than one cluster ({shown(owner[text])} and "
                    f"{shown(name)})"
                )
            owner[text] = name
        out[name] = members
    return out


def cosine_similarity(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Cosine of the angle between two vectors, computed with correctly rounded sums.

    Each vector is first scaled by a power of two (exact) so that its largest value is near 1:
    vectors of 1e200 or of 1e-200 give the cosine of their direction, not an overflow to
    infinity or an underflow to zero. Raises :class:`~placeborag.PlaceboragValueError` for
    vectors of different lengths, nested or ragged input, empty vectors, non-finite values and
    zero vectors (whose angle is undefined).
    """
    va = _unit_scaled(_as_vector(a, "a"))
    vb = _unit_scaled(_as_vector(b, "b"))
    if va.size != vb.size:
        raise PlaceboragValueError(
            f"a has {va.size} values and b has {vb.size}; both must have the same length"
        )
    for name, v in (("a", va), ("b", vb)):
        if not v.any():
            raise PlaceboragValueError(
                f"{name} is a zero vector; cosine similarity is undefined for it"
            )
    na = math.sqrt(math.fsum((va * va).tolist()))
    nb = math.sqrt(math.fsum((vb * vb).tolist()))
    dot = math.fsum((va * vb).tolist())
    return max(-1.0, min(1.0, dot / (na * nb)))


def _unit_scaled(v: np.ndarray) -> np.ndarray:
    """``v`` times the power of two that brings its largest magnitude into [0.5, 1)."""
    top = float(np.max(np.abs(v)))
    if top == 0.0:
        return v
    scaled: np.ndarray = np.ldexp(v, -math.frexp(top)[1])
    return scaled


def _as_vector(v: object, name: str) -> np.ndarray:
    array: np.ndarray = check_vector(v, name)
    return array
