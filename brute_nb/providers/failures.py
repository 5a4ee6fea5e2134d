"""How a provider call's failure reads: an SDK or transport exception turned into a ``ProviderError`` whose
message is the provider's own (its status, its words, the field at fault), or a clear one where the SDK has none
(an HTML page instead of the API, a cut stream, an unreachable server, a timeout).

The invariant: every failure of a call leaves as a ``BruteError`` saying what to do next, with any key redacted;
nothing here imports an SDK (an SDK's exception classes are looked up among the modules already loaded, named by
each provider's profile), so reading a failure costs no import.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any

from brute_nb.errors import BruteError, CassetteMismatchError, ProviderError
from brute_nb.providers import profiles
from brute_nb.redact import redact
from brute_nb.retry_after import seconds as retry_seconds


def no_key_message(provider: str, variable: str, exc: BaseException) -> str:
    """No key: the variable to set (a notebook user cannot pass ``api_key=``), then the Python and offline routes."""
    return (
        f"cannot create the {provider} client: no API key. Store one with %brute keys set {provider}, or set "
        f"{variable or 'the API key variable'} in the kernel (os.environ[{variable!r}] = '...', then run the cell "
        "again), or switch model with "
        "%brute config model=PROVIDER:MODEL; from Python, pass api_key=... To run offline, replay a recording: "
        f"%%brute --replay session.cassette.jsonl (from Python: replay='session.cassette.jsonl'). ({exc})"
    )


def translate_error(exc: BaseException, provider: str, base_url: str | None, *, service: str | None = None,
                    hint: str = "") -> BruteError:
    """An SDK or transport failure as a ProviderError whose message is the provider's own.

    ``service`` names the server when it is not the API's owner (Ollama speaking the OpenAI API), ``hint`` what to
    start or set when it cannot be reached."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, CassetteMismatchError):
            return cause
        cause = cause.__cause__
    html = html_answer(exc, provider, base_url)
    if html is not None:
        return html
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    if (isinstance(status, int) and status < 300) or (status is None and isinstance(body, Mapping)):
        # An error event inside a stream that began with 200: Anthropic's SDK raises it as a status error with
        # that 200, OpenAI's as an APIError with no status at all (a Chat Completions ``{"error": ...}`` line).
        error = body.get("error", body) if isinstance(body, Mapping) else {}
        error = error if isinstance(error, Mapping) else {}
        return stream_error(provider, error.get("code"), error.get("type"),
                            _api_message(body) or getattr(exc, "message", None) or str(exc), error.get("param"))
    if isinstance(status, int):
        message = _api_message(getattr(exc, "body", None)) or str(exc)
        param = api_param(getattr(exc, "body", None), message)
        response = getattr(exc, "response", None)
        retry = retry_seconds(response.headers) if response is not None else None
        if status == 429 and retry is not None:
            message += f" (the provider asks to retry after {retry:g} s; raise max_retries to let the SDK wait)"
        return ProviderError(redact(f"{provider} returned HTTP {status}: {message}"), status=status,
                             provider=provider, param=param)
    name = type(exc).__name__
    if _cut_off(exc):
        return incomplete(provider)
    if is_timeout(exc):
        text = f"{provider} timed out: no data arrived in time (the stream stalled); try again or raise timeout="
    elif _is_unreachable(exc):
        detail = f": {exc.__cause__}" if exc.__cause__ else f": {exc}"
        text = f"could not reach {service or provider} at {base_url or 'its default URL'}{detail}"
        if hint:
            text += f"; {hint}"
    elif isinstance(exc, ValueError):
        text = f"{provider} sent a malformed response ({name}: {exc})"
    else:
        text = f"{provider} call failed: {name}: {exc}"
    return ProviderError(redact(text), provider=provider)


def html_answer(exc: BaseException, provider: str, base_url: str | None) -> ProviderError | None:
    """A clear error when the server answered an HTML page (a login page, a proxy's notice) instead of the API.

    The SDKs then fail somewhere inside their parsers (an ``AssertionError`` in a stream, a string where a message
    belongs); the page is still in reach of the failure's frames, as an HTTP response or as the text itself. Only
    frame locals are read (``vars``, never ``getattr``), so no property runs.
    """
    tb = exc.__traceback__
    while tb is not None:
        for value in list(tb.tb_frame.f_locals.values()):
            for candidate in _responses(value):
                url = _html_url(candidate, base_url)
                if url is not None:
                    return ProviderError(
                        f"the server at {url} answered with an HTML page (a login page or a proxy?), not the "
                        f"{provider} API; check base_url and your network, or sign in to that proxy first",
                        provider=provider)
        tb = tb.tb_next
    return None


def _responses(value: object) -> list[object]:
    """``value`` and a ``response`` it or one of its attributes holds (an SDK stream wraps the raw stream)."""
    found = [value]
    own = _instance_vars(value)
    for inner in (value, *own.values()):
        response = own.get("response") if inner is value else _instance_vars(inner).get("response")
        if response is not None:
            found.append(response)
    return found


def _instance_vars(value: object) -> dict[str, Any]:
    try:
        return vars(value)
    except TypeError:
        return {}


def _html_url(candidate: object, base_url: str | None) -> str | None:
    if isinstance(candidate, str):
        head = candidate[:200].lstrip().lower()
        return (base_url or "its default URL") if head.startswith(("<!doctype html", "<html")) else None
    if not type(candidate).__module__.startswith("httpx"):
        return None
    headers = _instance_vars(candidate).get("headers")
    kind = headers.get("content-type", "") if isinstance(headers, Mapping) else ""
    if "text/html" not in str(kind):
        return None
    request = _instance_vars(candidate).get("_request")
    return str(getattr(request, "url", None) or base_url or "its default URL")


def _cut_off(exc: BaseException) -> bool:
    """The connection closed in the middle of a reply body (h11's words), which the SDKs call a connection error."""
    cause: BaseException | None = exc
    while cause is not None:
        if "without sending complete message body" in str(cause):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


TIMEOUTS = (("httpx2", "TimeoutException"), ("httpx", "TimeoutException"), ("httpcore2", "TimeoutException"),
            ("httpcore", "TimeoutException"))
"""(module, class) of the HTTP stack's timeouts (a stream read past the SDK raises the transport's own); each
profile adds its SDK's (``Profile.timeout_errors``)."""
UNREACHABLE = (("httpx2", "ProtocolError"), ("httpx2", "UnsupportedProtocol"), ("httpx", "ProtocolError"),
               ("httpx", "UnsupportedProtocol"), ("httpcore2", "ProtocolError"), ("httpcore2", "UnsupportedProtocol"),
               ("httpcore", "ProtocolError"), ("httpcore", "UnsupportedProtocol"), ("h11", "ProtocolError"))
"""(module, class) of the failures that mean the server could not be reached or spoke no HTTP to us; each profile
adds its SDK's (``Profile.connection_errors``)."""


def _sdk_classes(field: str) -> tuple[tuple[str, str], ...]:
    """(module, class) of every known profile's SDK errors of one kind (``timeout_errors``/``connection_errors``)."""
    return tuple((p.sdk, name) for p in profiles.every() if p.sdk for name in getattr(p, field))


def _classes(named: tuple[tuple[str, str], ...]) -> tuple[type[BaseException], ...]:
    """The classes of the modules already imported: an exception of a module can only come from an imported one,
    so none is imported here (the SDKs are heavy, and ``%load_ext`` stays fast)."""
    found = (getattr(sys.modules.get(module), name, None) for module, name in named)
    return tuple(cls for cls in found if isinstance(cls, type) and issubclass(cls, BaseException))


def is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, (TimeoutError, *_classes(TIMEOUTS + _sdk_classes("timeout_errors"))))


def _is_unreachable(exc: BaseException) -> bool:
    return isinstance(exc, (ConnectionError, *_classes(UNREACHABLE + _sdk_classes("connection_errors"))))


def stream_error(provider: str, code: object, kind: object, message: str, param: object = None) -> ProviderError:
    """An error the API sent inside a stream that began with 200 (Anthropic's ``event: error``, a Chat Completions
    ``{"error": ...}`` line, a Responses ``error`` or ``response.failed`` event), as the failure of the HTTP status
    its ``code`` or ``kind`` (the body's ``error.type``) stands for in the provider's profile
    (``Profile.error_statuses``): an overload mid-reply is a 529, which ``RetryReply`` asks again as the SDK retries
    a 529, and map's limiter slows down for. A code or type the table does not know is not asked again."""
    statuses = dict(profile.error_statuses) if (profile := profiles.of(provider)) is not None else {}
    named = next((str(n) for n in (code, kind) if isinstance(n, str) and n in statuses), None)
    status = statuses.get(named) if named else (code if isinstance(code, int) and 400 <= code < 600 else None)
    named = named or next((str(n) for n in (code, kind) if isinstance(n, str) and n), None)
    text = f"{provider} stopped the reply with {named or 'an error'}"
    message = " ".join(message.split())
    text += f" (as HTTP {status}): {message}" if status is not None else f": {message}"
    retryable = status is not None and sdk_retries(status)
    if not retryable:
        text += " (not asked again: not a fault that passes by itself)"
    at = param if isinstance(param, str) and param else api_param(None, message)
    return ProviderError(redact(text), status=status, provider=provider, param=at, retryable=retryable)


FIELD_AT_HEAD = re.compile(r"^([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*): ")
"""Anthropic names the request field at fault at the head of its message (``max_tokens: 100000 > 64000, ...``,
``messages.0.content.0.image.source.base64.data: Could not process image``); OpenAI's body has ``error.param``."""


def api_param(body: Any, message: str) -> str | None:
    """The request field an error names as the one at fault, or None when it names none. (The OpenAI SDK hands
    over the body's ``error`` object as the body.)"""
    error = body.get("error", body) if isinstance(body, Mapping) else None
    param = error.get("param") if isinstance(error, Mapping) else None
    if isinstance(param, str) and param:
        return param
    head = FIELD_AT_HEAD.match(message)
    return head.group(1) if head else None


def _api_message(body: Any) -> str | None:
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and error.get("message"):
            return str(error["message"])
        if body.get("message"):
            return str(body["message"])
    return None


def sdk_retries(status: int) -> bool:
    """Whether the SDKs retry an answer of this status (their ``_should_retry``: 408, 409, 429 and 5xx, 529
    included) when it comes before the reply."""
    return status in (408, 409, 429) or status >= 500


def incomplete(provider: str) -> ProviderError:
    """A reply cut off before its end: a dropped connection, which the SDKs retry when it comes before the reply."""
    return ProviderError(
        f"the {provider} stream ended before the reply was complete (no finish reason); nothing was added to "
        "the log, so the turn can simply be retried",
        provider=provider, retryable=True,
    )
