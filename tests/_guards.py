"""Guards that turn a hang into a failure: a loader blocking on a FIFO (as the old code did)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def no_hang(seconds: int = 20) -> Iterator[None]:
    """Raise ``TimeoutError`` in the block after ``seconds`` (where SIGALRM exists), rather
    than block the suite for good."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def stuck(signum: int, frame: object) -> None:
        raise TimeoutError("blocked on a special file")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
