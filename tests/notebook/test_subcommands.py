"""``%brute SUBCOMMAND`` runs from one table (``front/subcommands.TABLE``): what ``%brute help``, ``%brute?`` and
an unknown word's error list is that table, and every row's function is what runs (no method found by its name)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from brute_nb.notebook.front import magics, subcommands


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shell: Any) -> Any:
    monkeypatch.setenv("BRUTE_NB_NOTEBOOK", str(tmp_path / "nb.ipynb"))
    monkeypatch.setenv("BRUTE_NB_OVERFLOW_DIR", str(tmp_path / "overflow"))
    return shell


def test_help_lists_every_row_of_the_table(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_line_magic("brute", "help")
    text = capsys.readouterr().out
    assert text == subcommands.help_text() + "\n"
    assert [row.name for row in subcommands.TABLE if f"%brute {row.usage}" not in text] == []


def test_the_magics_help_page_lists_the_subcommands_too() -> None:
    """``%brute?`` (the same page as ``%%brute?``) showed only the cell magic's options."""
    doc = magics.BruteMagics.brute.__doc__ or ""
    assert subcommands.help_text() in doc and "--model" in doc
    words = next(a for a in magics.BruteMagics.brute.parser._actions if a.dest == "subcommand")
    assert words.help == f"(line magic only) {', '.join(subcommands.NAMES)}"


def test_an_unknown_subcommand_says_which_exist(ip: Any) -> None:
    with pytest.raises(UsageError) as raised:
        ip.run_line_magic("brute", "frobnicate")
    message = str(raised.value)
    assert "unknown %brute subcommand 'frobnicate'" in message
    assert f"the subcommands are {', '.join(subcommands.NAMES)}" in message


def test_each_row_runs_its_own_function(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every name and alias reaches the row's function with the words after it (here each row's function is
    swapped for a recorder, so nothing runs for real)."""
    ran: list[tuple[str, list[str]]] = []
    for row in subcommands.TABLE:
        recorded = subcommands.Subcommand(row.usage, row.help, lambda m, rest, n=row.name: ran.append((n, rest)),
                                          row.aliases)
        for name in (row.name, *row.aliases):
            monkeypatch.setitem(subcommands.BY_NAME, name, recorded)
    for row in subcommands.TABLE:
        for name in (row.name, *row.aliases):
            ip.run_line_magic("brute", f'{name} one "two words"')
    expected = [(row.name, ["one", "two words"]) for row in subcommands.TABLE for _ in (row.name, *row.aliases)]
    assert ran == expected
    assert subcommands.BY_NAME["widget"] is subcommands.BY_NAME["chat"]


def test_a_brute_error_from_a_subcommand_is_a_short_usage_error(ip: Any) -> None:
    with pytest.raises(UsageError, match="usage: %brute use NAME"):
        ip.run_line_magic("brute", "use")
    with pytest.raises(UsageError, match="No closing quotation"):
        ip.run_line_magic("brute", 'config system="be')


def test_no_subcommand_is_found_by_its_method_name() -> None:
    """Dispatch by ``getattr`` on ``_cmd_*`` names hid the subcommands from an IDE and from the help."""
    tree = ast.parse(Path(magics.__file__).read_text())
    methods = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("_cmd_")]
    lookups = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Call)
               and isinstance(n.func, ast.Name) and n.func.id == "getattr" and "_cmd_" in ast.unparse(n)]
    assert methods == [] and lookups == []
    assert len(set(subcommands.BY_NAME)) == len(subcommands.NAMES) + sum(len(r.aliases) for r in subcommands.TABLE)
