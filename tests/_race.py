"""Run work on several threads at once, switching between them as often as Python can."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any


def race(
    target: Callable[..., Any],
    arguments: Iterable[tuple[Any, ...]],
    *,
    timeout: float | None = None,
) -> list[threading.Thread]:
    """Run ``target(*args)`` on one daemon thread per ``args`` under a 1 us switch interval
    (so a race shows at once) and join them; returns the threads still running after
    ``timeout`` seconds each (a deadlock never ends), none when all finished."""
    threads = [threading.Thread(target=target, args=args, daemon=True) for args in arguments]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout)
    finally:
        sys.setswitchinterval(interval)
    return [thread for thread in threads if thread.is_alive()]
