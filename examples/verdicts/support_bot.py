"""A support bot small enough to read in one go: the application a verdict example audits.

It imports nothing from placeborag. It retrieves from any store with placeborag's query shape
(``query(text, k, where)`` returning matches with ``id``, ``text``, ``metadata``), or from a
LangChain-style retriever (``invoke(question)`` returning documents), and remembers answers in
a module-level cache, as real services often do.
"""

from __future__ import annotations

from typing import Any

NOT_FOUND = "Sorry, I could not find that in our help centre."
CACHE: dict[tuple[str, str], str] = {}

ARTICLES = [
    ("refund", "Refunds: our refund policy allows returns within 30 days.", "acme"),
    ("shipping", "Shipping: delivery to remote islands takes two weeks.", "acme"),
    ("warranty", "Warranty: the warranty covers water damage for a year.", "acme"),
    ("globex-refund", "Refunds at Globex: no refunds after 14 days.", "globex"),
]


def ingest(store: Any, articles: list[tuple[str, str, str]] = ARTICLES) -> None:
    """Index the help centre, one article per record, tagged with its tenant."""
    for article_id, text, tenant in articles:
        store.upsert(article_id, text, metadata={"tenant": tenant})


def answer(store: Any, question: str, tenant: str) -> str:
    """The best article of the caller's tenant for ``question``, cited by id."""
    key = (tenant, question)
    if key in CACHE:
        return CACHE[key]
    matches = store.query(question, k=2, where={"tenant": tenant})
    reply = f"[{matches[0].id}] {matches[0].text}" if matches else NOT_FOUND
    CACHE[key] = reply
    return reply


def answer_from(retriever: Any, question: str) -> str:
    """The same answer through a LangChain-style retriever."""
    documents = retriever.invoke(question)
    if not documents:
        return NOT_FOUND
    return f"[{documents[0].metadata['id']}] {documents[0].page_content}"
