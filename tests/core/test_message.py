from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import pickle
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import brute_nb
from brute_nb import Log, Message, Role, ToolCall
from brute_nb.attachments import Attachment, from_bytes
from brute_nb.message import FIELDS, INVALID_ARGUMENTS_KEY, close_unanswered, unanswered_calls

SEED_LINE = '{"role":"assistant","content":"","tool_calls":[{"id":"tc1","name":"shell","arguments":{"command":"ls"}}]}'


def test_seed_sample_line_byte_for_byte() -> None:
    tc = ToolCall(id="tc1", name="shell", arguments={"command": "ls"})
    m = Message(role="assistant", content="", tool_calls=[tc])
    assert m.to_json() == SEED_LINE
    assert Message.from_json(SEED_LINE) == m
    assert Message(**json.loads(SEED_LINE)) == m


def test_roles_any_case_and_enum_compare_equal_to_strings() -> None:
    assert Message("USER", "hi").role == "user"
    assert Message(Role.TOOL, "x", tool_call_id="a").role == Role.TOOL
    with pytest.raises(ValueError, match="allowed roles are user, assistant, system, tool"):
        Message("robot", "hi")


def test_content_none_becomes_empty_and_non_str_is_refused() -> None:
    assert Message("assistant", None).content == ""
    with pytest.raises(TypeError, match="content must be a string"):
        Message("user", 3)  # type: ignore[arg-type]


def test_tool_calls_coerced_from_dicts_and_json_strings() -> None:
    m = Message("assistant", tool_calls=[{"id": "a", "name": "read", "arguments": '{"file_path": "x"}'}])
    assert m.tool_calls == (ToolCall("a", "read", {"file_path": "x"}),)
    assert m.has_tool_calls
    assert not Message("assistant", tool_calls=[]).has_tool_calls
    bad = ToolCall("b", "read", "{not json")  # type: ignore[arg-type]
    assert bad.arguments == {INVALID_ARGUMENTS_KEY: "{not json"}
    assert not bad.arguments_valid


def test_message_is_immutable_and_meta_read_only() -> None:
    m = Message("assistant", "hi", meta={"model": "m", "input_tokens": 3})
    with pytest.raises(AttributeError):
        m.content = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        m.meta["model"] = "other"  # type: ignore[index]
    assert m.to_dict() == {"role": "assistant", "content": "hi", "meta": {"model": "m", "input_tokens": 3}}
    assert "meta" not in Message("user", "x").to_dict()


def test_to_json_keeps_non_ascii_and_field_order() -> None:
    m = Message("tool", "héllo ✓", tool_call_id="t1")
    assert m.to_json() == '{"role":"tool","content":"héllo ✓","tool_call_id":"t1"}'


def test_log_sugar_appends_and_returns() -> None:
    log = brute_nb.log()
    u = log.user("list the files")
    a = log.assistant("", tool_calls=[{"id": "tc1", "name": "shell", "arguments": {"command": "ls"}}])
    t = log.tool("a.rb b.rb", tool_call_id="tc1")
    s = log.system("be brief")
    assert list(log) == [u, a, t, s]
    assert log[0].role == "user" and log[0].content == "list the files"
    assert isinstance(log, list) and isinstance(log, Log)


def test_log_observers_see_appends_inserts_and_rewrites() -> None:
    log = Log()
    seen: list[tuple[str, object]] = []
    log.observe(lambda kind, item: seen.append((kind, item)))
    m = log.user("a")
    log.insert(0, Message("system", "s"))
    log[1:1] = [Message("user", "b")]
    assert [k for k, _ in seen] == ["append", "insert", "rewrite"]
    assert seen[0][1] is m


def test_unanswered_calls_and_close() -> None:
    log = Log()
    log.assistant("", tool_calls=[{"id": "1", "name": "a"}, {"id": "2", "name": "b"}])
    log.tool("ok", tool_call_id="1")
    assert [c.id for c in unanswered_calls(log)] == ["2"]
    added = close_unanswered(log)
    assert [m.tool_call_id for m in added] == ["2"]
    assert unanswered_calls(log) == []
    assert "interrupted" in added[0].content


text = st.text(max_size=30)
jsonish = st.recursive(
    st.none() | st.booleans() | st.integers() | text,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(text, c, max_size=3),
    max_leaves=8,
)
calls = st.builds(ToolCall, id=text, name=text.filter(bool), arguments=st.dictionaries(text, jsonish, max_size=3))
attachments = st.builds(
    Attachment,
    media_type=st.sampled_from(["image/png", "application/pdf", "text/plain", "application/x-unknown"]),
    sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
    name=text,
    path=st.none() | text,
    data=st.none() | st.binary(max_size=16),
)
FIELD_VALUES = {
    "role": st.sampled_from(["user", "assistant", "system", "tool", "USER", "Tool"]),
    "content": st.none() | text,
    "tool_calls": st.none() | st.lists(calls, max_size=3),
    "tool_call_id": st.none() | text,
    "attachments": st.none() | st.lists(attachments, max_size=2),
    "meta": st.none() | st.dictionaries(text, jsonish, max_size=3),
}
"""A strategy for every field of Message: a field added without one fails test_every_field_has_a_strategy."""
messages = st.fixed_dictionaries(FIELD_VALUES).map(lambda fields: Message(**fields))


def test_every_field_has_a_strategy_and_one_declaration() -> None:
    declared = [f.name for f in dataclasses.fields(Message)]
    assert [f.name for f in FIELDS] == declared  # the annotations and FIELDS are the same list, in the same order
    assert set(FIELD_VALUES) == set(declared), "give the new Message field a strategy so its round trips are tested"
    assert set(inspect.signature(Message).parameters) == set(declared)


def whole(m: Message) -> dict[str, object]:
    """Every field, attachments with what their equality leaves out (where the bytes are)."""
    out: dict[str, object] = {f.name: getattr(m, f.name) for f in dataclasses.fields(Message)}
    out["attachments"] = [(a, a.path, a.data) for a in m.attachments]
    return out


@given(messages)
def test_round_trip_for_every_message(m: Message) -> None:
    assert Message(**m.to_dict()) == m
    assert Message.from_json(m.to_json()) == m
    assert "\n" not in m.to_json()
    assert whole(m.replace()) == whole(m)


@given(messages)
def test_pickle_and_deepcopy_keep_every_field(m: Message) -> None:
    for twin in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        assert whole(twin) == whole(m)
        assert isinstance(twin.meta, MappingProxyType)  # still read-only


@given(messages)
def test_a_session_line_keeps_every_field_but_where_attachment_bytes_live(m: Message) -> None:
    back = Message.from_json(m.to_json())
    for f in dataclasses.fields(Message):
        assert getattr(back, f.name) == getattr(m, f.name), f.name
    assert [a.to_dict() for a in back.attachments] == [a.to_dict() for a in m.attachments]


def test_an_attachment_survives_pickle_deepcopy_and_a_log_copy() -> None:
    """The data-loss bug: ``__reduce__`` listed the fields by hand and left ``attachments`` out."""
    png = from_bytes(b"\x89PNG\r\n\x1a\nplot", name="plot.png")
    log = Log(ids=True)
    log.user("what is wrong with this plot?", attachments=[png])
    for twin in (pickle.loads(pickle.dumps(log)), copy.deepcopy(log), log.copy()):
        assert twin[0].attachments == (png,) and twin[0].attachments[0].read_bytes() == png.read_bytes()


def test_a_log_holds_messages_whatever_it_is_given() -> None:
    log = Log([{"role": "user", "content": "a dict"}])
    log.append({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "read"}]})
    log.insert(0, Message("system", "first"))
    log[1:1] = [{"role": "user", "content": "sliced in"}]
    log[0] = {"role": "system", "content": "set"}
    log += [{"role": "tool", "content": "done", "tool_call_id": "c1"}]
    assert all(type(m) is Message for m in log)
    assert [m.content for m in log] == ["set", "sliced in", "a dict", "", "done"]
    assert log[3].tool_calls == (ToolCall("c1", "read"),)
    with pytest.raises(TypeError, match="a log holds messages: got a int"):
        log.append(3)
    with pytest.raises(ValueError, match="unknown message fields"):
        log.append({"role": "user", "text": "typo"})
    assert len(log) == 5  # nothing half-added


def test_replace_of_meta_alone_carries_the_other_fields_as_they_are() -> None:
    """The common copy (a reply's report, an id) does not coerce the fields it keeps again; its meta is still its
    own read-only copy, a read-only view given is kept, and an empty one is the shared empty meta."""
    m = Message("assistant", "x", tool_calls=[ToolCall("c1", "f", {"a": 1})], meta={"k": 1})
    given = {"k": 2}
    copy = m.replace(meta=given)
    assert copy == Message("assistant", "x", tool_calls=[ToolCall("c1", "f", {"a": 1})], meta={"k": 2})
    assert copy.tool_calls is m.tool_calls and copy.meta == {"k": 2} and isinstance(copy.meta, MappingProxyType)
    given["k"] = 3
    assert copy.meta == {"k": 2}
    view = MappingProxyType({"v": 1})
    assert m.replace(meta=view).meta is view
    assert m.replace(meta=None).meta is Message("user", "y").meta == {}
    assert m.replace(meta={}, content="y") == Message("assistant", "y", tool_calls=m.tool_calls)


def test_replace_refuses_a_field_message_does_not_have() -> None:
    with pytest.raises(TypeError, match=r"no field\(s\) \['contents'\]"):
        Message("user", "hi").replace(contents="typo")


class ForeignMessage:
    """A library's own message object: only the duck-typed members."""

    def __init__(self, role: str, content: str) -> None:
        self.role, self.content, self.tool_calls, self.tool_call_id = role, content, None, None

    def to_dict(self) -> dict[str, object]:
        return {"role": self.role, "content": self.content}


def test_foreign_messages_become_messages_where_they_enter_the_log(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from brute_nb.middleware import SessionLog, ToolResultLoop

    def handler(env: dict[str, object]) -> None:
        env["messages"].append(ForeignMessage("assistant", "from a foreign library"))  # type: ignore[attr-defined]

    path = tmp_path / "s.jsonl"
    agent = brute_nb.agent().use(SessionLog, path=path).use(ToolResultLoop).run(handler)
    env = agent.start(ForeignMessage("user", "hi"))  # type: ignore[arg-type]
    assert all(type(m) is Message for m in env["messages"])
    saved = [Message.from_json(line) for line in path.read_text().splitlines()]
    assert [(m.role, m.content) for m in saved] == [("user", "hi"), ("assistant", "from a foreign library")]
    assert all(m.meta["id"] for m in saved)  # real messages now, so the turn log stamps them like any other


def test_messages_and_logs_pickle_and_deep_copy_as_values() -> None:
    import copy
    import pickle

    from brute_nb.message import Log

    log = Log(ids=True)
    log.user("hi", source="test")
    log.assistant("", [ToolCall("c1", "read", {"paths": ["a", "b"]})], model="m")
    log.tool("text", tool_call_id="c1", tool_name="read")
    heard: list[str] = []
    log.observe(lambda kind, item: heard.append(kind))
    for twin in (copy.deepcopy(log), pickle.loads(pickle.dumps(log)), copy.copy(log[1])):
        assert twin == log or twin == log[1]
    clone = copy.deepcopy(log)
    assert clone.ids and clone[1].tool_calls is not log[1].tool_calls and clone[1].meta == log[1].meta
    assert dict(pickle.loads(pickle.dumps(log[0])).meta) == dict(log[0].meta)
    clone.append(Message("user", "only in the copy"))
    assert heard == [] and len(log) == 3  # a copy is a value: it does not carry the live log's observers


def test_in_place_repeat_notifies_observers() -> None:
    from brute_nb.message import Log

    log = Log([Message("user", "a")])
    heard: list[str] = []
    log.observe(lambda kind, item: heard.append(kind))
    log *= 2
    assert len(log) == 2 and isinstance(log, Log) and heard == ["rewrite"]


def test_a_turns_env_holds_a_snapshot_not_the_live_session_log(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from brute_nb import agent
    from brute_nb.middleware import SessionLog
    from brute_nb.testing.scripted import Scripted

    bot = agent().use(SessionLog, path=tmp_path / "s.jsonl").run(Scripted(["one", "two"]))
    first = bot.start("hi")
    kept = list(first["messages"])
    bot.start("again")
    assert list(first["messages"]) == kept and len(kept) == 2


def test_a_kept_env_read_only_after_later_turns_still_shows_its_own_turn(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The snapshot is lent, not copied: it must be copied before the next turn changes the session log (which
    takes the last turn's system message off its front and puts its own there), not when it is first read."""
    from brute_nb import agent
    from brute_nb.middleware import SessionLog
    from brute_nb.testing.scripted import Scripted

    class Numbered:  # a system prompt that differs every turn
        def __init__(self, app: Any) -> None:
            self.app, self.turns = app, 0

        async def __call__(self, env: dict[str, Any]) -> Any:
            self.turns += 1
            env["messages"].insert(0, Message("system", f"turn {self.turns}"))
            return await self.app(env)

    bot = agent().use(SessionLog, path=tmp_path / "s.jsonl").use(Numbered).run(Scripted(["one", "two", "three"]))
    first = bot.start("hi")
    kept_log = bot.start("again")["messages"]  # the log itself, without its env
    bot.start("third")
    assert [m.content for m in first["messages"]] == ["turn 1", "hi", "one"]
    assert [m.content for m in kept_log] == ["turn 2", "hi", "one", "again", "two"]
    assert [m.content for m in bot.messages] == ["turn 3", "hi", "one", "again", "two", "third", "three"]


def test_an_env_nobody_keeps_costs_no_copy_of_the_session_log(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """O(new messages) a turn: a finished turn's env that nobody keeps is freed at once (no reference cycle to
    wait for the collector), so the next turn reuses the session log without copying it for that env."""
    import gc
    import weakref

    from brute_nb import agent
    from brute_nb.middleware import SessionLog

    copies: list[int] = []
    made = Log.__init__

    def counted(self: Log, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        copies.append(len(self))

    async def reply(env: dict[str, Any]) -> None:  # async: a sync handler gets a view of the log (a copy)
        env["messages"].assistant("ok")

    monkeypatch.setattr(Log, "__init__", counted)
    bot = agent().use(SessionLog, path=tmp_path / "s.jsonl").run(reply)
    gc.disable()
    try:
        first = weakref.ref(bot.start("one"))
        session = bot.middleware(SessionLog)._session
        for prompt in ("two", "three"):
            bot.start(prompt)
        assert first() is None  # freed by its reference count alone
        assert bot.middleware(SessionLog)._session is session  # the session log, reused
        assert [n for n in copies if n > 2] == []  # no env copied the history (only fresh turn logs were made)
    finally:
        gc.enable()


def test_the_core_has_no_import_cycle() -> None:
    """Every ``brute_nb`` import outside the notebook layer, function-level ones included: no cycle (the package
    itself is not an edge: every submodule loads after it)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "brute_nb"
    modules = {".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__"): p
               for p in root.rglob("*.py") if "notebook" not in p.parts}
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                          for a in node.names}
        edges[name] = {m for m in found if m in modules and m not in ("brute_nb", name)}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            for nxt in edges[todo.pop()] - seen:
                if nxt == goal:
                    return True
                seen.add(nxt)
                todo.append(nxt)
        return False

    assert edges.get("brute_nb.frames")  # the scan itself found imports
    cycles = sorted(f"{a} -> {b}" for a in edges for b in edges[a] if reaches(b, a))
    assert cycles == []


def test_a_reused_call_id_leaves_the_earlier_open_call_unanswered() -> None:
    """Providers that reuse ids (``call_0`` every reply): a result answers the latest open call with its id; the
    earlier open one is still found and closed, where a dict keyed by id lost it and left it on disk unanswered."""
    from brute_nb.message import Log, ToolCall, close_unanswered, unanswered_calls

    log = Log()
    log.user("go")
    log.assistant("", tool_calls=[ToolCall("call_0", "read", {"file_path": "a"})])  # stopped before its result
    log.user("again")
    log.assistant("", tool_calls=[ToolCall("call_0", "read", {"file_path": "b"})])
    log.tool("b's text", tool_call_id="call_0")
    assert [c.arguments["file_path"] for c in unanswered_calls(log)] == ["a"]
    added = close_unanswered(log)
    assert [m.tool_call_id for m in added] == ["call_0"] and unanswered_calls(log) == []
    twice = Log()
    twice.assistant("", tool_calls=[ToolCall("x", "read", {"file_path": "a"}),
                                    ToolCall("x", "read", {"file_path": "b"})])
    twice.tool("one", tool_call_id="x")
    assert len(unanswered_calls(twice)) == 1
    twice.tool("two", tool_call_id="x")
    assert unanswered_calls(twice) == []
