"""The adapter tests run offline: any attempt to open a network socket fails the test."""

from __future__ import annotations

from collections.abc import Iterator

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
