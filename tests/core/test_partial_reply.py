"""Issue 28 §3: a reply stopped mid-stream keeps the text the user already read, and the next turn is valid.

The real SDK clients stream from the loopback fake (which refuses invalid histories as the APIs do); the turn is
cancelled from another thread, as the runner's interrupt and the widget's Stop do.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import brute_nb
from brute_nb.event_loop import Worker
from brute_nb.message import unanswered_calls
from brute_nb.middleware import PartialReply, SessionLog, ToolResultLoop
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.base import Provider
from brute_nb.providers.openai import OpenAIChat
from brute_nb.sessions.file import read_session
from brute_nb.testing import AnswerCalls, FakeProvider, call, reply, slow

WORDS = " ".join(f"word{i}" for i in range(60))
TOOLS = [{"name": "read", "description": "Read a file.",
          "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}}}]


def provider(api: str, fake: FakeProvider) -> Provider:
    if api == "anthropic":
        return AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)
    return OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)


def stop_after_first_words(agent: brute_nb.Agent, prompt: str) -> list[str]:
    """Run a turn and cancel it once some text has streamed; the deltas the user saw."""
    seen: list[str] = []
    streamed = threading.Event()

    def on_delta(env: dict[str, Any], payload: Any) -> None:
        seen.append(payload["text"])
        if "word2" in "".join(seen):
            streamed.set()

    agent.on("assistant_delta", on_delta)
    worker = Worker(lambda: agent.astart(prompt)).start()
    assert streamed.wait(20), "no text streamed"
    worker.cancel()
    assert worker.done.wait(20)
    assert worker.cancelled or worker.error is not None
    agent.off("assistant_delta", on_delta)
    return seen


@pytest.mark.parametrize("api", ["anthropic", "openai_chat"])
def test_stopped_reply_is_kept_marked_and_the_next_turn_is_accepted(api: str, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    with FakeProvider([slow(reply(WORDS, call("read", {"file_path": "a.txt"})), delay=0.05), "Carrying on."]) as fake:
        agent = (brute_nb.agent().use(SessionLog, path=path).use(ToolResultLoop).use(AnswerCalls, tools=TOOLS)
                 .use(PartialReply).run(provider(api, fake)))
        seen = stop_after_first_words(agent, "tell me a long story")

        saved = read_session(path)
        assert [m.role for m in saved] == ["user", "assistant"]
        partial = saved[1]
        assert partial.content == "".join(seen)[: len(partial.content)] and "word2" in partial.content
        assert "word59" not in partial.content  # it really was cut
        assert partial.meta["interrupted"] is True and partial.finish_reason == "interrupted"
        assert not partial.tool_calls and not unanswered_calls(saved)  # the call being streamed never ran

        env = agent.start("go on")  # the strict fake refuses an invalid history with a 400
        assert env["messages"][-1].content == "Carrying on."
        sent = fake.requests[-1]["json"]["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        assert "word2" in str(sent[1]["content"])


def test_nothing_streamed_adds_nothing_and_a_finished_reply_is_not_doubled(tmp_path: Path) -> None:
    gate = threading.Event()

    async def silent(env: dict[str, Any]) -> None:
        import anyio

        gate.set()
        await anyio.sleep(30)

    agent = brute_nb.agent().use(SessionLog, path=tmp_path / "a.jsonl").use(PartialReply).run(silent)
    worker = Worker(lambda: agent.astart("hello")).start()
    assert gate.wait(10)
    worker.cancel()
    assert worker.done.wait(10)
    assert [m.role for m in read_session(tmp_path / "a.jsonl")] == ["user"]

    async def answers_then_hangs(env: dict[str, Any]) -> None:
        import anyio

        brute_nb.events.emit(env, "assistant_delta", {"text": "done"})
        env["messages"].assistant("done")
        gate.set()
        await anyio.sleep(30)

    gate.clear()
    agent = brute_nb.agent().use(SessionLog, path=tmp_path / "b.jsonl").use(PartialReply).run(answers_then_hangs)
    worker = Worker(lambda: agent.astart("hello")).start()
    assert gate.wait(10)
    worker.cancel()
    assert worker.done.wait(10)
    assert [m.content for m in read_session(tmp_path / "b.jsonl")] == ["hello", "done"]


def test_an_error_mid_stream_is_not_a_stop(tmp_path: Path) -> None:
    """Only a stop keeps the text: a failed call is the provider's error, retried by the next turn."""

    async def fails(env: dict[str, Any]) -> None:
        brute_nb.events.emit(env, "assistant_delta", {"text": "half a"})
        raise ValueError("the stream broke")

    agent = brute_nb.agent().use(SessionLog, path=tmp_path / "c.jsonl").use(PartialReply).run(fails)
    with pytest.raises(ValueError, match="the stream broke"):
        agent.start("hello")
    assert [m.role for m in read_session(tmp_path / "c.jsonl")] == ["user"]
