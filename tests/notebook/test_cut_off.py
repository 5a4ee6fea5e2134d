"""A reply cut off by the output limit says so (issue 15, item 6): a notice under it and a word in the footer, in
the cell and in the chat widget, and ``finish_reason`` stays in the log frame, also read back from the session
file. Both APIs, through their real SDK clients against the fake server (OpenAI says ``length``, Anthropic
``max_tokens``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from notebook_helpers import WAIT

from brute_nb.event_loop import run_sync
from brute_nb.notebook.front.widget import ChatWidget
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.notebook.views.display import CellView
from brute_nb.notebook.views.render import CUT_OFF_NOTICE
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import FakeProvider
from brute_nb.testing.script import Reply


def session(tmp_path: Path, fake: FakeProvider, api: str) -> NotebookAgent:
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(root=tmp_path))
    if api == "anthropic":
        nb.provider = AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)
    else:
        nb.provider = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
    return nb


def cell_turn(nb: NotebookAgent, prompt: str) -> list[dict[str, Any]]:
    published: list[dict[str, Any]] = []
    view = CellView(publish=lambda bundle, *a, **k: published.append(dict(bundle)), update=lambda *a, **k: None)
    view.attach(nb.agent)
    try:
        env = run_sync(lambda: nb.aask(prompt))
    finally:
        view.detach(nb.agent)
    view.finish(env=env)
    return published


@pytest.mark.parametrize(("api", "wire_reason"), [("openai", "length"), ("anthropic", "max_tokens")])
def test_cell_says_the_reply_was_cut_off(tmp_path: Path, fake: FakeProvider, api: str, wire_reason: str) -> None:
    nb = session(tmp_path, fake, api)
    fake.add(Reply(text="The three steps are: first", finish=wire_reason))
    shown = [b["text/plain"] for b in cell_turn(nb, "list the steps")]
    reply_at = next(i for i, text in enumerate(shown) if "first" in text)
    assert shown[reply_at + 1] == CUT_OFF_NOTICE  # right under the reply
    assert "cut off at max_tokens" in shown[-1]  # the footer
    frame = NotebookAgent("chat", nb.session_path).df  # read back from the session file
    assert list(frame[frame["role"] == "assistant"]["finish_reason"]) == ["max_tokens"]


def test_a_finished_reply_has_no_notice(tmp_path: Path, fake: FakeProvider) -> None:
    nb = session(tmp_path, fake, "openai")
    fake.add("All done.")
    shown = [b["text/plain"] for b in cell_turn(nb, "go")]
    assert CUT_OFF_NOTICE not in shown and "cut off" not in shown[-1]


def test_widget_says_the_reply_was_cut_off(tmp_path: Path, fake: FakeProvider) -> None:
    nb = session(tmp_path, fake, "anthropic")
    chat = ChatWidget(nb)
    fake.add(Reply(text="Half of", finish="max_tokens"))
    chat.send("go")
    assert chat.wait_idle(WAIT)
    html = chat.transcript_html
    assert "output limit (max_tokens)" in html
    assert html.index("Half of") < html.index("output limit") < html.index("cut off at max_tokens")
