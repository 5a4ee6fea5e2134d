"""RetryReply: a model call that failed part-way through its reply, on a fault the SDK itself retries, is asked again.

The SDKs retry an overload, a rate limit, a server error or a dropped connection only until they hand the response
back; once a reply is streaming, a fault is the caller's. Anthropic's commonest one under load comes exactly there:
a 200 stream that ends in ``event: error`` with ``overloaded_error`` (a 529), so a turn failed on it where ``map``
(which retries such faults itself) went on. OpenAI's APIs end a stream the same way (a Chat Completions ``{"error":
...}`` line, a Responses ``error`` or ``response.failed`` event), with no status at all; each such error is read as
the status its type or code stands for (``providers.failures.stream_error``). This layer retries what the SDK would
have retried (``ProviderError.retryable``, set where the failure is read) as many times as the SDK would
(``retries``: the provider's ``max_retries``, the SDKs' default 2), waiting as the SDKs do (0.5 s doubling, at most
8 s, with jitter), never past the turn's time budget (``Budget`` leaves its deadline in
``env["metadata"]["budget_deadline"]``), and says so in one line (the ``retry`` event, which the cell shows).
Nothing of the failed reply was appended or ran (the provider appends a reply whole or not at all), so no tool ran
on it and the retried request is the same request.

It sits around the provider, inside ``PartialReply``: the text a failed try streamed is dropped when it is asked
again, and the text of the last try is kept when the retries end (as Stop keeps it).
"""

from __future__ import annotations

import random
from time import monotonic
from typing import Any

import anyio

from brute_nb.env import App, Env
from brute_nb.errors import MiddlewareError, ProviderError
from brute_nb.events import emit

DEFAULT_RETRIES = 2
"""The SDKs' own ``DEFAULT_MAX_RETRIES`` (openai's and anthropic's), for a provider that sets none."""
FIRST_WAIT = 0.5
LONGEST_WAIT = 8.0
"""The SDKs' ``INITIAL_RETRY_DELAY`` and ``MAX_RETRY_DELAY`` (seconds)."""


def retries_of(provider: Any) -> int:
    """How often a reply cut by a fault the SDK retries is asked again: as often as the provider's SDK retries
    (``max_retries``, the SDKs' default 2 when unset); never for a replay (a cassette holds no second try) or a
    model call that is not an SDK provider's (a function of the user's)."""
    if getattr(provider, "replay", None) or not hasattr(provider, "max_retries"):
        return 0
    retries = provider.max_retries
    return DEFAULT_RETRIES if retries is None else int(retries)


class RetryReply:
    """``RetryReply(app, retries=2)``: ``retries`` more tries of a call whose reply failed on a retryable fault."""

    def __init__(self, app: App, retries: int = DEFAULT_RETRIES) -> None:
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise MiddlewareError(f"RetryReply(retries=...) must be a whole number of 0 or more, got {retries!r}")
        self.app = app
        self.retries = retries

    async def __call__(self, env: Env) -> Any:
        tried = 0
        while True:
            try:
                return await self.app(env)
            except ProviderError as exc:
                wait = wait_before(tried)
                if not exc.retryable or tried >= self.retries or past_deadline(env, wait):
                    raise
                tried += 1
                emit(env, "retry", {"error": exc, "attempt": tried, "of": self.retries, "wait": wait,
                                    "message": retry_line(exc, tried, self.retries, wait)})
                await anyio.sleep(wait)


def wait_before(tried: int) -> float:
    """The SDKs' backoff before retry ``tried + 1``: 0.5 s doubling to at most 8 s, less up to a quarter (jitter)."""
    return min(FIRST_WAIT * 2.0**tried, LONGEST_WAIT) * (1 - 0.25 * random.random())


def past_deadline(env: Env, wait: float) -> bool:
    """Whether waiting ``wait`` seconds would pass the turn's (or session's) time budget."""
    deadline = (env.get("metadata") or {}).get("budget_deadline")
    return isinstance(deadline, int | float) and monotonic() + wait >= deadline


def retry_line(exc: ProviderError, tried: int, retries: int, wait: float) -> str:
    """The one line a retry is said in: the fault as the provider put it, and what happens now."""
    fault = " ".join(str(exc).split())
    return f"{fault}; asking again in {wait:.1f} s (retry {tried} of {retries}), nothing of that reply was kept"
