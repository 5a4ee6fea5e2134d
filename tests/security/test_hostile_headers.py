"""The hostile extra headers (``hostile.keys``, ``header`` cases) through the entry points that take one: ``-o
extra_headers=...`` on ``%%brute``, ``%brute config options=...`` and ``configure(options=...)``. A header carrying
a secret reaches the provider's host as the user asked, and its secret is redacted wherever settings, errors and
sessions show it; a header brute_nb refuses is refused before anything is sent, without repeating the secret."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from brute_nb.errors import BruteError
from brute_nb.testing import FakeProvider
from tests.ipython_shell import loaded_shell
from tests.security.hostile import KEYS, Case


def cases(tag: str) -> list[Any]:
    return [pytest.param(c, id=c.id) for c in KEYS if tag in c.tags]


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Any]:
    with loaded_shell(tmp_path) as loaded:
        yield loaded


def everything_shown(shell: Any, capsys: pytest.CaptureFixture[str], folder: Path) -> str:
    """What the user can see or find: ``%brute config``'s listing, the cells' output, the session files."""
    shell.run_line_magic("brute", "config")
    out = capsys.readouterr()
    return out.out + out.err + "".join(p.read_text() for p in folder.rglob("*.jsonl"))


@pytest.mark.parametrize("route", ["-o", "%brute config", "configure"])
@pytest.mark.parametrize("case", cases("header"))
def test_a_secret_in_an_extra_header_goes_to_its_host_and_shows_nowhere(
        case: Case, route: str, shell: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import brute_nb

    headers = json.dumps({case.data["name"]: case.data["value"]}, separators=(",", ":"))
    with FakeProvider(["hello"]) as fake:
        shell.run_line_magic("brute", f"config model=anthropic:claude-fake base_url={fake.base_url} "
                                      f"api_key={fake.api_key}")
        error: BaseException | None = None
        try:
            if route == "-o":
                shell.run_cell_magic("brute", f"-o 'extra_headers={headers}'", "hi")
            elif route == "%brute config":
                shell.run_line_magic("brute", f"config 'options=extra_headers={headers}'")
                shell.run_cell_magic("brute", "", "hi")
            else:
                brute_nb.configure(options={"extra_headers": json.loads(headers)})
                shell.run_cell_magic("brute", "", "hi")
        except (UsageError, BruteError) as exc:
            error = exc
        shown = everything_shown(shell, capsys, tmp_path) + str(error or "")
        if "refused" in case.data:
            assert error is not None and case.data["refused"] in str(error)
            assert fake.received == 0
        else:
            assert error is None
            (request,) = fake.requests
            assert request["headers"][case.data["name"].lower()] == case.data["value"]  # to its host, as given
    assert case.data["shown"] not in shown
