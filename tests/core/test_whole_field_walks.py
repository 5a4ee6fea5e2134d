"""The walks a kernel's first turn makes over a whole session, done by whole fields, answer what the message-by-
message walks answer: the reader's ``Message`` values built slot by slot (``sessions.lines``).
"""

from __future__ import annotations

import gc

import pytest

from brute_nb.message import Message, ToolCall
from brute_nb.sessions import lines
from brute_nb.sessions.lines import parse_messages


def test_the_reader_builds_what_the_constructor_builds() -> None:
    items = [Message("user", "hi", meta={"id": "1"}), Message("user", ""), Message("system", "s", meta={}),
             Message("assistant", "", [ToolCall("c1", "ls", {"p": "."}), ToolCall("", "f", {})],
                     meta={"model": "m", "usage": {"n": [1, 2]}}),
             Message("tool", "a.txt", tool_call_id="c1"), Message("assistant", "x", [])]
    data = "".join(m.to_json() + "\n" for m in items).encode().replace(b'"arguments":{}', b'"arguments":null')
    data += b'{"role":"assistant","content":null,"tool_calls":[{"name":"g"},{"name":"g"}]}\n'
    read = parse_messages(data)
    assert read is not None  # a regular file: the fast path, not the strict reader
    expected = [*items, Message("assistant", None, [ToolCall("", "g"), ToolCall("", "g")])]
    assert read == expected
    for got, made in zip(read, expected, strict=True):
        assert type(got.meta) is type(made.meta) and (got.meta is made.meta) == (not made.meta)  # the shared empty
        assert type(got.tool_calls) is type(made.tool_calls) and type(got.role) is type(made.role)
        assert got.attachments == () and got.to_json() == made.to_json()
    last = read[-1].tool_calls
    assert last is not None and last[0].arguments == {} and last[0].arguments is not last[1].arguments


def test_a_field_without_a_column_is_an_error() -> None:
    with pytest.raises(KeyError, match="tool_call_id"):
        lines._filled(Message, 1, {"role": ["user"], "content": ["x"], "tool_calls": [None], "attachments": [()],
                                   "meta": [{}]})


def test_parsed_messages_go_to_the_oldest_generation_and_frozen_objects_stay_frozen() -> None:
    data = b'{"role":"assistant","content":"x","tool_calls":[{"id":"c","name":"f"}],"meta":{"a":[1]}}\n' * 500
    gc.collect()
    assert gc.isenabled()
    read = parse_messages(data)
    assert read is not None and gc.isenabled()
    young = {id(o) for o in gc.get_objects(generation=0) + gc.get_objects(generation=1)}
    assert not young & {id(read[0]), id(read[-1]), id(read[-1].tool_calls)}
    gc.freeze()  # a program that froze its objects (before a fork): the reader leaves them frozen
    try:
        frozen = gc.get_freeze_count()
        assert parse_messages(data) == read
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        assert parse_messages(data) == read
        assert not gc.isenabled()
    finally:
        gc.enable()
