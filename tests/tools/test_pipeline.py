"""DefaultToolPipeline: concurrency, call order, errors as results, truncation, questions, approvals, cancel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from brute_nb import agent
from brute_nb.message import INVALID_ARGUMENTS_KEY, Message, Role, ToolCall
from brute_nb.middleware import DefaultToolPipeline, ToolResultLoop
from brute_nb.testing.scripted import Scripted, call, reply
from brute_nb.tools import Question, SubAgent, ToolOutput, current_env, tool

pytestmark = pytest.mark.anyio


def tool_results(env: dict[str, Any]) -> list[Message]:
    return [m for m in env["messages"] if m.role == Role.TOOL]


async def run_turn(tools: list[Any], *replies: Any, **extra: Any) -> dict[str, Any]:
    a = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=tools).run(Scripted([*replies, "done"]))
    return await a.astart("go", **extra)


async def test_calls_run_concurrently_and_results_keep_call_order() -> None:
    n = 5
    started = 0
    everyone = anyio.Event()

    @tool
    async def wait_all(i: int) -> str:
        """Wait until every call has started."""
        nonlocal started
        started += 1
        if started == n:
            everyone.set()
        await everyone.wait()  # a sequential pipeline would wait here forever
        return f"r{i}"

    with anyio.fail_after(10):
        env = await run_turn([wait_all], reply("", *[call("wait_all", {"i": i}) for i in reversed(range(n))]))
    results = tool_results(env)
    assert [m.content for m in results] == [f"r{i}" for i in reversed(range(n))]
    assert [m.tool_call_id for m in results] == [f"call_{k}" for k in range(1, n + 1)]


async def test_a_lone_call_runs_in_the_turns_task_and_several_in_their_own() -> None:
    """A reply with one call (most steps of a tool loop) needs no task group: its tool runs in the task running the
    turn. Several calls still each get a task, so they run together."""
    import asyncio

    tasks: list[Any] = []

    @tool
    async def where(i: int) -> str:
        """Note the task this call runs in."""
        tasks.append(asyncio.current_task())
        return f"r{i}"

    turn = asyncio.current_task()
    env = await run_turn([where], reply("", call("where", {"i": 0})),
                         reply("", call("where", {"i": 1}), call("where", {"i": 2})))
    assert [m.content for m in tool_results(env)] == ["r0", "r1", "r2"]
    assert tasks[0] is turn
    assert tasks[1] is not turn and tasks[2] is not turn and tasks[1] is not tasks[2]


async def test_errors_unknown_tools_and_bad_json_become_results() -> None:
    @tool
    def boom() -> str:
        """Fail."""
        raise RuntimeError("File not found: /x")

    bad_json = ToolCall(id="b", name="boom", arguments={INVALID_ARGUMENTS_KEY: '{"a": '})
    env = await run_turn([boom], reply("", call("boom"), call("missing", {}), bad_json, call("boom", {"x": 1})))
    texts = [m.content for m in tool_results(env)]
    assert texts[0] == "Error: RuntimeError: File not found: /x"
    assert texts[1].startswith("Error: unknown tool 'missing'. Available tools: boom")
    assert "not valid JSON" in texts[2] and '{"a": ' in texts[2]
    assert texts[3].startswith("Error: ToolArgumentError: invalid arguments: unknown 'x'")
    assert all(m.meta["is_error"] for m in tool_results(env))


async def test_events_and_meta() -> None:
    @tool
    def hello(who: str) -> str:
        """Say hello."""
        return f"hello {who}"

    seen: list[tuple[str, Any]] = []
    a = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[hello]).run(
        Scripted([reply("", call("hello", {"who": "a"})), "done"]))
    a.on("tool_call", lambda env, p: seen.append(("call", p["call"].name, p["index"])))
    a.on("tool_result", lambda env, p: seen.append(("result", p["message"].content, p["is_error"], p["index"])))
    env = await a.astart("go")
    assert seen == [("call", "hello", 0), ("result", "hello a", False, 0)]
    meta = tool_results(env)[0].meta
    assert meta["tool_name"] == "hello" and meta["is_error"] is False and meta["duration_ms"] >= 0
    assert [t.name for t in env["tools"]] == ["hello"]


async def test_dict_results_are_readable_and_long_output_overflows(overflow: Path) -> None:
    @tool
    def info() -> dict[str, Any]:
        """Info."""
        return {"success": True, "diff": "\n".join(f"+line {i}" for i in range(3000))}

    env = await run_turn([info], reply("", call("info")))
    result = tool_results(env)[0]
    lines = result.content.splitlines()
    assert lines[:3] == ["success: true", "diff:", "+line 0"]
    assert "[Output truncated: showing lines 1-2000 of 3002]" in result.content
    saved = Path(result.meta["overflow_path"])
    assert saved.parent == overflow and "+line 2999" in saved.read_text()  # noqa: ASYNC240 - a tiny test read
    assert "start_line=2001" in result.content


async def test_self_truncated_results_are_not_cut_again() -> None:
    @tool
    def big() -> ToolOutput:
        """Big."""
        return ToolOutput("x\n" * 3000, truncated=True)

    env = await run_turn([big], reply("", call("big")))
    assert tool_results(env)[0].content == "x\n" * 3000


async def test_question_runs_first_through_ask_then_the_batch() -> None:
    order: list[str] = []

    @tool
    def work() -> str:
        """Work."""
        order.append("work")
        return "worked"

    async def ask(question: str, options: list[str]) -> str:
        order.append(f"ask:{question}:{options}")
        return options[0]

    q = {"questions": [{"question": "Which?", "header": "Pick", "options": [{"label": "A", "description": "a"}]}]}
    env = await run_turn([work, Question], reply("", call("work"), call("question", q)), ask=ask)
    assert order == ["ask:Which?:['A']", "work"]
    assert [m.content for m in tool_results(env)] == ["worked", 'User answered: "Pick" = A']


async def test_question_without_anyone_to_ask_is_an_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    q = {"questions": [{"question": "Which?", "header": "Pick", "options": []}]}
    env = await run_turn([Question], reply("", call("question", q)))
    text = tool_results(env)[0].content
    assert text.startswith("Error: QuestionUnavailableError: no one can answer")


async def test_approve_hook_can_deny_a_call() -> None:
    ran: list[str] = []

    @tool(risk="shell")
    def danger() -> str:
        """Danger."""
        ran.append("x")
        return "ran"

    def approve(call: ToolCall, adapter: Any) -> str | None:
        return f"Error: the user denied {call.name} ({adapter.risk})" if adapter.risk == "shell" else None

    env = await run_turn([danger], reply("", call("danger")), approve=approve)
    assert tool_results(env)[0].content == "Error: the user denied danger (shell)"
    assert ran == []


async def test_tools_see_the_turn_env() -> None:
    @tool
    def where() -> str:
        """Where."""
        return str(current_env().get("root"))

    env = await run_turn([where], reply("", call("where")), root="/some/root")
    assert tool_results(env)[0].content == "/some/root"


async def test_cancellation_still_answers_every_call() -> None:
    entered = anyio.Event()
    quick_done = anyio.Event()

    @tool
    async def hang() -> str:
        """Hang."""
        await quick_done.wait()
        await anyio.sleep(0.05)
        entered.set()
        await anyio.sleep_forever()
        return "never"

    @tool
    async def quick() -> str:
        """Quick."""
        quick_done.set()
        return "quick"

    a = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[hang, quick]).run(
        Scripted([reply("", call("hang"), call("quick"))]))
    async with anyio.create_task_group() as group:
        group.start_soon(a.astart, "go")
        await entered.wait()
        group.cancel_scope.cancel()
    results = [m for m in a.messages if m.role == Role.TOOL]
    assert [m.content for m in results] == ["Error: interrupted before this tool finished", "quick"]
    assert results[0].meta["duration_ms"] >= 50  # how long it ran before the stop, not 0


async def test_sub_agents_run_concurrently() -> None:
    n = 3
    started = 0
    everyone = anyio.Event()

    async def model(env: dict[str, Any]) -> None:
        nonlocal started
        started += 1
        if started == n:
            everyone.set()
        await everyone.wait()
        env["messages"].assistant(f"answer to {env['messages'][0].content}")

    sub = SubAgent(agent().run(model), name="explore", description="Explore")
    with anyio.fail_after(10):
        env = await run_turn([sub], reply("", *[call("explore", {"task": f"t{i}"}) for i in range(n)]))
    assert [m.content for m in tool_results(env)] == [f"answer to t{i}" for i in range(n)]


async def test_arguments_json_is_rendered() -> None:
    @tool
    def listing() -> list[int]:
        """List."""
        return [1, 2]

    env = await run_turn([listing], reply("", call("listing")))
    assert json.loads(tool_results(env)[0].content) == [1, 2]


async def test_question_falls_back_to_input_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    prompts: list[str] = []
    monkeypatch.setattr("builtins.input", lambda prompt: prompts.append(prompt) or "2")
    q = {"questions": [{"question": "Which?", "header": "Pick", "multiple": False,
                        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]}]}
    env = await run_turn([Question], reply("", call("question", q)))
    assert tool_results(env)[0].content == 'User answered: "Pick" = B'
    assert prompts == ["Which?\n  1. A\n  2. B\n> "]


def test_top_level_names() -> None:
    import brute_nb

    assert brute_nb.Tool is __import__("brute_nb.tools", fromlist=["Tool"]).Tool
    assert callable(brute_nb.tool)


async def test_each_call_knows_its_own_id_and_name_and_none_outside_a_call() -> None:
    from brute_nb.tools.context import current_call

    @tool
    async def whoami(i: int) -> str:
        """Say which call this is."""
        await anyio.lowlevel.checkpoint()  # the calls interleave: each must still see its own
        found = current_call()
        return f"{found[0]}:{found[1]}" if found else "none"

    env = await run_turn([whoami], reply("", call("whoami", {"i": 1}), call("whoami", {"i": 2})))
    assert [m.content for m in tool_results(env)] == ["call_1:whoami", "call_2:whoami"]
    assert current_call() is None


def test_every_snapshot_has_a_sequence_number_a_mark_can_be_taken_against() -> None:
    from brute_nb.tools.stores import DID_NOT_EXIST, SnapshotStore

    store = SnapshotStore()
    assert store.pushed() == 0
    store.push("a.txt", DID_NOT_EXIST, b"1")
    mark = store.pushed()
    store.push("b.txt", b"0", b"1")
    store.push("a.txt", b"1", b"2")
    assert store.pushed() == 3 and mark == 1
    changes = [store.peek("a.txt"), store.peek("b.txt")]
    assert [c.seq for c in changes if c is not None] == [3, 2]
    store.pop("a.txt")
    assert store.pushed() == 3  # a mark counts pushes, so undoing one never makes a later change look older
