"""Shared pieces of the fuzz suite: the profile, hostile value strategies and the contract.

The contract every fuzz test checks: a public call given anything returns a correct result
or raises a ``PlaceboragError`` (a ``TypeError``/``ValueError`` subclass) whose message is not
empty. Any other exception escapes and fails the test.

The example count is fixed for CI by the ``placeborag-fuzz`` hypothesis profile registered
here: ``PLACEBORAG_FUZZ_EXAMPLES`` examples per test (default 100; ``FUZZ_SLOW`` tests, which
build a whole store, recording or page per example, run a quarter of that), the same examples
on every run (``derandomize=True``, so a strict xfail fails the same way everywhere). Raise it
to search harder::

    PLACEBORAG_FUZZ_EXAMPLES=2000 pytest tests/fuzz
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from placeborag import PlaceboragError

EXAMPLES = int(os.environ.get("PLACEBORAG_FUZZ_EXAMPLES", "100"))

settings.register_profile(
    "placeborag-fuzz",
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
)
FUZZ = settings.get_profile("placeborag-fuzz")
# A few tests build a whole store or page per example: a quarter of the count keeps them cheap.
FUZZ_SLOW = settings(FUZZ, max_examples=max(5, EXAMPLES // 4))

T = TypeVar("T")


def result_or_error(call: Callable[[], T]) -> T | PlaceboragError:
    """``call()``, or the PlaceboragError it raised; any other exception propagates."""
    try:
        return call()
    except PlaceboragError as error:
        assert isinstance(error, (TypeError, ValueError, RuntimeError)), type(error)
        assert str(error), f"{type(error).__name__} with an empty message"
        return error


# -- hostile values -------------------------------------------------------------------------

# Characters a careless encoder trips on: a lone surrogate, NUL, the filter's "$", RTL marks.
tricky_text = st.text(
    alphabet=st.sampled_from(["a", "b", " ", "é", "ß", "\ud800", "\x00", "$", "\u202e", "😀"]),
    max_size=12,
)
texts = st.one_of(st.text(max_size=30), tricky_text)

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
# Integers that fit a float, and ints beyond float range (issue 13 item 2: they once overflowed
# in the filters and the scorer), drawn apart so a test can ask for either.
float_range_ints = st.integers(min_value=-(2**1023), max_value=2**1023)
huge_ints = st.integers(min_value=2**1024, max_value=10**400) | st.integers(
    min_value=-(10**400), max_value=-(2**1024)
)
numbers = st.one_of(
    float_range_ints,
    st.integers(-10, 10),
    st.floats(),
    st.sampled_from([0, 1, -1, 0.5, 2**53 + 1, math.nan, math.inf, -0.0, 1e-320]),
)
odd_objects = st.sampled_from(
    [
        object(),
        b"bytes",
        (1, 2),
        frozenset({1}),
        Decimal("0.7"),
        Fraction(7, 10),
        np.int64(3),
        np.float32(0.5),
        np.array([1.0, 2.0]),
        complex(1, 2),
        print,
    ]
)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
anything = st.one_of(json_values, odd_objects)


# JSON documents that trip a careless reader: an int Python refuses to parse (over 4,300
# digits), nesting past the recursion limit, a BOM, NaN, a lone surrogate escape, not UTF-8.
tricky_json = st.sampled_from(
    [
        b'{"k": ' + b"7" * 5000 + b"}",
        b"[" * 50_000 + b"]" * 50_000,
        b"\xef\xbb\xbf{}",
        b'{"k": NaN}',
        b'{"k": "\\ud800"}',
        b"\xff\xfe{",
        b"",
        b"null",
    ]
)


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


__all__ = [
    "EXAMPLES",
    "FUZZ",
    "FUZZ_SLOW",
    "anything",
    "finite_floats",
    "huge_ints",
    "json_values",
    "nested",
    "numbers",
    "odd_objects",
    "result_or_error",
    "scalars",
    "texts",
    "tricky_json",
]
