"""Compaction in the middle of a turn shows where it happened (issue 32, Also): a notice between the tool steps it
came between, in the cell and in the chat panel, not a line above the whole reply. Through the real anthropic SDK
against the fake server, whose token counts make a small window overflow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from brute_nb.event_loop import run_sync
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.notebook.views.display import CellView
from brute_nb.notebook.views.transcript_html import segments_html
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.testing import FakeProvider, call, reply


def test_a_compaction_mid_turn_sits_between_its_steps(tmp_path: Path, fake: FakeProvider) -> None:
    for n in range(12):
        (tmp_path / f"part{n}.txt").write_text("\n".join(f"line {i} " + "word " * 12 for i in range(60)))
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(root=tmp_path, tools=["read"]))
    nb.provider = AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)
    nb.configure(window=1500, summarize=False)
    fake.add(*[reply(f"step {i}", call("read", {"file_path": f"part{i}.txt"})) for i in range(12)], "all read")
    published: list[dict[str, Any]] = []
    view = CellView(publish=lambda bundle, *a, **k: published.append(dict(bundle)), update=lambda *a, **k: None)
    view.attach(nb.agent)
    try:
        env = run_sync(lambda: nb.aask("read the twelve parts"))
    finally:
        view.detach(nb.agent)
    view.finish(env=env)
    shown = [b["text/plain"] for b in published]
    notices = [i for i, text in enumerate(shown) if text.startswith("history compacted by")]
    assert notices, shown
    first_step = next(i for i, text in enumerate(shown) if text.startswith("step 0"))
    assert notices[0] > first_step, "the notice is above the steps it came after"
    assert "archive" in shown[notices[0]] and "tokens" in shown[notices[0]]
    html = segments_html(view.model.final_segments())  # the chat panel's transcript reads the same segments
    assert html.index("history compacted by") > html.index("step 0")
