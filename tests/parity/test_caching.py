"""Prompt caching: breakpoints placed within the API's limit, a byte-stable OpenAI prefix with a session key,
and the fake server's cache accounting (reads only of prefixes it has seen), all through the real SDKs."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from brute_nb import agent
from brute_nb.message import Message
from brute_nb.middleware import ToolResultLoop
from brute_nb.middleware.system_prompt import SystemPrompt
from brute_nb.prompt_cache import MAX_BREAKPOINTS, session_key, without_marks
from brute_nb.providers.replay import mismatch
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.testing.rules import request_problems

from .helpers import FACTORIES, READ, RunTools

pytestmark = pytest.mark.anyio

SYSTEM = "You are a careful agent. " * 400  # ~2,500 fake tokens: above the 1,024 a prefix needs to be cached
BIG = "x = 1  # a line of a file\n" * 200


def marks(body: dict[str, Any]) -> list[str]:
    found = []
    for i, t in enumerate(body.get("tools") or ()):
        if "cache_control" in t:
            found.append(f"tools.{i}")
    system = body.get("system")
    for i, b in enumerate(system if isinstance(system, list) else ()):
        if "cache_control" in b:
            found.append(f"system.{i}")
    for i, m in enumerate(body["messages"]):
        for j, b in enumerate(m["content"] if isinstance(m["content"], list) else ()):
            if "cache_control" in b:
                found.append(f"messages.{i}.{j}")
    return found


def looping(provider: Any) -> Any:
    return (agent().use(SystemPrompt, text=SYSTEM).use(ToolResultLoop).use(RunTools, tools=[READ], result=BIG)
            .run(provider))


@pytest.mark.parametrize("stream", [True, False])
async def test_place_breakpoints_and_the_fakes_cache_accounting(fake_provider: FakeProvider,
                                                                    stream: bool) -> None:
    fake_provider.add(*(reply(f"step {i}", call("read", {"file_path": str(i)})) for i in range(3)), "done")
    env = await looping(FACTORIES["anthropic"](fake_provider, stream=stream)).astart("read them")
    bodies = [r["json"] for r in fake_provider.requests]
    assert marks(bodies[0]) == ["system.0", "messages.0.0"]
    # From the second step: the previous step's end (read now) and this request's end (read by the next step).
    assert marks(bodies[1]) == ["system.0", "messages.0.0", "messages.2.0"]
    assert marks(bodies[3]) == ["system.0", "messages.4.0", "messages.6.0"]
    replies = [m for m in env["messages"] if m.role == "assistant"]
    first, later = replies[0].meta, [m.meta for m in replies[1:]]
    assert first["cache_read_tokens"] == 0 and first["cache_write_tokens"] > 1024  # tools + system + prompt written
    for before, meta in zip([first, *later], later, strict=False):
        # Each step reads everything the previous one wrote, and writes only what is new since.
        assert meta["cache_read_tokens"] == before["cache_read_tokens"] + before["cache_write_tokens"]
        assert 0 < meta["cache_write_tokens"] < meta["cache_read_tokens"]


async def test_without_caching_nothing_is_read(fake_provider: FakeProvider) -> None:
    fake_provider.add(*(reply("", call("read", {"file_path": str(i)})) for i in range(2)), "done")
    env = await looping(FACTORIES["anthropic"](fake_provider, cache=False)).astart("read them")
    assert all(marks(r["json"]) == [] for r in fake_provider.requests)
    assert all(m.meta["cache_read_tokens"] == 0 for m in env["messages"] if m.role == "assistant")


async def test_explicit_marks_are_kept_within_the_limit(fake_provider: FakeProvider) -> None:
    fake_provider.add("ok")
    history = [Message("user" if i % 2 == 0 else "assistant", f"part {i} " * 50).cache_until_here()
               for i in range(7)]
    a = agent().use(SystemPrompt, text=SYSTEM).use(RunTools, tools=[READ]).run(FACTORIES["anthropic"](fake_provider))
    env = a.new_env()
    env["messages"].extend(history)
    await a.app(env)
    found = marks(fake_provider.requests[0]["json"])
    assert len(found) == MAX_BREAKPOINTS
    assert "messages.6.0" in found and "messages.5.0" in found and "system.0" in found  # the latest ones win


def test_the_fake_refuses_a_fifth_breakpoint_as_the_api_does() -> None:
    body = {"model": "m", "max_tokens": 5, "system": [{"type": "text", "text": "s",
                                                       "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user" if i % 2 == 0 else "assistant",
                          "content": [{"type": "text", "text": f"t{i}", "cache_control": {"type": "ephemeral"}}]}
                         for i in range(4)]}
    assert any("A maximum of 4 blocks with cache_control" in p for p in request_problems("anthropic", body))
    body["messages"][0]["content"][0].pop("cache_control")
    assert request_problems("anthropic", body) == []


@pytest.mark.parametrize("kind", ["openai_chat", "openai_responses"])
async def test_openai_prefix_is_byte_stable_with_a_session_key(fake_provider: FakeProvider, kind: str) -> None:
    fake_provider.add(*(reply("", call("read", {"file_path": str(i)})) for i in range(3)), "done")
    env = await looping(FACTORIES[kind](fake_provider)).astart("read them", cache_key=session_key("s.jsonl"))
    bodies = [r["json"] for r in fake_provider.requests]
    key = "messages" if kind == "openai_chat" else "input"
    for before, after in itertools.pairwise(bodies):
        assert json.dumps(after[key]).startswith(json.dumps(before[key])[:-1])
        assert after["tools"] == before["tools"]
    assert {b["prompt_cache_key"] for b in bodies} == {session_key("s.jsonl")}
    cached = [m.meta["cache_read_tokens"] for m in env["messages"] if m.role == "assistant"]
    assert cached[0] == 0 and all(c > 0 and c % 128 == 0 for c in cached[1:])
    assert all(c < m.meta["input_tokens"] for c, m in zip(cached, [m for m in env["messages"]
                                                                   if m.role == "assistant"], strict=True))


def test_replay_compares_what_the_model_reads_not_the_cache_marks() -> None:
    plain = {"model": "m", "system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}
    marked = {"model": "m", "prompt_cache_key": "k", "system": [{"type": "text", "text": "Be brief.",
                                                                 "cache_control": {"type": "ephemeral"}}],
              "messages": [{"role": "user", "content": [{"type": "text", "text": "hi",
                                                         "cache_control": {"type": "ephemeral"}}]}]}
    assert without_marks(marked) == plain
    as_blocks = {**plain, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    assert without_marks(as_blocks) == plain  # a cassette recorded with block lists still matches
    assert mismatch({"method": "POST", "path": "/v1/messages", "request": plain}, "POST", "/v1/messages",
                    marked) == ""
    changed = {**marked, "system": [{"type": "text", "text": "Be long."}]}
    assert "Be long." in mismatch({"method": "POST", "path": "/v1/messages", "request": plain}, "POST",
                                  "/v1/messages", changed)
