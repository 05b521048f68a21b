"""Conversations and sessions for multi-turn tests, and the context-window budget.

``Conversation`` is a thread of turns with an owner and an id; each turn carries its token
count. ``Sessions`` hands out sessions and conversations with deterministic ids (``conv-1``,
``conv-2``, ...), so two runs of a test build the same history. ``WindowBudget.pack`` splits
one model window between the history, the current utterance, the retrieved context and the
reserve kept for the answer:

1. the answer reserve is taken first and is never given to anything else;
2. the current utterance enters whole (if it cannot, ``BudgetExceeded``);
3. the history keeps its newest turns that fit (``history_limit`` caps it), dropping the
   oldest first, whole turns only;
4. the retrieved fragments fill the remainder in the order given (most important first),
   stopping at the first that does not fit, so a less important fragment never displaces a
   more important one.

Token counts come from ``count_tokens`` unless a ``counter`` is given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from placeborag._chat import ChatMessage, count_tokens
from placeborag._errors import PlaceboragError, PlaceboragTypeError, PlaceboragValueError
from placeborag._threads import FreshLocks
from placeborag._validation import shown

__all__ = [
    "BudgetExceeded",
    "Conversation",
    "Packing",
    "Session",
    "Sessions",
    "Turn",
    "WindowBudget",
    "conversation",
]

Counter = Callable[[str], int]


class BudgetExceeded(PlaceboragError, ValueError):
    """The current utterance and the answer reserve do not fit in the window together."""


@dataclass(frozen=True)
class Turn:
    """One message of a conversation: its role (user or assistant), text and token count."""

    role: str
    content: str
    tokens: int

    def __post_init__(self) -> None:
        if not isinstance(self.role, str) or self.role not in ("user", "assistant"):
            raise PlaceboragValueError(
                f"role={shown(self.role)} must be 'user' or 'assistant' for a conversation turn"
            )
        if not isinstance(self.content, str):
            raise PlaceboragTypeError(f"content={shown(self.content)} must be a str")
        if isinstance(self.tokens, bool) or not isinstance(self.tokens, int) or self.tokens < 0:
            raise PlaceboragTypeError(f"tokens={shown(self.tokens)} must be an int >= 0")

    def as_message(self) -> ChatMessage:
        return ChatMessage(self.role, self.content)


def _checked_counter(counter: object) -> Counter:
    if counter is None:
        return count_tokens
    if not callable(counter):
        raise PlaceboragTypeError(f"counter={shown(counter)} must be a function of a str")
    return counter


def _turn(role: str, content: object, counter: Counter, position: int) -> Turn:
    if not isinstance(role, str) or role not in ("user", "assistant"):
        raise PlaceboragValueError(
            f"turns[{position}] has role={shown(role)}; a conversation holds user and assistant "
            "turns"
        )
    if not isinstance(content, str):
        raise PlaceboragTypeError(f"turns[{position}]={shown(content)} must be a str")
    return Turn(role, content, _counted(counter, content))


def _counted(counter: Counter, text: str) -> int:
    """``counter(text)``, checked: a token count is an int >= 0."""
    tokens = counter(text)
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise PlaceboragTypeError(
            f"counter({shown(text)}) returned {shown(tokens)}; expected an int >= 0"
        )
    return tokens


def _checked_turns(turns: object, name: str) -> list[Turn]:
    """The turns of a history: a list of ``Turn`` (one str or a non-iterable is refused)."""
    if isinstance(turns, (str, bytes, Mapping)) or not isinstance(turns, Iterable):
        raise PlaceboragTypeError(
            f"{name}={shown(turns)} must be a Conversation or a list of Turn"
            if name == "history"
            else f"{name}={shown(turns)} must be a list of Turn"
        )
    out = list(turns)
    for position, turn in enumerate(out):
        if not isinstance(turn, Turn):
            raise PlaceboragTypeError(
                f"{name}[{position}]={shown(turn)} must be a Turn (conversation(...) builds"
                " turns from text)"
            )
    return out


class Conversation:
    """A thread of turns owned by one user. ``add`` appends; the turns read oldest first."""

    def __init__(
        self, *, id: str, owner: str, turns: Iterable[Turn] = (), counter: Counter | None = None
    ) -> None:
        if not isinstance(id, str) or not id:
            raise PlaceboragTypeError(f"id={shown(id)} must be a non-empty str")
        if not isinstance(owner, str) or not owner:
            raise PlaceboragTypeError(f"owner={shown(owner)} must be a non-empty str")
        self._id = id
        self._owner = owner
        self._counter = _checked_counter(counter)
        self._turns = _checked_turns(turns, "turns")

    @property
    def id(self) -> str:
        return self._id

    @property
    def owner(self) -> str:
        return self._owner

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(self._turns)

    @property
    def tokens(self) -> int:
        """The token count of the whole history."""
        return sum(turn.tokens for turn in self._turns)

    def add(self, role: str, content: str) -> Turn:
        """Append a turn (role ``user`` or ``assistant``) and return it."""
        turn = _turn(role, content, self._counter, len(self._turns))
        self._turns.append(turn)
        return turn

    def messages(self) -> list[ChatMessage]:
        """The turns as chat messages, oldest first."""
        return [turn.as_message() for turn in self._turns]

    def __len__(self) -> int:
        return len(self._turns)

    def __repr__(self) -> str:
        return f"<Conversation id={self._id!r} owner={self._owner!r} turns={len(self._turns)}>"


def conversation(
    *utterances: str | tuple[str, str],
    owner: str = "alice",
    id: str = "conv-1",
    counter: Counter | None = None,
) -> Conversation:
    """A conversation from its utterances, oldest first.

    Plain strings alternate user, assistant, user, ...; a ``(role, text)`` pair sets the role
    and the alternation continues after it.
    """
    counting = _checked_counter(counter)
    turns = []
    role = "user"
    for position, item in enumerate(utterances):
        if isinstance(item, tuple) and len(item) == 2:
            role, text = item
        else:
            text = item
        turns.append(_turn(role, text, counting, position))
        role = "assistant" if role == "user" else "user"
    return Conversation(id=id, owner=owner, turns=turns, counter=counting)


@dataclass(frozen=True)
class Session:
    """A signed-in user: the identity a query engine passes on, and nothing a model can change."""

    id: str
    owner: str
    identity: dict[str, Any]


def _checked_session(session: object) -> Session:
    if not isinstance(session, Session):
        raise PlaceboragTypeError(
            f"session={shown(session)} must be a Session, from Sessions.open(owner)"
        )
    return session


class Sessions(FreshLocks):
    """Sessions and conversations with deterministic ids, and ownership checks.

    ``open(owner, **identity)`` gives ``Session("session-1", owner, {"user": owner, ...})``;
    ``start(session)`` a new ``Conversation`` ``conv-1``, ``conv-2``, ...; ``find(session,
    id)`` returns a conversation only to its owner (``None`` otherwise, as for an unknown id).
    """

    def __init__(self, *, counter: Counter | None = None) -> None:
        self._counter = _checked_counter(counter)
        self._sessions = 0
        self._conversations: dict[str, Conversation] = {}
        self._lock = threading.Lock()

    def open(self, owner: str, **identity: Any) -> Session:
        """A new session for ``owner``; ``identity`` adds to ``{"user": owner}``.

        A ``user=`` that names someone else is refused: the session's identity is its owner's.
        """
        if not isinstance(owner, str) or not owner:
            raise PlaceboragTypeError(f"owner={shown(owner)} must be a non-empty str")
        if "user" in identity and identity["user"] != owner:
            raise PlaceboragValueError(
                f"user={shown(identity['user'])} contradicts owner={shown(owner)}; a session's"
                " identity names its owner as the user (leave user= out)"
            )
        with self._lock:
            self._sessions += 1
            number = self._sessions
        return Session(f"session-{number}", owner, {"user": owner, **identity})

    def start(self, session: Session, *utterances: str | tuple[str, str]) -> Conversation:
        """A new conversation owned by ``session``'s owner, from ``utterances``.

        The turns are counted before the lock is taken, so a ``counter`` that calls back into
        these sessions (to open a session, start or find a conversation) cannot deadlock; the
        id is given under the lock, in the order the conversations are stored.
        """
        _checked_session(session)
        counted = conversation(*utterances, owner=session.owner, counter=self._counter)
        with self._lock:
            id = f"conv-{len(self._conversations) + 1}"
            thread = Conversation(
                id=id, owner=session.owner, turns=counted.turns, counter=self._counter
            )
            self._conversations[id] = thread
        return thread

    def find(self, session: Session, id: str) -> Conversation | None:
        """The conversation ``id`` if ``session``'s owner owns it, else ``None``."""
        _checked_session(session)
        if not isinstance(id, str):
            raise PlaceboragTypeError(f"id={shown(id)} must be a str")
        with self._lock:
            thread = self._conversations.get(id)
        if thread is None or thread.owner != session.owner:
            return None
        return thread

    @property
    def conversations(self) -> tuple[Conversation, ...]:
        with self._lock:
            return tuple(self._conversations.values())


# -- the window budget --------------------------------------------------------------------------


@dataclass(frozen=True)
class Packing:
    """What one model call holds, and what was left out, with every count in tokens."""

    history: tuple[Turn, ...]
    dropped_history: tuple[Turn, ...]
    utterance: str
    utterance_tokens: int
    fragments: tuple[Any, ...]
    cut_fragments: tuple[Any, ...]
    history_tokens: int
    fragment_tokens: int
    reserve: int
    window: int

    @property
    def used(self) -> int:
        """Tokens taken by the prompt: history, utterance and fragments."""
        return self.history_tokens + self.utterance_tokens + self.fragment_tokens

    @property
    def free(self) -> int:
        """Tokens of the window neither used nor reserved."""
        return self.window - self.reserve - self.used


def _text_of(fragment: object, position: int) -> str:
    if isinstance(fragment, str):
        return fragment
    text = getattr(fragment, "text", None)
    if not isinstance(text, str):
        raise PlaceboragTypeError(
            f"fragments[{position}]={shown(fragment)} must be a str or have a str .text"
        )
    return text


class WindowBudget:
    """One model window shared by history, utterance, retrieved context and the answer reserve.

    ``window`` is the model's context size and ``answer_reserve`` the tokens kept for the
    answer; ``history_limit`` (optional) caps the history so retrieved context keeps room.
    """

    def __init__(
        self,
        *,
        window: int,
        answer_reserve: int,
        history_limit: int | None = None,
        counter: Counter | None = None,
    ) -> None:
        for name, value in (("window", window), ("answer_reserve", answer_reserve)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise PlaceboragTypeError(f"{name}={shown(value)} must be an int")
        if window < 1:
            raise PlaceboragValueError(f"window={shown(window)} must be >= 1")
        if not 0 <= answer_reserve < window:
            raise PlaceboragValueError(
                f"answer_reserve={shown(answer_reserve)} must be >= 0 and < window={window}"
            )
        if history_limit is not None and (
            isinstance(history_limit, bool)
            or not isinstance(history_limit, int)
            or history_limit < 0
        ):
            raise PlaceboragValueError(
                f"history_limit={shown(history_limit)} must be None or an int >= 0"
            )
        self._window = window
        self._reserve = answer_reserve
        self._history_limit = history_limit
        self._counter = _checked_counter(counter)

    @property
    def window(self) -> int:
        return self._window

    @property
    def answer_reserve(self) -> int:
        return self._reserve

    def pack(
        self,
        history: Conversation | Iterable[Turn],
        utterance: str,
        fragments: Iterable[Any] = (),
    ) -> Packing:
        """Split the window (see the module docstring for the order of the rules).

        ``history`` is a ``Conversation`` or a list of ``Turn``; ``fragments`` a list (any
        iterable, never one str) of str or of objects with a str ``.text``. Every count the
        counter gives must be an int >= 0.
        """
        if isinstance(history, Conversation):
            turns = list(history.turns)
        else:
            turns = _checked_turns(history, "history")
        if not isinstance(utterance, str):
            raise PlaceboragTypeError(f"utterance={shown(utterance)} must be a str")
        if isinstance(fragments, (str, bytes, Mapping)) or not isinstance(fragments, Iterable):
            raise PlaceboragTypeError(
                f"fragments={shown(fragments)} must be a list of fragments (str, or objects"
                " with a str .text), not one value"
            )
        fragments = list(fragments)
        texts = [_text_of(f, i) for i, f in enumerate(fragments)]
        sizes = [_counted(self._counter, text) for text in texts]
        spoken = _counted(self._counter, utterance)
        room = self._window - self._reserve - spoken
        if room < 0:
            raise BudgetExceeded(
                f"the utterance takes {spoken} tokens and the answer reserve {self._reserve};"
                f" together they exceed window={self._window}, and the utterance is never cut"
            )
        history_room = room if self._history_limit is None else min(room, self._history_limit)
        kept: list[Turn] = []
        used = 0
        for turn in reversed(turns):
            if used + turn.tokens > history_room:
                break
            kept.append(turn)
            used += turn.tokens
        kept.reverse()
        dropped = turns[: len(turns) - len(kept)]
        remainder = room - used
        packed: list[Any] = []
        fragment_tokens = 0
        for fragment, size in zip(fragments, sizes):
            if fragment_tokens + size > remainder:
                break
            packed.append(fragment)
            fragment_tokens += size
        return Packing(
            history=tuple(kept),
            dropped_history=tuple(dropped),
            utterance=utterance,
            utterance_tokens=spoken,
            fragments=tuple(packed),
            cut_fragments=tuple(fragments[len(packed) :]),
            history_tokens=used,
            fragment_tokens=fragment_tokens,
            reserve=self._reserve,
            window=self._window,
        )

    def __repr__(self) -> str:
        return (
            f"WindowBudget(window={self._window}, answer_reserve={self._reserve},"
            f" history_limit={self._history_limit})"
        )
