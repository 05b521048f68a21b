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
    # the query engine (ragdemo.engine) and its rows, budget and server
    "offer_search_when_empty": "offers search_knowledge while the knowledge base is empty",
    "offer_disabled_web": "offers web_search although the admin disabled it",
    "stale_tool_set": "decides the tool set once at start, so a filled base never gets search",
    "always_retrieve": "retrieves on the raw utterance even when the model answered directly",
    "always_ground": "applies the grounding contract to conversational turns too",
    "raw_utterance_query": "searches the raw utterance instead of the model's standalone query",
    "search_every_call": "runs every search_knowledge call of a round, not one per turn",
    "second_round": "offers the tools again after the first round and loops",
    "first_tool_only": "runs only the first tool call of a round",
    "rescore": "re-scores the knowledge store's fused order by keyword overlap",
    "cite_in_answer_order": "orders citations by first mention instead of relevance",
    "signal_on_retrieve": "counts an access for every retrieved candidate",
    "signal_per_chunk": "counts an access per anchor, so one answer counts a record twice",
    "click_uncounted": "records no access when a citation is opened",
    "cache_raw_utterance": "keys the cache on the raw utterance instead of the standalone query",
    "no_cache_read": "writes the cache but never reads it",
    "identity_dropped": "searches the knowledge store without the caller's identity",
    "no_trace": "writes no retrieval trace for a grounding answer",
    "anonymous_as_empty": "replaces a missing identity with empty permissions",
    "qe_acl_filter": "filters the knowledge store's results by a permission rule of its own",
    "keep_uncited": "keeps unanchored sentences once any sentence is anchored",
    "unchecked_anchor": "accepts an anchor [n] that names no packed source",
    "hidden_as_empty": "reports withheld records as an ordinary 'not found', without the hint",
    "grounding_first": "puts the grounding rules before the platform prompt",
    "empty_platform_prompt": "uses an empty platform prompt override instead of the default",
    "no_ownership_check": "continues any conversation whose id is known, whoever owns it",
    "history_by_user": "reads the history of every conversation of the user",
    "history_in_engine": "keeps the history in the engine, so a restart loses it",
    "stamp_intent": "stamps the message with the selected model instead of the one that answered",
    "null_model_first_allowed": "uses the first allowed model when none is selected",
    "model_off_list": "accepts a selected model that is not on the allow-list",
    "rewrite_history": "rewrites the model of past messages when the selection changes",
    "feedback_any_value": "accepts any rating value, not only -1 and 1",
    "feedback_on_user": "accepts a rating on a user message",
    "feedback_new_row": "writes a re-rating as a new message instead of in place",
    "feedback_touches_body": "changes the message body when it is rated",
    "trace_overwrite": "overwrites a message's retrieval trace instead of refusing a second one",
    "tokens_output_only": "stamps only the answer's tokens, not the whole turn's",
    "no_answer_reserve": "lets history and context use the tokens reserved for the answer",
    "cut_utterance": "cuts an utterance that does not fit instead of refusing it",
    "history_from_newest": "drops the newest history turns first",
    "context_over_window": "packs retrieved context as if the history took no room",
    "buffer_stream": "generates the whole answer before sending the first token",
    "enqueue_turn": "queues the turn for a worker and answers 202 instead of streaming",
    "citations_first": "sends the citations before the answer",
    "ignore_disconnect": "keeps generating after the client went away",
    "foreign_thread_403": "answers 403 for someone else's thread, revealing that it exists",
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
