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


# Issue 29 item 1: the rules files' answers are kept between turns; what they rest on is checked each turn.


def rules(ws: Path, notebook: Path | None = None) -> str:
    from brute_nb.notebook.kernel_tools.environment import instructions_section

    return instructions_section(ws, notebook)


def test_an_edited_rules_file_shows_on_the_next_turn_despite_the_kept_answer(workspace: Path) -> None:
    agents = workspace / "AGENTS.md"
    agents.write_text("Answer in French.")
    assert "Answer in French." in rules(workspace)
    assert "Answer in French." in rules(workspace)  # kept: the file is unchanged
    agents.write_text("Answer in German")  # another size
    assert "Answer in German" in rules(workspace)
    before = agents.stat().st_mtime_ns
    agents.write_text("Answer in Korean")  # the same size: told apart by the write's mtime
    os.utime(agents, ns=(before + 1000, before + 1000))  # a coarse clock could give the same ns otherwise
    assert "Answer in Korean" in rules(workspace)
    replaced = workspace / "AGENTS.new"
    replaced.write_text("Answer in Dutch.")
    os.utime(replaced, ns=(agents.stat().st_atime_ns, agents.stat().st_mtime_ns))
    os.replace(replaced, agents)  # same size and mtime, another inode (an editor's atomic save)
    assert "Answer in Dutch." in rules(workspace)
    agents.unlink()
    assert rules(workspace) == ""


def test_a_kept_rules_file_replaced_by_a_link_out_is_refused(workspace: Path, tmp_path: Path) -> None:
    agents = workspace / "AGENTS.md"
    agents.write_text("Use pandas.")
    assert "Use pandas." in rules(workspace)
    secret = tmp_path / "secret.md"
    secret.write_text("Use pandas.")  # the same text and size as the kept answer
    st = agents.stat()
    os.utime(secret, ns=(st.st_atime_ns, st.st_mtime_ns))
    agents.unlink()
    agents.symlink_to(secret)
    assert rules(workspace) == ""


def test_a_kept_answer_is_checked_again_when_the_root_changes(workspace: Path, tmp_path: Path) -> None:
    notes = workspace / "notes"
    notes.mkdir()
    (notes / "CLAUDE.md").write_text("Plots go in plots/.")
    notebook = notes / "nb.ipynb"
    assert "Plots go in plots/." in rules(workspace, notebook)
    assert "Plots go in plots/." in rules(notes, notebook)  # the notebook's folder as the root: kept per root
    other = tmp_path / "other"
    other.mkdir()
    assert rules(other, notebook) == ""  # the notebook's folder lies outside this root: refused, not reused
    (workspace / "link").symlink_to(tmp_path / "other")
    assert rules(workspace / "link", notebook) == ""  # a root given through a link is resolved first


def test_package_versions_are_looked_up_once_per_imported_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata
    import sys
    import types

    from brute_nb.notebook.kernel_tools import environment

    asked: list[str] = []
    monkeypatch.setattr(importlib.metadata, "version", lambda dist: asked.append(dist) or f"{len(asked)}.0")
    monkeypatch.setattr(environment, "KEY_PACKAGES", {"fakepkg": "fake-dist"})
    monkeypatch.setitem(sys.modules, "fakepkg", types.ModuleType("fakepkg"))
    assert environment.package_versions() == "fake-dist 1.0"
    assert environment.package_versions() == "fake-dist 1.0" and asked == ["fake-dist"]
    monkeypatch.setitem(sys.modules, "fakepkg", types.ModuleType("fakepkg"))  # imported afresh
    assert environment.package_versions() == "fake-dist 2.0"
    monkeypatch.delitem(sys.modules, "fakepkg")
    assert environment.package_versions() == ""


def test_an_edited_skill_shows_on_the_next_turn_and_one_turned_into_a_link_out_is_dropped(
        workspace: Path, tmp_path: Path) -> None:
    from brute_nb.tools.builtin.skill import skills_section

    skill = workspace / ".brute" / "skills" / "clean-csv" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL)
    assert "Turn a CSV into a cleaned" in skills_section(workspace)
    assert "Turn a CSV into a cleaned" in skills_section(workspace)  # kept: unchanged
    before = skill.stat().st_mtime_ns
    skill.write_text(SKILL.replace("Turn a CSV", "Fold a CSV"))  # the same size
    os.utime(skill, ns=(before + 1000, before + 1000))
    assert "Fold a CSV into a cleaned" in skills_section(workspace)
    outside = tmp_path / "outside.md"
    outside.write_text(SKILL.replace("Turn a CSV", "Fold a CSV"))
    st = skill.stat()
    os.utime(outside, ns=(st.st_atime_ns, st.st_mtime_ns))
    skill.unlink()
    skill.symlink_to(outside)  # the same text, size and mtime as the kept skill, outside the skills folder
    with pytest.warns(UserWarning, match="skipped skill"):
        assert skills_section(workspace) == ""
