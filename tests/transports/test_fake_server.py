"""The fake provider enforces the real APIs' rules and injects faults, seen through the real SDK clients."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from brute_nb.testing import FakeProvider, call, malformed_json, rate_limit, reply, server_error, slow, truncated

_clients: list[Any] = []
"""The clients the running test made: each is closed when it ends (its pooled connections with it)."""


@pytest.fixture(autouse=True)
def _clients_closed() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()


def openai_client(fake: FakeProvider, **kw: Any) -> Any:
    import openai

    _clients.append(openai.OpenAI(base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0, **kw))
    return _clients[-1]


def anthropic_client(fake: FakeProvider, **kw: Any) -> Any:
    import anthropic

    _clients.append(anthropic.Anthropic(base_url=fake.base_url, api_key=fake.api_key, max_retries=0, **kw))
    return _clients[-1]


def test_openai_rejects_an_unanswered_tool_call(fake_provider: FakeProvider) -> None:
    import openai

    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "well?"},
    ]
    with pytest.raises(openai.BadRequestError) as info:
        openai_client(fake_provider).chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert info.value.status_code == 400
    assert "did not have response messages: c1" in str(info.value)


def test_openai_rejects_an_orphan_tool_message(fake_provider: FakeProvider) -> None:
    import openai

    messages = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "zz", "content": "x"}]
    with pytest.raises(openai.BadRequestError, match="must be a response to a preceding"):
        openai_client(fake_provider).chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("messages", "needle"),
    [
        ([{"role": "assistant", "content": "hi"}], "first message must use the \"user\" role"),
        ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "roles must alternate"),
        ([{"role": "user", "content": [{"type": "text", "text": ""}]}], "text content blocks must be non-empty"),
        ([{"role": "system", "content": "s"}, {"role": "user", "content": "b"}], "top-level `system`"),
        ([{"role": "user", "content": "a"},
          {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "x"}]}],
         "unexpected `tool_use_id`"),
        ([{"role": "user", "content": "a"},
          {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}],
         "`tool_use` ids were found without `tool_result` blocks immediately after: t1"),
    ],
)
def test_anthropic_rules(fake_provider: FakeProvider, messages: list[Any], needle: str) -> None:
    import anthropic

    with pytest.raises(anthropic.BadRequestError) as info:
        anthropic_client(fake_provider).messages.create(model="c", max_tokens=5, messages=messages)
    assert needle in str(info.value)
    assert fake_provider.script == []  # nothing consumed from the script by a refused request


def test_request_problems_checks_a_body_without_a_server() -> None:
    from brute_nb.testing import rules

    body = {"model": "m", "messages": [{"role": "user", "content": "a"}]}
    assert rules.request_problems("openai_chat", body) == []
    assert rules.request_problems("anthropic", body) == ["max_tokens: Field required"]
    with pytest.raises(ValueError, match="unknown API 'gemini'"):
        rules.request_problems("gemini", body)


def test_responses_rejects_a_call_without_output(fake_provider: FakeProvider) -> None:
    import openai

    items = [{"role": "user", "content": "hi"},
             {"type": "function_call", "call_id": "fc", "name": "f", "arguments": "{}"}]
    with pytest.raises(openai.BadRequestError, match="No tool output found for function call fc"):
        openai_client(fake_provider).responses.create(model="m", input=items)  # type: ignore[arg-type]


def test_wrong_key_is_401(fake_provider: FakeProvider) -> None:
    import openai

    client = openai.OpenAI(base_url=fake_provider.openai_base_url, api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_scripted_tool_call_and_requests_are_recorded(fake_provider: FakeProvider) -> None:
    fake_provider.add(reply("checking", call("read", {"file_path": "a"})))
    out = anthropic_client(fake_provider).messages.create(
        model="c", max_tokens=5, messages=[{"role": "user", "content": "go"}])
    assert [b.type for b in out.content] == ["text", "tool_use"]
    assert fake_provider.requests[0]["json"]["messages"][0]["content"] == "go"
    assert fake_provider.requests[0]["path"] == "/v1/messages"


def test_faults_surface_as_sdk_errors(fake_provider: FakeProvider) -> None:
    import openai

    fake_provider.add(rate_limit(retry_after=7), server_error(), malformed_json())
    client = openai_client(fake_provider)
    ask = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(**ask)  # type: ignore[call-overload]
    assert info.value.response.headers["retry-after"] == "7"
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(**ask)  # type: ignore[call-overload]
    with pytest.raises(ValueError):  # the SDK lets the decoder error through
        client.chat.completions.create(**ask)  # type: ignore[call-overload]


def test_a_truncated_stream_drops_the_connection_mid_body(fake_provider: FakeProvider) -> None:
    # Over keep-alive a stream is chunked: a cut connection is a body left incomplete, as a real server's would be.
    fake_provider.add(truncated(after=3))
    stream = openai_client(fake_provider).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True)
    import openai

    chunks = []
    with pytest.raises(openai.APIConnectionError) as info:
        chunks.extend(stream)
    assert "incomplete chunked read" in str(info.value.__cause__)
    assert len(chunks) == 3 and all(c.choices[0].finish_reason is None for c in chunks)


def test_a_truncated_stream_without_keep_alive_just_ends() -> None:
    with FakeProvider([truncated(after=3)], keep_alive=False) as fake:
        stream = openai_client(fake).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True)
        chunks = list(stream)
    assert chunks and all(c.choices[0].finish_reason is None for c in chunks)


def test_a_slow_stream_waits_between_events_until_the_server_closes() -> None:
    import openai

    with FakeProvider([slow("one two three four five six", delay=60)]) as fake:
        stream = openai_client(fake).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True)
        first = next(iter(stream))
        fake.close()  # ends the 60 s wait before the second event: the client sees the stream cut short
        rest = []
        with pytest.raises(openai.APIConnectionError):
            rest.extend(stream)
    assert first.choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in rest) != "one two three four five six"


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.anyio
async def test_keep_alive_serves_every_request_on_one_connection(stream: bool) -> None:
    import openai

    with FakeProvider(["one", "two", "three"]) as fake:
        async with openai.AsyncOpenAI(base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0) as client:
            ask: Any = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
            for expected in ("one", "two", "three"):
                if stream:
                    async with await client.chat.completions.create(**ask, stream=True) as events:
                        assert events.response.http_version == "HTTP/1.1"
                        assert events.response.headers["transfer-encoding"] == "chunked"
                        text = "".join([c.choices[0].delta.content or "" async for c in events if c.choices])
                else:
                    text = (await client.chat.completions.create(**ask)).choices[0].message.content
                assert text == expected
        assert (fake.received, fake.connections) == (3, 1)


def test_without_keep_alive_every_request_needs_a_new_connection() -> None:
    with FakeProvider(["one", "two"], keep_alive=False) as fake, openai_client(fake) as client:
        for _ in range(2):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert (fake.received, fake.connections) == (2, 2)


def test_every_request_is_counted_even_refused_ones(fake_provider: FakeProvider) -> None:
    import openai

    with openai_client(fake_provider) as client, pytest.raises(openai.NotFoundError):
        client.get("/nowhere", cast_to=object)
    with openai.OpenAI(base_url=fake_provider.openai_base_url, api_key="sk-wrong", max_retries=0) as wrong, \
            pytest.raises(openai.AuthenticationError):
        wrong.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert fake_provider.received == 2
    assert len(fake_provider.requests) == 1  # only the API call parsed as one; the 404 is counted all the same


def test_closing_the_fake_ends_its_kept_alive_connections() -> None:
    with FakeProvider(["one", "two"]) as fake, openai_client(fake) as client:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        fake.close()
        fake.start()  # a new server on a new port; the old connection must not still be answered
        with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the refused connection its own way
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_exhausted_script_says_how_to_fix(fake_provider: FakeProvider) -> None:
    import openai

    with pytest.raises(openai.InternalServerError, match=r"FakeProvider.add"):
        openai_client(fake_provider).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_mock_transport_handler_serves_the_same_answers() -> None:
    import anthropic

    fake = FakeProvider(["from the mock"])
    client = anthropic.Anthropic(api_key=fake.api_key, max_retries=0,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(fake.handler)))
    with client.messages.stream(model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}]) as stream:
        text = "".join(stream.text_stream)
    assert text == "from the mock"
    assert fake.requests[0]["json"]["stream"] is True


def test_base_url_needs_a_running_server() -> None:
    with pytest.raises(RuntimeError, match="context manager"):
        _ = FakeProvider().base_url


@pytest.mark.parametrize("wire", ["socket", "mock"])
def test_first_token_holds_each_answer_back_as_a_model_thinking(wire: str) -> None:
    """A real model answers after its time to first token; a fake that answers at once is kinder to code that does
    work before or after its request (the cold-start benchmark models a real one with this). A lower bound only:
    load can make it later, never sooner."""
    import time


    with FakeProvider(["one", "two"], first_token=0.3) as fake:
        kw: dict[str, Any] = ({"http_client": httpx2.Client(transport=httpx2.MockTransport(fake.handler))}
                              if wire == "mock" else {})
        client = anthropic_client(fake, **kw)
        t0 = time.perf_counter()
        got = client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
        assert time.perf_counter() - t0 >= 0.3 and got.content[0].text == "one"  # type: ignore[union-attr]
        t0 = time.perf_counter()
        with client.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as s:
            assert s.get_final_text() == "two"
        assert time.perf_counter() - t0 >= 0.3


def _reset_after_one_request(address: tuple[str, int]) -> None:
    """A client that sends one request on a kept-alive connection, reads the reply and hangs up with a reset (as
    a pool that is dropped, or a killed process, does), while the server waits for the next request."""
    import socket
    import struct

    with socket.create_connection(address) as client:
        client.sendall(b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
        client.recv(65536)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _served_by_new_threads(before: set[Any]) -> None:
    """Wait until the connection threads started since ``before`` are over (each prints its error, if any, first)."""
    import threading

    for thread in set(threading.enumerate()) - before:
        if "process_request" in thread.name:
            thread.join(30)
            assert not thread.is_alive(), "the server's connection thread did not end after the client's reset"


def test_a_client_that_resets_its_connection_is_no_error_of_the_fake(capfd: pytest.CaptureFixture[str]) -> None:
    """A client's reset is normal on a kept-alive connection: the server thread printed a ConnectionResetError
    traceback into the output of whichever test ran then (issue 39 §2.16)."""
    import threading

    before = set(threading.enumerate())
    with FakeProvider() as fake:
        _reset_after_one_request(fake._server.server_address[:2])  # type: ignore[union-attr]
        _served_by_new_threads(before)
    assert capfd.readouterr().err == ""


def test_a_client_that_resets_its_connection_is_no_error_of_the_loopback(capfd: pytest.CaptureFixture[str]) -> None:
    import threading

    from tests import loopback

    class Handler(loopback.Handler):
        def do_GET(self) -> None:
            self.send(404)

    before = set(threading.enumerate())
    with loopback.serve(Handler) as server:
        _reset_after_one_request(("127.0.0.1", server.port))
        _served_by_new_threads(before)
    assert capfd.readouterr().err == ""
