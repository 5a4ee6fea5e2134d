"""Approvals: each mode, asked interactively (an asker) and headless (no one can answer: deny); the turns run the
real default stack and real tools against the fake provider server."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from brute_nb.errors import MiddlewareError, SettingsError
from brute_nb.event_loop import run_sync
from brute_nb.message import ToolCall, role_of, unanswered_calls
from brute_nb.middleware.approvals import DEFAULT_POLICY, Approver, full_policy, risk_of
from brute_nb.notebook import approvals
from brute_nb.notebook.approvals import input_asker
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import parse_approve
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, call, reply


def tool(risk: str | None) -> Any:
    return SimpleNamespace(name="t", risk=risk)


CALL = ToolCall(id="c1", name="shell", arguments={"command": "ls"})


def test_defaults_match_the_issue() -> None:
    assert DEFAULT_POLICY == {"read": "allow", "write": "allow", "shell": "ask", "network": "allow", "python": "ask",
                              "mcp": "ask", "notebook": "ask"}  # issue 28: editing and running cells is asked


def test_risk_from_adapter_or_its_tool_else_read() -> None:
    assert risk_of(tool("shell")) == "shell"
    assert risk_of(SimpleNamespace(tool=tool("network"))) == "network"
    assert risk_of(object()) == "read"
    assert risk_of(tool("exotic")) == "read"


def test_bad_policy_lists_every_problem() -> None:
    with pytest.raises(MiddlewareError) as err:
        full_policy({"shel": "allow", "write": "maybe"})
    assert "shel" in str(err.value) and "maybe" in str(err.value)
    with pytest.raises(SettingsError, match="classes: read, write"):
        parse_approve("shell=yes")
    assert parse_approve("shell=allow, python=deny") == {"shell": "allow", "python": "deny"}


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "answer", "denied", "decision"), [
    ("allow", None, False, "allowed by policy"),
    ("deny", None, True, "denied by policy (shell=deny)"),
    ("ask", "allow", False, "allowed by user"),
    ("ask", "deny", True, "denied by user"),
    ("ask", "always", False, "allowed by user (always)"),
])
async def test_each_mode_interactive(mode: str, answer: str | None, denied: bool, decision: str) -> None:
    asked: list[tuple[str, str]] = []

    def asker(c: Any, risk: str) -> str:
        asked.append((c.name, risk))
        return answer or "deny"

    approver = Approver({"shell": mode}, asker)
    result = await approver(CALL, tool("shell"))
    assert (result is not None) == denied
    if denied:
        assert result is not None and result.startswith("Error: ApprovalDenied")
    assert approver.decisions["c1"] == decision
    assert asked == ([("shell", "shell")] if mode == "ask" else [])


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["allow", "ask", "deny"])
async def test_each_mode_headless(mode: str) -> None:
    approver = Approver({"python": mode}, asker=None)
    result = await approver(CALL, tool("python"))
    if mode == "allow":
        assert result is None
    else:
        assert result is not None and result.startswith("Error: ApprovalDenied")
        assert "--approve python=allow" in result
    if mode == "ask":
        assert "no one can answer" in approver.decisions["c1"]


@pytest.mark.anyio
async def test_always_allow_sticks_in_state_and_async_askers_work() -> None:
    state: dict[str, Any] = {}
    answers = ["always"]

    async def asker(c: Any, risk: str) -> str:
        return answers.pop(0)

    first = Approver({}, asker, state=state)
    assert await first(CALL, tool("shell")) is None
    second = Approver({}, asker, state=state)  # a rebuilt stack keeps the user's "always"
    assert await second(ToolCall(id="c2", name="shell", arguments={}), tool("shell")) is None
    assert second.decisions["c2"] == "allowed by user (always)"
    assert answers == []


def test_input_asker(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    prompts: list[str] = []
    for typed, expected in (("y", "allow"), ("Always", "always"), ("n", "deny"), ("", "deny")):
        monkeypatch.setattr("builtins.input", lambda p, t=typed: prompts.append(p) or t)
        assert input_asker(CALL, "shell") == expected
    assert "shell(command=ls)" in capsys.readouterr().out and "[y]es" in prompts[0]


def test_stdin_available_follows_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython

    for allow in (True, False):
        shell = SimpleNamespace(kernel=SimpleNamespace(_allow_stdin=allow))
        monkeypatch.setattr(IPython, "get_ipython", lambda s=shell: s)
        assert approvals.stdin_available() is allow
        assert (approvals.default_asker() is not None) is allow


def test_headless_turn_denies_and_records_the_decision(nb: NotebookAgent, fake: FakeProvider) -> None:
    fake.add(reply("", call("shell", {"command": "touch ran"})), "ok, I will not")
    env = run_sync(lambda: nb.aask("make a file"))  # no asker and no stdin: ask becomes deny
    tool_msg = next(m for m in env["messages"] if role_of(m) == "tool")
    assert tool_msg.content.startswith("Error: ApprovalDenied") and "--approve shell=allow" in tool_msg.content
    assert tool_msg.meta["approval"] == "denied: no one can answer (no stdin)"
    assert not (nb.root / "ran").exists()
    assert fake.requests[-1]["json"]["messages"][-1]["content"] == tool_msg.content  # the model reads why
    saved = read_session(nb.session_path)
    assert unanswered_calls(saved) == [] and saved[-1].content == "ok, I will not"
    assert saved[-2].meta["approval"] == tool_msg.meta["approval"]  # the decision is in the session file too


def test_policy_from_settings_allows(nb: NotebookAgent, fake: FakeProvider) -> None:
    nb.configure(approve={"shell": "allow"})
    fake.add(reply("", call("shell", {"command": "echo listed"})), "done")
    env = run_sync(lambda: nb.aask("list"))
    tool_msg = next(m for m in env["messages"] if role_of(m) == "tool")
    assert tool_msg.content.strip() == "listed"
    assert tool_msg.meta["approval"] == "allowed by policy"


def test_policy_from_settings_denies(nb: NotebookAgent, fake: FakeProvider) -> None:
    nb.configure(approve={"read": "deny"})
    (nb.root / "secret.txt").write_text("s3cret")
    fake.add(reply("", call("read", {"file_path": "secret.txt"})), "denied")
    env = run_sync(lambda: nb.aask("read it", approval_asker=lambda c, risk: "allow"))  # deny needs no asking
    tool_msg = next(m for m in env["messages"] if role_of(m) == "tool")
    assert "s3cret" not in tool_msg.content and tool_msg.meta["approval"] == "denied by policy (read=deny)"


def test_turn_asker_from_env(nb: NotebookAgent, fake: FakeProvider) -> None:
    asked: list[str] = []

    def asker(c: Any, risk: str) -> str:
        asked.append(f"{c.name}:{risk}")
        return "allow"

    fake.add(reply("", call("shell", {"command": "echo asked"})), "done")
    env = run_sync(lambda: nb.aask("list", approval_asker=asker))
    tool_msg = next(m for m in env["messages"] if role_of(m) == "tool")
    assert tool_msg.content.strip() == "asked" and asked == ["shell:shell"]
    assert tool_msg.meta["approval"] == "allowed by user"
