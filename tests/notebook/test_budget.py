"""Budget: each ceiling, per turn and per session, stops a real turn cleanly and leaves the session valid.

Turns run the notebook's real default stack (``--budget`` settings, real tool pipeline, the real ``shell`` tool)
against the strict fake provider server, which refuses a request with an unanswered call.
"""

from __future__ import annotations

from typing import Any

import pytest
from notebook_helpers import WAIT

from brute_nb.env import Env
from brute_nb.errors import BudgetError, MiddlewareError, SettingsError
from brute_nb.event_loop import run_sync
from brute_nb.message import role_of, unanswered_calls
from brute_nb.middleware.budget import Budget
from brute_nb.notebook.front.widget import ChatWidget
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import parse_budget
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.usage import Usage


@pytest.fixture
def budgeted(nb: NotebookAgent) -> NotebookAgent:
    # Where each ceiling stops the loop is what these tests count; the answer after the stop is tested on its own.
    nb.configure(approve={"shell": "allow"}, final_answer=False)
    return nb


def turn(nb: NotebookAgent, prompt: str = "go", **budget: float) -> Env:
    if budget:
        nb.configure(budget=budget)
    return run_sync(lambda: nb.aask(prompt))


def echo(n: int = 1, command: str = "echo {i}") -> Any:
    return reply("", *(call("shell", {"command": command.format(i=i)}) for i in range(n)))


def assert_clean_stop(env: Env, nb: NotebookAgent, kind: str) -> None:
    assert env["should_exit"]["reason"] == "budget_exhausted"
    assert env["should_exit"]["source"] == "Budget"
    assert f"{kind} budget is reached" in env["should_exit"]["message"]
    saved = read_session(nb.session_path)
    assert unanswered_calls(saved) == []
    assert role_of(saved[-1]) == "tool"  # stopped after a complete step, before the next model call


def spent(nb: NotebookAgent) -> int:
    usage = Usage.total(read_session(nb.session_path))
    assert usage is not None
    return usage.tokens


def test_tokens(budgeted: NotebookAgent, fake: FakeProvider) -> None:
    fake.add(echo(), echo(), "x")
    env = turn(budgeted, tokens=1)
    assert len(fake.requests) == 1
    assert_clean_stop(env, budgeted, "turn tokens")
    assert f"({spent(budgeted):,} of 1 tokens)" in env["should_exit"]["message"]


def test_tools_counts_every_result_of_a_step(budgeted: NotebookAgent, fake: FakeProvider) -> None:
    fake.add(echo(2), echo(2), "x")
    env = turn(budgeted, tools=3)
    assert len(fake.requests) == 2
    assert_clean_stop(env, budgeted, "turn tools")
    assert "(4 of 3 tool calls)" in env["should_exit"]["message"]


def test_iterations(budgeted: NotebookAgent, fake: FakeProvider) -> None:
    fake.add(echo(), echo(), echo(), "x")
    env = turn(budgeted, iterations=2)
    assert len(fake.requests) == 2
    assert_clean_stop(env, budgeted, "turn iterations")


def test_time(budgeted: NotebookAgent, fake: FakeProvider) -> None:
    # The first step's tool takes longer than the whole budget, so no second model call starts.
    fake.add(echo(command="sleep 0.3"), echo(), "x")
    env = turn(budgeted, time=0.2)
    assert len(fake.requests) == 1
    assert_clean_stop(env, budgeted, "turn time")


def test_a_stopped_turn_ends_with_the_models_answer_by_default(budgeted: NotebookAgent, fake: FakeProvider) -> None:
    """Issue 28 §4: one more call, tools still advertised but none run, for the model's word on where things are."""
    budgeted.configure(final_answer=True)
    fake.add(echo(), "Stopped at the tool budget: one echo ran; the second is left to do.")
    env = turn(budgeted, tools=1)
    assert len(fake.requests) == 2 and env["should_exit"]["reason"] == "budget_exhausted"
    assert "tools are disabled" in str(fake.requests[-1]["json"]["messages"][-1]["content"])
    saved = read_session(budgeted.session_path)
    assert [role_of(m) for m in saved] == ["user", "assistant", "tool", "assistant"]
    assert saved[-1].content.startswith("Stopped at the tool budget") and saved[-1].meta["final_answer"] is True
    assert env["metadata"]["budget"].iterations == 2  # counted in the budget


def test_under_budget_the_turn_is_untouched(budgeted: NotebookAgent, fake: FakeProvider) -> None:
    fake.add(echo(), "done")
    env = turn(budgeted, tokens=100_000, tools=5, iterations=5, time=3600)
    assert env["should_exit"] is None
    assert env["messages"][-1].content == "done"
    assert env["metadata"]["budget"].tools == 1


def test_session_tokens_span_turns_and_history(budgeted: NotebookAgent, fake: FakeProvider) -> None:
    fake.add("a")
    turn(budgeted, "one")
    # A fresh kernel agent on the same file: the history seeds the session count.
    nb = NotebookAgent("chat", budgeted.session_path, settings=budgeted.settings)
    nb.provider = budgeted.provider
    fake.add(echo(), echo(), "x")
    env = turn(nb, "two", session_tokens=spent(budgeted) + 1)
    assert len(fake.requests) == 2  # one call in this turn: the history had used all but one token
    assert_clean_stop(env, nb, "session tokens")
    # The next turn stops before any model call; the session stays valid.
    again = turn(nb, "three")
    assert len(fake.requests) == 2
    assert again["should_exit"]["reason"] == "budget_exhausted"
    assert unanswered_calls(read_session(nb.session_path)) == []


@pytest.mark.parametrize(("kind", "limit"), [("tools", 2), ("iterations", 3)])
def test_session_tools_and_iterations_span_turns(budgeted: NotebookAgent, fake: FakeProvider, kind: str,
                                                  limit: int) -> None:
    fake.add(echo(), "first done", echo(), echo(), "x")
    assert turn(budgeted, "one", **{f"session_{kind}": limit})["should_exit"] is None  # 1 tool, 2 model calls
    env = turn(budgeted, "two")
    assert len(fake.requests) == 3  # one more step reached the session ceiling
    assert_clean_stop(env, budgeted, f"session {kind}")


def test_the_widget_says_which_budget_stopped_the_turn(budgeted: NotebookAgent, fake: FakeProvider) -> None:
    budgeted.configure(budget={"tools": 1})
    fake.add(echo(), echo(), "x")
    chat = ChatWidget(budgeted)
    chat.send("go")
    assert chat.wait_idle(WAIT)
    assert "the turn tools budget is reached (1 of 1 tool calls); raise it with --budget tools=N" in (
        chat.transcript_html)
    assert len(fake.requests) == 1 and unanswered_calls(read_session(budgeted.session_path)) == []


def test_bad_options_fail_at_definition_listing_every_problem() -> None:
    with pytest.raises(MiddlewareError) as err:
        Budget(None, tokns=5, tools=-1)
    assert "tokns" in str(err.value) and "tools must be" in str(err.value)
    with pytest.raises(SettingsError, match="unknown budget 'costs'"):
        parse_budget("tokens=5,costs=3")
    assert parse_budget("tokens=50000,time=300,session_tools=9") == {
        "tokens": 50000.0, "time": 300.0, "session_tools": 9.0}


@pytest.mark.parametrize("ceiling", ["cost", "session_cost"])
def test_a_cost_budget_on_a_model_without_a_price_is_refused_before_anything_is_sent(
        nb: NotebookAgent, fake: FakeProvider, ceiling: str) -> None:
    """``gpt-fake`` has no price in genai-prices' table, so a cost ceiling could only be found broken after a paid
    reply (and then the answer after the stop paid for a second one). The turn is refused before its first
    request, in one message that says why and what to use instead; the prompt stays in the session."""
    fake.add(echo(), "never sent")
    with pytest.raises(BudgetError) as refused:
        turn(nb, "go", **{ceiling: 5})
    assert fake.received == 0
    message = str(refused.value)
    assert "'gpt-fake'" in message and "no price" in message and "\n" not in message
    assert "budget=tokens=" in message  # what to set instead
    assert [(m.role, m.content) for m in read_session(nb.session_path)] == [("user", "go")]


def test_a_cost_budget_on_a_priced_model_runs(nb: NotebookAgent, fake: FakeProvider) -> None:
    from brute_nb.providers.openai import OpenAIChat

    nb.provider = OpenAIChat("gpt-4.1", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
    fake.add("within budget")
    env = turn(nb, "go", cost=5)
    assert env["messages"][-1].content == "within budget" and fake.received == 1
