"""The one serialiser of user data into generated Python: ``repr`` of plain values, laid out
as ``ruff format`` lays them out, each literal read back by :func:`read_literal` (what
``ast.literal_eval`` reads, and the ``datetime`` constructors, nothing else).

Every value an exported module carries (ids, texts, metadata, the query, ``where``, options)
goes through :func:`plain` (numpy scalars unwrapped; anything without an exact literal refused,
naming it) and then :func:`literal` or :func:`layout`. Strings are written with the quote
``ruff format`` prefers (double, unless that needs more escapes) and every other character as
``repr`` writes it: printable ones as they are (so Hungarian stays readable), the rest
(control characters, lone surrogates, line and paragraph separators) as escapes, so no
character of user data can end a literal, start a line or make the file invalid UTF-8.

A ``datetime.date`` or ``datetime.datetime`` (metadata a filter reads) is written as the call
that makes it, ``datetime.date(2024, 5, 1)`` or ``datetime.datetime(2024, 5, 1, 9, 30,
tzinfo=datetime.timezone.utc)``, a fixed offset as ``datetime.timezone(datetime.timedelta(
hours=2))``; the module imports ``datetime`` only when it holds one (:func:`has_dates`).
"""

from __future__ import annotations

import ast
import datetime as _dt
import keyword
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.toolkit import shown

__all__ = [
    "LINE_LENGTH",
    "dotted_name",
    "has_dates",
    "identifier",
    "layout",
    "literal",
    "plain",
    "read_literal",
    "read_node",
    "same",
    "width",
]

#: ruff's (and black's) default line length: the exported module is formatted for it.
LINE_LENGTH = 88


def plain(value: Any, what: str) -> Any:
    """``value`` as plain Python values (str, int, float, bool, None, a ``datetime.date`` or
    ``datetime.datetime``, list, dict with str keys).

    numpy scalars and arrays are unwrapped and tuples become lists; a float that is not
    finite, an int too long to write, a non-str key, a datetime whose ``tzinfo`` is not a fixed
    offset (``datetime.timezone``) or any other type raises, naming ``what``.
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
    if isinstance(value, _dt.date):
        return _plain_date(value, what)
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
        "int, float, bool, None, date, datetime, list or dict (drop the key, or keep it out of "
        "the export)"
    )


def _plain_date(value: _dt.date, what: str) -> _dt.date:
    """A date or datetime as exactly that type (a subclass, a pandas ``Timestamp``, becomes
    the datetime it equals, or is refused), with a fixed-offset ``tzinfo`` or none."""
    if isinstance(value, _dt.datetime):
        tz = value.tzinfo
        if tz is not None and type(tz) is not _dt.timezone:
            raise PlaceboragTypeError(
                f"{what}={shown(value)} cannot be exported: its tzinfo {shown(tz)} is not a "
                "fixed offset (a datetime.timezone); store it as value.astimezone("
                "datetime.timezone.utc) or with the offset it has, datetime.timezone(offset)"
            )
        out: _dt.date = _dt.datetime(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
            tz,
            fold=value.fold,
        )
    else:
        out = _dt.date(value.year, value.month, value.day)
    if out != value:  # a pandas Timestamp's nanoseconds, say
        raise PlaceboragTypeError(
            f"{what}={shown(value)} cannot be exported: a {type(value).__name__} is not "
            f"exactly a {type(out).__name__} (convert it to one)"
        )
    return out


def has_dates(value: Any) -> bool:
    """Whether a plain value holds a date or datetime (the module then imports datetime)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _dt.date):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


class _Name(str):
    """A dotted name written as it is (``datetime.timezone.utc``)."""


@dataclass(frozen=True)
class _Call:
    """A constructor call: ``func(*args, **dict(kwargs))``, each argument a value or a call."""

    func: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()


def _call_of(value: _dt.date) -> _Call:
    """The call that makes a date or datetime, with repr's arguments (trailing zeros left)."""
    if not isinstance(value, _dt.datetime):
        return _Call("datetime.date", (value.year, value.month, value.day))
    args: tuple[int, ...] = (value.year, value.month, value.day, value.hour, value.minute)
    if value.second or value.microsecond:
        args += (value.second,)
    if value.microsecond:
        args += (value.microsecond,)
    kwargs: tuple[tuple[str, Any], ...] = ()
    if value.tzinfo is not None:
        kwargs += (("tzinfo", _timezone(value.tzinfo)),)
    if value.fold:
        kwargs += (("fold", 1),)
    return _Call("datetime.datetime", args, kwargs)


_UNITS = (("hours", 3_600_000_000), ("minutes", 60_000_000), ("seconds", 1_000_000))


def _timezone(tz: Any) -> Any:
    if tz is _dt.timezone.utc:
        return _Name("datetime.timezone.utc")
    offset = tz.utcoffset(None)
    micro = offset // _dt.timedelta(microseconds=1)
    unit, size = next(((u, n) for u, n in _UNITS if micro % n == 0), ("microseconds", 1))
    delta = _Call("datetime.timedelta", (), ((unit, micro // size),))
    name = tz.tzname(None)
    default = _dt.timezone(offset).tzname(None)
    return _Call("datetime.timezone", (delta,) if name == default else (delta, name))


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
    if isinstance(value, _Name):
        return str.__str__(value)
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
    if isinstance(value, _dt.date):
        return _flat(_call_of(value))
    if isinstance(value, _Call):
        parts = [_flat(a) for a in value.args] + [f"{k}={_flat(v)}" for k, v in value.kwargs]
        return f"{value.func}({', '.join(parts)})"
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
    if width(line) <= LINE_LENGTH:
        return [line]
    if isinstance(value, _dt.date):
        value = _call_of(value)
    if isinstance(value, _Call):  # as ruff splits a call: the arguments on one line, or
        lines = [pad + head + value.func + "("]  # one a line, each with a trailing comma
        parts = [_flat(a) for a in value.args] + [f"{k}={_flat(v)}" for k, v in value.kwargs]
        inner = " " * (indent + 4) + ", ".join(parts)
        # Only where the count of columns is exact (ASCII): ruff joins what it sees fit.
        if line.isascii() and width(inner) <= LINE_LENGTH:
            return [*lines, inner, pad + ")" + tail]
        for arg in value.args:
            lines += _layout("", arg, ",", indent + 4)
        for name, arg in value.kwargs:
            lines += _layout(f"{name}=", arg, ",", indent + 4)
        return [*lines, pad + ")" + tail]
    if not isinstance(value, (list, dict)) or not value:
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


def read_literal(text: str) -> Any:
    """The value of one literal this module writes: what ``ast.literal_eval`` reads of plain
    values, and the calls of ``datetime.date``, ``datetime.datetime``, ``datetime.timezone``
    and ``datetime.timedelta`` with literal arguments (nothing else is called)."""
    return read_node(ast.parse(text.strip(), mode="eval").body)


_CALLS: dict[str, tuple[Any, frozenset[str]]] = {
    "datetime.date": (_dt.date, frozenset()),
    "datetime.datetime": (_dt.datetime, frozenset({"tzinfo", "fold"})),
    "datetime.timezone": (_dt.timezone, frozenset()),
    "datetime.timedelta": (
        _dt.timedelta,
        frozenset({"hours", "minutes", "seconds", "microseconds"}),
    ),
}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def read_node(node: ast.AST) -> Any:
    """:func:`read_literal` of a parsed expression."""
    if isinstance(node, ast.Constant) and type(node.value) in (str, int, float, bool, type(None)):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    ):
        number: Any = node.operand.value
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, ast.List):
        return [read_node(item) for item in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(read_node(item) for item in node.elts)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {read_node(k): read_node(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    if _dotted(node) == "datetime.timezone.utc":
        return _dt.timezone.utc
    if isinstance(node, ast.Call) and _dotted(node.func) in _CALLS:
        make, keywords = _CALLS[_dotted(node.func)]  # type: ignore[index]
        if all(k.arg in keywords for k in node.keywords):
            args = [read_node(a) for a in node.args]
            kwargs = {k.arg: read_node(k.value) for k in node.keywords if k.arg is not None}
            try:
                return make(*args, **kwargs)
            except (TypeError, ValueError, OverflowError) as exc:
                raise ValueError(f"malformed literal: {exc}") from None
    raise ValueError(f"malformed literal: {ast.dump(node)[:80]}")


def _check_round_trip(text: str, value: Any) -> None:
    """``text`` reads back (:func:`read_literal`) to exactly ``value``: the same types, keys
    in the same order, the same float bits; anything else is a bug here, never written."""
    try:
        back = read_literal(text)
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
    if isinstance(a, _dt.date):  # the fields, the offset, its name and fold, not the instant
        return repr(a) == repr(b)
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


def dotted_name(text: str, what: str) -> str:
    """``text`` when it is a dotted Python name of ASCII identifiers (``ragdemo.search``), no
    part a keyword: the one way a user's name reaches generated code as it is (an import);
    anything else raises, naming ``what``."""
    parts = text.split(".") if isinstance(text, str) else []
    if not parts or not all(
        part.isascii() and part.isidentifier() and not keyword.iskeyword(part) for part in parts
    ):
        raise PlaceboragValueError(
            f"{what}={shown(text)} must be a dotted name of Python identifiers "
            "(letters, digits and underscores, such as myapp.search)"
        )
    return str.__str__(text)
