"""The argument checks shared by the package, and the one way a value is shown in a message.

Every check raises a :class:`~placeborag._errors.PlaceboragError` subclass whose message names
the argument, shows the value as given and says what is allowed (``k=0 must be >= 1``), before
the caller changes any state. :func:`shown` is the repr used in those messages: it stays short
for a 10 MB text and works for an int too long for ``repr`` (Python refuses to print an int of
more than 4,300 digits).

It also holds the one JSON serialiser for user values (:func:`dump_json`, :func:`load_json`,
:func:`json_text`): a scenario file, an exported test and the explorer's tables write metadata
through it, so every metadata kind the store allows (``datetime`` and ``date`` included) is
written, shown and read back the same way everywhere.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import numbers
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from placeborag._errors import PlaceboragTypeError, PlaceboragValueError
from placeborag._limits import MAX_K

__all__ = [
    "DATETIME_TAG",
    "DATE_TAG",
    "MAX_K",
    "check_bool",
    "check_choice",
    "check_int",
    "check_k",
    "check_mapping",
    "check_path",
    "check_real",
    "check_str",
    "check_texts",
    "check_unicode",
    "check_unicode_tree",
    "check_vector",
    "did_you_mean",
    "dump_json",
    "json_text",
    "load_json",
    "nearest",
    "place_name",
    "real_array",
    "shown",
    "walk",
]

_SHOWN_LIMIT = 200


def shown(value: object, limit: int = _SHOWN_LIMIT) -> str:
    """``repr(value)`` for a message: at most about ``limit`` characters, never an error."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        digits = int(value.bit_length() * math.log10(2)) + 1
        sign = "-" if value < 0 else ""
        return f"{sign}<an int of about {digits} digits>"
    try:
        text = repr(value)
    except Exception as exc:  # a user's __repr__ may raise; the message must still be built
        text = f"<{type(value).__name__} whose repr raised {type(exc).__name__}>"
    if len(text) <= limit:
        return text
    keep = (limit - 5) // 2
    # Both ends: a stray character at the end is the usual reason an exact match fails.
    return f"{text[:keep]} ... {text[-keep:]}"


# "Did you mean": at most this many candidates are compared (difflib costs one ratio each), so
# a miss among a million ids answers at once; the first ones, in the order given, are kept.
NEAREST_SCANNED = 100_000


def nearest(
    value: object, candidates: Iterable[object], *, n: int = 3, cutoff: float = 0.6
) -> tuple[str, ...]:
    """The candidates closest to ``value``: the one "did you mean" rule of every message.

    Up to ``n`` of them, best first, among the first :data:`NEAREST_SCANNED` distinct
    candidates (each compared as its ``str``), by :func:`difflib.get_close_matches` ratio, which
    must reach ``cutoff`` (``0.0``: always the closest there are). Equal ratios are ordered by the
    text itself, so the answer is the same on every run.
    """
    import difflib  # loaded on a miss, not with the module

    scanned: dict[str, None] = {}  # distinct, in the order given; the scan stops at the cap
    for candidate in candidates:
        scanned.setdefault(str(candidate), None)
        if len(scanned) == NEAREST_SCANNED:
            break
    return tuple(difflib.get_close_matches(str(value), list(scanned), n=n, cutoff=cutoff))


def did_you_mean(value: object, candidates: Iterable[object], *, n: int = 3) -> str:
    """``"; did you mean 'a', 'b'?"`` for the :func:`nearest` candidates, or ``""`` for none:
    the tail of an "unknown id 'x'" message."""
    close = nearest(value, candidates, n=n)
    return f"; did you mean {', '.join(map(shown, close))}?" if close else ""


def check_str(value: object, name: str) -> str:
    """``value`` if it is a str, else ``name=value must be a str``."""
    if not isinstance(value, str):
        raise PlaceboragTypeError(f"{name}={shown(value)} must be a str")
    return value


def check_unicode(value: str, name: str) -> str:
    """``value`` if it can be written as UTF-8; a lone surrogate cannot, and is named here."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PlaceboragValueError(
            f"{name}={shown(value)} holds the lone surrogate {value[exc.start]!r} at index"
            f" {exc.start}; text must be valid Unicode (encodable as UTF-8)"
        ) from None
    return value


Place = tuple[Any, ...]  # (parent place, step): a path into a JSON value, built as it is walked


def walk(value: object) -> Iterator[tuple[Place | None, object, bool]]:
    """Every dict key (``True``) and every other value (``False``) inside ``value``, each with
    its place (see :func:`place_name`), in document order.  Iterative, and a place is spelled out
    only when a message needs it, so a value nested thousands deep costs no more than a flat one.
    A container met again (shared, or holding itself) is not walked twice: the walk ends, and
    the JSON writer names the circular reference.
    """
    stack: list[tuple[Place | None, object]] = [(None, value)]
    walked: set[int] = set()  # ids of containers, all alive in value while it is walked
    while stack:
        place, item = stack.pop()
        if isinstance(item, (Mapping, list, tuple)):
            if id(item) in walked:
                continue
            walked.add(id(item))
        if isinstance(item, Mapping):
            children: list[tuple[Place | None, object]] = []
            for key, child in item.items():
                yield place, key, True
                children.append(((place, key), child))
            stack.extend(reversed(children))
        elif isinstance(item, (list, tuple)):
            stack.extend(((place, i), child) for i, child in reversed(list(enumerate(item))))
        else:
            yield place, item, False


def place_name(name: str, place: Place | None) -> str:
    """``name`` followed by the subscripts of ``place``: ``document_metadata[0]['a'][2]``."""
    steps: list[object] = []
    while place is not None:
        place, step = place
        steps.append(step)
    steps.reverse()
    if not name and steps and isinstance(steps[0], str):  # a manifest's own key: documents[0]
        name = steps[0]
        del steps[0]
    subscripts = "".join(f"[{shown(step)}]" for step in steps)
    if len(subscripts) > 200:  # thousands deep: both ends, like shown()
        subscripts = f"{subscripts[:97]} ... {subscripts[-97:]}"
    return name + subscripts


def check_unicode_tree(value: object, name: str) -> None:
    """Every str in ``value`` (a str, or mappings, lists and tuples of them, keys included)
    can be written as UTF-8; a lone surrogate is refused, naming where it is
    (``where['lang']``, ``clusters['refund'][0]``, ``documents[4].metadata key``)."""
    for place, item, is_key in walk(value):
        if isinstance(item, str):
            at = place_name(name, place)
            check_unicode(item, f"{at} key" if is_key else at)


def check_texts(texts: object, name: str) -> list[str]:
    """A list of the str in ``texts``; a bare str or bytes is refused, not split into letters."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Iterable):
        raise PlaceboragTypeError(
            f"{name}={shown(texts)} must be a sequence of str, not a single value"
        )
    items = list(texts)
    if not set(map(type, items)) <= {str}:  # whole column at once; else find the first
        for i, text in enumerate(items):
            check_str(text, f"{name}[{i}]")
    return items


def check_real(
    value: object,
    name: str,
    allowed: str = "a finite real number",
    *,
    finite: bool = True,
) -> float:
    """``value`` as a float; a bool, a non-number, an int beyond float range, NaN or infinity
    (when ``finite``) is refused with ``name=value must be <allowed>``."""
    # bool is an int subclass; True as a number is a typo far more often than a wish for 1.0.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PlaceboragTypeError(f"{name}={shown(value)} must be {allowed}")
    try:
        number = float(value)
    except OverflowError:
        raise PlaceboragValueError(
            f"{name}={shown(value)} must be {allowed}; it is beyond the range of a float"
        ) from None
    if finite and not math.isfinite(number):
        raise PlaceboragValueError(f"{name}={shown(value)} must be {allowed}")
    return number


def check_int(value: object, name: str, *, minimum: int | None = None) -> int:
    """``value`` as an int (a numpy integer too; a bool is refused), at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise PlaceboragTypeError(f"{name}={shown(value)} must be an int{bound}")
    number = int(value)
    if minimum is not None and number < minimum:
        raise PlaceboragValueError(f"{name}={shown(value)} must be >= {minimum}")
    return number


def check_k(value: object, name: str = "k", *, minimum: int = 1) -> int:
    """A result count, by one rule on every surface that takes one.

    An int, a numpy integer included (``np.int64(2)`` from a DataFrame), never a bool; from
    ``minimum`` to :data:`MAX_K`. ``minimum`` is 1, or 0 where a framework's contract answers
    ``k=0`` with nothing (LangChain's ``k``, LlamaIndex's ``similarity_top_k``, Haystack's
    ``top_k``). ``k=0 must be >= 1``, ``k=True must be an int, not bool``.
    """
    if type(value) is int and minimum <= value <= MAX_K:  # the usual case, at once
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PlaceboragTypeError(
            f"{name}={shown(value)} must be an int, not {type(value).__name__}"
        )
    number = int(value)
    if number < minimum:
        raise PlaceboragValueError(f"{name}={shown(value)} must be >= {minimum}")
    if number > MAX_K:
        raise PlaceboragValueError(
            f"{name}={shown(value)} must be <= {MAX_K:,} (engines cap the results of one query; "
            "a FAISS-style profile would build that many padding matches)"
        )
    return number


def check_bool(value: object, name: str) -> bool:
    """``value`` if it is True or False (``1`` and ``"yes"`` are refused)."""
    if not isinstance(value, bool):
        raise PlaceboragTypeError(f"{name}={shown(value)} must be True or False")
    return value


def check_choice(value: object, name: str, allowed: Iterable[str]) -> str:
    """``value`` if it is one of the str in ``allowed``; the message lists them all."""
    choices = tuple(allowed)
    if not isinstance(value, str) or value not in choices:
        error = PlaceboragValueError if isinstance(value, str) else PlaceboragTypeError
        raise error(f"{name}={shown(value)} must be one of {', '.join(map(repr, choices))}")
    return value


def check_mapping(value: object, name: str) -> Mapping[Any, Any]:
    """``value`` if it is a mapping (a dict or any ``collections.abc.Mapping``)."""
    if not isinstance(value, Mapping):
        raise PlaceboragTypeError(f"{name}={shown(value)} must be a mapping")
    return value


def check_path(value: object, name: str, *, named: bool = False) -> Path:
    """``value`` as a Path; refused if it is not a str or os.PathLike, holds a NUL or a lone
    surrogate (no file system takes either), or, when ``named``, names no file (``''``, ``.``)."""
    if not isinstance(value, (str, os.PathLike)):
        raise PlaceboragTypeError(f"{name}={shown(value)} must be a path (a str or os.PathLike)")
    path = Path(value)
    try:
        encoded = os.fsencode(path)
    except UnicodeEncodeError as exc:
        raise PlaceboragValueError(
            f"{name}={shown(value)} holds {exc.object[exc.start]!r}, which cannot be part of a"
            " file name"
        ) from None
    if b"\0" in encoded:
        raise PlaceboragValueError(f"{name}={shown(value)} holds a NUL character")
    if named and path.name in ("", ".", ".."):
        raise PlaceboragValueError(f"{name}={shown(value)} must name a file or directory")
    return path


def real_array(row: object) -> Any:
    """``row`` as a float64 array when it holds only real numbers, else None.

    The rule of :func:`check_real`, for a whole row or vector: an int or a float
    (a numpy one too) is a number; a bool, a numeric str, a complex or a Decimal is not, though
    numpy would cast each of them to a float without a word (a complex loses its imaginary
    part).  Raises TypeError, ValueError or OverflowError where numpy cannot build the array.
    """
    import numpy as np  # loaded when a vector is checked, not with the module

    if isinstance(row, (list, tuple)):
        kinds = set(map(type, row))
        if kinds <= {float, int}:  # what most models return: one pass, as numpy alone would
            return np.asarray(row, dtype=np.float64)
        if kinds & {bool, np.bool_}:
            return None  # numpy would make [True, 0.5] a float row, and [True, 0] an int one
    array = np.asarray(row)
    if array.dtype.kind == "O":
        # Python ints beyond int64, Fractions, or a mix: decided value by value.
        if not all(
            isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
            for value in array.flat
        ):
            return None
    elif array.dtype.kind not in "iuf":
        return None  # b (bool), c (complex), U/S (str, bytes), M/m (dates), V
    return array.astype(np.float64)


def check_vector(value: object, name: str) -> Any:
    """``value`` as a one-dimensional float64 numpy array of finite numbers, at least one.

    The one check for a vector a user gives (a query vector, an argument of
    ``cosine_similarity``): a str, bytes or anything but a sequence or array is refused, and so
    is an entry that is not a real number (a bool, a numeric str such as ``"1"``, a complex
    number: numpy would quietly turn each into a float), a nested or ragged sequence, an int
    beyond float range, an empty vector and a non-finite entry.
    """
    import numpy as np  # loaded when a vector is checked, not with the module

    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise PlaceboragTypeError(
            f"{name}={shown(value)} must be a sequence of numbers, not {type(value).__name__}"
        )
    kind = value.dtype.kind if isinstance(value, np.ndarray) else None
    if kind is not None and kind not in "iufO":
        raise PlaceboragTypeError(
            f"{name} is an array of {np.asarray(value).dtype}; a vector must hold real numbers "
            "(int or float)"
        )
    # A numeric array, or plain floats and ints, need no loop.
    if kind not in ("i", "u", "f") and not set(map(type, value)) <= {float, int}:
        # What real_array refuses, named: the first nested, ragged or non-real entry.
        for i, item in enumerate(value):
            if isinstance(item, (Sequence, np.ndarray)) and not isinstance(item, (str, bytes)):
                try:  # a regular nesting has a shape to name
                    shape = np.asarray(value, dtype=np.float64).shape
                except (TypeError, ValueError, OverflowError):
                    raise PlaceboragValueError(
                        f"{name} must be a one-dimensional sequence of numbers, not nested or "
                        "ragged"
                    ) from None
                raise PlaceboragValueError(f"{name} must be one-dimensional, not of shape {shape}")
            if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Real):
                raise PlaceboragTypeError(
                    f"{name}[{i}]={shown(item)} must be a real number (int or float), "
                    f"not {type(item).__name__}"
                )
    try:
        array = real_array(value)
    except OverflowError:
        raise PlaceboragValueError(
            f"{name} holds a number too large for a float; all values must be finite floats"
        ) from None
    if array is None:  # an object array holding something else (a multi-dimensional one)
        raise PlaceboragTypeError(f"{name}={shown(value)} must hold real numbers (int or float)")
    if array.ndim != 1:
        raise PlaceboragValueError(f"{name} must be one-dimensional, not of shape {array.shape}")
    if array.size == 0:
        raise PlaceboragValueError(f"{name} is empty; a vector needs at least one value")
    if not np.isfinite(array).all():
        raise PlaceboragValueError(f"{name} holds a non-finite value; all values must be finite")
    return array


#: How a JSON document from placeborag holds what JSON has no type for: a one-key object whose
#: key starts with ``$``, which no metadata key may (so it cannot be a user's own dict).
DATETIME_TAG = "$datetime"
DATE_TAG = "$date"


def _plain(value: object) -> object:
    # numpy scalars (np.int64 from a DataFrame, np.float32 from a model) are JSON numbers to a
    # user; .item() gives the Python number. Checked by module name so numpy is not imported.
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        item = value.item()
        if isinstance(item, (bool, int, float, str)) or item is None:
            return item
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _tagged(value: object) -> object:
    """:func:`_plain`, and a datetime or date as its tagged ISO form (``tagged=True``)."""
    if isinstance(value, _dt.datetime):
        return {DATETIME_TAG: value.isoformat()}
    if isinstance(value, _dt.date):
        return {DATE_TAG: value.isoformat()}
    return _plain(value)


def _untagged(obj: dict[str, Any]) -> Any:
    """``object_hook`` of :func:`load_json`: a tagged object as the value it names."""
    if len(obj) == 1:
        key = next(iter(obj))
        if key in (DATETIME_TAG, DATE_TAG):
            kind = _dt.datetime if key == DATETIME_TAG else _dt.date
            text = obj[key]
            try:
                if not isinstance(text, str):
                    raise ValueError(text)
                return kind.fromisoformat(text)
            except ValueError:
                raise PlaceboragValueError(
                    f"{{{key!r}: {shown(text)}}} must hold an ISO {kind.__name__} as a str, as"
                    f" placeborag writes a {kind.__name__}"
                ) from None
    return obj


def load_json(text: str) -> Any:
    """``json.loads(text)`` reading back what :func:`dump_json` wrote with ``tagged=True``
    (a ``{"$datetime": ...}`` or ``{"$date": ...}`` object is that datetime or date)."""
    return json.loads(text, object_hook=_untagged)


def json_text(value: object, *, sort_keys: bool = False) -> str:
    """``value`` (metadata, a filter) as one line of JSON for a person to read, in the form a
    scenario file holds it: a datetime as ``{"$datetime": "2026-01-05T00:00:00"}``."""
    return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=_tagged)


def dump_json(value: object, what: str, *, tagged: bool = False, **options: Any) -> str:
    """``json.dumps(value)`` with numpy scalars as numbers, checked to encode as UTF-8.

    ``tagged=True`` also writes a ``datetime`` or ``date`` as ``{"$datetime": iso}`` or
    ``{"$date": iso}``, which :func:`load_json` reads back as the same value.

    A value JSON cannot hold (NaN, a set, a non-str key of a kind JSON refuses) raises
    ``PlaceboragTypeError``; a nesting deeper than the interpreter allows or a lone surrogate
    raises ``PlaceboragValueError``. Each message starts with ``what`` and is raised before
    anything is written.
    """
    options.setdefault("allow_nan", False)
    try:
        text = json.dumps(value, default=_tagged if tagged else _plain, **options)
        text.encode("utf-8")
    except RecursionError:
        raise PlaceboragValueError(f"{what} is nested too deeply to be written as JSON") from None
    except UnicodeEncodeError as exc:
        raise PlaceboragValueError(
            f"{what} holds the lone surrogate {exc.object[exc.start]!r}; text must be valid"
            " Unicode (encodable as UTF-8)"
        ) from None
    except (TypeError, ValueError) as exc:
        raise PlaceboragTypeError(
            f"{what} must be JSON values (str, int, finite float, bool, None, list,"
            f" dict with str keys): {exc}"
        ) from None
    return text


# -- names, columns, shares, k ---------------------------------------------------------------


def unknown_id(value: object, known: Iterable[str]) -> PlaceboragValueError:
    """The error for an id a store does not hold, naming the nearest stored ids."""
    return PlaceboragValueError(f"unknown id {shown(value)}{did_you_mean(value, known)}")


def check_column(values: object, name: str) -> list[Any]:
    """``values`` as a list: a str or bytes is refused (not split), and so is a non-iterable."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise PlaceboragTypeError(
            f"{name}={shown(values)} must be a list, not {type(values).__name__}"
        )
    return list(values)


def check_share(value: object, name: str) -> Any:
    """A share between 0 and 1 as the user wrote it, a :class:`~fractions.Fraction` (0.7 is
    7/10 and 1/3 is 1/3: see :func:`as_written`)."""
    import numpy as np

    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PlaceboragTypeError(
            f"{name}={shown(value)} must be a number, not {type(value).__name__}"
        )
    # Compared as given (an int of any size, never converted to a float first).
    if isinstance(value, (int, np.integer)):
        if not 0 <= int(value) <= 1:
            raise PlaceboragValueError(f"{name}={shown(value)} must be between 0.0 and 1.0")
    elif not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise PlaceboragValueError(f"{name}={shown(value)} must be between 0.0 and 1.0")
    return as_written(float(value))


def _simplest_between(lo: Any, hi: Any) -> Any:
    """The fraction with the smallest denominator in ``[lo, hi]`` (``0 <= lo <= hi``): the
    continued-fraction walk down the Stern-Brocot tree (a loop: a subnormal float's walk is
    about a thousand steps long)."""
    from fractions import Fraction

    terms: list[int] = []
    while True:
        whole = math.floor(lo)
        if whole == lo or whole + 1 <= hi:
            terms.append(whole if whole == lo else whole + 1)
            break
        terms.append(whole)
        lo, hi = 1 / (hi - whole), 1 / (lo - whole)
    value = Fraction(terms[-1])
    for term in reversed(terms[:-1]):
        value = term + 1 / value
    return value


def as_written(number: float) -> Any:
    """The share a user meant by ``number``: the simplest fraction that rounds to the same float.

    ``0.7`` is 7/10 and ``1/3`` is 1/3, where the float's exact binary value (0.6999... and
    0.3333...) would keep one document too few of 10 and of 3. A decimal of up to 7 places is
    always read exactly as typed: no simpler fraction lies within half a float step of it.
    """
    from fractions import Fraction

    if number in (0.0, 1.0):
        return Fraction(number)
    exact = Fraction(number)
    lo = (Fraction(math.nextafter(number, -math.inf)) + exact) / 2
    hi = (exact + Fraction(math.nextafter(number, math.inf))) / 2
    simplest = _simplest_between(lo, hi)
    # On the very boundary the float may round the other way (half to even): keep the decimal.
    return simplest if float(simplest) == number else Fraction(repr(number))
