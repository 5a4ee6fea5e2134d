"""Notebook-layer fixtures: a NotebookAgent on a temp session file, built with the fake tool pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from widget_fakes import EchoTool, HangTool, ShellTool, build_test_agent

from brute_nb.notebook import stack
from brute_nb.notebook.kernel import NotebookAgent
from brute_nb.providers.scripted import Scripted


@pytest.fixture
def tools() -> dict[str, Any]:
    return {"echo": EchoTool(), "shell": ShellTool(), "hang": HangTool()}


@pytest.fixture
def nb(tmp_path: Path, tools: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> NotebookAgent:
    monkeypatch.setattr(stack, "build_agent", lambda agent: build_test_agent(agent, list(tools.values())))
    agent = NotebookAgent("chat", tmp_path / "chat.jsonl")
    agent.provider = Scripted()
    return agent
