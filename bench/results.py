"""Where a benchmark run is written: the newest run of each script replaces its block in ``bench/RESULTS.md`` (the
current page: one table a target with a column per peer, then each script's latest run), and every run is appended,
dated, to ``bench/HISTORY.md``, so nothing measured is lost and the current page stays one screen of tables.

A block sits between ``<!-- latest NAME -->`` and ``<!-- end latest NAME -->``; a script whose block is missing gets
one added at the end of the page.
"""

from __future__ import annotations

import re
from pathlib import Path

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "RESULTS.md"
HISTORY = BENCH / "HISTORY.md"


def record(name: str, section: str, results: Path = RESULTS, history: Path = HISTORY) -> None:
    """Append ``section`` (a dated ``## ...`` section) to the history and make it the latest ``name`` run."""
    section = section.strip("\n") + "\n"
    with history.open("a", encoding="utf-8") as out:
        out.write("\n" + section)
    start, end = f"<!-- latest {name} -->", f"<!-- end latest {name} -->"
    block = f"{start}\n{section}{end}"
    page = results.read_text(encoding="utf-8") if results.exists() else ""
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), flags=re.S)
    if pattern.search(page):
        page = pattern.sub(lambda _: block, page, count=1)
    else:
        page = page.rstrip("\n") + "\n\n" + block + "\n"
    results.write_text(page, encoding="utf-8")
