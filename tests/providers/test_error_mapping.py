"""Provider failures map to messages by the SDKs' exception classes (isinstance), not by words in class names."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest

from brute_nb.providers.failures import translate_error

REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


class UserTimeoutSetting(Exception):
    """A library's own error whose name merely contains "Timeout" (or "Connection"): not a network failure."""


class ConnectionPoolConfigError(Exception):
    pass


@pytest.mark.parametrize(("exc", "start"), [
    (openai.APITimeoutError(REQUEST), "openai timed out: no data arrived in time"),
    (anthropic.APITimeoutError(REQUEST), "openai timed out: no data arrived in time"),
    (httpx2.ReadTimeout("stalled", request=REQUEST), "openai timed out"),
    (TimeoutError("slow"), "openai timed out"),
    (openai.APIConnectionError(request=REQUEST), "could not reach openai at http://127.0.0.1:9"),
    (anthropic.APIConnectionError(request=REQUEST), "could not reach openai at http://127.0.0.1:9"),
    (httpx2.RemoteProtocolError("peer closed", request=REQUEST), "could not reach openai at http://127.0.0.1:9: peer"),
    (ConnectionRefusedError("refused"), "could not reach openai at http://127.0.0.1:9: refused"),
    (UserTimeoutSetting("bad value"), "openai call failed: UserTimeoutSetting: bad value"),
    (ConnectionPoolConfigError("bad"), "openai call failed: ConnectionPoolConfigError: bad"),
])
def test_failures_map_by_class(exc: Exception, start: str) -> None:
    assert str(translate_error(exc, "openai", "http://127.0.0.1:9")).startswith(start)


def test_a_status_error_keeps_the_providers_message() -> None:
    response = httpx2.Response(429, request=REQUEST, headers={"retry-after": "3"},
                               json={"error": {"message": "slow down"}})
    exc = openai.RateLimitError("429", response=response, body={"error": {"message": "slow down"}})
    assert str(translate_error(exc, "openai", None)).startswith(
        "openai returned HTTP 429: slow down (the provider asks to retry after 3 s")
