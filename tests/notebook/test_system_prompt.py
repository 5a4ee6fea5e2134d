"""The default system prompt: the notebook setting, the workspace root, and the skills found under the root."""

from __future__ import annotations

import os
import platform
from datetime import date
from pathlib import Path

import pytest

from brute_nb.notebook.kernel_tools.environment import INSTRUCTIONS_LIMIT
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.notebook.stack import default_system_prompt
from brute_nb.providers.replay import mismatch
from brute_nb.testing.scripted import Scripted

SKILL = "---\ndescription: Turn a CSV into a cleaned <DataFrame>\n---\n# Clean\nDrop empty rows.\n"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no global skills from the machine running the tests
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def system_prompt(ws: Path, tools: str = "all") -> str:
    nb = NotebookAgent("s", ws / "nb.brute" / "s.jsonl", settings=Settings(root=ws, tools=tools),
                       notebook=ws / "nb.ipynb")
    fake = Scripted(["ok"])
    nb.provider = fake
    nb.agent.start("hi", root=ws)
    first = fake.requests[0]["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def test_skills_under_the_root_are_listed(workspace: Path) -> None:
    skill = workspace / ".brute" / "skills" / "clean-csv" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL)
    text = system_prompt(workspace)
    assert f"The workspace root is {workspace}" in text and "nb.ipynb" in text
    assert "# Skills\n" in text and "`skill` tool" in text
    assert ("<available_skills>\n  <skill>\n    <name>clean-csv</name>\n"
            "    <description>Turn a CSV into a cleaned <DataFrame></description>\n  </skill>\n"
            "</available_skills>") in text
    assert "<available_skills>" not in system_prompt(workspace, tools="read,shell")  # it could not load them


def test_no_skills_no_section(workspace: Path) -> None:
    text = system_prompt(workspace)
    assert "Skills" not in text and "available_skills" not in text


# Issue 28 §5: project instructions and the environment, rebuilt at every turn, shown by %brute system.


def test_environment_and_project_rules_in_brute_order(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("Use pandas, never loops over rows.\n")
    (workspace / "notes").mkdir()
    (workspace / "notes" / "CLAUDE.md").write_text("Plots go in plots/.\n")
    import pandas as pd

    frames = {"sales": pd.DataFrame({"a": range(5), "b": range(5)}), "_hidden": pd.DataFrame(), "n": 3}
    text = default_system_prompt(workspace / "notes" / "nb.ipynb", workspace, namespace=frames)
    env = text[text.index("<env>"):text.index("</env>")]
    assert f"Working directory: {workspace}" in env and "Is directory a git repo: no" in env
    assert f"Today's date: {date.today():%a %b %d %Y}" in env and f"Python: {platform.python_version()}" in env
    assert f"pandas {pd.__version__}" in env
    assert "DataFrames in the kernel: sales (5 rows x 2 columns)" in env and "_hidden" not in env
    rules = text[text.index("# Project-Specific Rules"):]
    assert rules.index("From AGENTS.md:\n\nUse pandas") < rules.index("From notes/CLAUDE.md:\n\nPlots go in plots/.")
    assert text.index("<env>") < text.index("# Project-Specific Rules")


def test_rules_are_read_through_the_confinement_and_bounded(workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("the contents of a file outside the workspace")
    (workspace / "AGENTS.md").symlink_to(secret)
    os.mkfifo(workspace / "CLAUDE.md")  # opening a FIFO would block the turn forever
    text = default_system_prompt(None, workspace)
    assert "outside the workspace" not in text and "Project-Specific Rules" not in text
    (workspace / "AGENTS.md").unlink()
    (workspace / "AGENTS.md").write_text("x" * (INSTRUCTIONS_LIMIT + 1))
    rules = default_system_prompt(None, workspace).split("# Project-Specific Rules")[1]
    assert "xxx" not in rules and f"AGENTS.md is larger than {INSTRUCTIONS_LIMIT:,} bytes" in rules


def test_the_prompt_is_rebuilt_at_every_turn(workspace: Path) -> None:
    nb = NotebookAgent("s", workspace / "nb.brute" / "s.jsonl", settings=Settings(root=workspace),
                       notebook=workspace / "nb.ipynb")
    fake = Scripted(["one", "two"])
    nb.provider = fake
    nb.agent.start("hi", root=workspace)
    (workspace / "AGENTS.md").write_text("Answer in French.")
    nb.agent.start("again", root=workspace)
    first, second = (r["messages"][0]["content"] for r in fake.requests)
    assert "Answer in French." not in first and "Answer in French." in second


def test_a_replayed_request_matches_whatever_the_env_block_says() -> None:
    recorded = {"method": "POST", "path": "/v1/messages",
                "request": {"model": "m", "system": "Hi.\n<env>\nToday's date: Mon Apr 27 2026\n</env>\nBye.",
                            "messages": []}}
    today = {"model": "m", "system": "Hi.\n<env>\nToday's date: Tue Dec 01 2026\nPython: 3.12\n</env>\nBye.",
             "messages": []}
    assert mismatch(recorded, "POST", "/v1/messages", today) == ""
    changed = {**today, "system": today["system"].replace("Bye.", "Ciao.")}
    assert "system" in mismatch(recorded, "POST", "/v1/messages", changed)  # the rest is still checked


def test_brute_system_shows_the_prompt_as_the_next_turn_sends_it(
        workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.chdir(workspace)
    (workspace.parent / "home").mkdir()  # IPython's profile folder goes under the test's HOME
    (workspace / "AGENTS.md").write_text("Keep cells short.")
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "brute_nb")
    try:
        shell.run_line_magic("brute", f"config root={workspace}")
        capsys.readouterr()
        shell.run_line_magic("brute", "system")
        shown = capsys.readouterr().out
        assert "<env>" in shown and "Keep cells short." in shown and f"Working directory: {workspace}" in shown
        shell.run_line_magic("brute", 'config system="Be brief."')
        capsys.readouterr()
        shell.run_line_magic("brute", "system")
        assert capsys.readouterr().out.strip() == "Be brief."
    finally:
        shell.run_line_magic("unload_ext", "brute_nb")
        InteractiveShell.clear_instance()
