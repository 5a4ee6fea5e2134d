"""The per-turn fast paths give what the plain walks give, on logs with everything that makes them leave the fast
path: blank and whitespace texts, system messages mid-log, same-role runs, cache marks, thinking, tool calls with
empty or repeated ids, orphan results, unanswered calls, message-like objects that are not ``Message``.

``Anthropic.dump_request`` turns a plain text message into its string turn inline; the oracle here is the rule
the transport documents, written plainly: each message through ``_turn`` (the general block builder) after
``sendable``, same-role turns merged, tool results first in a user turn, a one-text turn as its string,
a user turn first. ``sendable`` answers from ``valid`` when nothing needs repair; it must agree with the walk
that builds the repaired list.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brute_nb.message import Message, ToolCall
from brute_nb.prompt_cache import place_breakpoints
from brute_nb.redact import remember
from brute_nb.sendable import repaired, sendable, valid
from brute_nb.transports.anthropic import CONTINUE_TEXT, EMPTY_REPLY_TEXT, Anthropic

EXAMPLES = settings(max_examples=max(500, settings.default.max_examples), deadline=None)

KEY = "sk-fastpath-0123456789abcdef"
remember(KEY)  # a known key, so the walks must agree on what needs redacting too
texts = st.sampled_from(["", " ", "\n\n", "hi", "a b", "  x  ", f"key {KEY}"]) | st.text(max_size=5)
call_ids = st.sampled_from(["", "a", "b", "c"])
metas = st.sampled_from([{}, {"model": "m", "input_tokens": 3}, {"cache_until_here": True}, {"is_error": True},
                         {"thinking_blocks": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
                         {"thinking_blocks": []}, {"cache_until_here": False},
                         {"refused": {"status": 400, "reason": "Could not process image"}}])


class Like:
    """A message-like object that is not a ``Message`` (another library's message, a test double)."""

    def __init__(self, role: str, content: str = "", tool_calls: Any = None, tool_call_id: str | None = None):
        self.role, self.content, self.tool_calls, self.tool_call_id = role, content, tool_calls, tool_call_id
        self.meta: dict[str, Any] = {}
        self.attachments = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is Like and vars(self) == vars(other)


@st.composite
def messages(draw: Any) -> Any:
    kind = draw(st.sampled_from(["user", "assistant", "system", "tool", "calls", "odd", "like"]))
    meta = draw(metas)
    if kind == "calls":
        calls = [ToolCall(draw(call_ids), "f", {}) for _ in range(draw(st.integers(0, 3)))]
        return Message("assistant", draw(texts), tool_calls=calls, meta=meta)
    if kind == "tool":
        return Message("tool", draw(texts), tool_call_id=draw(call_ids), meta=meta)
    if kind == "odd":  # a tool_call_id on a message that is not a result (a hand-edited file)
        return Message(draw(st.sampled_from(["user", "assistant", "system"])), draw(texts),
                       tool_call_id=draw(call_ids), meta=meta)
    if kind == "like":
        role = draw(st.sampled_from(["tool", "TOOL", "assistant", "Assistant", "user", "system", "weird"]))
        calls = [{"id": draw(call_ids) or "a", "name": "f", "arguments": {}} for _ in range(draw(st.integers(0, 2)))]
        return Like(role, draw(texts), calls or None, draw(st.none() | call_ids))
    return Message(kind, draw(texts), meta=meta)


def plain_dump(log: list[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    turns: list[dict[str, Any]] = []
    sent = sendable(log)[0]
    for m in sent:
        turn = Anthropic._turn(m)
        if turn is None or (not turn["content"] and turn["role"] != "assistant"):  # an empty reply is a turn
            continue
        if turns and turns[-1]["role"] == turn["role"]:
            turns[-1]["content"].extend(turn["content"])
        else:
            turns.append(turn)
    if turns and not turns[-1]["content"]:
        turns.pop()
    for turn in turns:
        if not turn["content"]:
            turn["content"] = [{"type": "text", "text": EMPTY_REPLY_TEXT}]
        if turn["role"] == "user":
            turn["content"].sort(key=lambda b: b.get("type") != "tool_result")
        content = turn["content"]
        if len(content) == 1 and content[0].get("type") == "text" and len(content[0]) == 2:
            turn["content"] = content[0]["text"]
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": CONTINUE_TEXT})
    return Anthropic.system_text(sent), turns


@EXAMPLES
@given(st.lists(messages(), max_size=12))
def test_anthropic_dump_request_is_the_plain_dump(log: list[Any]) -> None:
    system, turns = Anthropic.dump_request(log)
    assert (system, turns) == plain_dump(log)
    assert Anthropic.dump_all(log) == turns
    # Cache breakpoints land on the same blocks whether a turn came out of the fast path or not.
    assert place_breakpoints({"messages": turns, "system": system}) == place_breakpoints(
        {"messages": plain_dump(log)[1], "system": system})


@EXAMPLES
@given(st.lists(messages(), max_size=12))
def test_sendable_fast_check_agrees_with_the_repair_walk(log: list[Any]) -> None:
    sent, repair = repaired(log)
    assert valid(log) == (not repair.changed)
    fast_sent, fast_repair = sendable(log)
    assert fast_sent == sent
    assert (fast_repair.dropped, fast_repair.closed, fast_repair.renamed) == (
        repair.dropped, repair.closed, repair.renamed)
    if valid(log):
        assert sent == log


EDITS = st.sampled_from(["append", "check", "insert", "set", "delete", "pop", "clear", "system first",
                         "systems first", "drop lead"])


LOGGABLE = messages().filter(lambda m: m.role != "weird")
"""What a Log accepts: it makes every item a Message, and a Message's role is one of the four."""


def _edit(log: Any, edit: str, message: Any, at: int) -> None:
    """One of ``EDITS`` on ``log`` (``check`` changes nothing): every change but an append must empty its memo."""
    if edit == "append":
        log.append(message)
    elif edit == "insert":
        log.insert(at, message)
    elif log and edit == "set":
        log[at % len(log)] = message
    elif log and edit == "delete":
        del log[at % len(log)]
    elif log and edit == "pop":
        log.pop()
    elif edit == "clear":
        log.clear()
    elif edit == "system first":  # SystemPrompt each turn: the memo of the body must stay right
        log.insert(at % 3, Message("system", message.content))
    elif edit == "systems first":  # SessionLog putting a turn's system messages first
        log[0:0] = [Message("system", message.content)] * (at % 3)
    elif edit == "drop lead":  # SessionLog taking the last turn's system messages out (or more: then a rewrite)
        log.drop_unheard(at % 3)


@EXAMPLES
@given(st.lists(st.tuples(EDITS, LOGGABLE, st.integers(0, 20)), max_size=30))
def test_a_logs_resumed_check_agrees_with_a_fresh_walk_after_any_edits(steps: list[Any]) -> None:
    """``valid`` on a Log resumes from its memo; appends keep the memo, any other change must drop it."""
    from brute_nb.message import Log

    log = Log()
    for edit, message, at in steps:
        _edit(log, edit, message, at)
        repair = repaired(log)[1]
        assert valid(log) == valid(log) == valid(list(log)) == (not repair.changed)  # the second from the memo


def test_a_log_checked_to_its_end_is_answered_from_the_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each model call checks the log twice (the agent, then its provider's transport): the second, with nothing
    appended since, answers from the first's memo without a walk or a new memo."""
    from brute_nb import sendable as module
    from brute_nb.message import Log

    log = Log([Message("user", "hi"), Message("assistant", "", tool_calls=[ToolCall("c1", "f", {})])])
    assert not valid(log)  # the call is open
    kept: list[Any] = []
    monkeypatch.setattr(module, "keep", lambda *args: kept.append(args))
    assert not valid(log) and not valid(log) and kept == []
    log.append(Message("tool", "done", tool_call_id="c1"))
    assert valid(log) and len(kept) == 1


def _marks(turns: list[dict[str, Any]]) -> list[int]:
    return [i for i, t in enumerate(turns) if isinstance(t["content"], list)
            and any("cache_control" in b for b in t["content"])]


@EXAMPLES
@given(st.lists(st.tuples(EDITS, LOGGABLE, st.integers(0, 20)), max_size=30))
def test_a_logs_resumed_dump_agrees_with_a_fresh_one_after_any_edits(steps: list[Any]) -> None:
    """On a Log the transports dump only what was appended since the last request (``prefix_memo``); after any
    edits the request is the one a fresh dump of the same messages makes, and placing cache marks on it changes
    nothing the next request reuses."""
    from brute_nb.message import Log
    from brute_nb.providers.url_attachments import unreadable
    from brute_nb.transports.openai import OpenAI

    log = Log()
    for edit, message, at in steps:
        _edit(log, edit, message, at)
        fresh = Anthropic.dump_marked(list(log))
        system, turns, marked = Anthropic.dump_marked(log)
        assert (system, turns, marked) == fresh
        assert marked == _marks(turns)
        placed = place_breakpoints({"messages": turns, "system": system}, marked=marked)
        assert placed == place_breakpoints({"messages": Anthropic.dump_marked(list(log))[1], "system": system})
        assert Anthropic.dump_marked(log) == fresh  # the marks went on copies: the kept turns have none added
        assert OpenAI.dump_all(log) == OpenAI.dump_all(list(log))
        assert unreadable(log, "openai") == unreadable(list(log), "openai")


def test_a_system_prompt_put_first_keeps_the_next_request_o_new(monkeypatch: Any) -> None:
    """Each turn SystemPrompt inserts its message at 0 (and SessionLog takes the last turn's out): the body's memo
    stays, so the first request of a later turn dumps the system prompt and the new message, not the history."""
    from brute_nb.message import Log
    from brute_nb.transports.openai import OpenAI

    steps = [[Message("assistant", "", tool_calls=[ToolCall(f"c{i}", "f", {})]),
              Message("tool", f"r{i}", tool_call_id=f"c{i}")] for i in range(25)]
    log = Log([Message("user", "go"), *(m for step in steps for m in step)])
    log.insert(0, Message("system", "be brief"))
    OpenAI.dump_all(log)
    Anthropic.dump_marked(log)
    valid(log)
    log.drop_unheard(1)  # the next turn: last turn's system prompt out, this turn's in, a prompt appended
    log.insert(0, Message("system", "be briefer"))
    log.append(Message("user", "next"))
    dumped: list[Any] = []
    real_dump, real_turn = OpenAI.dump.__func__, Anthropic._turn.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(OpenAI, "dump", classmethod(lambda cls, m: dumped.append(m) or real_dump(cls, m)))
    monkeypatch.setattr(Anthropic, "_turn", classmethod(lambda cls, m: dumped.append(m) or real_turn(cls, m)))
    request = OpenAI.dump_all(log)
    assert dumped == [log[-1], log[0]]  # the new message, then the lead; nothing of the history
    dumped.clear()
    marked = Anthropic.dump_marked(log)
    assert dumped == []  # the new message is a plain text (made inline), the lead a system text: no turn
    assert valid(log)
    assert request == OpenAI.dump_all(list(log))
    assert marked == Anthropic.dump_marked(list(log))
    assert marked[0] == "be briefer"
