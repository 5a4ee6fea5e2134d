"""A session file holding an orphan tool result or an unanswered call must not poison the session: what is sent
is repaired (the strict fake server refuses either, as both real APIs do), the user is told once, and the file is
left as it was (the turn only appends)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from brute_nb import Message, ToolCall, agent
from brute_nb.middleware import SessionLog
from brute_nb.sendable import UNANSWERED_RESULT, sendable
from brute_nb.testing import FakeProvider, reply

from .helpers import FACTORIES

BROKEN = [
    Message("user", "read a"),
    Message("assistant", "", tool_calls=[ToolCall("c1", "read", {"file_path": "a"}),
                                         ToolCall("c2", "read", {"file_path": "b"})]),
    Message("tool", "text of a", tool_call_id="c1"),  # c2 never answered
    Message("assistant", "done"),
    Message("tool", "left over", tool_call_id="gone"),  # its call was deleted
    Message("user", "thanks"),
    Message("assistant", "welcome"),
]


def test_sendable_leaves_out_orphans_and_answers_open_calls() -> None:
    sent, repair = sendable(BROKEN)
    assert [m.tool_call_id for m in repair.dropped] == ["gone"] and [c.id for c in repair.closed] == ["c2"]
    assert [(m.role.value, m.tool_call_id) for m in sent] == [
        ("user", None), ("assistant", None), ("tool", "c1"), ("tool", "c2"), ("assistant", None), ("user", None),
        ("assistant", None)]
    assert sent[3].content == UNANSWERED_RESULT
    valid = [*BROKEN[:2], Message("tool", "b", tool_call_id="c2"), BROKEN[2]]
    sent, repair = sendable(valid)
    assert sent == valid and not repair


@pytest.mark.parametrize("api", sorted(FACTORIES))
def test_a_broken_session_file_still_works_and_is_left_as_it_was(
        api: str, fake_provider: FakeProvider, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(m.to_json() + "\n" for m in BROKEN))
    before = path.read_text()
    fake_provider.add(reply("first"), reply("second"))
    told: list[Any] = []
    bot = agent().use(SessionLog, path=path).run(FACTORIES[api](fake_provider))
    bot.on("repaired", lambda env, payload: told.append(payload))
    with caplog.at_level(logging.WARNING, logger="brute_nb"):
        first = bot.start("again")["messages"]  # no HTTP 400
        second = bot.start("and again")["messages"]
    assert [m.content for m in first if m.role.value == "assistant"][-1] == "first"
    assert [m.content for m in second if m.role.value == "assistant"][-1] == "second"
    assert path.read_text().startswith(before)  # the user's file: only appended to
    assert len(told) == 1 and "session file is unchanged" in told[0]["message"]
    assert [r.getMessage() for r in caplog.records].count(f"brute_nb: {told[0]['message']}") == 1
