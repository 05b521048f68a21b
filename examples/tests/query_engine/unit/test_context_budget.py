"""The shared window budget: history from the oldest, the utterance whole, the reserve kept."""

import pytest
from ragdemo import Budget, UtteranceTooLong

from placeborag import Match
from placeborag.query_engine import Turn, WindowBudget, count_tokens

pytestmark = [pytest.mark.unit, pytest.mark.p1]


def turns(*sizes):
    return [
        Turn("user" if n % 2 == 0 else "assistant", " ".join([f"t{n}"] * size), size)
        for n, size in enumerate(sizes)
    ]


def fragments(*sizes):
    return [Match(f"f{n}", " ".join(["w"] * size), {}, 0.0) for n, size in enumerate(sizes)]


@pytest.mark.catches("history_from_newest", "cut_utterance")
def test_history_is_dropped_from_the_oldest_and_the_utterance_stays_whole(bugs):
    budget = Budget(window=20, reserve=5, bugs=bugs)
    history = turns(4, 4, 4)
    utterance = "one two three four five six"

    packed = budget.pack(history, utterance, [])

    assert packed.dropped == (history[0],)
    assert packed.history == tuple(history[1:])
    assert packed.utterance == utterance
    with pytest.raises(UtteranceTooLong):
        budget.pack(history, " ".join(["long"] * 16), [])


@pytest.mark.catches("context_over_window")
def test_fragments_fill_only_the_remainder_the_history_left(bugs):
    budget = Budget(window=30, reserve=6, history_limit=8, bugs=bugs)
    history, items = turns(5, 5, 3), fragments(5, 8, 2)

    packed = budget.pack(history, "a b c d", items)
    reference = WindowBudget(
        window=30, answer_reserve=6, history_limit=8, counter=count_tokens
    ).pack(history, "a b c d", items)

    assert packed.fragments == reference.fragments == (items[0],)
    assert packed.cut == reference.cut_fragments
    assert packed.history == reference.history


@pytest.mark.catches("no_answer_reserve")
def test_the_answer_reserve_is_never_used_by_history_or_context(bugs):
    budget = Budget(window=24, reserve=8, bugs=bugs)

    packed = budget.pack(turns(6, 6, 6), "q r", fragments(3, 3, 3))

    assert packed.tokens <= 24 - 8
    assert len(packed.history) == 2 and len(packed.fragments) == 0
