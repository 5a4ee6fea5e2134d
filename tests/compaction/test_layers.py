"""Each layer and the token counter alone, on small hand-written logs."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from compaction_helpers import check_valid

from brute_nb.compaction import (
    COMPACTION_PROMPT,
    Compaction,
    CompactionPipeline,
    SlidingWindow,
    Summarize,
    Summary,
    TokenCounter,
    ToolResults,
)
from brute_nb.compaction.summary import SUMMARY_HEADER, transcript
from brute_nb.compaction.tokens import chars_per_four
from brute_nb.errors import CompactionError, MiddlewareError
from brute_nb.message import Message, Role, ToolCall, dumps
from brute_nb.testing.scripted import Scripted


def conversation(steps: int, output: int = 2000, text: str = "") -> list[Message]:
    log = [Message(Role.SYSTEM, "sys"), Message(Role.USER, "first")]
    for n in range(steps):
        call = ToolCall(f"c{n}", "read", {"file_path": f"f{n}.py"})
        log.append(Message(Role.ASSISTANT, text, tool_calls=[call]))
        log.append(Message(Role.TOOL, f"{n}:" + "x" * output, tool_call_id=f"c{n}", meta={"tool_name": "read"}))
    log.append(Message(Role.USER, "latest"))
    return log


def run(layer: Any, log: list[Message], target: int) -> Compaction:
    ctx = Compaction(log, target=target, window=10**6)
    anyio.run(layer if isinstance(layer, CompactionPipeline) else CompactionPipeline([layer]), ctx)
    check_valid(ctx.messages)
    return ctx


def test_tool_results_stubs_the_oldest_output_first_and_stops_under_target() -> None:
    log = conversation(10)
    total = TokenCounter().estimate(log)
    ctx = run(ToolResults(keep=2), log, target=total - 800)  # about two outputs' worth
    stubbed = [m for m in ctx.messages if m.meta.get("compacted") == "tool_results"]
    assert [m.tool_call_id for m in stubbed] == ["c0", "c1"]
    assert stubbed[0].content == (
        '[tool output elided to save context: read({"file_path":"f0.py"}) returned 2,002 chars, 1 lines]'
    )
    assert stubbed[0].meta["elided_chars"] == 2002
    assert ctx.under_target and ctx.layers == ["tool_results"]
    assert [old.tool_call_id for old, _ in ctx.outcome()["rewritten"]] == ["c0", "c1"]


def test_tool_results_keeps_the_recent_steps_and_small_outputs() -> None:
    log = conversation(5)
    log.insert(3, log[3].replace(content="short"))
    del log[4]
    ctx = run(ToolResults(keep=2), log, target=0)
    kept = {m.tool_call_id for m in ctx.messages if m.role == "tool" and "compacted" not in m.meta}
    assert kept == {"c0", "c3", "c4"}  # c0 is under min_chars; c3, c4 are the two recent steps


def write_step(n: int, content: str) -> list[Message]:
    call = ToolCall(f"w{n}", "write", {"file_path": f"f{n}.py", "content": content, "mode": "w"})
    return [Message(Role.ASSISTANT, f"writing f{n}", tool_calls=[call]),
            Message(Role.TOOL, "ok", tool_call_id=f"w{n}", meta={"tool_name": "write"})]


def test_tool_results_shortens_big_arguments_of_old_calls_and_keeps_them_valid_json() -> None:
    big = "line\n" * 10_240  # 50 KB
    log = [Message(Role.USER, "first"), *write_step(0, big), *write_step(1, big), *write_step(2, big),
           Message(Role.USER, "latest")]
    ctx = run(ToolResults(keep=1), log, target=0)
    old, recent = ctx.messages[1], ctx.messages[5]
    (call,) = old.tool_calls
    assert (call.id, call.name, list(call.arguments)) == ("w0", "write", ["file_path", "content", "mode"])
    assert call.arguments["file_path"] == "f0.py" and call.arguments["mode"] == "w"
    assert call.arguments["content"] == "[elided to save context: content was 51,200 chars, 10,241 lines]"
    assert json.loads(dumps(call.arguments)) == call.arguments
    assert old.content == "writing f0" and old.meta["compacted"] == "tool_results"
    assert old.meta["elided_chars"] == 51_200 and old.meta["elided_arguments"] == ["write.content"]
    assert ctx.messages[3].tool_calls[0].arguments["content"].startswith("[elided")
    assert recent is log[5] and recent.tool_calls[0].arguments["content"] == big  # the recent step is intact
    originals = {id(o): n for o, n in ctx.outcome()["rewritten"]}
    assert set(originals) == {id(log[1]), id(log[3])}  # the event carries the originals
    assert TokenCounter().estimate(ctx.messages) < TokenCounter().estimate(log) // 2


def test_tool_results_shortens_nested_and_invalid_arguments_but_not_small_ones() -> None:
    nested = ToolCall("e0", "edit", {"edits": [{"old": "a", "new": "y" * 500}], "n": 3})
    invalid = ToolCall("e1", "edit", "{not json" + "z" * 500)
    small = ToolCall("e2", "read", {"file_path": "x" * 50})
    log = [Message(Role.USER, "first"), Message(Role.ASSISTANT, "", tool_calls=[nested, invalid, small]),
           *[Message(Role.TOOL, "ok", tool_call_id=c) for c in ("e0", "e1", "e2")], Message(Role.USER, "latest")]
    ctx = run(ToolResults(keep=0), log, target=0)
    a, b, c = ctx.messages[1].tool_calls
    stubbed = "[elided to save context: edits.0.new was 500 chars, 1 lines]"
    assert a.arguments == {"edits": [{"old": "a", "new": stubbed}], "n": 3}
    assert not b.arguments_valid and "arguments was 509 chars" in next(iter(b.arguments.values()))
    assert c == small
    assert ctx.messages[1].meta["elided_arguments"] == ["edit.edits.0.new", "edit.arguments"]


def test_sliding_window_drops_whole_old_steps_but_never_pinned_ones() -> None:
    log = conversation(10, output=100)
    ctx = run(SlidingWindow(keep=3), log, target=0)
    assert [m.content for m in ctx.messages[:2]] == ["sys", "first"]
    assert [m.tool_call_id for m in ctx.messages if m.role == "tool"] == ["c7", "c8", "c9"]
    assert ctx.messages[-1].content == "latest"
    assert len(ctx.outcome()["removed"]) == 14


def test_sliding_window_never_drops_an_earlier_summary() -> None:
    log = conversation(4, output=100)
    summary = Message(Role.USER, "old summary", meta={"summary": True})
    log.insert(2, summary)
    ctx = run(SlidingWindow(keep=1), log, target=0)
    assert any(m is summary for m in ctx.messages)


def test_summary_folds_all_but_the_recent_steps_into_one_message_where_they_ended() -> None:
    seen: list[list[Any]] = []

    def summarize(messages: list[Any]) -> str:
        seen.append(messages)
        return "Goal: read files"

    log = conversation(6, output=100)
    ctx = run(Summary(summarize=summarize, keep=2), log, target=0)
    assert len(seen) == 1 and len(seen[0]) == 8
    roles = [(m.role.value, m.meta.get("summary", False)) for m in ctx.messages]
    assert roles[:3] == [("system", False), ("user", False), ("user", True)]
    assert ctx.messages[2].content == SUMMARY_HEADER + "Goal: read files"
    assert ctx.messages[2].meta["folded"] == 8
    assert ctx.messages[2].meta["folded"] == 8 and len(ctx.messages[2].meta["id"]) == 24  # a new message, a new id
    assert ctx.outcome()["added"] == [ctx.messages[2]]


def test_summary_accepts_an_async_function_and_skips_an_empty_summary() -> None:
    async def summarize(messages: list[Any]) -> str:
        return "   "

    log = conversation(4, output=100)
    ctx = run(Summary(summarize=summarize, keep=1), log, target=0)
    assert ctx.messages == log and not ctx.changed


def test_summary_function_must_return_text() -> None:
    with pytest.raises(CompactionError, match="must return the summary text"):
        run(Summary(summarize=lambda messages: None, keep=0), conversation(2), target=0)


def test_summarize_asks_a_provider_handler_with_our_prompt_in_a_private_env() -> None:
    model = Scripted(["## Goal\nread"])
    log = conversation(4, output=3000)
    deltas: list[Any] = []

    class Events:
        def emit(self, name: str, payload: Any) -> None:
            deltas.append(name)

    ctx = Compaction(log, target=0, window=10**6, env={"events": Events()})
    anyio.run(CompactionPipeline().run(Summarize(model, keep=1)), ctx)
    sent = model.requests[0]["messages"]
    assert sent[0] == {"role": "system", "content": COMPACTION_PROMPT}
    assert sent[1]["content"].startswith("user: first") is False  # the first prompt is pinned, not folded
    assert "tool result (read): 0:xxx" in sent[1]["content"] and "chars elided" in sent[1]["content"]
    assert model.requests[0]["tools"] == []
    assert deltas == []  # the summary call never streams into the conversation's views
    assert SUMMARY_HEADER + "## Goal\nread" in [m.content for m in ctx.messages]
    for word in ("Goal", "Progress", "Current state", "Next steps", "Durable user constraints"):
        assert word in COMPACTION_PROMPT


def test_summarize_reports_a_handler_that_appends_nothing() -> None:
    with pytest.raises(CompactionError, match="added no assistant message"):
        run(Summarize(lambda env: None, keep=0), conversation(2), target=0)


def test_transcript_keeps_summaries_whole_and_names_tools() -> None:
    call = ToolCall("c1", "shell", {"command": "ls"})
    text = transcript([Message(Role.USER, "s" * 5000, meta={"summary": True}),
                       Message(Role.ASSISTANT, "", tool_calls=[call]), Message(Role.TOOL, "a.py", tool_call_id="c1")])
    tail = '\n---\nassistant: [tools: shell({"command":"ls"})]\n---\ntool result (shell): a.py'
    assert text == "user: " + "s" * 5000 + tail


def test_layer_options_are_checked_when_built() -> None:
    with pytest.raises(MiddlewareError, match=r"keep must be.*min_chars must be"):
        ToolResults(keep=-1, min_chars="x")  # type: ignore[arg-type]
    with pytest.raises(MiddlewareError, match="SlidingWindow: keep"):
        SlidingWindow(keep=True)
    with pytest.raises(MiddlewareError, match=r"summarize must be a callable.*keep must be"):
        Summary(summarize="nope", keep=-2)  # type: ignore[arg-type]
    with pytest.raises(MiddlewareError, match="already configured"):
        CompactionPipeline().use(ToolResults(), keep=2)
    with pytest.raises(MiddlewareError, match="takes a layer class"):
        CompactionPipeline().use(42)


def test_a_pipeline_of_classes_with_options_and_a_terminal() -> None:
    calls: list[str] = []

    def terminal(ctx: Compaction) -> None:
        calls.append("terminal")

    pipeline = CompactionPipeline().use(ToolResults, keep=1).use(SlidingWindow, keep=5).run(terminal)
    log = conversation(8, output=100, text="t" * 2000)
    run(pipeline, log, target=0)
    assert calls == ["terminal"]  # nothing got it under 0, so every rung ran
    calls.clear()
    run(pipeline, log, target=10**6)
    assert calls == []


def test_token_counter_reads_the_last_report_and_estimates_the_rest() -> None:
    counter = TokenCounter()
    reply = Message(Role.ASSISTANT, "ok", meta={"provider": "anthropic", "input_tokens": 1000, "cached_tokens": 500})
    tail = Message(Role.USER, "x" * 400)
    log = [Message(Role.USER, "y" * 40), reply, tail]
    m = counter.measure(log)
    assert m.tokens == 1500 + counter.message(reply) + counter.message(tail)
    assert m.overhead == 1500 - counter.message(log[0])
    assert counter.message(tail) == 4 + 100
    assert counter.measure(log, stale=reply, overhead=7).tokens == 7 + counter.estimate(log)
    assert TokenCounter(tokenizer=lambda text: 1).message(tail) == 5
    assert chars_per_four("abcde") == 2


def test_a_real_tokenizer_is_used_when_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    from brute_nb.compaction.tokens import default_tokenizer

    class Encoding:
        def encode(self, text: str, disallowed_special: Any = ()) -> list[str]:
            return text.split()

    fake = types.ModuleType("tiktoken")
    fake.get_encoding = lambda name: Encoding()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", fake)
    assert default_tokenizer.__wrapped__()("one two three") == 3
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # not installed: characters / 4
    assert default_tokenizer.__wrapped__() is chars_per_four
