"""The options of the doubles, listed once.

:class:`StoreOptions` is every option a :class:`~placeborag.FakeVectorStore` is built with: the
store, ``with_options``, the pytest marker, the explorer's scenarios, its export and its
controls all read the names and defaults from it. This module imports nothing heavy, so the
plugin (loaded in every pytest run of every project that installs placeborag) stays light; the
values are checked when a store is built from them (:mod:`placeborag._pipeline`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["EMBEDDER_OPTIONS", "STORE_OPTIONS", "StoreOptions"]

EMBEDDER_OPTIONS = ("model_name", "dimensions", "clusters", "cluster_spread", "cluster_match")


@dataclass(frozen=True, eq=False)
class StoreOptions(Mapping[str, Any]):
    """The options a store was built with, as given (``None``: the profile's own).

    A read-only mapping as well as an object: ``options.recall``, ``options["recall"]`` and
    ``FakeVectorStore(**options)`` all work, and it equals a dict of the same items.
    :meth:`replace` makes a copy with some options changed and refuses an unknown name.
    """

    profile: Any = "chroma"  # a profile name or a Profile
    filter_mode: str | None = None
    recall: float = 1.0
    visibility: str = "immediate"
    metric: str | None = None
    tie_order: str | None = None
    seed: int | None = None
    on_existing_id: str | None = None
    pad_missing: bool | None = None
    filter_semantics: str = "strict"
    orphans: float = 0.0
    churn: float = 0.0
    query_log: int | None = 1000  # the most recent queries store.queries keeps (None: all)

    @classmethod
    def checked_names(cls, names: Any, what: str = "store option") -> None:
        """Refuse any name that is not an option, naming the nearest one."""
        unknown = sorted(set(names) - set(STORE_OPTIONS))
        if unknown:
            from placeborag._errors import PlaceboragTypeError
            from placeborag._validation import did_you_mean, shown

            raise PlaceboragTypeError(
                f"unknown {what} {shown(unknown[0])}{did_you_mean(unknown[0], STORE_OPTIONS)}; "
                f"expected some of {', '.join(STORE_OPTIONS)}"
            )

    def replace(self, **changes: Any) -> StoreOptions:
        """A copy with ``changes`` applied (unknown names refused)."""
        self.checked_names(changes)
        return dataclasses.replace(self, **changes)

    # -- the mapping ---------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Any:
        if name not in STORE_OPTIONS:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(STORE_OPTIONS)

    def __len__(self) -> int:
        return len(STORE_OPTIONS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to dicts, which are not hashable

    def __repr__(self) -> str:
        return f"StoreOptions({', '.join(f'{k}={v!r}' for k, v in self.items())})"


#: The names of every store option, in the constructor's order.
STORE_OPTIONS = tuple(f.name for f in fields(StoreOptions))
