"""The OpenAI providers hand the conversation to the SDK as ``extra_body`` (``openai.untyped``), so the SDK's typed
walk of the parameters does not go over every message of the history on every call: what reaches the server must
be byte for byte what ``create(**provider.request(env))`` sends."""

from __future__ import annotations

import base64
from typing import Any

import httpx2
import pytest

from brute_nb.attachments import from_bytes
from brute_nb.message import Log, Message, Role, ToolCall
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses, untyped
from brute_nb.testing import FakeProvider

pytestmark = pytest.mark.anyio

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5f6e7a60000000049454e44ae426082")
SHELL = {"name": "shell", "description": "Run a command.",
         "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}


def conversation() -> Log:
    """Text, a call with text, a call alone (``content: null`` on Chat), results, reasoning, non-ASCII text,
    attachments."""
    return Log([
        Message(Role.USER, "list the files, then count them — «merci»"),
        Message(Role.ASSISTANT, "Let me look.", tool_calls=[ToolCall("c1", "shell", {"command": "ls"})],
                meta={"reasoning_content": "first ls"}),
        Message(Role.TOOL, "a.txt\nb.txt", tool_call_id="c1"),
        Message(Role.ASSISTANT, "", tool_calls=[ToolCall("c2", "shell", {"command": "ls | wc -l"}),
                                                ToolCall("c3", "shell", {"command": "pwd"})]),
        Message(Role.TOOL, "2", tool_call_id="c2"),
        Message(Role.TOOL, "/tmp", tool_call_id="c3"),
        Message(Role.USER, "and now?"),
        # attachments: the content parts the SDK's TypedDicts type most (image_url / input_image, file /
        # input_file, a text file inlined), on a user turn and on a tool result
        Message(Role.USER, "what do these say?", attachments=(
            from_bytes(PNG, "image/png", "plot.png"), from_bytes(b"%PDF-1.4\n%%EOF\n", "application/pdf", "r.pdf"),
            from_bytes(b"a,b\n1,2\n", "text/csv", "t.csv"))),
        Message(Role.ASSISTANT, "", tool_calls=[ToolCall("c4", "plot", {})]),
        Message(Role.TOOL, "drawn", tool_call_id="c4", attachments=(from_bytes(PNG, "image/png", "p.png"),)),
        Message(Role.USER, "thanks"),
    ])


def provider(kind: str, client: Any, **params: Any) -> OpenAIChat | OpenAIResponses:
    cls = OpenAIChat if kind == "chat" else OpenAIResponses
    return cls("gpt-fake", client=client, **params)


def sdk_client(fake: FakeProvider, bodies: list[bytes]) -> Any:
    import openai

    def handler(request: Any) -> Any:
        bodies.append(request.content)
        return fake.handler(request)

    return openai.AsyncOpenAI(api_key=fake.api_key, base_url="http://fake.invalid/v1", max_retries=0,
                              http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", ["chat", "responses"])
async def test_the_request_is_the_bytes_create_sends(kind: str, stream: bool) -> None:
    fake = FakeProvider(["one", "two"])
    bodies: list[bytes] = []
    client = sdk_client(fake, bodies)
    p = provider(kind, client, stream=stream, temperature=0.5, extra_body={"metadata": {"run": "b"}},
                 extra_headers={"X-Test": "1"})
    env = {"messages": conversation(), "tools": [SHELL]}
    await p(env)
    direct = p.request({"messages": conversation(), "tools": [SHELL]})
    create = client.chat.completions.create if kind == "chat" else client.responses.create
    if stream:
        async with await create(**direct) as events:
            async for _ in events:
                pass
    else:
        await create(**direct)
    assert len(bodies) == 2
    assert bodies[0] == bodies[1]
    assert b'"metadata":{"run":"b"}' in bodies[0]  # the caller's extra_body still goes out
    parts = [b'"image_url"', b'"file"'] if kind == "chat" else [b'"input_image"', b'"input_file"']
    # the attachments went out: the text file pasted for Chat, an input_file for Responses (issue 42 §3)
    text = b"a,b" if kind == "chat" else b"data:text/csv;base64," + base64.b64encode(b"a,b\n1,2\n")
    assert all(part in bodies[0] for part in parts) and text in bodies[0]
    if kind == "chat":
        assert b'"content":null,"tool_calls"' in bodies[0]  # the call-only turn keeps its wire form


@pytest.mark.parametrize("kind", ["chat", "responses"])
async def test_the_sdk_does_not_walk_the_conversation(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import openai.resources.chat.completions.completions as chat
    import openai.resources.responses.responses as responses

    module = chat if kind == "chat" else responses
    walked: list[Any] = []
    real = module.async_maybe_transform

    async def spy(data: Any, expected: Any) -> Any:
        walked.append(data.get("messages" if kind == "chat" else "input"))
        return await real(data, expected)

    monkeypatch.setattr(module, "async_maybe_transform", spy)
    fake = FakeProvider(["ok"])
    await provider(kind, sdk_client(fake, []), stream=False)({"messages": conversation(), "tools": [SHELL]})
    assert walked == [[]]
    sent = fake.requests[0]["json"]["messages" if kind == "chat" else "input"]
    assert len(sent) >= 7


def test_a_callers_extra_body_wins_over_the_conversation() -> None:
    kwargs = untyped({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                      "extra_body": {"messages": "theirs", "x": 1}}, "messages")
    assert kwargs["messages"] == []
    assert kwargs["extra_body"] == {"messages": "theirs", "x": 1}
    assert untyped({"model": "m", "messages": [1]}, "messages")["extra_body"] == {"messages": [1]}
