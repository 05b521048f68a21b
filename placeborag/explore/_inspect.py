"""What the inspect panel says about one document of the views on screen: where the query left
it and why (its stage, rank, place at the cut, the trace's sentence, its tie group) and its
nearest documents, as data (:func:`explain_row`) and as escaped HTML (:func:`inspect_html`)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import numpy as np

from placeborag.explore._figures import RankingDisplay

if TYPE_CHECKING:
    from placeborag.explore._state import Views

__all__ = ["NEIGHBOURS", "explain_row", "inspect_html"]

NEIGHBOURS = 5  # nearest documents shown for an inspected one


def explain_row(views: Views, i: int) -> dict[str, Any]:
    """Where the query of ``views`` left the document of row ``i``, and why."""
    t = views.trace
    doc_id, occurrence = views.rows.ids[i], int(views.rows.occurrence[i])
    stage = str(t.stage[i])
    cut = RankingDisplay(views.projection).cut
    why = t.why(doc_id, occurrence=occurrence)
    tie = next((g for g in t.ties if doc_id in g.ids), None)
    vectors = views.rows.vectors
    v = vectors[i].astype(np.float64)
    norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(v) or 1.0)
    cos = (vectors @ v.astype(vectors.dtype)) / np.where(norms > 0, norms, 1.0)
    cos[i] = -np.inf
    m = min(NEIGHBOURS, len(cos) - 1)
    near = np.argpartition(-cos, m)[:m] if m > 0 else np.zeros(0, dtype=np.int64)
    near = near[np.lexsort((near, -cos[near]))]  # best first; equal cosines by row
    return {
        "id": doc_id,
        "occurrence": occurrence,
        "records": views.rows.ids.count(doc_id) if views.rows.duplicated else 1,
        "text": views.rows.texts[i],
        "metadata": dict(views.rows.metadatas[i]),
        "stage": stage,
        "rank": int(t.rank[i]) or None,
        "cut_rank": int(t.cut_rank[i]) or None,
        "score": float(t.score[i]),
        "cut_score": cut,
        "why": why,
        "tie": None
        if tie is None
        else {"ids": list(tie.ids), "kept": list(tie.kept), "rule": tie.rule},
        "neighbours": [
            {
                "id": views.rows.ids[j],
                "occurrence": int(views.rows.occurrence[j]),
                "cosine": float(cos[j]),
                "stage": str(t.stage[j]),
                "rank": int(t.rank[j]) or None,
            }
            for j in near.tolist()
        ],
    }


def inspect_html(info: dict[str, Any]) -> str:
    """:func:`explain_row`'s answer as the inspect panel's HTML, every user string escaped."""
    e = html.escape
    meta = ", ".join(f"{e(str(k))}={e(str(v))}" for k, v in info["metadata"].items())
    tie = ""
    if info["tie"] is not None:
        tie = (
            f"<br>tie group: {', '.join(e(x) for x in info['tie']['ids'])}; kept "
            f"{', '.join(e(x) for x in info['tie']['kept']) or 'none'} by "
            f"{e(info['tie']['rule'])} order"
        )
    near = "".join(
        f"<li>{e(n['id'])} <small>(cosine {n['cosine']:.4f}, {e(n['stage'])}"
        f"{', rank ' + str(n['rank']) if n['rank'] else ''})</small></li>"
        for n in info["neighbours"]
    )
    record = ""
    if info["records"] > 1:
        record = f" (record {info['occurrence'] + 1} of {info['records']} under this id)"
    return (
        f"<div><b>{e(info['id'])}</b>{record}: {e(info['text'])}<br><small>{meta}</small><br>"
        f"<b>{e(info['stage'])}</b> (score {info['score']:.6f}): {e(info['why'])}{tie}"
        f"<br>nearest documents:<ol>{near}</ol></div>"
    )
