"""Every reader of the user's saved notebook, against the shared hostile notebook table (``hostile.notebooks``).

The readers wait for a Jupyter save under way (``cell_tools.saved``): the notebook tool (list, read, search), a
proposal's look at the cell below (``insert_cell``, which ``propose_cell`` and ``%brute fix`` use) and the cell
tools' edit of the user's own notebook. Whatever the file holds, each returns, says plainly that the named file is
not a valid notebook (a ``NotebookFileError``, never another exception), and leaves the file as it was unless
it edited a valid one. The paths such a read opens are run against the hostile path table in
``test_hostile_paths`` (``notebook-tool-document``, ``cell-edit-document``, ``proposal-document``, ``save-aside``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from brute_nb.notebook.kernel_tools import cell_tools
from brute_nb.notebook.kernel_tools.cell_tools import EditCell
from brute_nb.notebook.kernel_tools.ipynb_cells import NotebookFileError
from brute_nb.notebook.kernel_tools.notebook_tools import Notebook, insert_cell
from brute_nb.tools import Adapter, use_env
from tests.security.hostile import NOTEBOOKS, Case
from tests.security.hostile.notebooks import WHOLE
from tests.security.hostile.paths import NAMES, make_outside
from tests.security.test_hostile_paths import bounded, tool_env

NAME = "nb.ipynb"


class Shell:
    """What a proposal reads of the kernel: the request's cell id (as JupyterLab sends it) and where code goes."""

    def __init__(self) -> None:
        self.parent_header = {"metadata": {"cellId": "c1"}}
        self.user_ns: dict[str, Any] = {}
        self.proposed: list[str] = []

    def set_next_input(self, text: str, replace: bool = False) -> None:
        self.proposed.append(text)


def tool(path: Path, wrapped: Any, **arguments: Any) -> str:
    async def go() -> Any:
        with use_env({**tool_env(path.parent / "work"), "notebook": str(path)}):
            return await Adapter.wrap(wrapped).call(arguments)

    (path.parent / "work").mkdir(exist_ok=True)
    return str(anyio.run(go))


READERS: dict[str, Callable[[Path], str]] = {
    "notebook-list": lambda path: tool(path, Notebook(shell=lambda: None), action="list"),
    "notebook-read": lambda path: tool(path, Notebook(shell=lambda: None), action="read", cell="0"),
    "notebook-search": lambda path: tool(path, Notebook(shell=lambda: None), action="search", query="print"),
    "proposal": lambda path: str(insert_cell(Shell(), "print(3)", path)),
    "edit-cell": lambda path: tool(path, EditCell, cell="0", source="x = 1"),
}
WRITES = {"edit-cell"}
QUIET = {"proposal"}
"""Readers that never fail: a notebook they cannot read means "unknown", and the proposal is made."""


@pytest.fixture(autouse=True)
def short_wait(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(cell_tools, "SAVE_WAIT", 0.3)  # a save that never ends is waited for, briefly here
    yield


def check(case: Case, reader: str, path: Path, result: str | BaseException, before: bytes) -> None:
    """What must hold for any reader and any case."""
    if isinstance(result, BaseException):
        assert reader not in QUIET, f"{case.expect}: {reader} raised {result!r}"
        assert isinstance(result, NotebookFileError), f"{case.expect}: unclear {type(result).__name__}: {result}"
        assert NAME in str(result), f"{case.expect}: the error does not name the file: {result}"
    edited = reader in WRITES and not isinstance(result, BaseException)
    assert edited or path.read_bytes() == before, f"{case.expect}: {reader} changed the file"


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in NOTEBOOKS])
def test_a_hostile_notebook_is_read_or_refused_by_name(tmp_path: Path, case: Case, reader: str) -> None:
    path = tmp_path / NAME
    path.write_bytes(case.data)

    result = bounded(lambda: READERS[reader](path), tmp_path)

    check(case, reader, path, result, case.data)
    if case.tags & {"not-json", "shape", "cut"} and reader in WRITES:
        assert isinstance(result, NotebookFileError), f"{case.expect}: the edit went ahead: {result!r}"
    if "valid" in case.tags:
        assert not isinstance(result, BaseException), f"{case.expect}: {result!r}"


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_save_that_never_ends_is_waited_for_then_named(tmp_path: Path, reader: str) -> None:
    """A cut file beside Jupyter's ``.~nb.ipynb`` is a save under way; one that never ends (the server died mid-save
    and left its copy) is waited for a bounded time, then named with what to do, the two files untouched."""
    path = tmp_path / NAME
    cut = WHOLE[: len(WHOLE) // 2]
    path.write_bytes(cut)
    aside = tmp_path / f".~{NAME}"
    aside.write_bytes(WHOLE)

    result = bounded(lambda: READERS[reader](path), tmp_path)

    case = Case("never-settles", cut, "a save that never ends")
    check(case, reader, path, result, cut)
    assert aside.read_bytes() == WHOLE
    if reader not in QUIET:
        assert isinstance(result, NotebookFileError) and aside.name in str(result), result


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in NAMES])
def test_the_notebook_setting_refuses_a_name_no_file_can_have(tmp_path: Path, case: Case,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``%brute config notebook=PATH`` (``brute_nb.configure(notebook=...)``) names where every session and map run
    is kept (``<stem>.brute`` beside it): a way out of the folder is the user's to choose, but a name no file can
    have is refused by name when it is set, not a ``ValueError`` at the next turn or run."""
    from brute_nb.errors import SettingsError
    from brute_nb.notebook.settings import parse_notebook

    monkeypatch.chdir(tmp_path)
    value = case.data(make_outside(tmp_path))
    if "bad-name" in case.tags:
        with pytest.raises(SettingsError, match="notebook="):
            parse_notebook(value)
    else:
        assert parse_notebook(value) == value


def test_the_notebook_setting_refuses_a_folder(tmp_path: Path) -> None:
    """A folder named instead of the notebook in it would keep its sessions beside that folder, in its parent."""
    from brute_nb.errors import SettingsError
    from brute_nb.notebook.settings import parse_notebook

    with pytest.raises(SettingsError, match="is a folder"):
        parse_notebook(str(tmp_path))
    assert parse_notebook(str(tmp_path / "nb.ipynb")) == str(tmp_path / "nb.ipynb")
    assert parse_notebook(str(tmp_path / "not-yet" / "nb.ipynb")).endswith("nb.ipynb")
