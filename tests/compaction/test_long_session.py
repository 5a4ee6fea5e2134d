"""A long scripted session: hundreds of tool calls with large outputs stay under the window, through every rung.

The fake model reports ``input_tokens`` on a yardstick of its own (chars/3.5 plus a fixed tool-schema overhead),
the way a real provider's tokenizer differs from our chars/4 estimate; the test checks every request it was sent
against that yardstick. Every compacted log, and every request the model was sent, is checked against the strict
fake server's rules for both providers; the final conversation is then really sent, through the ``openai`` and
``anthropic`` SDKs, to a FakeProvider, which must accept it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from compaction_helpers import AnswerTools, check_valid, unrepaired

from brute_nb.agent import agent
from brute_nb.errors import ProviderError
from brute_nb.event_loop import run_sync
from brute_nb.message import Log, Message, dumps
from brute_nb.middleware import DefaultCompactionPipeline, SessionLog, SystemPrompt, ToolResultLoop
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat
from brute_nb.sessions.file import archive_path, read_session
from brute_nb.testing import FakeProvider
from brute_nb.testing.scripted import Scripted, call, reply

WINDOW = 20_000
SCHEMA_TOKENS = 300


def true_tokens(messages: list[dict[str, Any]]) -> int:
    return SCHEMA_TOKENS + sum(4 + math.ceil(len(dumps(m)) / 3.5) for m in messages)


def step(n: int, text: str) -> Any:
    def make(env: dict[str, Any]) -> Message:
        sent = [m.to_dict() for m in env["messages"]]
        return reply(text, call("read", {"file_path": f"src/f{n}.py"}), input_tokens=true_tokens(sent))

    return make


def output(call: Any, env: dict[str, Any]) -> str:
    n = int(call.arguments["file_path"][5:-3])
    size = 4_000 if n < 100 else 100 if n < 200 else 16_000  # big outputs, then chatty steps, then huge outputs
    return f"{n}:" + "o" * size


def test_hundreds_of_tool_calls_stay_under_the_window_through_all_three_layers(tmp_path: Path) -> None:
    summaries: list[int] = []

    def summariser(env: dict[str, Any]) -> None:
        summaries.append(len(env["messages"][1].content))
        env["messages"].append(Message("assistant", f"## Goal\nread every file\n## Progress\nsummary {len(summaries)}"))

    model = Scripted()
    turns = [(0, 100, "reading"), (100, 200, "thinking " * 260), (200, 300, "reading")]
    for first, last, text in turns:
        model.add(*[step(n, text) for n in range(first, last)], "done")
    path = tmp_path / "long.jsonl"
    bot = (agent().use(SessionLog, path=path).use(SystemPrompt, text="You read files.").use(ToolResultLoop)
           .use(DefaultCompactionPipeline, window=WINDOW, summariser=summariser)
           .use(AnswerTools, output=output).run(model))
    events: list[dict[str, Any]] = []

    def on_compacted(env: dict[str, Any], payload: dict[str, Any]) -> None:
        check_valid(env["messages"])
        events.append(payload)

    bot.on("compacted", on_compacted)
    for prompt in ("read the first hundred", "now think about the next hundred", "and read the last hundred"):
        bot.start(prompt)

    assert model.calls == 303 and not model.replies
    assert max(true_tokens(r["messages"]) for r in model.requests) <= WINDOW
    for request in model.requests:
        check_valid([Message.from_dict(m) for m in request["messages"]])
    layers = {p["layer"] for p in events}
    assert layers == {"tool_results", "sliding_window", "summary"}, layers
    assert summaries and all(p["tokens_after"] <= p["target"] for p in events if p["layer"] != "summary")
    final = read_session(path)
    check_valid(final)
    prompts = [m.content for m in final if m.role == "user" and not m.meta.get("summary")]
    assert prompts[0] == "read the first hundred" and prompts[-1] == "and read the last hundred"
    assert archive_path(path).read_bytes().count(b"\n") > 300
    assert_accepted_by_both_providers(final)


def assert_accepted_by_both_providers(log: list[Message]) -> None:
    """Send the compacted conversation plus a next prompt through the real SDK clients to the strict fake server."""
    conversation = [Message("system", "You read files."), *log, Message("user", "what next?")]
    with FakeProvider(["next: nothing", "next: nothing"]) as fake:
        handlers = [OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0),
                    AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)]
        for handler in handlers:
            # Unrepaired: every request is repaired on its way out (brute_nb.sendable), which would hide a compaction
            # that broke a call from its results.
            env: dict[str, Any] = {"messages": Log(conversation), "tools": []}
            with unrepaired():
                run_sync(lambda h=handler, e=env: h(e))  # type: ignore[misc]
            assert env["messages"][-1].content == "next: nothing"
        sent = [(r["api"], len(r["json"]["messages"])) for r in fake.requests]
    assert [api for api, _ in sent] == ["openai_chat", "anthropic"]
    assert all(n >= 3 for _, n in sent)


def test_the_fake_server_refuses_a_broken_conversation_through_the_sdks() -> None:
    read = call("read", {"file_path": "a.py"}, id="c1")
    separated = [Message("user", "go"), reply("", read), Message("user", "wait"),
                 Message("tool", "out", tool_call_id="c1")]
    with pytest.raises(ProviderError, match="tool_call_ids did not have response messages"):
        assert_accepted_by_both_providers(separated)
