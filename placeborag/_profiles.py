"""Backend profiles: how a fake store reports scores, breaks ties and sizes its answers.

A profile never changes *which* documents are relevant or their relevance order (that is the
cosine ranking, decided in exact arithmetic by the store); it decides the number reported for
each match, its direction, the order of exact ties and the default ``k``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError

__all__ = ["PROFILES", "Profile", "get_profile"]

TIE_ORDERS = ("insertion", "id")


@dataclass(frozen=True)
class Profile:
    """How one backend reports a query's matches.

    ``score`` maps the exact cosine of a match to the number the backend reports;
    ``higher_is_better`` says which way that number points; ``tie_order`` orders matches
    whose cosines are equal in exact arithmetic: ``"insertion"`` (first written first) or
    ``"id"`` (ascending id).
    """

    name: str
    higher_is_better: bool
    tie_order: str
    default_k: int
    score_label: str
    score: Callable[[float], float] = field(repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.tie_order not in TIE_ORDERS:
            raise PlaceboragValueError(
                f"tie_order={self.tie_order!r} must be one of {', '.join(map(repr, TIE_ORDERS))}"
            )


PROFILES: dict[str, Profile] = {
    "chroma": Profile(
        name="chroma",
        higher_is_better=False,
        tie_order="insertion",
        default_k=10,
        score_label="cosine distance (1 - cos), lower is better",
        score=lambda cos: 1.0 - cos,
    ),
    "qdrant": Profile(
        name="qdrant",
        higher_is_better=True,
        tie_order="id",
        default_k=10,
        score_label="cosine similarity, higher is better",
        score=lambda cos: cos,
    ),
}


def get_profile(profile: str | Profile) -> Profile:
    """A profile by name (or the profile itself)."""
    if isinstance(profile, Profile):
        return profile
    if not isinstance(profile, str):
        raise PlaceboragTypeError(
            f"profile={profile!r} must be a profile name or a Profile, not {type(profile).__name__}"
        )
    try:
        return PROFILES[profile]
    except KeyError:
        known = ", ".join(repr(name) for name in PROFILES)
        raise PlaceboragValueError(f"profile={profile!r} must be one of {known}") from None
