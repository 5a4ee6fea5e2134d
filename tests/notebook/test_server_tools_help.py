"""Every server tool ``ServerTool`` takes is named wherever ``--server-tools`` is explained: ``%%brute?``, ``%brute
config?`` and docs/options.md (the help once listed three of seven). Each help is made from the same table the
tools are checked against (``transports.server_tool_names``), so a new tool shows up in them by itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from brute_nb.notebook.front import config_help
from brute_nb.notebook.front.magics import BruteMagics
from brute_nb.tools.server import NAMES, ServerTool
from brute_nb.transports import server_tool_names

DOCS = Path(__file__).resolve().parents[2] / "docs" / "options.md"


def server_tools_help() -> str:
    (action,) = [a for a in BruteMagics.brute.parser._actions if "--server-tools" in a.option_strings]
    return str(action.help)


def config_row() -> str:
    (row,) = [line for line in config_help.text().splitlines() if line.strip().startswith("server_tools ")]
    return row


def docs_row() -> str:
    (row,) = [line for line in DOCS.read_text().splitlines() if line.startswith("| `--server-tools")]
    return row


@pytest.mark.parametrize("where", [server_tools_help, config_row, docs_row])
def test_every_server_tool_is_named_where_server_tools_is_explained(where: object) -> None:
    text = where()  # type: ignore[operator]
    named = set(re.findall(r"[a-z]+(?:_[a-z]+)*", text))
    assert set(NAMES) <= named, f"missing {sorted(set(NAMES) - named)} in {text!r}"


def test_the_helps_table_is_the_one_server_tools_are_made_from() -> None:
    assert set(server_tool_names.names()) == set(NAMES)
    for name in server_tool_names.names():
        ServerTool(name)  # each name the help gives is one ServerTool takes
    for api, offered in server_tool_names.SPELLING.items():
        assert all(name in server_tools_help() for name in offered), api
