"""Conversations, sessions and the window budget."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.query_engine import (
    BudgetExceeded,
    Conversation,
    Sessions,
    Turn,
    WindowBudget,
    conversation,
)


def words(text):
    return len(text.split())


def test_a_conversation_alternates_roles_and_counts_tokens_per_turn():
    thread = conversation("hi there", "hello, how can I help?", ("user", "refunds?"), owner="bob")

    assert [(t.role, t.content, t.tokens) for t in thread.turns] == [
        ("user", "hi there", 2),
        ("assistant", "hello, how can I help?", 7),
        ("user", "refunds?", 2),
    ]
    assert (thread.owner, thread.id, thread.tokens, len(thread)) == ("bob", "conv-1", 11, 3)
    assert [m.role for m in thread.messages()] == ["user", "assistant", "user"]


def test_a_conversation_refuses_a_role_it_cannot_hold():
    with pytest.raises(PlaceboragValueError, match="role='tool'; a conversation holds user"):
        conversation(("tool", "x"))


def test_sessions_hand_out_deterministic_ids_and_hide_other_owners_threads():
    sessions = Sessions()
    alice = sessions.open("alice", groups=["support"])
    bob = sessions.open("bob")
    first = sessions.start(alice, "hi")
    second = sessions.start(alice)

    assert (alice.id, alice.identity) == ("session-1", {"user": "alice", "groups": ["support"]})
    assert (first.id, second.id) == ("conv-1", "conv-2")
    assert sessions.find(alice, "conv-1") is first
    assert sessions.find(bob, "conv-1") is None
    assert sessions.find(alice, "conv-9") is None


def history(*sizes):
    return [
        Turn("user" if n % 2 == 0 else "assistant", "w " * size, size)
        for n, size in enumerate(sizes)
    ]


def test_history_is_dropped_from_the_oldest_and_the_utterance_enters_whole():
    budget = WindowBudget(window=20, answer_reserve=5, counter=words)

    packing = budget.pack(history(4, 4, 4), "one two three four five six")

    assert [t.tokens for t in packing.dropped_history] == [4]
    assert [t.tokens for t in packing.history] == [4, 4]
    assert (packing.utterance_tokens, packing.history_tokens, packing.free) == (6, 8, 1)


def test_fragments_fill_only_the_remainder_in_order_and_stop_at_the_first_that_does_not_fit():
    budget = WindowBudget(window=30, answer_reserve=6, history_limit=8, counter=words)

    packing = budget.pack(history(5, 5, 3), "a b c d", ["x " * 5, "y " * 8, "z " * 2])

    assert [t.tokens for t in packing.history] == [5, 3]
    assert packing.fragments == ("x " * 5,)
    assert packing.cut_fragments == ("y " * 8, "z " * 2)  # z fits, but never jumps the queue
    assert packing.used + packing.reserve + packing.free == 30


def test_the_answer_reserve_is_never_eaten():
    budget = WindowBudget(window=12, answer_reserve=4, counter=words)

    packing = budget.pack(history(3, 3, 3), "q r", ["f " * 3, "g " * 3])

    assert packing.used <= 12 - 4
    assert packing.free >= 0
    assert packing.reserve == 4


def test_an_utterance_that_does_not_fit_with_the_reserve_raises():
    budget = WindowBudget(window=10, answer_reserve=4, counter=words)

    with pytest.raises(BudgetExceeded) as excinfo:
        budget.pack([], "one two three four five six seven")

    assert excinfo.value.args == (
        "the utterance takes 7 tokens and the answer reserve 4; together they exceed"
        " window=10, and the utterance is never cut",
    )


def test_a_conversation_packs_directly_and_fragments_may_be_matches():
    from placeborag import Match

    thread = conversation("hello", "hi", counter=words)
    budget = WindowBudget(window=10, answer_reserve=2, counter=words)
    match = Match("m", "three word text", {}, 1.0)

    packing = budget.pack(thread, "and refunds", [match])

    assert packing.history == thread.turns
    assert packing.fragments == (match,)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"window": 0, "answer_reserve": 0}, "window=0 must be >= 1"),
        ({"window": 10, "answer_reserve": 10}, "answer_reserve=10 must be >= 0 and < window=10"),
        ({"window": 10, "answer_reserve": 1, "history_limit": -1}, "history_limit=-1 must be"),
    ],
)
def test_a_budget_refuses_impossible_sizes(options, message):
    with pytest.raises(PlaceboragValueError, match=message):
        WindowBudget(**options)


def test_conversation_requires_an_owner():
    with pytest.raises(TypeError, match="owner='' must be a non-empty str"):
        Conversation(id="c", owner="")


# -- properties ---------------------------------------------------------------------------------

sizes = st.lists(st.integers(min_value=0, max_value=12), max_size=8)


@given(
    window=st.integers(min_value=1, max_value=80),
    reserve_share=st.integers(min_value=0, max_value=99),
    history_sizes=sizes,
    fragment_sizes=sizes,
    spoken=st.integers(min_value=0, max_value=30),
    limit=st.none() | st.integers(min_value=0, max_value=40),
)
def test_a_packing_always_keeps_the_rules(
    window, reserve_share, history_sizes, fragment_sizes, spoken, limit
):
    reserve = window * reserve_share // 100
    budget = WindowBudget(window=window, answer_reserve=reserve, history_limit=limit, counter=words)
    turns = history(*history_sizes)
    fragments = ["x " * size for size in fragment_sizes]
    utterance = "u " * spoken

    if spoken + reserve > window:
        with pytest.raises(BudgetExceeded):
            budget.pack(turns, utterance, fragments)
        return
    packing = budget.pack(turns, utterance, fragments)

    assert packing.used + packing.reserve <= window  # the reserve is never eaten
    assert packing.utterance == utterance  # the utterance enters whole
    assert list(packing.dropped_history) + list(packing.history) == turns  # oldest go first
    assert list(packing.fragments) + list(packing.cut_fragments) == fragments  # order kept
    if limit is not None:
        assert packing.history_tokens <= limit
    if packing.cut_fragments:  # a fragment is cut only because it did not fit
        assert words(packing.cut_fragments[0]) > packing.free


# -- regressions ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("history", "fragments", "message"),
    [
        ([], "It left the depot.", "fragments='It left the depot.' must be a list of fragments"),
        (None, [], "history=None must be a Conversation or a list of Turn"),
        ("hi", [], "history='hi' must be a Conversation or a list of Turn"),
        (["hi"], [], "history[0]='hi' must be a Turn"),
    ],
)
def test_pack_refuses_one_str_or_a_non_iterable_by_name(history, fragments, message):
    budget = WindowBudget(window=40, answer_reserve=4)

    with pytest.raises(PlaceboragTypeError) as excinfo:
        budget.pack(history, "where is it?", fragments)

    assert message in str(excinfo.value)


def test_pack_takes_fragments_from_a_generator():
    budget = WindowBudget(window=40, answer_reserve=4, counter=words)

    packing = budget.pack([], "where is it?", (text for text in ["one two", "three"]))

    assert packing.fragments == ("one two", "three")
    assert packing.fragment_tokens == 3


def test_pack_refuses_a_negative_count_from_the_counter():
    budget = WindowBudget(window=40, answer_reserve=4, counter=lambda text: -1)

    with pytest.raises(PlaceboragTypeError, match=r"counter\('where\?'\) returned -1; expected"):
        budget.pack([], "where?")


def test_a_conversation_checks_its_turns_when_built():
    with pytest.raises(PlaceboragTypeError, match=r"turns\[0\]='hi' must be a Turn"):
        Conversation(id="x", owner="o", turns=["hi"])
    with pytest.raises(PlaceboragTypeError, match="tokens=-3 must be an int >= 0"):
        Turn("user", "hi", -3)


def test_sessions_refuse_what_is_not_a_session_and_a_user_that_is_not_the_owner():
    sessions = Sessions()

    with pytest.raises(PlaceboragTypeError, match="session='bob' must be a Session"):
        sessions.start("bob", "hi")
    with pytest.raises(PlaceboragTypeError, match="session=None must be a Session"):
        sessions.find(None, "conv-1")
    with pytest.raises(PlaceboragValueError, match="user='alice' contradicts owner='bob'"):
        sessions.open("bob", user="alice")

    assert sessions.conversations == ()
    assert sessions.open("bob", user="bob").identity == {"user": "bob"}
    assert sessions.open("carol").id == "session-2"


def test_a_token_counter_that_calls_back_into_its_sessions_does_not_deadlock():
    # issue 27: Sessions.start counted the turns under its own (non-reentrant) lock, so a
    # counter that opened a session or looked a conversation up blocked for good.
    from placeborag.query_engine import Sessions
    from tests._race import race

    seen = []

    def counter(text):
        session = sessions.open("auditor")  # calls back into the sessions it counts for
        seen.append((session.id, sessions.find(session, "conv-1"), len(sessions.conversations)))
        return len(text.split())

    sessions = Sessions(counter=counter)
    alice = sessions.open("alice")
    threads = []

    def start(n):
        threads.append(sessions.start(alice, f"hello number {n}", "hi there"))

    assert race(start, [(n,) for n in range(4)], timeout=20) == []
    assert sorted(t.id for t in threads) == ["conv-1", "conv-2", "conv-3", "conv-4"]
    assert all([turn.tokens for turn in t.turns] == [3, 2] for t in threads)
    assert len(seen) == 8
