"""Universal truncation: caps, head/tail windows (tail keeps the end), overflow files, cleanup."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from brute_nb.tools import cleanup, truncate
from brute_nb.tools.truncation import overflow_dir


def test_small_text_is_untouched(overflow: Path) -> None:
    out = truncate("a\nb\n")
    assert out.text == "a\nb\n" and out.overflow_path is None
    assert not overflow.exists()


def test_a_text_within_every_cap_is_returned_without_being_split(overflow: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tool results are a few hundred characters: whatever their lines, they are within every cap, so they
    are returned as they are without the line-by-line walk; a cap below the text still cuts it."""
    from brute_nb.tools import truncation

    def walked(*args: Any, **kwargs: Any) -> list[str]:
        raise AssertionError("a short text was split into lines")

    with monkeypatch.context() as patched:
        patched.setattr(truncation, "_window", walked)
        for text in ("value of k1", "é" * 2000, "a\n" * 1000, "\n"):
            out = truncate(text)
            assert out.text == text and out.truncated and out.overflow_path is None
    assert "showing lines 1-2 of 3" in truncate("a\nb\nc\n", max_lines=2).text
    assert "showing lines 1-1 of 2" in truncate("😀" * 30 + "\n" + "x", max_bytes=121).text


def test_head_by_lines_saves_the_whole_text(overflow: Path) -> None:
    text = "".join(f"{i}\n" for i in range(2500))
    out = truncate(text)
    lines = out.text.splitlines()
    assert lines[:2] == ["0", "1"] and lines[1999] == "1999"
    assert "[Output truncated: showing lines 1-2000 of 2500]" in out.text
    assert "start_line=2001" in out.text and "offset" not in out.text
    assert Path(str(out.overflow_path)).read_text() == text
    assert Path(str(out.overflow_path)).parent == overflow


def test_tail_by_bytes_keeps_the_end() -> None:
    text = "".join(f"{i:05d}" + "x" * 995 + "\n" for i in range(100))  # 100 KB in 100 lines
    out = truncate(text, direction="tail")
    kept = [line for line in out.text.splitlines() if line[:5].isdigit()]
    assert kept[-1].startswith("00099")
    assert len(kept) == 51  # 51 x 1001 bytes fit in 51,200
    assert "showing lines 50-100 of 100" in out.text


def test_long_lines_are_cut_and_saved(overflow: Path) -> None:
    out = truncate("y" * 5000 + "\n")
    assert out.text.startswith("y" * 2000 + "... (line truncated to 2000 chars)\n")
    assert "1 long line(s) cut" in out.text
    assert Path(str(out.overflow_path)).read_text() == "y" * 5000 + "\n"


def test_overflow_dir_setting(tmp_path: Path) -> None:
    assert overflow_dir(tmp_path / "x") == tmp_path / "x"
    out = truncate("z\n" * 3000, directory=tmp_path / "custom")
    assert Path(str(out.overflow_path)).parent == tmp_path / "custom"


def test_cleanup_removes_old_files_only(overflow: Path) -> None:
    overflow.mkdir(parents=True)
    old, new = overflow / "tool_old.txt", overflow / "tool_new.txt"
    old.write_text("o")
    new.write_text("n")
    week_ago = time.time() - 8 * 86400
    os.utime(old, (week_ago, week_ago))
    assert cleanup(max_age_days=7) == 1
    assert not old.exists() and new.exists()
    assert cleanup(directory=overflow / "missing") == 0


def test_the_model_can_follow_the_marker_to_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the agent: a tool returns 200 KB, the marker names a file, the scripted model reads it with the
    built-in ``read`` tool by exactly that path, and gets the part the cut left out."""
    import re

    from brute_nb import agent, tool
    from brute_nb.middleware import DefaultToolPipeline, ToolResultLoop
    from brute_nb.testing.scripted import Scripted, call, reply
    from brute_nb.tools import FSRead

    monkeypatch.delenv("BRUTE_NB_OVERFLOW_DIR", raising=False)  # the default: inside the workspace root
    workspace = tmp_path / "ws"
    workspace.mkdir()
    big = "".join(f"row {i:05d} {'x' * 90}\n" for i in range(2000))  # about 200 KB

    @tool
    def dump() -> str:
        """Print the whole table."""
        return big

    def read_the_rest(env: dict[str, Any]) -> Any:
        marker = env["messages"][-1].content
        path, start = re.search(r"file_path='([^']+)' and start_line=(\d+)", marker).groups()  # type: ignore[union-attr]
        return reply("", call("read", {"file_path": path, "start_line": int(start), "end_line": int(start) + 2}))

    model = Scripted([reply("", call("dump")), read_the_rest, "done"])
    bot = agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[dump, FSRead]).run(model)
    messages = bot.start("show me the table", root=str(workspace))["messages"]
    cut, rest = messages[2], messages[4]
    assert "Output truncated" in cut.content and "row 01999" not in cut.content
    first_missing = int(re.search(r"start_line=(\d+)", cut.content).group(1))  # type: ignore[union-attr]
    assert not rest.meta["is_error"], rest.content
    assert f"row {first_missing - 1:05d}" in rest.content  # the line right after the kept ones
    assert Path(cut.meta["overflow_path"]).parent == workspace / ".brute" / "overflow"
