"""The default system prompt: the notebook setting, the workspace root, and the skills found under the root."""

from __future__ import annotations

from pathlib import Path

import pytest

from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
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
