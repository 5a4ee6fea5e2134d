"""Helpers shared by the notebook tests (fixtures live in conftest.py)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

WAIT = 30.0
"""Seconds a test waits for something that should happen at once; only a hang ever reaches it."""

HOLD = "touch entered && while [ ! -e gate ]; do sleep 0.02; done && echo released"
"""A real shell command that runs until the test creates ``gate`` (the test holds the turn in a tool)."""


def wait_for(condition: Callable[[], object], what: str) -> None:
    """Poll until ``condition()`` is true; fails (never sleeps on success) when it stays false for ``WAIT`` s."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {WAIT:.0f} s for {what}")
        time.sleep(0.01)
