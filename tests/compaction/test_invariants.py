"""Property tests: every layer, alone or in the ladder, keeps the invariants on any valid log."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from compaction_helpers import check_valid, problems, valid_logs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brute_nb.compaction import Compaction, CompactionPipeline, SlidingWindow, Summary, TokenCounter, ToolResults
from brute_nb.compaction.steps import is_summary, split
from brute_nb.message import Message, Role, ToolCall, role_of

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def summarize(messages: list[Any]) -> str:
    return f"Goal: test. Folded {len(messages)} messages."


LAYERS = {
    "tool_results": lambda keep: CompactionPipeline([ToolResults(keep=keep)]),
    "sliding_window": lambda keep: CompactionPipeline([SlidingWindow(keep=keep)]),
    "summary": lambda keep: CompactionPipeline([Summary(summarize=summarize, keep=keep)]),
    "ladder": lambda keep: CompactionPipeline(
        [ToolResults(keep=keep), SlidingWindow(keep=keep + 1), Summary(summarize=summarize, keep=keep)]
    ),
}


def compact(log: list[Any], layer: str, keep: int, fraction: float) -> Compaction:
    counter = TokenCounter()
    ctx = Compaction(log, target=int(counter.estimate(log) * fraction), window=10**9, counter=counter)
    anyio.run(LAYERS[layer](keep), ctx)
    return ctx


def pinned(log: list[Any]) -> list[Any]:
    users = [m for m in log if role_of(m) == "user" and not is_summary(m)]
    return [m for m in log if role_of(m) == "system"] + ([users[0], users[-1]] if users else [])


def subsequence(small: list[Any], big: list[Any]) -> bool:
    it = iter(big)
    return all(any(x is y for y in it) for x in small)


@SETTINGS
@given(valid_logs(), st.sampled_from(sorted(LAYERS)), st.integers(0, 4), st.floats(0.0, 1.0))
def test_every_layer_keeps_the_invariants(log: list[Any], layer: str, keep: int, fraction: float) -> None:
    check_valid(log)
    ctx = compact(log, layer, keep, fraction)
    after = ctx.messages
    check_valid(after)
    for m in pinned(log):
        assert any(m is a for a in after), f"pinned {m!r} was dropped"
    survivors = [m for m in log if any(m is a for a in after)]
    assert subsequence(survivors, after), "surviving messages changed order"
    outcome = ctx.outcome()
    accounted = survivors + outcome["removed"] + [old for old, _ in outcome["rewritten"]]
    assert sorted(map(id, accounted)) == sorted(map(id, log)), "an original is neither kept nor reported"
    for old, new in outcome["rewritten"]:
        assert new.tool_call_id == old.tool_call_id and new.meta["compacted"] == "tool_results"
        before, after_calls = old.tool_calls or (), new.tool_calls or ()
        assert [(c.id, c.name, list(c.arguments)) for c in before] == [
            (c.id, c.name, list(c.arguments)) for c in after_calls]
    assert all(is_summary(m) for m in outcome["added"])


@SETTINGS
@given(valid_logs(), st.integers(0, 3))
def test_compacting_twice_keeps_the_invariants_and_refolds_the_summary(log: list[Any], keep: int) -> None:
    first = compact(log, "summary", keep, 0.0).messages
    second = compact(first, "ladder", keep, 0.0).messages
    check_valid(second)
    assert sum(is_summary(m) for m in second) <= 1
    for m in pinned(log):
        assert any(m is a for a in second)


@SETTINGS
@given(valid_logs())
def test_split_covers_every_message_once_in_order(log: list[Any]) -> None:
    indices = [i for unit in split(log) for i in unit.indices]
    assert indices == list(range(len(log)))
    for unit in split(log):
        kinds = {role_of(log[i]) for i in unit.indices}
        if unit.kind == "step":
            assert role_of(log[unit.indices[0]]) == "assistant" and kinds <= {"assistant", "tool"}


def test_split_merges_units_when_a_result_is_separated_from_its_call() -> None:
    call = ToolCall("c1", "read", {})
    log = [Message(Role.USER, "go"), Message(Role.ASSISTANT, "", tool_calls=[call]), Message(Role.USER, "wait"),
           Message(Role.TOOL, "out", tool_call_id="c1"), Message(Role.USER, "latest")]
    units = split(log)
    assert [u.indices for u in units] == [[0], [1, 2, 3], [4]]
    ctx = Compaction(log, target=0, window=1)
    anyio.run(SlidingWindow(keep=0), ctx)
    assert [m.content for m in ctx.messages] == ["go", "latest"]


CALL = ToolCall("c1", "read", {"file_path": "a.py"})
U, U2 = Message(Role.USER, "hi"), Message(Role.USER, "wait")
A = Message(Role.ASSISTANT, "", tool_calls=[CALL])
T = Message(Role.TOOL, "out", tool_call_id="c1")


@pytest.mark.parametrize("log, caught_by", [
    ([U, A, T], set()),
    ([Message(Role.SYSTEM, "sys"), U, A, T, U2], set()),
    ([U, A], {"openai_chat", "anthropic"}),  # a call never answered
    ([U, T], {"openai_chat", "anthropic"}),  # an orphan result
    ([U, A, U2, T], {"openai_chat"}),  # separated (the Anthropic transport folds the result in first: valid there)
    ([U, T, A], {"openai_chat", "anthropic"}),  # the result before its call
    ([A, T, U], {"log"}),  # no first user message (Anthropic's transport inserts a placeholder turn)
], ids=["valid", "valid-with-system", "unanswered", "orphan", "separated", "reversed", "no-first-user"])
def test_the_check_rejects_what_providers_reject(log: list[Any], caught_by: set[str]) -> None:
    found = problems(log)
    assert {p.split(":")[0] for p in found} == caught_by, found
    if caught_by:
        with pytest.raises(AssertionError, match="invalid log"):
            check_valid(log)


class DropOldestResult:
    """A deliberately broken layer: drops the first tool result, leaving its call unanswered."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, ctx: Compaction) -> None:
        first = next(i for i, m in enumerate(ctx.messages) if role_of(m) == "tool")
        ctx.update("broken", ctx.messages[:first] + ctx.messages[first + 1:])


class DropFirstUser(DropOldestResult):
    """A deliberately broken layer: drops the first user message."""

    async def __call__(self, ctx: Compaction) -> None:
        first = next(i for i, m in enumerate(ctx.messages) if role_of(m) == "user")
        ctx.update("broken", ctx.messages[:first] + ctx.messages[first + 1:])


@pytest.mark.parametrize("layer", [DropOldestResult, DropFirstUser])
def test_a_broken_layer_is_caught(layer: Any) -> None:
    log = [Message(Role.SYSTEM, "sys"), U, A, T, U2]
    ctx = Compaction(log, target=0, window=1)
    anyio.run(CompactionPipeline().use(layer), ctx)
    with pytest.raises(AssertionError, match="invalid log"):
        check_valid(ctx.messages)
