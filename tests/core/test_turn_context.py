"""TurnContext alone around a recording handler, inside SessionLog: the context reaches the request, not the log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import brute_nb
from brute_nb.middleware import SessionLog
from brute_nb.middleware.turn_context import TurnContext, with_context
from brute_nb.sessions.file import read_session


def test_context_goes_before_the_prompt_on_a_copy() -> None:
    log = brute_nb.log()
    log.user("earlier")
    log.assistant("ok")
    log.user("now")
    view = with_context(log, "CELLS")
    assert [m.content for m in view] == ["earlier", "ok", "CELLS", "now"]
    assert view[2].meta == {"context": True} and len(log) == 3


def test_each_model_call_sees_it_and_the_session_file_never_holds_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    seen: list[list[Any]] = []

    def handler(env: dict[str, Any]) -> None:
        seen.append([m.content for m in env["messages"]])
        env["messages"].assistant(f"reply {len(seen)}")

    agent = brute_nb.agent().use(SessionLog, path=path).use(TurnContext).run(handler)
    env = agent.start("first", context="CELLS")
    assert seen == [["CELLS", "first"]]
    assert [m.content for m in env["messages"]] == ["first", "reply 1"]
    assert env["messages"][-1].meta.get("id")  # the reply went through the real log (ids, persistence)
    agent.start("second")
    assert seen[-1] == ["first", "reply 1", "second"]
    assert [m.content for m in read_session(path)] == ["first", "reply 1", "second", "reply 2"]


def _fields(messages: list[Any]) -> list[tuple[Any, ...]]:
    return [(m.role, m.content, m.tool_calls, m.tool_call_id, bool(m.meta.get("context"))) for m in messages]


def _loop(log: Any, steps: list[Any], text: str = "CELLS") -> list[tuple[Any, bool]]:
    """Drive TurnContext as the tool loop does: a model call, then what the loop appends to the log (``steps``: a
    function of the log, run after each call). Each call's request must be exactly what a fresh copy would be."""
    import anyio

    from brute_nb.message import ToolCall
    from brute_nb.transports import Anthropic, OpenAI

    seen: list[tuple[Any, bool]] = []

    async def model(env: dict[str, Any]) -> None:
        sent = env["messages"]
        fresh = with_context(env["log"], text)
        assert _fields(sent) == _fields(fresh)
        for transport in (Anthropic, OpenAI):  # the wire too: resumed from the kept copy's memo
            assert transport.dump_all(sent) == transport.dump_all(fresh)
        seen.append((sent, True))
        sent.append(brute_nb.Message("assistant", "", tool_calls=[ToolCall(f"c{len(seen)}", "f", {})]))

    context = TurnContext(model)

    async def run() -> None:
        for step in [*steps, None]:
            env = {"messages": log, "log": log, "context": text}
            await context(env)
            if step is not None:
                step(log)

    anyio.run(run)
    return seen


def test_a_tool_loop_extends_one_copy_and_each_request_is_what_a_fresh_copy_sends() -> None:
    """A copy a model call re-translated a long session's every message on each call of a --context turn."""
    from brute_nb.message import Log

    log = Log(ids=True)  # a turn's log stamps ids: the copy's replies then differ from the log's by meta["id"]
    log.system("be brief")
    for i in range(50):
        log.user(f"q{i}")
        log.assistant(f"a{i}")
    log.user("now")
    answer = [lambda lg, i=i: lg.tool(f"result {i}", tool_call_id=f"c{i + 1}") for i in range(4)]
    seen = _loop(log, answer)
    assert len(seen) == 5 and len({id(sent) for sent, _ in seen}) == 1  # one copy, extended


def test_a_changed_log_gets_a_fresh_copy() -> None:
    def rewritten(lg: Any) -> None:
        lg.tool("r", tool_call_id="c1")
        del lg[1]  # compaction, say: not an append

    def new_prompt(lg: Any) -> None:
        lg.tool("r", tool_call_id="c2")
        lg.user("and this")  # the context goes before the newest user message

    def new_lead(lg: Any) -> None:
        lg.tool("r", tool_call_id="c3")
        lg.insert(0, brute_nb.Message("system", "another system prompt"))  # keeps the memo of the body

    log = brute_nb.log()
    log.system("be brief")
    log.user("earlier")
    log.assistant("ok")
    log.user("now")
    seen = _loop(log, [rewritten, new_prompt, new_lead])
    assert len({id(sent) for sent, _ in seen}) == 4  # each change made a fresh copy (the checks ran in model())
