"""The fake provider's ``POST /v1/messages/count_tokens``: Anthropic's token-count endpoint, answered honestly.

It counts a request exactly as the fake bills the same prompt when it is sent (``cache_model``'s blocks, the
fake's four characters a token), so an estimate made through this endpoint and the ``input_tokens`` the rows then
report agree, as they do on the real API. Like the real endpoint it takes the prompt fields of a Messages request
and refuses the rest (``max_tokens``, ``stream``, sampling options) by name, checks the same message rules as
``/v1/messages``, needs the key, and answers ``{"input_tokens": N}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from brute_nb.testing import rules
from brute_nb.testing.cache_model import prompt_tokens
from brute_nb.testing.outcome import Outcome, error_body
from brute_nb.testing.outcome import json_outcome as _json

PATH = "/v1/messages/count_tokens"
NOT_BODY = frozenset({"self", "betas", "workspace_id", "extra_headers", "extra_query", "extra_body", "timeout"})
"""The SDK's ``count_tokens`` parameters that are no body field (headers, request options)."""


def fields(beta: bool) -> frozenset[str]:
    """What the endpoint accepts: the installed SDK's ``count_tokens`` parameters, the plain call's for a request
    with no ``anthropic-beta`` header and the beta call's for one with it (the beta call always sends one, at
    least ``token-counting-2024-11-01``; ``mcp_servers``, ``context_management`` and ``compaction`` go there);
    anything else is "Extra inputs are not permitted", as the real API says."""
    import inspect

    from anthropic.resources.beta.messages import Messages as BetaMessages
    from anthropic.resources.messages import Messages

    call = (BetaMessages if beta else Messages).count_tokens
    return frozenset(inspect.signature(call).parameters) - NOT_BODY


def handles(path: str) -> bool:
    return path.split("?")[0].endswith(PATH)


def count(body: dict[str, Any]) -> int:
    """The prompt's tokens as the fake bills them (before any cache read or write: the whole prompt)."""
    return max(prompt_tokens("anthropic", body), 1)


def respond(method: str, raw: bytes, refused: Callable[[dict[str, Any]], Outcome | None],
            headers: Mapping[str, str] | None = None) -> Outcome:
    """The answer; ``refused`` is the server's key check (a missing or wrong key is a 401 here too), ``headers``
    the request's (an ``anthropic-beta`` one makes it the beta endpoint, which takes the beta fields)."""
    if method != "POST":
        return _json(405, error_body("anthropic", 404, f"Method {method} not allowed for {PATH}"))
    try:
        body = json.loads(raw or b"null")
    except ValueError as exc:
        return _json(400, error_body("anthropic", 400, f"We could not parse the JSON body of your request: {exc}"))
    problem = refused(body if isinstance(body, dict) else {})
    if problem is not None:
        return problem
    if not isinstance(body, dict):
        return _json(400, error_body("anthropic", 400, "the request body must be a JSON object"))
    beta = bool({k.lower(): v for k, v in (headers or {}).items()}.get("anthropic-beta", "").strip())
    extra = sorted(k for k in body if k not in fields(beta))
    problems = [f"{k}: Extra inputs are not permitted" for k in extra]
    if not extra:
        # the message rules of /v1/messages, which also asks for max_tokens (this endpoint must not be sent one)
        problems = rules.request_problems("anthropic", {**body, "max_tokens": 1})
    if problems:
        return _json(400, error_body("anthropic", 400, "; ".join(problems)))
    return _json(200, {"input_tokens": count(body)}, {"request-id": "req_count"})
