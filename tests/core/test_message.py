from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import brute_nb
from brute_nb import Log, Message, Role, ToolCall
from brute_nb.message import INVALID_ARGUMENTS_KEY, close_unanswered, unanswered_calls

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
messages = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "system", "tool", "USER", "Tool"]),
    content=st.none() | text,
    tool_calls=st.none() | st.lists(calls, max_size=3),
    tool_call_id=st.none() | text,
    meta=st.none() | st.dictionaries(text, jsonish, max_size=3),
)


@given(messages)
def test_round_trip_for_every_message(m: Message) -> None:
    assert Message(**m.to_dict()) == m
    assert Message.from_json(m.to_json()) == m
    assert "\n" not in m.to_json()


class ForeignMessage:
    """A library's own message object: only the duck-typed members."""

    def __init__(self, role: str, content: str) -> None:
        self.role, self.content, self.tool_calls, self.tool_call_id = role, content, None, None

    def to_dict(self) -> dict[str, object]:
        return {"role": self.role, "content": self.content}


def test_duck_typed_messages_ride_through_the_stack(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from brute_nb.middleware import SessionLog, ToolResultLoop

    def handler(env: dict[str, object]) -> None:
        env["messages"].append(ForeignMessage("assistant", "from a foreign library"))  # type: ignore[attr-defined]

    path = tmp_path / "s.jsonl"
    agent = brute_nb.agent().use(SessionLog, path=path).use(ToolResultLoop).run(handler)
    agent.start(ForeignMessage("user", "hi"))  # type: ignore[arg-type]
    assert path.read_text().splitlines() == [
        '{"role":"user","content":"hi"}',
        '{"role":"assistant","content":"from a foreign library"}',
    ]


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
