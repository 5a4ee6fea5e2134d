"""Small modules, one job each (issue 40): no module of the package over 500 lines, and ``message.py``, the value
every layer reads, under 400. Checked here so a module that grows past its size is split by job when it does, not
found by the next review.
"""

from __future__ import annotations

from pathlib import Path

import brute_nb
from tests.import_graph import read_modules

ROOT = Path(brute_nb.__file__).parent

LIMIT = 500
"""Lines a module may hold at most."""
SMALLER = {"brute_nb.message": 400}
"""Modules held to less than ``LIMIT``: ``Message``, ``ToolCall``, ``Role`` and the field table, nothing else."""


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_no_module_is_over_its_limit() -> None:
    over = {module: n for module, path in read_modules(ROOT).items()
            if (n := lines(path)) > SMALLER.get(module, LIMIT)}
    assert over == {}, "split these by job (one concept a module, docs/architecture.md)"


def test_every_smaller_limit_names_a_module() -> None:
    assert set(SMALLER) <= set(read_modules(ROOT))
