"""Adaptive concurrency for a map run: additive increase, multiplicative decrease (TCP's AIMD), led by 429/529.

Every request takes a slot. A success widens the window by ``1/limit`` (one slot per window's worth of
successes); a rate-limit answer halves it (at most once per round: only a request that started after the last
cut can cut again) and holds every new request until the provider's ``retry-after`` has passed. So a 429 storm
slows the whole run down instead of failing rows, and the run climbs back to ``concurrency`` when it clears.
The invariant: ``in_flight`` never exceeds ``int(limit)``, and ``limit`` stays within ``[1, concurrency]``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio

from brute_nb.retry_after import seconds as retry_seconds

THROTTLE_STATUSES = (429, 529)
"""Too Many Requests, and Anthropic's Overloaded: both mean "the same request, later"."""

DEFAULT_WAIT = 1.0
"""Seconds to hold new requests after a throttle that names no ``retry-after``."""

MAX_WAIT = 60.0


@dataclass
class Ticket:
    started: float


class AdaptiveLimiter:
    def __init__(self, concurrency: int) -> None:
        self.maximum = max(1, int(concurrency))
        self.limit = float(self.maximum)
        self.in_flight = 0
        self.resume_at = 0.0
        self.throttles = 0
        self._last_cut = float("-inf")
        self._freed = anyio.Event()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Ticket]:
        while True:
            wait = self.resume_at - anyio.current_time()
            if wait > 0:
                await anyio.sleep(wait)
            elif self.in_flight < int(self.limit):
                break
            else:
                await self._freed.wait()
        self.in_flight += 1
        try:
            yield Ticket(anyio.current_time())
        finally:
            self.in_flight -= 1
            self._freed.set()
            self._freed = anyio.Event()

    def succeeded(self) -> None:
        self.limit = min(float(self.maximum), self.limit + 1 / self.limit)

    def throttled(self, ticket: Ticket, retry_after: float | None) -> None:
        """A 429/529: hold everyone for ``retry_after`` seconds and, once a round, halve the window."""
        now = anyio.current_time()
        self.throttles += 1
        wait = min(MAX_WAIT, retry_after if retry_after is not None else DEFAULT_WAIT)
        self.resume_at = max(self.resume_at, now + wait)
        if ticket.started >= self._last_cut:
            self.limit = max(1.0, self.limit / 2)
            self._last_cut = now


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked to wait (``brute_nb.retry_after``: milliseconds, seconds or an HTTP date), from the
    SDK error's response or one it was raised from."""
    cause: BaseException | None = exc
    while cause is not None:
        headers = getattr(getattr(cause, "response", None), "headers", None)
        wait = retry_seconds(headers) if headers is not None else None
        if wait is not None:
            return wait
        cause = cause.__cause__
    return None


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None
