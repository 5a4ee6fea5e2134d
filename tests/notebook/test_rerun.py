"""A demo run twice in one kernel (issue 32 item 2): its setup cell deletes ``<notebook>.brute/`` under the live
agent, and the next turn must recreate the folder and start the session afresh, never fail on the lock file."""

from __future__ import annotations

import shutil
from pathlib import Path

from brute_nb.event_loop import run_sync
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import FakeProvider


def test_a_session_folder_deleted_under_a_live_agent_is_recreated(tmp_path: Path,
                                                                   fake_provider: FakeProvider) -> None:
    fake_provider.add("first reply")
    fake_provider.add("second reply")
    folder = tmp_path / "demo.brute"
    nb = NotebookAgent("default", folder / "default.jsonl", settings=Settings(root=tmp_path, tools="none"))
    nb.provider = OpenAIChat("gpt-fake", base_url=fake_provider.openai_base_url, api_key=fake_provider.api_key,
                             max_retries=0)
    run_sync(lambda: nb.aask("hello"))
    shutil.rmtree(folder)  # what the demos' setup cell does on a second Run All

    env = run_sync(lambda: nb.aask("hello again"))

    lines = (folder / "default.jsonl").read_text().splitlines()
    assert [m.content for m in env["messages"] if m.role != "system"] == ["hello again", "second reply"]
    assert len(lines) == 2 and "hello again" in lines[0]
    sent = fake_provider.requests[-1]["json"]["messages"]
    assert not any("first reply" in str(m.get("content")) for m in sent)  # the deleted history is not sent
