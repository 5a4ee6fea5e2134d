"""bench/results.py: a run replaces its script's latest block on the current page and is appended to the history."""

from __future__ import annotations

from pathlib import Path

from bench.results import HISTORY, RESULTS, record

CURRENT = "# results\n\n| item | brute_nb | chatlas |\n|---|---|---|\n| load | +25 ms | +939 ms |\n"


def test_a_run_replaces_its_latest_block_and_keeps_the_rest(tmp_path: Path) -> None:
    results, history = tmp_path / "RESULTS.md", tmp_path / "HISTORY.md"
    results.write_text(CURRENT + "\n<!-- latest run -->\n## old run\n<!-- end latest run -->\n\nafter\n")
    history.write_text("# history\n\n## old run\n")
    record("run", "## 2026-12-06 05:00 UTC\n\n| a | b |\n", results, history)
    page = results.read_text()
    assert page.startswith(CURRENT) and page.endswith("\n\nafter\n")  # the hand-kept table and the rest stay
    assert "## old run" not in page and page.count("## 2026-12-06 05:00 UTC") == 1
    assert history.read_text() == "# history\n\n## old run\n\n## 2026-12-06 05:00 UTC\n\n| a | b |\n"


def test_a_script_with_no_block_yet_gets_one_at_the_end(tmp_path: Path) -> None:
    results, history = tmp_path / "RESULTS.md", tmp_path / "HISTORY.md"
    results.write_text(CURRENT)
    record("map_bench", "## map run\n", results, history)
    record("map_bench", "## map run 2\n", results, history)
    page = results.read_text()
    assert page == CURRENT + "\n<!-- latest map_bench -->\n## map run 2\n<!-- end latest map_bench -->\n"
    assert history.read_text() == "\n## map run\n\n## map run 2\n"


def test_the_checked_in_page_has_the_blocks_the_scripts_write() -> None:
    page = RESULTS.read_text()
    for name in ("run", "map_bench"):
        assert page.count(f"<!-- latest {name} -->") == 1 and page.count(f"<!-- end latest {name} -->") == 1
    assert HISTORY.exists() and len(HISTORY.read_text().splitlines()) > len(page.splitlines())
