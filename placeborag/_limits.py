"""The limits on what one call may ask for, public so that layers check the same bounds."""

from __future__ import annotations

__all__ = ["MAX_DIMENSIONS", "MAX_K"]

MAX_K = 1_000_000
"""The largest ``k`` a query may ask for (engines cap the results of one query, and a
FAISS-style profile would build that many padding matches)."""

MAX_DIMENSIONS = 65_536
"""The most dimensions a ``FakeEmbedder`` may have (``dimensions`` runs from 2 to this)."""
