"""Log frames show their text as text in a notebook (issue 32, item 10): line breaks and tabs in ``content`` break
the line instead of showing pandas' escaped ``\\n``; the data is unchanged, other frames look as pandas makes them,
and nothing a model wrote becomes markup."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from brute_nb.frames import KIND, frame, tool_calls_frame
from brute_nb.message import Log, ToolCall
from brute_nb.notebook.views.frame_view import frame_html
from tests.ipython_shell import loaded_shell

TEXT = "line one\nline two\tafter a tab <script>alert(1)</script>"
LOG = Log()
LOG.user("hi")
LOG.assistant(TEXT, tool_calls=[ToolCall("c1", "shell", {"command": "ls\npwd"})])
LOG.tool("a.txt\nb.txt", tool_call_id="c1")


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Any]:
    with loaded_shell(tmp_path) as ip:
        yield ip


def shown(ip: Any, value: Any) -> dict[str, Any]:
    data, _ = ip.display_formatter.format(value)
    return dict(data)


def test_a_log_frame_shows_line_breaks_and_escapes_the_text(shell: Any) -> None:
    df = frame(LOG)
    html = shown(shell, df)["text/html"]
    assert "line one\nline two\tafter a tab" in html and "line one\\nline two" not in html
    assert "white-space:pre-wrap" in html
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert df.loc[1, "content"] == TEXT  # only the display changed


def test_filtered_and_tool_call_frames_keep_the_view(shell: Any) -> None:
    df = frame(LOG)
    assert "a.txt\nb.txt" in shown(shell, df[df["role"] == "tool"])["text/html"]
    calls = tool_calls_frame(LOG)
    assert calls.attrs[KIND] == "tool_calls"
    assert "a.txt\nb.txt" in shown(shell, calls)["text/html"]


def test_other_frames_are_pandas_own(shell: Any) -> None:
    other = pd.DataFrame({"content": ["x\ny"]})
    assert shown(shell, other)["text/html"] == other._repr_html_()


def test_a_frame_indexed_by_model_text_falls_back_to_pandas(shell: Any) -> None:
    df = frame(LOG).set_index("content")
    html = shown(shell, df)["text/html"]
    assert html == df._repr_html_() and "<script>" not in html


def test_long_frames_are_cut_like_pandas(shell: Any) -> None:
    log = Log()
    for i in range(500):
        log.user(f"question {i}\nsecond line")
    df = frame(log)
    with pd.option_context("display.max_rows", 20, "display.min_rows", 6):
        html = shown(shell, df)["text/html"]
    assert html.count("<tr>") < 12 and "500 rows" in html and "second line" in html


def test_unload_gives_dataframes_back_to_pandas(tmp_path: Path) -> None:
    with loaded_shell(tmp_path) as ip:
        pass
    ip = InteractiveShell.instance()
    try:
        df = frame(LOG)
        assert shown(ip, df)["text/html"] == df._repr_html_()
    finally:
        InteractiveShell.clear_instance()


def test_the_view_is_pandas_own_for_an_unmarked_frame() -> None:
    df = frame(LOG)
    df.attrs.clear()
    assert frame_html(df) == df._repr_html_()


def _cells(html: str) -> list[str]:
    """Each ``<td>``'s text, tags dropped (what a reader sees in the cell)."""
    return [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td>(.*?)</td>", html, flags=re.S)]


def test_a_tool_calls_arguments_show_their_line_breaks(shell: Any) -> None:
    """Issue 41 item 4: a call's arguments are a dict, shown by pandas as its repr (``'ls\\npwd'``)."""
    html = shown(shell, tool_calls_frame(LOG))["text/html"]
    assert "command: ls\npwd" in html and "\\n" not in html


def test_a_map_frame_fits_the_notebook(shell: Any) -> None:
    """Issue 41 item 4: a row's session is a hash file name in a hash folder; the cell shows the file's first
    characters (the whole path in its title), an unknown value as an empty cell, a cost in dollars."""
    path = "/home/u/project/reviews.brute/map/map-295fbcbf8439/sessions/82867cf05d2061cde36c3821.jsonl"
    df = pd.DataFrame({"reply": ["mixed"], "error": [None], "cost": [0.00012], "session": [path]})
    df.attrs[KIND] = "map"
    html = shown(shell, df)["text/html"]
    assert _cells(html) == ["mixed", "", "$0.00012", "82867cf0…"]
    assert f'title="{path}"' in html


def test_usage_shows_its_cost_in_dollars(shell: Any, tmp_path: Path) -> None:
    """Issue 41 item 4: ``%brute usage``'s cost column read as a bare number (``0.0123``)."""
    from brute_nb.notebook.session import NotebookAgent
    from brute_nb.notebook.settings import Settings
    from brute_nb.testing.scripted import Scripted

    nb = NotebookAgent("s", tmp_path / "s.jsonl", settings=Settings(tools="none", root=tmp_path))
    nb.provider = Scripted(["hello"])
    nb.agent.start("hi")
    usage = nb.usage
    assert usage.attrs[KIND] == "usage"
    usage["cost"] = pd.array([0.0123, 0.0123], dtype="Float64")
    html = shown(shell, usage)["text/html"]
    assert _cells(html)[-2:] == ["$0.0123", "1"]  # the total row: cost, then model calls
    assert "<th>total</th>" in html
