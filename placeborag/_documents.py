"""A record's document as the application wrote it, beside what an adapter embedded.

A record of a :class:`~placeborag.FakeVectorStore` holds the text its vector was made from.
Through LangChain and Haystack that is the document's own text (``page_content``,
``content``); through LlamaIndex it is what LlamaIndex embeds, the node's text under its
metadata header (``"file_name: shipping.txt\\n\\nParcels ship ..."``), and the node itself is
kept in the record's metadata under keys of the adapter's own. :func:`document_text` and
:func:`document_metadata` read the document back from any record; they import no framework,
so the explorer uses them on any store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "NODE_CONTENT",
    "NODE_TYPE",
    "REF_DOC_ID",
    "RESERVED",
    "document_metadata",
    "document_text",
]

# Keys the LlamaIndex adapter adds to each record's metadata, beside the node's own: the
# serialised node, its class, and its source document (under a key of the adapter's own, so a
# user's "ref_doc_id" metadata stays as the user wrote it).
NODE_CONTENT = "_node_content"
NODE_TYPE = "_node_type"
REF_DOC_ID = "_ref_doc_id"
# Where an adapter marks a record written with a zero embedding (integrations/_shared.py).
ZERO_VECTOR = "_placeborag_zero_vector"
RESERVED = (NODE_CONTENT, NODE_TYPE, REF_DOC_ID, ZERO_VECTOR)


def document_text(text: str, metadata: Mapping[str, Any]) -> str:
    """The document's own text of a record whose stored (embedded) text is ``text``.

    A record written by ``PlaceboLlamaVectorStore`` gives its node's text (LlamaIndex embeds
    the node's metadata header with it); any other record gives ``text``, which for the
    LangChain and Haystack adapters is the document's ``page_content`` / ``content``.
    """
    node = _node(metadata)
    if node is None:
        return text
    own = node.get("text")
    if not isinstance(own, str):
        resource = node.get("text_resource")
        own = resource.get("text") if isinstance(resource, Mapping) else None
    return own if isinstance(own, str) else text


def document_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A record's metadata without the keys an adapter keeps for itself (the node a
    ``PlaceboLlamaVectorStore`` record carries); any other record's metadata as it is."""
    if _node(metadata) is None:
        return dict(metadata)
    return {key: value for key, value in metadata.items() if key not in RESERVED}


def _node(metadata: Mapping[str, Any]) -> Mapping[str, Any] | None:
    raw = metadata.get(NODE_CONTENT)
    if not isinstance(raw, str) or not isinstance(metadata.get(NODE_TYPE), str):
        return None
    try:
        node = json.loads(raw)
    except ValueError:
        return None
    return node if isinstance(node, Mapping) else None
