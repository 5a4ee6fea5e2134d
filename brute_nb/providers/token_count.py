"""How many input tokens a request will read, counted before it is sent, and how sure that number is.

Three ways, best first: the provider's own token-count endpoint through its SDK client (Anthropic's
``messages.count_tokens``: exact and free, sent with the key and to the host the request itself would use, so
through the same credentials rule and the same record/replay transport); a real tokenizer when one is installed
(tiktoken's ``o200k_base``, OpenAI's current encoding, over the request's prompt text plus the few tokens of
message framing); else an estimate of four characters a token. A ``TokenCount`` always says which, so an estimate
is never read as a measurement.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from brute_nb.message import dumps

ENDPOINT = "count_tokens endpoint"
TIKTOKEN = "tiktoken (o200k_base)"
ESTIMATE = "estimate (4 characters a token)"

FRAMING = 3
"""Tokens each message costs beyond its text (role and separators), as OpenAI documents for its chat format."""
PROMPT_FIELDS = ("system", "instructions", "messages", "input", "tools")
"""The parts of a request body the model reads (the rest are options: model, max_tokens, temperature...)."""


@dataclass(frozen=True, slots=True)
class TokenCount:
    tokens: int
    method: str
    """``ENDPOINT``, ``TIKTOKEN`` or ``ESTIMATE``."""
    note: str = ""
    """Why a better method was not used (the endpoint failed), when it was tried."""

    @property
    def exact(self) -> bool:
        return self.method != ESTIMATE


async def count_request(provider: Any, body: dict[str, Any]) -> TokenCount:
    """The input tokens of ``body`` (what ``provider.request`` builds) as ``provider`` would send it."""
    counter = _endpoint(provider, body)
    note = ""
    if counter is not None:
        accepted = _parameters(counter)
        try:
            result = await counter(**{k: v for k, v in body.items() if k in accepted})
            return TokenCount(int(result.input_tokens), ENDPOINT)
        except Exception as exc:  # the estimate is advisory: a proxy without the endpoint falls back, saying so
            if getattr(provider, "replaying", False):
                raise  # a replay that differs from its recording is a mismatch to show, never an estimate
            from brute_nb.redact import redact

            note = redact(f"the count_tokens endpoint failed ({type(exc).__name__}: {exc})"[:300])
    texts = list(_texts({k: body[k] for k in PROMPT_FIELDS if k in body and k != "tools"}))
    if body.get("tools"):  # a tool's schema is read as its JSON (its property names are keys, not texts)
        texts.append(dumps(body["tools"]))
    messages = body.get("messages") or body.get("input") or []
    framing = FRAMING * (len(messages) + 1) if isinstance(messages, list) else FRAMING
    tokens, method = count_text("\n".join(texts))
    return TokenCount(tokens + framing, method, note)


def count_text(text: str) -> tuple[int, str]:
    """``text``'s tokens and the method: tiktoken when installed, else four characters a token."""
    from brute_nb.compaction.tokens import chars_per_four, default_tokenizer

    tokenizer = default_tokenizer()
    return tokenizer(text), ESTIMATE if tokenizer is chars_per_four else TIKTOKEN


def _endpoint(provider: Any, body: dict[str, Any]) -> Any:
    """The SDK's token-count call for this provider's API (``Profile.count_tokens``; its beta one for a body with
    a parameter only the beta call takes), or None where it has none."""
    from brute_nb.providers import profiles
    from brute_nb.providers.options import beta_only

    profile = profiles.of(getattr(provider, "provider", None))
    if profile is None or profile.count_tokens is None or not hasattr(provider, "client"):
        return None
    path = profile.count_tokens
    if profile.beta_count_tokens and set(body) & beta_only(profile.kind):
        path = profile.beta_count_tokens
    call: Any = provider.client
    for part in path.split("."):  # the SDK client's path to the call (``messages.count_tokens``)
        call = getattr(call, part, None)
    return call


def _parameters(fn: Any) -> frozenset[str]:
    """The body fields the installed SDK's ``count_tokens`` takes (``max_tokens``, ``stream`` and sampling
    options are refused by the endpoint, so they are left out)."""
    skip = {"extra_headers", "extra_query", "extra_body", "timeout"}
    return frozenset(p for p in inspect.signature(fn).parameters if p not in skip)


def _texts(value: Any) -> Iterator[str]:
    """Every string in a JSON value (the prompt's text, tool names, descriptions and schemas' words)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in ("cache_control", "type", "role"):
                continue
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)
