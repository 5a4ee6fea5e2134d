from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import brute_nb
from brute_nb import CallbackWarning, MiddlewareError
from brute_nb.middleware import MaxIterations, SystemPrompt, ToolResultLoop
from brute_nb.testing.scripted import Scripted, call, reply


class Recorder:
    """A middleware that records the order it is entered and left in."""

    def __init__(self, app: Any, name: str, trace: list[str]) -> None:
        self.app, self.name, self.trace = app, name, trace
        self.turns = 0

    async def __call__(self, env: dict[str, Any]) -> Any:
        self.turns += 1
        self.trace.append(f"in:{self.name}")
        result = await self.app(env)
        self.trace.append(f"out:{self.name}")
        return result


def test_first_use_is_outermost_and_instances_last_across_turns() -> None:
    trace: list[str] = []
    agent = brute_nb.agent().use(Recorder, name="a", trace=trace).use(Recorder, name="b", trace=trace)
    agent.run(lambda env: trace.append("handler"))
    agent.start("one")
    agent.start("two")
    assert trace[:5] == ["in:a", "in:b", "handler", "out:b", "out:a"]
    assert agent.middleware(Recorder).turns == 2


def test_builder_chains_and_reports_every_bad_layer() -> None:
    agent = brute_nb.agent()
    assert agent.use(ToolResultLoop) is agent
    assert agent.on("message", lambda e, p: None) is agent
    with pytest.raises(MiddlewareError, match="no handler"):
        agent.start("x")
    agent.use(MaxIterations, limit=0).use(SystemPrompt, nonsense=1).run(lambda env: None)
    with pytest.raises(MiddlewareError) as info:
        agent.start("x")
    assert "MaxIterations" in str(info.value) and "SystemPrompt" in str(info.value)


def test_events_sync_and_async_callbacks_and_a_raising_one_warns() -> None:
    seen: list[tuple[str, Any]] = []
    fake = Scripted(["hello there, friend"])

    async def async_cb(env: dict[str, Any], payload: Any) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(("async_end", payload["cancelled"]))

    def bad(env: dict[str, Any], payload: Any) -> None:
        raise RuntimeError("view broke")

    agent = brute_nb.agent().use(ToolResultLoop).run(fake)
    for name in ("turn_start", "message", "assistant_delta"):
        agent.on(name, lambda env, p, name=name: seen.append((name, p)))
    agent.on("turn_end", async_cb).on("message", bad)
    with pytest.warns(CallbackWarning, match="view broke"):
        env = agent.start("hi")
    names = [n for n, _ in seen]
    assert names[0] == "turn_start" and names[-1] == "async_end"
    assert [p.content for n, p in seen if n == "message"] == ["hi", "hello there, friend"]
    assert "".join(p["text"] for n, p in seen if n == "assistant_delta") == "hello there, friend"
    assert env["messages"][-1].content == "hello there, friend"


def test_sync_handler_runs_off_the_loop_thread() -> None:
    threads: list[str] = []
    agent = brute_nb.agent().run(lambda env: threads.append(threading.current_thread().name))

    async def main() -> None:
        await agent.astart("x")
        threads.append(threading.current_thread().name)

    anyio.run(main)
    assert threads[0] != threads[1]


def test_start_inside_a_running_event_loop() -> None:
    fake = Scripted(["inside"])
    agent = brute_nb.agent().use(ToolResultLoop).run(fake)

    async def cell() -> str:  # what a Jupyter cell is: code running while the loop runs
        env = agent.start("hi")
        return str(env["messages"][-1].content)

    assert asyncio.run(cell()) == "inside"


def test_start_from_a_thread() -> None:
    agent = brute_nb.agent().run(Scripted(["from thread"]))
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(agent.start("x")["messages"][-1].content))
    t.start()
    t.join()
    assert out == ["from thread"]


def test_tool_result_loop_repeats_while_last_is_a_tool_result() -> None:
    replies = [reply("", call("t")), reply("", call("t")), "done"]

    class AnswerTools:
        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, env: dict[str, Any]) -> None:
            await self.app(env)
            last = env["messages"][-1]
            for c in last.tool_calls or ():
                env["messages"].tool("ok", tool_call_id=c.id)

    env = brute_nb.agent().use(ToolResultLoop).use(AnswerTools).run(Scripted(replies)).start("go")
    assert env["iteration"] == 3
    assert [m.role for m in env["messages"]] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


def test_max_iterations_sets_should_exit_and_leaves_no_unanswered_call() -> None:
    class AnswerTools:
        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, env: dict[str, Any]) -> None:
            await self.app(env)
            for c in env["messages"][-1].tool_calls or ():
                env["messages"].tool("ok", tool_call_id=c.id)

    fake = Scripted([reply("", call("t")) for _ in range(10)])
    stops: list[Any] = []
    agent = brute_nb.agent().use(ToolResultLoop).use(MaxIterations, limit=3).use(AnswerTools).run(fake)
    agent.on("should_exit", lambda env, p: stops.append(p))
    env = agent.start("loop forever")
    assert fake.calls == 3
    assert env["should_exit"]["reason"] == "max_iterations_reached"
    assert stops == [env["should_exit"]]
    assert brute_nb.message.unanswered_calls(env["messages"]) == []


def test_system_prompt_first_from_text_or_callable() -> None:
    fake = Scripted(["a", "b"])
    agent = brute_nb.agent().use(SystemPrompt, text=lambda env: f"root is {env['root']}").run(fake)
    agent.start("x", root="/tmp/project")
    assert fake.requests[0]["messages"][0] == {"role": "system", "content": "root is /tmp/project"}
    with pytest.raises(MiddlewareError):
        brute_nb.agent().use(SystemPrompt, text=3).run(fake).start("x")


def test_handler_error_reaches_the_caller_unwrapped_and_is_an_event() -> None:
    errors: list[Any] = []

    def boom(env: dict[str, Any]) -> None:
        raise ValueError("provider down")

    agent = brute_nb.agent().run(boom).on("error", lambda env, p: errors.append(p["message"]))
    with pytest.raises(ValueError, match="provider down"):
        agent.start("x")
    assert errors == ["provider down"]
