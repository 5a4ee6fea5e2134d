"""Issue 14 item 15: a server that answers an HTML page (a login page, a proxy) is named as such, with its URL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from brute_nb import ProviderError, agent
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
from tests.loopback import Handler, serve

PAGE = (b"<!DOCTYPE html>\n<html><head><title>Sign in - Corporate SSO</title></head>"
        b"<body><form method=post action=/login><input name=user></form></body></html>\n")


class LoginPage(Handler):
    """Answers every request as a captive portal does: 200, text/html, a login form, then closes the connection
    (HTTP/1.0: no pooled connection outlives the turn's event loop)."""

    protocol_version = "HTTP/1.0"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send(200, PAGE, {"content-type": "text/html; charset=utf-8"})


@pytest.fixture
def portal() -> Iterator[str]:
    with serve(LoginPage) as server:
        yield server.url


PROVIDERS = {
    "anthropic": (lambda url, **kw: AnthropicMessages("claude-x", base_url=url, **kw), "/v1/messages"),
    "openai": (lambda url, **kw: OpenAIChat("gpt-x", base_url=url + "/v1", **kw), "/v1/chat/completions"),
    "responses": (lambda url, **kw: OpenAIResponses("gpt-x", base_url=url + "/v1", **kw), "/v1/responses"),
}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_an_html_page_is_named_with_its_url(portal: str, kind: str, stream: bool) -> None:
    make, route = PROVIDERS[kind]
    handler = make(portal, api_key="k", max_retries=0, stream=stream)
    with pytest.raises(ProviderError) as info:
        agent().run(handler).start("hello")
    message = str(info.value)
    assert "answered with an HTML page" in message, message
    assert portal in message
    if stream:
        assert portal + route in message  # the very URL the request went to
    assert "AssertionError" not in message
