"""The adapter tests run offline: any attempt to open a network socket fails the test."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Iterator
from typing import Any

import pytest

try:
    import pytest_socket
except ImportError:  # pragma: no cover - langchain-tests brings pytest-socket
    pytest_socket = None


@pytest.fixture(autouse=True)
def _no_network() -> Iterator[None]:
    if pytest_socket is None:  # pragma: no cover
        yield
        return
    # Unix sockets stay allowed: asyncio's event loop wakes itself through a socketpair.
    pytest_socket.disable_socket(allow_unix_socket=True)
    try:
        yield
    finally:
        pytest_socket.enable_socket()


def _pickled(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


@pytest.fixture(params=[copy.deepcopy, _pickled], ids=["deepcopy", "pickle"])
def clone(request: pytest.FixtureRequest) -> Callable[[Any], Any]:
    """A copy as a test framework or a worker pool makes one: deep-copied or pickled."""
    return request.param  # type: ignore[no-any-return]
