"""One answer of the fake provider (status, headers, body chunks, how the connection misbehaves) and the APIs'
error bodies: shared by the synchronous routes (``fake_server``) and the batch routes (``fake_batches``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from brute_nb.message import dumps


@dataclass
class Outcome:
    """One answer: status, headers, the body in chunks, and how the connection misbehaves (if it does)."""

    status: int
    headers: dict[str, str]
    chunks: list[bytes] = field(default_factory=list)
    stall_after: int | None = None
    delay: float = 0.0
    """Seconds before each chunk after the first (a slow stream)."""
    wait: float = 0.0
    """Seconds before the answer starts: a model's time to first token (``FakeProvider(first_token=...)``)."""
    cut: bool = False
    """Close the connection after the chunks without finishing the body (a dropped connection)."""
    length: int | None = None
    """The content-length announced when it is not the chunks' (a cut body announces the whole)."""


def error_body(api: str, status: int, message: str, param: str | None = None) -> dict[str, Any]:
    """The API's own error body; OpenAI's names the request field at fault in ``param`` (Anthropic's names it at
    the head of the message: ``max_tokens: 100000 > 64000, ...``)."""
    if api == "anthropic":
        kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind, code = openai_error(status)
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def openai_error(status: int) -> tuple[str, str | None]:
    """The ``type`` and ``code`` OpenAI's error body gives a failure of ``status``: a rate limit is of type
    ``requests`` with code ``rate_limit_exceeded``, a refused key ``invalid_api_key``, any 5xx (an overload too) a
    ``server_error``, everything else an ``invalid_request_error``."""
    if status == 429:
        return "requests", "rate_limit_exceeded"
    if status >= 500:
        return "server_error", None
    return "invalid_request_error", "invalid_api_key" if status == 401 else None


def json_outcome(status: int, payload: Any, headers: dict[str, str] | None = None) -> Outcome:
    body = dumps(payload).encode()
    return Outcome(status, {"content-type": "application/json", **(headers or {})}, [body])
