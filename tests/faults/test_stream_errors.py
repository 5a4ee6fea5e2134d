"""A retry and a stream: an error an API sends inside a 200 stream, after the reply began, is the failure of the HTTP
status its type or code stands for, on all three APIs alike. Anthropic's ``event: error`` (``overloaded_error``,
``rate_limit_error``, ``api_error``), a Chat Completions ``data: {"error": ...}`` line, and Responses' ``error``
event or ``response.failed`` event (``server_error``, ``rate_limit_exceeded``) are asked again as the SDK retries a
529, 429 or 500 (as often, with the same backoff, said in one line, the failed try's text dropped); an
``invalid_request_error`` is not asked again and ends the turn in one line naming it, the streamed text kept once.

Through the real SDK clients against the loopback fake, which sends each error in the wire shape the API documents
(the SDKs' own event types read it back); every HTTP request the fake reads is counted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from brute_nb import ProviderError, agent
from brute_nb.event_loop import run_sync
from brute_nb.middleware import DefaultToolPipeline, PartialReply, SessionLog, ToolResultLoop
from brute_nb.middleware.retry import RetryReply
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.notebook.views.display import CellView
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, Fault, error_mid_stream, failed_mid_stream

STREAMED = "This reply never arrives whole."
"""The text the fake streams before a fault it sends part-way through a reply."""
AFTER = 4
"""Stream events sent before the error: enough for some of the text on every API."""

MODELS: dict[str, Callable[[FakeProvider, int], Any]] = {
    "anthropic": lambda fake, retries: AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key,
                                                         max_retries=retries),
    "chat": lambda fake, retries: OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key,
                                             max_retries=retries),
    "responses": lambda fake, retries: OpenAIResponses("gpt-fake", base_url=fake.openai_base_url,
                                                       api_key=fake.api_key, max_retries=retries),
}
WAYS: dict[str, tuple[str, Callable[..., Fault]]] = {
    "anthropic-error-event": ("anthropic", error_mid_stream),
    "chat-error-line": ("chat", error_mid_stream),
    "responses-error-event": ("responses", error_mid_stream),
    "responses-failed-event": ("responses", failed_mid_stream),
}
"""Each API's way of ending a 200 stream in an error: (the API, the fake's fault sending it)."""
TRANSIENT = {"overloaded": (529, "Overloaded"), "server-error": (500, "The server had an error processing it."),
             "rate-limit": (429, "Rate limit reached for requests.")}
"""Faults the SDK retries when they come as an HTTP status before the reply: (status, the API's words)."""


def stack(path: Path, provider: Any, retries: int, said: list[str]) -> Any:
    a = (agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=[])
         .use(PartialReply).use(RetryReply, retries=retries).run(provider))
    a.on("retry", lambda env, p: said.append(p["message"]))
    return a


def streamed_lines(fake: FakeProvider, path: str, body: dict[str, Any], headers: dict[str, str]) -> list[str]:
    import httpx2

    # httpx's 5 s default read timeout failed this test 1 run in 3 with six runs at once on two cores: the fake's
    # first request reads the SDKs' types to check the body. The SDKs themselves wait 10 minutes.
    response = httpx2.post(f"{fake.base_url}{path}", json={**body, "stream": True}, headers=headers, timeout=120)
    assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
    return [e for e in response.text.split("\n\n") if e.strip()]


def data_of(event: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(event.split("data: ", 1)[1])
    return found


def test_the_fake_sends_each_apis_error_event_in_its_documented_shape() -> None:
    """The SDKs' own types read what the fake sends: Responses' ``ResponseErrorEvent`` (code, message, param and
    sequence number at the top) and ``ResponseFailedEvent`` (the response, failed, with its ``error``), Chat
    Completions' ``{"error": {message, type, param, code}}`` data line, Anthropic's ``event: error``."""
    from openai.types.responses import ResponseErrorEvent, ResponseFailedEvent

    openai_headers = {"authorization": f"Bearer {FakeProvider().api_key}"}
    with FakeProvider([error_mid_stream(500, "It broke.", after=3), failed_mid_stream(429, "Slow down.", after=3),
                       error_mid_stream(429, "Slow down.", after=3), error_mid_stream(529, "Overloaded", after=3)]
                      ) as fake:
        responses_body = {"model": "gpt-fake", "input": "hi"}
        error = streamed_lines(fake, "/v1/responses", responses_body, openai_headers)
        failed = streamed_lines(fake, "/v1/responses", responses_body, openai_headers)
        chat = streamed_lines(fake, "/v1/chat/completions",
                              {"model": "gpt-fake", "messages": [{"role": "user", "content": "hi"}]}, openai_headers)
        anthropic = streamed_lines(fake, "/v1/messages", {"model": "claude-fake", "max_tokens": 10,
                                                          "messages": [{"role": "user", "content": "hi"}]},
                                   {"x-api-key": fake.api_key or "", "anthropic-version": "2023-06-01"})
        assert fake.received == 4
    assert len(error) == 4 and error[-1].startswith("event: error\n")
    event = ResponseErrorEvent.model_validate(data_of(error[-1]), strict=True)
    assert (event.code, event.message, event.sequence_number) == ("server_error", "It broke.", 3)
    assert "error" not in data_of(error[-1])  # not the Chat Completions envelope the SDK raises on by itself
    assert failed[-1].startswith("event: response.failed\n")
    failure = ResponseFailedEvent.model_validate(data_of(failed[-1]))
    assert failure.response.status == "failed" and failure.response.error is not None
    assert (failure.response.error.code, failure.response.error.message) == ("rate_limit_exceeded", "Slow down.")
    assert len(chat) == 4 and not chat[-1].startswith("event:")
    assert data_of(chat[-1]) == {"error": {"message": "Slow down.", "type": "requests", "param": None,
                                           "code": "rate_limit_exceeded"}}
    assert anthropic[-1].startswith("event: error\n")
    assert data_of(anthropic[-1]) == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@pytest.mark.parametrize("fault", sorted(TRANSIENT))
@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_transient_error_mid_stream_is_asked_again_on_every_api(tmp_path: Path, way: str, fault: str) -> None:
    api, make = WAYS[way]
    status, words = TRANSIENT[fault]
    said: list[str] = []
    with FakeProvider([make(status, words, after=AFTER), "The whole answer."]) as fake:
        env = stack(tmp_path / "s.jsonl", MODELS[api](fake, 2), 2, said).start("hi")
        assert fake.received == 2 and fake.requests[0]["json"] == fake.requests[1]["json"]
    assert env["messages"][-1].content == "The whole answer."
    saved = read_session(tmp_path / "s.jsonl")
    assert [(m.role, m.content) for m in saved] == [("user", "hi"), ("assistant", "The whole answer.")]
    assert len(said) == 1 and "\n" not in said[0] and words in said[0] and "1 of 2" in said[0], said


@pytest.mark.parametrize("way", sorted(WAYS))
def test_the_retries_end_as_the_sdks_would_and_the_last_tries_text_is_kept_once(tmp_path: Path, way: str) -> None:
    api, make = WAYS[way]
    said: list[str] = []
    path = tmp_path / "s.jsonl"
    with FakeProvider([make(500, "The server had an error.", after=AFTER)] * 3 + ["never asked"]) as fake:
        with pytest.raises(ProviderError, match="server had an error") as raised:
            stack(path, MODELS[api](fake, 2), 2, said).start("hi")
        assert fake.received == 3 and len(said) == 2
    assert raised.value.status == 500 and "\n" not in str(raised.value)
    saved = read_session(path)
    assert [m.role for m in saved] == ["user", "assistant"] and saved[-1].meta["interrupted"] is True
    assert saved[-1].content and STREAMED.startswith(saved[-1].content)


@pytest.mark.parametrize("way", sorted(WAYS))
def test_an_invalid_request_mid_stream_is_not_asked_again_and_says_so(tmp_path: Path, way: str) -> None:
    api, make = WAYS[way]
    said: list[str] = []
    path = tmp_path / "s.jsonl"
    with FakeProvider([make(400, "Invalid value for 'top_p'.", after=AFTER), "never asked"]) as fake:
        with pytest.raises(ProviderError) as raised:
            stack(path, MODELS[api](fake, 2), 2, said).start("hi")
        assert fake.received == 1 and said == []
    message = str(raised.value)
    assert "Invalid value for 'top_p'." in message and "not asked again" in message and "\n" not in message
    assert "HTTP 200" not in message and "call failed" not in message and not raised.value.retryable
    saved = read_session(path)
    assert [m.role for m in saved] == ["user", "assistant"] and saved[-1].meta["interrupted"] is True
    assert saved[-1].content and STREAMED.startswith(saved[-1].content)


@pytest.mark.parametrize("way", sorted(WAYS))
def test_the_notebook_turn_retries_and_the_cell_shows_the_answer_once(tmp_path: Path, way: str) -> None:
    api, make = WAYS[way]
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(root=tmp_path, tools="none"))
    with FakeProvider([make(529, "Overloaded right now", after=AFTER), "The whole answer."]) as fake:
        nb.provider = MODELS[api](fake, 1)
        outputs: dict[str, str] = {}  # each output as the cell ends up showing it, in the order it was made

        def publish(bundle: Any, *a: Any, display_id: str | None = None, **k: Any) -> None:
            outputs[display_id or f"output {len(outputs)}"] = bundle.get("text/plain", "")

        def update(bundle: Any, display_id: str, *a: Any, **k: Any) -> None:
            outputs[display_id] = bundle.get("text/plain", "")

        view = CellView(publish=publish, update=update)
        view.attach(nb.agent)
        try:
            env = run_sync(lambda: nb.aask("hi"))
        finally:
            view.detach(nb.agent)
        view.finish(env=env)
        assert fake.received == 2
    shown = list(outputs.values())
    notices = [text for text in shown if "Overloaded right now" in text]
    assert len(notices) == 1 and "asking again" in notices[0], shown
    # the final outputs are built from the log: the answer once, nothing of the try that failed
    assert [text for text in shown if "The whole answer." in text] == ["The whole answer."], shown
    assert not any(STREAMED[:10] in text for text in shown), shown
    assert [m.role for m in read_session(tmp_path / "chat.jsonl")] == ["user", "assistant"]


def test_the_error_nested_as_openai_has_been_seen_to_send_it_reads_the_same(tmp_path: Path) -> None:
    """Besides its documented shape, the Responses API has been seen to nest the error in its ``error`` event
    (``{"type": "error", "error": {"type", "code", "message", "param"}, "sequence_number"}``, reported against the
    OpenAI SDKs for rate limits): the SDK then raises it itself, with no status, and the same table reads its code.
    The fake answers the retry (through its in-process handler); the first answer is that event, written out."""
    import httpx2
    import openai

    nested = {"type": "error", "sequence_number": 0, "error": {
        "type": "too_many_requests", "code": "too_many_requests", "message": "Too Many Requests", "param": None}}
    fake = FakeProvider(["The whole answer."])
    sent: list[Any] = []

    def answer(request: Any) -> Any:
        sent.append(request)
        if len(sent) == 1:
            event = f"event: error\ndata: {json.dumps(nested)}\n\n".encode()
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=event)
        return fake.handler(request)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    client = openai.AsyncOpenAI(api_key=fake.api_key, base_url="http://fake.invalid/v1", http_client=http)
    said: list[str] = []
    env = stack(tmp_path / "s.jsonl", OpenAIResponses("gpt-fake", client=client, max_retries=1), 1, said).start("hi")
    assert len(sent) == 2 and fake.received == 1
    assert env["messages"][-1].content == "The whole answer."
    assert len(said) == 1 and "too_many_requests (as HTTP 429): Too Many Requests" in said[0], said
    run_sync(http.aclose)


@pytest.mark.parametrize(("code", "kind", "status", "retried"), [
    ("rate_limit_exceeded", "requests", 429, True),  # OpenAI's rate limit: the code decides
    (None, "server_error", 500, True),
    ("invalid_api_key", "invalid_request_error", 401, False),
    ("insufficient_quota", "insufficient_quota", None, False),  # a quota does not come back in seconds
    (503, "ServiceUnavailableError", 503, True),  # a compatible server (vLLM) puts the HTTP status in code
    ("something_new", None, None, False),
])
def test_what_an_openai_error_code_mid_stream_stands_for(code: Any, kind: Any, status: Any, retried: bool) -> None:
    from brute_nb.providers.failures import stream_error

    error = stream_error("openai", code, kind, "What the API said.")
    assert (error.status, error.retryable) == (status, retried)
    assert "What the API said." in str(error) and ("not asked again" in str(error)) == (not retried)
