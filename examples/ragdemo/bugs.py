"""Switches that put one known bug back into the pipeline, for the mutation meta-test.

Every example test names the bug it exists to catch; the meta-test runs it with that switch on
and requires it to fail. Production code never sets a switch: the default is ``frozenset()``.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Each switch and the mistake it reintroduces.
BUGS: dict[str, str] = {
    "query_template": "embeds the prompt template together with the question",
    "no_overfetch": "takes whatever a filtered query returns, even fewer than k",
    "skip_reindex": "switches the query embedder but keeps the vectors of the old model",
    "char_chunks": "cuts documents into fixed-width character windows, splitting phrases",
    "sort_by_score": "re-sorts hits by score descending, as if every store reported similarity",
    "fusion_intersection": "hybrid fusion keeps only candidates the dense leg returned",
    "no_refresh": "queries right after writing, without making the writes visible",
    "timeout_crash": "lets a retrieval timeout escape to the caller",
    "timeout_as_empty": "reports a failed retrieval as an ordinary 'not found'",
    "identity_first_query_only": "passes the identity on the first store query only",
    "tool_identity": "lets an identity in the model's tool arguments replace the caller's",
    "cache_ignores_identity": "keys the candidate cache on the query alone",
    "rerank_crash": "lets a reranker failure escape instead of retrying and falling back",
    "rerank_zip": "zips reranker scores with candidates, silently dropping the unscored",
    "invent_answer": "answers from the best guess when nothing retrieved supports an answer",
    "cite_every_chunk": "cites every chunk, so a source appears once per chunk",
    "cite_candidates": "cites candidates that were cut from the packed context",
    "inline_context": "pastes retrieved text into the instructions instead of the sources",
    "rrf_unstable_ties": "breaks fusion ties by the order the ranked lists were given",
    "rrf_no_truncate": "returns every fused candidate, ignoring the budget",
    "rrf_empty_raises": "raises on an empty fusion input instead of returning []",
}


def check_bugs(bugs: Iterable[str]) -> frozenset[str]:
    """The switches as a frozenset; an unknown name raises and lists the known ones."""
    chosen = frozenset(bugs)
    unknown = sorted(chosen - BUGS.keys())
    if unknown:
        raise ValueError(
            f"unknown bug switch {unknown[0]!r}; expected one of {', '.join(sorted(BUGS))}"
        )
    return chosen
