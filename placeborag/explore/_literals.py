"""The one serialiser of user data into generated Python: ``repr`` of plain values, laid out
as ``ruff format`` lays them out, each literal read back with ``ast.literal_eval``.

Every value an exported module carries (ids, texts, metadata, the query, ``where``, options)
goes through :func:`plain` (numpy scalars unwrapped; anything without an exact literal refused,
naming it) and then :func:`literal` or :func:`layout`. Strings are written with the quote
``ruff format`` prefers (double, unless that needs more escapes) and every other character as
``repr`` writes it: printable ones as they are (so Hungarian stays readable), the rest
(control characters, lone surrogates, line and paragraph separators) as escapes, so no
character of user data can end a literal, start a line or make the file invalid UTF-8.
"""

from __future__ import annotations

import ast
import math
import unicodedata
from collections.abc import Mapping
from typing import Any

import numpy as np

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.toolkit import shown

__all__ = ["LINE_LENGTH", "identifier", "layout", "literal", "plain", "same", "width"]

#: ruff's (and black's) default line length: the exported module is formatted for it.
LINE_LENGTH = 88


def plain(value: Any, what: str) -> Any:
    """``value`` as plain Python values (str, int, float, bool, None, list, dict with str keys).

    numpy scalars and arrays are unwrapped and tuples become lists; a float that is not
    finite, an int too long to write, a non-str key or any other type raises, naming ``what``.
    """
    if isinstance(value, str):
        # str.__str__, not str() or .item(): numpy's str_ drops trailing NULs in both.
        return str.__str__(value)
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) >= 10**4000:  # repr() refuses past 4,300 digits
            raise PlaceboragValueError(f"{what}={shown(value)} is too long an int to export")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PlaceboragValueError(
                f"{what}={value!r} cannot be exported: only finite numbers have a literal"
            )
        return float(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise PlaceboragTypeError(
                    f"{what}: key {shown(key)} cannot be exported (keys must be str, "
                    f"not {type(key).__name__})"
                )
            out[str.__str__(key)] = plain(item, f"{what}[{key!r}]")
        return out
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(item, f"{what}[{i}]") for i, item in enumerate(value)]
    raise PlaceboragTypeError(
        f"{what}={shown(value)} cannot be exported: a {type(value).__name__} is not a str, "
        "int, float, bool, None, list or dict (drop the key, or keep it out of the export)"
    )


def _string(text: str) -> str:
    quote = "'" if text.count('"') > text.count("'") else '"'
    out = []
    for char in text:
        if char == "\\" or char == quote:
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        else:  # repr's escape for it: \n, \x00, \u2028, \ud800, ...
            out.append(repr(char)[1:-1])
    return quote + "".join(out) + quote


def literal(value: Any) -> str:
    """The Python literal of a plain value, on one line (checked by reading it back)."""
    text = _flat(value)
    _check_round_trip(text, value)
    return text


def _flat(value: Any) -> str:
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, float):
        return repr(value).replace("e+", "e")  # 1e16, as ruff writes it (and as Python reads)
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_flat(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flat(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(_flat(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    raise PlaceboragTypeError(f"{shown(value)} is not a plain value")  # plain() ran first


def width(line: str) -> int:
    """An upper bound of the columns ``line`` takes in ruff's count (which counts East Asian
    wide characters as two): every non-ASCII character is counted as two."""
    return len(line) + sum(1 for c in line if ord(c) > 127)


def layout(head: str, value: Any, tail: str = "", indent: int = 0) -> list[str]:
    """``head + literal(value) + tail`` as the lines ``ruff format`` leaves alone.

    On one line if it fits in :data:`LINE_LENGTH`; otherwise a list or dict is opened, one
    item per line, each followed by a comma (a "magic trailing comma", which keeps ruff from
    joining the lines again, whatever its line length), recursively. A string is never cut.
    """
    _check_round_trip(_flat(value), value)
    return _layout(head, value, tail, indent)


def _layout(head: str, value: Any, tail: str, indent: int) -> list[str]:
    pad = " " * indent
    line = pad + head + _flat(value) + tail
    if width(line) <= LINE_LENGTH or not isinstance(value, (list, dict)) or not value:
        return [line]
    lines = [pad + head + ("[" if isinstance(value, list) else "{")]
    if isinstance(value, list):
        for item in value:
            lines += _layout("", item, ",", indent + 4)
    else:
        for key, item in value.items():
            lines += _layout(_flat(key) + ": ", item, ",", indent + 4)
    lines.append(pad + ("]" if isinstance(value, list) else "}") + tail)
    return lines


def _check_round_trip(text: str, value: Any) -> None:
    """``text`` reads back (``ast.literal_eval``) to exactly ``value``: the same types, keys
    in the same order, the same float bits; anything else is a bug here, never written."""
    try:
        back = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise PlaceboragValueError(
            f"{shown(value)} does not survive a literal round trip ({exc}); not exported"
        ) from None
    if not same(back, value):
        raise PlaceboragValueError(f"{shown(value)} reads back as {shown(back)}; not exported")


def same(a: Any, b: Any) -> bool:
    """The same plain value: types, keys and their order, float bits (``-0.0`` is not ``0.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def identifier(text: str, limit: int = 24) -> str:
    """``text`` as a snake_case identifier of ``[a-z0-9_]`` only (``""`` when nothing is left):
    the one way a user string reaches a name in generated code."""
    folded = unicodedata.normalize("NFKD", text.lower())
    words: list[str] = []
    word = ""
    for char in folded:
        if char.isascii() and char.isalnum():
            word += char
        elif word:
            words.append(word)
            word = ""
    if word:
        words.append(word)
    name = "_".join(words)[:limit].strip("_")
    if name and name[0].isdigit():
        name = "n" + name
    return name
