"""The cell footer, the chat panel's status and ``%brute usage`` count tokens as ``Usage`` does (as the price)."""

from __future__ import annotations

from pathlib import Path

import pytest

from brute_nb import Message
from brute_nb.notebook.views.display import CellView
from brute_nb.notebook.views.render import footer_text
from brute_nb.notebook.views.transcript_html import totals

ANTHROPIC = {"provider": "anthropic", "model": "claude-sonnet-4-20250514", "input_tokens": 3, "output_tokens": 100,
             "cached_tokens": 9_000, "cache_write_tokens": 400}


def test_the_footer_and_the_chat_panel_count_what_the_price_counts() -> None:
    replies = [Message("assistant", "a", meta=ANTHROPIC)]
    inp, out, _, cost = totals(replies)
    assert (inp, out) == (9_403, 100)
    view = CellView(publish=lambda *a, **k: None, update=lambda *a, **k: None)
    view.model.messages = replies
    stats = view.model.stats(0)
    assert (stats["input_tokens"], stats["cached_tokens"], stats["cache_write_tokens"]) == (9_403, 9_000, 400)
    assert "9,403 in / 100 out tokens · 9,000 cache read / 400 written" in footer_text(stats)
    assert cost is not None and stats["cost"] == pytest.approx(cost)


def test_brute_usage_counts_what_the_price_counts(tmp_path: Path) -> None:
    from brute_nb.notebook.session import NotebookAgent
    from brute_nb.notebook.settings import Settings
    from brute_nb.testing.scripted import Scripted

    nb = NotebookAgent("s", tmp_path / "s.jsonl", settings=Settings(root=tmp_path, tools="none"))
    nb.provider = Scripted([{"content": "cached", "meta": ANTHROPIC}])
    nb.agent.start("hi", root=tmp_path)
    usage = nb.usage
    assert usage.loc["total", "input_tokens"] == 9_403 and usage.loc["total", "cache_read_tokens"] == 9_000
    assert usage.loc[1, "cache_write_tokens"] == 400 and usage.loc[1, "output_tokens"] == 100


def test_brute_usage_keeps_counts_whole_and_an_unknown_cost_unknown(tmp_path: Path) -> None:
    """The total row keeps each column's dtype on every pandas: counts stay integers (pandas 2 made them 1520.0),
    and a model with no known price leaves cost unknown in every row, the total too."""
    from brute_nb.notebook.session import NotebookAgent
    from brute_nb.notebook.settings import Settings
    from brute_nb.testing.scripted import Scripted

    unpriced = {"provider": "openai", "model": "no-such-model", "input_tokens": 7, "output_tokens": 5}
    nb = NotebookAgent("s", tmp_path / "s.jsonl", settings=Settings(root=tmp_path, tools="none"))
    nb.provider = Scripted([{"content": "one", "meta": unpriced}, {"content": "two", "meta": unpriced}])
    nb.agent.start("hi", root=tmp_path)
    nb.agent.start("again", root=tmp_path)
    usage = nb.usage
    assert list(usage.index) == [1, 2, "total"]
    assert str(usage["input_tokens"].dtype) == "Int64" and str(usage["model_calls"].dtype) == "int64"
    assert usage.loc["total", "input_tokens"] == 14 and usage.loc["total", "model_calls"] == 2
    assert usage["cost"].dtype != object and usage["cost"].isna().all()
