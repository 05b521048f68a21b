"""The option names of the doubles, listed once.

The pytest plugin routes ``@pytest.mark.placeborag`` options with these lists, and the explorer's
scenarios name their embedder fields with them. This module imports nothing, so the plugin
(loaded in every pytest run of every project that installs placeborag) stays light.
"""

from __future__ import annotations

__all__ = ["EMBEDDER_OPTIONS", "STORE_OPTIONS"]

EMBEDDER_OPTIONS = ("model_name", "dimensions", "clusters", "cluster_spread", "cluster_match")
STORE_OPTIONS = (
    "profile",
    "filter_mode",
    "recall",
    "visibility",
    "metric",
    "tie_order",
    "seed",
    "on_existing_id",
    "pad_missing",
    "filter_semantics",
    "orphans",
    "churn",
)
