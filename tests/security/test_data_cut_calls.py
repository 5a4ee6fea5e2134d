"""Issue 14 item 15: a tool call cut off by max_tokens never runs, the model is told why, and a repeat stops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brute_nb import agent
from brute_nb.middleware import DefaultToolPipeline, MaxIterations, SessionLog, ToolResultLoop
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, Reply, call
from brute_nb.tools import tool

written: list[dict[str, Any]] = []


@tool
def write_note(path: str, text: str) -> str:
    """Writes ``text`` to ``path``."""
    written.append({"path": path, "text": text})
    return "written"


def cut(arguments: str) -> Reply:
    return Reply(calls=(call("write_note", arguments),), finish="length")


def provider(kind: str, fake: FakeProvider) -> Any:
    if kind == "openai":
        return OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
    return AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_repeated_cut_is_reported_and_stops_after_two_calls(tmp_path: Path, kind: str) -> None:
    written.clear()
    path = tmp_path / "s.jsonl"
    same = cut('{"path": "notes.md", "text": "a very long note that the token limit cut')
    with FakeProvider([same] * 50) as fake:
        a = (agent().use(SessionLog, path=path).use(ToolResultLoop).use(MaxIterations, limit=50)
             .use(DefaultToolPipeline, tools=[write_note]).run(provider(kind, fake)))
        env = a.start("write a long note")
        assert len(fake.requests) == 2  # not 50
    assert written == []  # a call whose arguments were cut never runs
    assert env["should_exit"]["reason"] == "max_tokens_repeated"
    assert "cut off by its output token limit" in env["should_exit"]["message"]
    results = [m for m in read_session(path) if m.role.value == "tool"]
    assert len(results) == 2
    for r in results:
        assert "cut off by the output token limit (max_tokens)" in r.content
        assert "missing" not in r.content.lower() and "not valid JSON" not in r.content


def test_a_cut_that_still_parses_does_not_run_and_a_smaller_retry_does(tmp_path: Path) -> None:
    written.clear()
    with FakeProvider([cut('{"path": "a.py", "text": "def f():"}'),  # parses, but the content was cut
                       Reply(calls=(call("write_note", {"path": "a.py", "text": "ok"}),)), "done"]) as fake:
        a = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[write_note]).run(provider("openai", fake))
        env = a.start("write it")
    assert written == [{"path": "a.py", "text": "ok"}]
    assert env["messages"][-1].content == "done"
    assert not env.get("should_exit")
