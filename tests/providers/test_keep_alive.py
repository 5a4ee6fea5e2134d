"""Against a keep-alive server (as the real APIs are), every path that builds or reuses a client sends exactly one
request a model call, on one reused connection, turn after turn (issue 13: a loop a turn lost or resent replies)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from brute_nb import agent
from brute_nb.compaction.tokens import TokenCounter
from brute_nb.errors import ProviderError, ProviderNotConfiguredError
from brute_nb.event_loop import run_sync
from brute_nb.message import Log, Message, Role, ToolCall
from brute_nb.middleware import DefaultCompactionPipeline, DefaultToolPipeline
from brute_nb.middleware.tool_result_loop import ToolResultLoop
from brute_nb.providers.base import STALL_TIMEOUT
from brute_nb.testing import FakeProvider, call, reply, stall
from brute_nb.tools.subagent import SubAgent

from .helpers import FACTORIES

KINDS = sorted(FACTORIES)
PAUSE = 3.0
"""Seconds between two turns: long enough for a pooled connection to sit idle, as between two cells."""


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_five_turns_send_five_requests_on_one_connection(kind: str, stream: bool) -> None:
    with FakeProvider([f"reply {n}" for n in range(5)]) as fake:
        a = agent().run(FACTORIES[kind](fake, stream=stream))
        replies = []
        for n in range(5):
            if n == 3:
                time.sleep(PAUSE)
            replies.append(a.start(f"question {n}")["messages"][-1].content)
        assert replies == [f"reply {n}" for n in range(5)]
        assert (fake.received, len(fake.requests), fake.connections) == (5, 5, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_turns_on_other_loops_each_send_one_request(kind: str) -> None:
    # A user's own `await agent.astart()` runs on another loop (the kernel's, or asyncio.run's): that loop gets its
    # own client, closed with it, and the brute_nb loop's client goes on working.
    with FakeProvider(["one", "two", "three", "four"]) as fake:
        a = agent().run(FACTORIES[kind](fake))
        texts = [a.start("q1")["messages"][-1].content,
                 anyio.run(lambda: a.astart("q2"))["messages"][-1].content,
                 a.start("q3")["messages"][-1].content,
                 anyio.run(lambda: a.astart("q4"))["messages"][-1].content]
        assert texts == ["one", "two", "three", "four"]
        assert fake.received == 4


@pytest.mark.parametrize("kind", KINDS)
def test_a_sub_agent_and_its_parent_each_send_one_request_per_call(kind: str) -> None:
    per_turn = [reply("", call("explore", {"task": "look"})), "found it", "parent done"]
    with FakeProvider(per_turn * 3) as fake:
        tool = SubAgent(agent().run(FACTORIES[kind](fake)), name="explore", description="Explore the workspace.")
        parent = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[tool]).run(FACTORIES[kind](fake))
        for n in range(3):
            env = parent.start(f"turn {n}")
            assert env["messages"][-1].content == "parent done"
            assert env["messages"][-2].content == "found it"
        assert (fake.received, len(fake.requests)) == (9, 9)


def _history(steps: int) -> Log:
    log = Log([Message(Role.USER, "first")])
    for n in range(steps):
        log.append(Message(Role.ASSISTANT, "", tool_calls=[ToolCall(f"c{n}", "read", {})]))
        log.append(Message(Role.TOOL, "x" * 50, tool_call_id=f"c{n}"))
    return log


async def _nothing(env: Any) -> None:
    return None


@pytest.mark.parametrize("kind", KINDS)
def test_the_compaction_summariser_shares_the_loop_and_the_connection(kind: str) -> None:
    with FakeProvider(["summary one", "summary two", "after"]) as fake:
        model = FACTORIES[kind](fake)
        for n in (1, 2):
            mw = DefaultCompactionPipeline(_nothing, window=400, summariser=model)
            env: dict[str, Any] = {"messages": _history(30), "events": None}
            env["messages"].insert(1, Message(Role.USER, "y" * 8000))
            assert TokenCounter().estimate(env["messages"]) > 400
            run_sync(lambda env=env, mw=mw: mw.compact(env))  # type: ignore[misc]
            assert any(f"summary {'one' if n == 1 else 'two'}" in m.content for m in env["messages"])
        assert agent().run(model).start("and now")["messages"][-1].content == "after"
        assert (fake.received, fake.connections) == (3, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_a_stalled_server_fails_the_call_after_the_stall_timeout(kind: str) -> None:
    with FakeProvider([stall(after=1), "back again"]) as fake:
        a = agent().run(FACTORIES[kind](fake, stall_timeout=0.5))
        with pytest.raises(ProviderError) as info:
            a.start("hello?")
        assert "no data arrived for 0.5 s (the stream stalled)" in str(info.value)
        assert "stall_timeout=" in str(info.value)
        assert fake.received == 1  # max_retries=0: the stall was not sent again
        assert a.start("again")["messages"][-1].content == "back again"


def test_the_stall_timeout_is_the_streams_read_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    model = FACTORIES["anthropic"](None, api_key="k")
    assert model.client.timeout.read == STALL_TIMEOUT
    monkeypatch.setenv("BRUTE_STALL_TIMEOUT", "12")
    assert FACTORIES["openai_chat"](None, api_key="k").client.timeout.read == 12
    assert FACTORIES["openai_chat"](None, api_key="k", timeout=3).client.timeout.read == 3
    assert FACTORIES["openai_chat"](None, api_key="k", stream=False).client.timeout.read != 12
    monkeypatch.setenv("BRUTE_STALL_TIMEOUT", "soon")
    with pytest.raises(ProviderNotConfiguredError, match="BRUTE_STALL_TIMEOUT"):
        FACTORIES["openai_chat"](None, api_key="k")
    with pytest.raises(ProviderNotConfiguredError, match="stall_timeout"):
        FACTORIES["openai_chat"](None, api_key="k", stall_timeout=0)
