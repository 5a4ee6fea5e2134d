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
