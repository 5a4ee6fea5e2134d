"""Issue 28 §6: Brute's DoomLoopDetection (threshold 3): repeated tool calls end the loop, the model and the user
are told, and the reference's two fixes hold (this turn's calls only; arguments compared whatever their order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import brute_nb
from brute_nb.errors import MiddlewareError
from brute_nb.message import unanswered_calls
from brute_nb.middleware import DoomLoopDetection, FinalAnswer, MaxIterations, SessionLog, ToolResultLoop
from brute_nb.middleware.doom_loop import repetitions, signatures
from brute_nb.testing import AnswerCalls, Scripted
from brute_nb.testing.scripted import call, reply

TOOLS = [{"name": "read", "description": "Read a file.", "parameters": {"type": "object", "properties": {}}},
         {"name": "shell", "description": "Run a command.", "parameters": {"type": "object", "properties": {}}}]
A = ("read", '{"file_path": "a"}')
B = ("shell", '{"command": "pytest"}')
C = ("read", '{"file_path": "c"}')


@pytest.mark.parametrize(("found", "count"), [
    ([A, A], 0), ([A, A, A], 3), ([B, A, A, A], 3), ([A, A, B], 0), ([A, A, A, A], 4),
    ([A, B, A, B, A, B], 3), ([A, B, C, A, B, C, A, B, C], 3), ([A, B, A, B, C], 0), ([], 0),
])
def test_brute_rule_finds_the_shortest_pattern_repeated_at_the_end(found: list[Any], count: int) -> None:
    assert repetitions(found, 3) == count


def stack(fake: Scripted, *, final: bool = False) -> brute_nb.Agent:
    agent = brute_nb.agent()
    if final:
        agent.use(FinalAnswer, model=fake)
    return (agent.use(ToolResultLoop).use(MaxIterations, limit=20).use(DoomLoopDetection)
            .use(AnswerCalls, tools=TOOLS, answer="Error: FileNotFoundError: a").run(fake))


def test_three_identical_calls_stop_the_loop_and_tell_model_and_user() -> None:
    same = [reply("", call("read", {"file_path": "a", "limit": 5})),
            reply("", call("read", {"limit": 5, "file_path": "a"})),  # same arguments, other key order
            reply("", call("read", {"file_path": "a", "limit": 5}))]
    fake = Scripted([*same, "never asked"])
    stops: list[Any] = []
    agent = stack(fake).on("should_exit", lambda env, p: stops.append(p))
    env = agent.start("read a")
    assert fake.calls == 3  # the fourth call was not made: no repeated call runs again
    assert stops and stops[0]["reason"] == "doom_loop_detected" and "3 repetitions" in stops[0]["message"]
    notice = env["messages"][-1]
    assert notice.role == "user" and notice.meta["synthetic"] and "Doom loop detected" in notice.content
    assert env["metadata"]["doom_loop_detected"] == 3
    assert not unanswered_calls(env["messages"])


def test_with_final_answer_the_model_reads_the_notice_and_answers_without_tools() -> None:
    fake = Scripted([*(reply("", call("shell", {"command": "pytest"})) for _ in range(3)),
                     "I was stuck re-running pytest; the import error needs a different fix."])
    env = stack(fake, final=True).start("make the tests pass")
    assert fake.calls == 4
    last_request = fake.requests[-1]["messages"]
    assert "Doom loop detected" in last_request[-2]["content"] and "tools are disabled" in last_request[-1]["content"]
    assert env["messages"][-1].content.startswith("I was stuck")


def test_only_this_turns_calls_count_so_the_next_turn_starts_clean(tmp_path: Path) -> None:
    fake = Scripted([reply("", call("read", {"file_path": "a"})), reply("", call("read", {"file_path": "a"})),
                     "Read it twice.", reply("", call("read", {"file_path": "a"})), "Once more, fine."])
    agent = brute_nb.agent().use(SessionLog, path=tmp_path / "s.jsonl")
    agent.use(ToolResultLoop).use(DoomLoopDetection).use(AnswerCalls, tools=TOOLS).run(fake)
    agent.start("first")
    env = agent.start("second")  # a third identical call in the history, but the first of this turn
    assert len(fake.requests[-1]["messages"]) == 9  # the history was sent: the calls were there to see
    assert env["should_exit"] is None and env["messages"][-1].content == "Once more, fine."
    assert signatures(env["messages"]) == [A]


def test_threshold_is_checked_when_the_stack_is_built() -> None:
    with pytest.raises(MiddlewareError, match="DoomLoopDetection"):
        brute_nb.agent().use(DoomLoopDetection, threshold=1).run(Scripted([])).start("x")
