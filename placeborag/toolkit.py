"""placeborag.toolkit: what a layer of your own (an adapter, a front end) builds on.

A layer of placeborag's own (the explorer, the framework adapters) imports the core's private
modules, as the core's modules import each other; this namespace is the part of that which a
third-party layer needs too, documented and tested like the rest:

* checks that raise placeborag's errors with its messages (``name=value must be ...``, raised
  before any state changes): ``check_str``, ``check_int``, ``check_real``, ``check_bool``,
  ``check_choice``, ``check_mapping``, ``check_path``, ``check_texts``, ``check_vector``,
  ``check_unicode``, ``check_unicode_tree``, ``checked_model``, ``check_k`` (the one rule for
  a result count), ``check_id``, ``check_metadata`` and ``check_metadatas`` (what a record may
  hold); ``shown`` is the one way a value appears in such a message;
* writing files users keep: ``write_text`` (atomic: the old file or the new one, never half)
  and ``replace_directory`` (a folder swapped in whole);
* the filter language as a store applies it: ``compile_filter``, ``FilterRules``,
  ``filter_rules`` and ``STRICT``;
* the names of the stages a query trace reports (``RETURNED`` ... ``UNREACHABLE``, in the order
  of ``placeborag.STAGES``).

Every name is loaded on first use. The names that left (``record_index``, ``splitmix64``,
``beside``, ``FreshLocks``, ``gc_paused``, ``nearest``, ``did_you_mean``, ``dump_json``,
``load_json``, ``json_text``, ``read_regular``) still resolve, with a ``DeprecationWarning``
saying what to use instead (docs/migrating.md lists them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from placeborag._lazy import lazy_namespace

_LAZY = {
    "shown": "placeborag._validation",
    "check_bool": "placeborag._validation",
    "check_choice": "placeborag._validation",
    "check_int": "placeborag._validation",
    "check_mapping": "placeborag._validation",
    "check_path": "placeborag._validation",
    "check_real": "placeborag._validation",
    "check_str": "placeborag._validation",
    "check_texts": "placeborag._validation",
    "check_unicode": "placeborag._validation",
    "check_unicode_tree": "placeborag._validation",
    "check_vector": "placeborag._validation",
    "check_k": "placeborag._validation",
    "check_id": "placeborag._metadata",
    "check_metadatas": "placeborag._metadata",
    "check_metadata": "placeborag._metadata",
    "checked_model": "placeborag._chat",
    "write_text": "placeborag._files",
    "replace_directory": "placeborag._files",
    "compile_filter": "placeborag._filters",
    "FilterRules": "placeborag._filters",
    "filter_rules": "placeborag._filters",
    "STRICT": "placeborag._filters",
    "RETURNED": "placeborag._trace",
    "DROPPED": "placeborag._trace",
    "TIED": "placeborag._trace",
    "BELOW": "placeborag._trace",
    "LOST": "placeborag._trace",
    "FILTERED": "placeborag._trace",
    "UNREACHABLE": "placeborag._trace",
}

__all__ = sorted(_LAZY)

# Names that left: each still resolves, with a DeprecationWarning saying what to use instead.
_PRIVATE = "it is private now"
_DEPRECATED = {
    "record_index": (
        "placeborag._trace",
        "use records.position(id, occurrence=n) or trace.position(id, occurrence=n) "
        "(placeborag.StoreRecords, placeborag.QueryTrace)",
    ),
    "splitmix64": (
        "placeborag._hashing",
        f"{_PRIVATE}; derive your own seeded values from hashlib",
    ),
    "beside": ("placeborag._threads", f"{_PRIVATE}; use concurrent.futures.ThreadPoolExecutor"),
    "FreshLocks": (
        "placeborag._threads",
        f"{_PRIVATE}; give your class __getstate__ and __setstate__ that make new locks",
    ),
    "gc_paused": (
        "placeborag._threads",
        f"{_PRIVATE}; call gc.disable() and gc.enable() around your batch",
    ),
    "nearest": (
        "placeborag._validation",
        f"{_PRIVATE}; use difflib.get_close_matches, or check_choice, whose message names "
        "the nearest choices",
    ),
    "did_you_mean": (
        "placeborag._validation",
        f"{_PRIVATE}; use check_choice, whose message names the nearest choices",
    ),
    "dump_json": (
        "placeborag._validation",
        f"{_PRIVATE}; use json.dumps with a default= for the values json cannot write",
    ),
    "load_json": ("placeborag._validation", f"{_PRIVATE}; use json.loads"),
    "json_text": ("placeborag._validation", f"{_PRIVATE}; use json.dumps, or shown for a message"),
    "read_regular": (
        "placeborag._files",
        f"{_PRIVATE}; check the file with os.stat before you read it",
    ),
}

__getattr__, __dir__ = lazy_namespace(globals(), _LAZY, deprecated=_DEPRECATED)

if TYPE_CHECKING:  # pragma: no cover
    # `name as name` marks a re-export for type checkers (mypy --strict, pyright).
    from placeborag._chat import checked_model as checked_model
    from placeborag._files import replace_directory as replace_directory
    from placeborag._files import write_text as write_text
    from placeborag._filters import STRICT as STRICT
    from placeborag._filters import FilterRules as FilterRules
    from placeborag._filters import compile_filter as compile_filter
    from placeborag._filters import filter_rules as filter_rules
    from placeborag._metadata import check_id as check_id
    from placeborag._metadata import check_metadata as check_metadata
    from placeborag._metadata import check_metadatas as check_metadatas
    from placeborag._trace import BELOW as BELOW
    from placeborag._trace import DROPPED as DROPPED
    from placeborag._trace import FILTERED as FILTERED
    from placeborag._trace import LOST as LOST
    from placeborag._trace import RETURNED as RETURNED
    from placeborag._trace import TIED as TIED
    from placeborag._trace import UNREACHABLE as UNREACHABLE
    from placeborag._validation import check_bool as check_bool
    from placeborag._validation import check_choice as check_choice
    from placeborag._validation import check_int as check_int
    from placeborag._validation import check_k as check_k
    from placeborag._validation import check_mapping as check_mapping
    from placeborag._validation import check_path as check_path
    from placeborag._validation import check_real as check_real
    from placeborag._validation import check_str as check_str
    from placeborag._validation import check_texts as check_texts
    from placeborag._validation import check_unicode as check_unicode
    from placeborag._validation import check_unicode_tree as check_unicode_tree
    from placeborag._validation import check_vector as check_vector
    from placeborag._validation import shown as shown


if TYPE_CHECKING:  # pragma: no cover
    # The names that left (_DEPRECATED), visible to type checkers until they are removed.
    from placeborag._files import read_regular as read_regular
    from placeborag._hashing import splitmix64 as splitmix64
    from placeborag._threads import FreshLocks as FreshLocks
    from placeborag._threads import beside as beside
    from placeborag._threads import gc_paused as gc_paused
    from placeborag._trace import record_index as record_index
    from placeborag._validation import did_you_mean as did_you_mean
    from placeborag._validation import dump_json as dump_json
    from placeborag._validation import json_text as json_text
    from placeborag._validation import load_json as load_json
    from placeborag._validation import nearest as nearest
