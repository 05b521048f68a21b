"""placeborag.toolkit: what the explorer and the framework adapters build on, for your own layer.

``placeborag.explore`` and ``placeborag.integrations`` use the core through public names only;
the ones a layer needs beyond the doubles are here, documented and tested like the rest:

* checks that raise placeborag's errors with its messages (``name=value must be ...``, raised
  before any state changes): ``check_str``, ``check_int``, ``check_real``, ``check_bool``,
  ``check_choice``, ``check_mapping``, ``check_path``, ``check_texts``, ``check_vector``,
  ``check_unicode``, ``check_unicode_tree``, ``checked_model``, ``check_k`` (the one rule for
  a result count), ``check_id`` and ``check_metadatas`` (what a record may hold); ``shown`` is
  the one way a value appears in a message, and ``nearest``/``did_you_mean`` the one "did
  you mean" rule;
* writing files users keep: ``write_text`` (atomic: the old file or the new one, never half),
  ``replace_directory`` (a folder swapped in whole)
  and ``dump_json`` (numpy scalars as numbers, refused before anything is written; with
  ``tagged=True`` a datetime or date as a tagged object), ``load_json`` reading those back,
  ``json_text`` (one line for a person), ``read_regular`` (a regular file under a size limit,
  never blocking on a FIFO); ``check_metadata`` for one record's metadata;
* the filter language as a store applies it: ``compile_filter``, ``FilterRules``,
  ``filter_rules`` and ``STRICT``;
* the names of the stages a query trace reports (``RETURNED`` ... ``UNREACHABLE``, in the order
  of ``placeborag.STAGES``), and ``record_index``: which row of a records view or trace is an
  id's record number ``occurrence`` (ids repeat under ``on_existing_id="duplicate"``);
* deterministic helpers: ``splitmix64`` (the hash mixer behind every seeded choice) and
  ``beside`` (two tasks on two threads, one after the other where threads cannot start);
* ``gc_paused``: the garbage collector held off while a large batch is built (nests across
  threads, restores the caller's setting);
* ``FreshLocks``: a mixin whose copies (``copy.deepcopy``, pickle) get new locks, so a double
  of your own survives the copies frameworks make.

Every name is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from placeborag._lazy import lazy_namespace

_LAZY = {
    "shown": "placeborag._validation",
    "nearest": "placeborag._validation",
    "did_you_mean": "placeborag._validation",
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
    "dump_json": "placeborag._validation",
    "load_json": "placeborag._validation",
    "json_text": "placeborag._validation",
    "read_regular": "placeborag._files",
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
    "record_index": "placeborag._trace",
    "splitmix64": "placeborag._hashing",
    "beside": "placeborag._threads",
    "FreshLocks": "placeborag._threads",
    "gc_paused": "placeborag._threads",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_namespace(globals(), _LAZY)

if TYPE_CHECKING:  # pragma: no cover
    # `name as name` marks a re-export for type checkers (mypy --strict, pyright).
    from placeborag._chat import checked_model as checked_model
    from placeborag._files import read_regular as read_regular
    from placeborag._files import replace_directory as replace_directory
    from placeborag._files import write_text as write_text
    from placeborag._filters import STRICT as STRICT
    from placeborag._filters import FilterRules as FilterRules
    from placeborag._filters import compile_filter as compile_filter
    from placeborag._filters import filter_rules as filter_rules
    from placeborag._hashing import splitmix64 as splitmix64
    from placeborag._metadata import check_id as check_id
    from placeborag._metadata import check_metadata as check_metadata
    from placeborag._metadata import check_metadatas as check_metadatas
    from placeborag._threads import FreshLocks as FreshLocks
    from placeborag._threads import beside as beside
    from placeborag._threads import gc_paused as gc_paused
    from placeborag._trace import BELOW as BELOW
    from placeborag._trace import DROPPED as DROPPED
    from placeborag._trace import FILTERED as FILTERED
    from placeborag._trace import LOST as LOST
    from placeborag._trace import RETURNED as RETURNED
    from placeborag._trace import TIED as TIED
    from placeborag._trace import UNREACHABLE as UNREACHABLE
    from placeborag._trace import record_index as record_index
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
    from placeborag._validation import did_you_mean as did_you_mean
    from placeborag._validation import dump_json as dump_json
    from placeborag._validation import json_text as json_text
    from placeborag._validation import load_json as load_json
    from placeborag._validation import nearest as nearest
    from placeborag._validation import shown as shown
