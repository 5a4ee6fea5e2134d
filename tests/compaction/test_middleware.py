"""DefaultCompactionPipeline in a stack: when it compacts, how it is configured, what it tells and persists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from compaction_helpers import AnswerTools, check_valid

from brute_nb.agent import agent
from brute_nb.compaction import Compaction, CompactionPipeline, SlidingWindow, Summarize, Summary, ToolResults
from brute_nb.compaction.tokens import TokenCounter
from brute_nb.errors import MiddlewareError
from brute_nb.message import Log, Message, Role, ToolCall
from brute_nb.middleware import DefaultCompactionPipeline, SessionLog, SystemPrompt, ToolResultLoop
from brute_nb.sessions.file import archive_path, read_session
from brute_nb.testing.scripted import Scripted, call, reply


async def nothing(env: Any) -> None:
    return None


def history(steps: int, output: int = 4000, report: bool = False) -> Log:
    log = Log([Message(Role.USER, "first")])
    counter = TokenCounter()
    for n in range(steps):
        meta = {"input_tokens": counter.estimate(log) + 100} if report else None
        log.append(Message(Role.ASSISTANT, "", tool_calls=[ToolCall(f"c{n}", "read", {})], meta=meta))
        log.append(Message(Role.TOOL, "x" * output, tool_call_id=f"c{n}"))
    return log


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def emit(self, name: str, payload: Any) -> None:
        self.events.append((name, payload))


def env_for(log: Log) -> dict[str, Any]:
    return {"messages": log, "events": Recorder()}


@pytest.mark.anyio
async def test_below_the_trigger_nothing_happens() -> None:
    mw = DefaultCompactionPipeline(nothing, window=100_000)
    env = env_for(history(10))
    assert await mw.compact(env) is None
    assert len(env["messages"]) == 21 and env["events"].events == []


@pytest.mark.anyio
async def test_past_the_trigger_it_compacts_in_place_to_target_and_says_so() -> None:
    log = history(20)
    changes: list[str] = []
    log.observe(lambda kind, item: changes.append(kind))
    env = env_for(log)
    mw = DefaultCompactionPipeline(nothing, window=20_000)  # 20 x ~1000 tokens is past 0.8 x 20k
    ctx = await mw.compact(env)
    assert ctx is not None and env["messages"] is log and changes == ["rewrite"]
    check_valid(log)
    [(name, payload)] = env["events"].events
    assert name == "compacted"
    assert payload["layer"] == "tool_results" and payload["layers"] == ["tool_results"]
    assert payload["tokens_before"] > 16_000 >= 10_000 >= payload["tokens_after"]
    assert payload["messages_before"] == payload["messages_after"] == 41
    assert payload["removed"] == [] and payload["added"] == []
    assert len(payload["rewritten"]) == len([m for m in log if m.meta.get("compacted")]) >= 7
    assert all(old.content == "x" * 4000 and new in log for old, new in payload["rewritten"])


@pytest.mark.anyio
async def test_a_report_made_before_compaction_is_not_trusted_after_it() -> None:
    env = env_for(history(20, report=True))
    mw = DefaultCompactionPipeline(nothing, window=20_000)
    assert await mw.compact(env) is not None
    # The last reply's input_tokens still counts the long history; trusting it would compact again at once.
    assert await mw.compact(env) is None
    assert len(env["events"].events) == 1


@pytest.mark.anyio
async def test_the_ladder_stops_at_the_first_rung_that_is_enough() -> None:
    asked: list[int] = []
    mw = DefaultCompactionPipeline(nothing, window=20_000, summariser=lambda messages: asked.append(1) or "s")
    await mw.compact(env_for(history(20)))
    assert asked == []
    mw = DefaultCompactionPipeline(nothing, window=20_000, compactors=[Summary(summarize=lambda m: "sum", keep=2)])
    env = env_for(history(20))
    await mw.compact(env)
    assert env["events"].events[0][1]["layer"] == "summary"
    assert [m.meta.get("summary") for m in env["messages"]][:2] == [None, True]


@pytest.mark.anyio
async def test_all_three_spellings_build_the_ladder() -> None:
    seen: list[str] = []

    async def model(env: Any) -> None:
        seen.append("handler")
        env["messages"].append(Message(Role.ASSISTANT, "summary text"))

    def summarize(messages: list[Any]) -> str:
        seen.append("function")
        return "summary text"

    big = dict(output=50)  # tool output too small to stub; only a summary can help
    spellings = [
        dict(compactor=CompactionPipeline().use(ToolResults).run(Summarize(model, keep=1))),
        dict(compactors=[ToolResults(), Summary(summarize=summarize, keep=1)]),
        dict(summariser=model),
        dict(summariser=summarize),
        dict(summariser=Scripted(["summary text"])),
    ]
    for options in spellings:
        mw = DefaultCompactionPipeline(nothing, window=400, **options)  # type: ignore[arg-type]
        env = env_for(history(30, **big))
        # SlidingWindow (keep=8) runs before the summariser rungs of the last three; keep it from being enough.
        env["messages"].insert(1, Message(Role.USER, "y" * 8000))
        await mw.compact(env)
        check_valid(env["messages"])
        assert any("summary text" in m.content for m in env["messages"]), options
    assert seen == ["handler", "function", "handler", "function"]


def test_options_are_checked_when_the_stack_is_built_listing_every_problem() -> None:
    with pytest.raises(MiddlewareError) as info:
        DefaultCompactionPipeline(nothing, window=0, trigger=0.4, target=0.5, compactors=[1], summariser="x")
    text = str(info.value)
    for part in ("window must be", "0 < target < trigger", "not compactors and summariser", "compactors[0]",
                 "summariser must be"):
        assert part in text
    built = agent().use(DefaultCompactionPipeline, windw=10).run(nothing)
    with pytest.raises(MiddlewareError, match="windw"):
        built.start("hi")


def test_custom_layer_sees_the_context_and_the_env() -> None:
    class Drop:
        def __init__(self, app: Any, note: str) -> None:
            self.app, self.note = app, note

        async def __call__(self, ctx: Compaction) -> None:
            ctx.env["metadata"]["note"] = self.note
            ctx.update("drop", [m for m in ctx.messages if m.role != "tool" and not m.tool_calls])

    pipeline = CompactionPipeline().use(Drop, note="custom")
    model = Scripted([reply("", call("read")), reply("", call("read")), "done"])
    bot = (agent().use(ToolResultLoop).use(DefaultCompactionPipeline, window=30, compactor=pipeline)
           .use(AnswerTools, output=lambda c, env: "z" * 200).run(model))
    env = bot.start("go")
    assert env["metadata"]["note"] == "custom"
    assert [m.role.value for m in env["messages"]] == ["user", "assistant"]


def test_session_file_holds_the_compacted_log_and_the_archive_every_original(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    model = Scripted()
    for _ in range(2):
        model.add(*[reply(f"step {n} " + "t" * 1500, call("read", {"n": n})) for n in range(12)], "done")
    bot = (agent().use(SessionLog, path=path).use(SystemPrompt, text="sys").use(ToolResultLoop)
           .use(DefaultCompactionPipeline, window=6_000, compactors=[ToolResults(keep=2), SlidingWindow(keep=3)])
           .use(AnswerTools, output=lambda c, env: f"{c.id}:" + "o" * 3000).run(model))
    appended: list[Any] = []
    compacted: list[Any] = []
    bot.on("message", lambda env, m: appended.append(m)).on("compacted", lambda env, p: compacted.append(p))
    bot.start("first")
    bot.start("second")
    assert {p["layer"] for p in compacted} == {"tool_results", "sliding_window"}
    on_disk = [m.to_json() for m in read_session(path)]
    assert on_disk == [m.to_json() for m in bot.messages if m.role != "system"]
    check_valid(read_session(path))
    archived = {m.to_json() for m in read_session(archive_path(path))}
    gone = [m for p in compacted for m in p["removed"] + [old for old, _ in p["rewritten"]]]
    assert gone and {m.to_json() for m in gone} <= archived
    everything = {m.to_json() for m in appended if m.role != "system"}
    assert everything <= archived | set(on_disk)
    assert len(everything - set(on_disk)) > 20  # compaction really took things out of the file


@pytest.mark.anyio
async def test_a_plain_callable_compactor_that_edits_the_context_directly() -> None:
    def keep_first(ctx: Compaction) -> None:
        ctx.messages = ctx.messages[:1]

    env = env_for(history(20))
    await DefaultCompactionPipeline(nothing, window=20_000, compactor=keep_first).compact(env)
    [(_, payload)] = env["events"].events
    assert payload["layer"] == "compactor" and len(payload["removed"]) == 40
    assert [m.content for m in env["messages"]] == ["first"]
