"""Notebook-layer fixtures: a NotebookAgent with the real default stack (``stack.build_agent``: real tool pipeline,
real tools) whose model is the loopback FakeProvider, reached through the real ``openai`` SDK client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import FakeProvider


@pytest.fixture
def fake(fake_provider: FakeProvider) -> FakeProvider:
    """The strict fake server: a request a real API would refuse gets HTTP 400 (and fails the turn)."""
    return fake_provider


@pytest.fixture
def nb(tmp_path: Path, fake: FakeProvider) -> NotebookAgent:
    workspace = tmp_path / "work"
    workspace.mkdir()
    agent = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(root=workspace))
    agent.provider = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
    return agent



@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fresh IPython shell in ``tmp_path`` with brute_nb loaded (unloaded and cleared after)."""
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.chdir(tmp_path)
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "brute_nb")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "brute_nb")
        InteractiveShell.clear_instance()
