"""Issue 28 §1, the file path: edit_cell / insert_cell / run_cell change a saved .ipynb (no front end), atomically,
through nbformat and the workspace confinement, and ``%brute undo`` reverts them."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from brute_nb.errors import PathOutsideRootError
from brute_nb.notebook.kernel_tools.cell_bridge import CellBridge
from brute_nb.notebook.kernel_tools.cell_tools import EditCell, InsertCell, RunCell
from brute_nb.notebook.kernel_tools.ipynb_cells import NotebookFileError
from brute_nb.tools import FSUndo, use_env
from brute_nb.tools.results import render
from brute_nb.tools.stores import snapshots
from tests.ipython_shell import PNG, capturing_shell


def make_notebook(path: Path, *sources: str, minor: int = 5) -> Any:
    nb = new_notebook(cells=[new_markdown_cell("# Demo"), *(new_code_cell(s) for s in sources)])
    nb.nbformat_minor = minor
    if minor < 5:
        for c in nb.cells:
            del c["id"]
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return nb


@pytest.fixture
def env(ws: Path) -> dict[str, Any]:
    return {"state": {}, "root": str(ws), "ask": None, "events": None, "metadata": {}, "notebook": str(ws / "a.ipynb")}


def call(env: dict[str, Any], tool: Any, **args: Any) -> Any:
    async def go() -> Any:
        with use_env(env):
            return await tool.execute(**args)

    return anyio.run(go)


def cells(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells]


def test_edit_replaces_the_source_shows_a_diff_clears_outputs_and_undo_restores_the_bytes(
        ws: Path, env: dict[str, Any]) -> None:
    path = ws / "a.ipynb"
    make_notebook(path, "x = 1\nprint(x / 0)", "print('two')")
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="old output\n")]
    nb.cells[1].execution_count = 3
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    before = path.read_bytes()

    result = call(env, EditCell(), cell="1", source="x = 1\nprint(x / 1)")
    assert result["cell"] == "[1]" and result["id"] == nb.cells[1].id
    assert "-print(x / 0)\n+print(x / 1)" in result["diff"]
    edited = nbformat.read(path, as_version=4)
    nbformat.validate(edited)
    assert edited.cells[1].source == "x = 1\nprint(x / 1)" and edited.cells[1].outputs == []
    assert edited.cells[1].execution_count is None and edited.cells[2].source == "print('two')"
    assert not [p for p in ws.iterdir() if p.name.endswith(".brute-tmp")]  # the write was a rename, nothing left

    with use_env(env):
        assert snapshots().last() is not None
        text = render(anyio.run(lambda: FSUndo().execute(path=snapshots().last()))).text
    assert "a.ipynb" in text and path.read_bytes() == before  # %brute undo reverts the edit to the byte


def test_a_cell_by_id_and_an_old_notebook_without_ids(ws: Path, env: dict[str, Any]) -> None:
    path = ws / "a.ipynb"
    make_notebook(path, "a = 1", minor=4)
    call(env, EditCell(), cell="[1]", source="a = 2")
    upgraded = nbformat.read(path, as_version=4)
    assert upgraded.nbformat_minor == 5 and all(c.get("id") for c in upgraded.cells)
    call(env, EditCell(), cell=upgraded.cells[1].id, source="a = 3")
    assert cells(path) == ["# Demo", "a = 3"]


def test_a_cell_whose_id_is_all_digits_is_found_by_its_id(ws: Path, env: dict[str, Any]) -> None:
    """nbformat's random ids are all digits about one time in 43; such an id names its cell, "[1]" an index."""
    path = ws / "a.ipynb"
    nb = make_notebook(path, "a = 1", "b = 1")
    nb.cells[2].id = "19492872"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    call(env, EditCell(), cell="19492872", source="b = 2")
    call(env, EditCell(), cell="[1]", source="a = 2")
    assert cells(path) == ["# Demo", "a = 2", "b = 2"]


def test_insert_goes_after_the_running_cell_or_the_named_one_or_at_the_end(ws: Path, env: dict[str, Any]) -> None:
    path = ws / "a.ipynb"
    nb = make_notebook(path, "first", "second")
    env["cell_id"] = nb.cells[1].id  # the %%brute cell running now
    out = call(env, InsertCell(), source="after first")
    assert out["cell"] == "[2]" and cells(path) == ["# Demo", "first", "after first", "second"]
    call(env, InsertCell(), source="## Notes", after="0", cell_type="markdown")
    env["cell_id"] = None
    call(env, InsertCell(), source="last")
    saved = nbformat.read(path, as_version=4)
    assert [c.source for c in saved.cells] == ["# Demo", "## Notes", "first", "after first", "second", "last"]
    assert saved.cells[1].cell_type == "markdown" and len({c.id for c in saved.cells}) == 6


def test_run_returns_outputs_to_the_model_and_saves_them_under_the_cell(ws: Path, env: dict[str, Any]) -> None:
    path = ws / "a.ipynb"
    make_notebook(path, "total = sum(values)\nprint('total', total)\ntotal * 2", "1 / 0")
    namespace: dict[str, Any] = {"values": [1, 2, 3]}
    out = call(env, RunCell(lambda: namespace), cell="1")
    assert "stdout:\ntotal 6" in out.text and "Out: 12" in out.text and not out.is_error
    assert namespace["total"] == 6  # it ran in the user's namespace
    saved = nbformat.read(path, as_version=4).cells[1].outputs
    assert [o.output_type for o in saved] == ["stream", "execute_result"]
    assert saved[1].data["text/plain"] == "12"

    failed = call(env, RunCell(lambda: namespace), cell="2")
    assert failed.is_error and "Error: ZeroDivisionError: division by zero" in failed.text
    error = nbformat.read(path, as_version=4).cells[2].outputs[0]
    assert error.output_type == "error" and error.ename == "ZeroDivisionError"


def test_run_attaches_figures(ws: Path, env: dict[str, Any]) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    path = ws / "a.ipynb"
    make_notebook(path, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nNone")
    out = call(env, RunCell(lambda: {}), cell="1")
    assert len(out.attachments) == 1 and out.attachments[0].media_type == "image/png"
    saved = nbformat.read(path, as_version=4).cells[1].outputs
    assert saved[0].output_type == "display_data" and "image/png" in saved[0].data


@pytest.fixture
def shell() -> Iterator[Any]:
    with capturing_shell() as made:
        yield made


def test_run_returns_what_the_cell_displayed_and_saves_it_under_the_cell_in_order(
        ws: Path, env: dict[str, Any], shell: Any) -> None:
    import pandas as pd
    from IPython.display import Image

    path = ws / "a.ipynb"
    make_notebook(path, "from IPython.display import display\nprint('head:')\ndisplay(df.head(2))\nprint('plot:')\n"
                        "display(Image(data=PNG))\nlen(df)")
    shell.user_ns.update(df=pd.DataFrame({"price": [3, 4, 5], "item": ["tea", "jam", "egg"]}), Image=Image, PNG=PNG)
    out = call(env, RunCell(lambda: shell.user_ns), cell="1")
    assert out.text == ("Ran cell [1].\n\nstdout:\nhead:\nplot:\n\n"
                        "display:\n   price item\n0      3  tea\n1      4  jam\n\n"
                        "display (image/png, attached)\n\nOut: 3")
    assert [(a.media_type, a.data) for a in out.attachments] == [("image/png", PNG)]
    assert shell.display_pub.outputs == []  # nothing went to the cell running the turn

    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    shown = saved.cells[1].outputs
    assert [(o.output_type, o.get("text")) for o in shown] == [
        ("stream", "head:\n"), ("display_data", None), ("stream", "plot:\n"), ("display_data", None),
        ("execute_result", None)]
    assert shown[1].data["text/plain"].startswith("   price item") and "<table" in shown[1].data["text/html"]
    assert base64.b64decode(shown[3].data["image/png"]) == PNG


def test_a_run_between_cells_is_numbered_and_its_error_kept_as_a_cells(ws: Path, env: dict[str, Any],
                                                                        shell: Any) -> None:
    """Issue 41 item 4, in a shell: run between cells, a cell takes the next number as a person's run would, and
    its error is kept in ``Err`` under that number (what ``%brute fix`` reads next), like a cell's."""
    path = ws / "a.ipynb"
    make_notebook(path, "prices = [1, 2]\nprices[5]")
    number = shell.execution_count
    call(env, RunCell(lambda: shell.user_ns), cell="1")
    saved = nbformat.read(path, as_version=4).cells[1]
    assert saved.execution_count == number and saved.outputs[-1].output_type == "error"
    assert shell.execution_count == number + 1 and shell.user_ns["In"][number] == "prices = [1, 2]\nprices[5]"
    error = shell.user_ns["Err"][number]
    assert error.ename == "IndexError" and "prices[5]" in str(error)


def test_a_displayed_secret_is_redacted_in_the_saved_notebook(ws: Path, env: dict[str, Any], shell: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijklmnop1234")
    path = ws / "a.ipynb"
    make_notebook(path, "import os\nfrom IPython.display import HTML, display\n"
                        "display(HTML('<b>' + os.environ['OPENAI_API_KEY'] + '</b>'))")
    call(env, RunCell(lambda: shell.user_ns), cell="1")
    assert "abcdefghijklmnop1234" not in path.read_text()
    assert "REDACTED" in nbformat.read(path, as_version=4).cells[1].outputs[0].data["text/html"]


def test_bad_requests_are_errors_naming_what_was_wrong_and_leave_the_file_alone(
        ws: Path, env: dict[str, Any]) -> None:
    path = ws / "a.ipynb"
    make_notebook(path, "a = 1")
    before = path.read_bytes()
    with pytest.raises(NotebookFileError, match=r"has 2 cells \(\[0\] to \[1\]\); there is no cell \[7\]"):
        call(env, EditCell(), cell="7", source="x")
    with pytest.raises(NotebookFileError, match="no cell 'nope'"):
        call(env, EditCell(), cell="nope", source="x")
    with pytest.raises(NotebookFileError, match="markdown cell; only code cells run"):
        call(env, RunCell(lambda: {}), cell="0")
    assert path.read_bytes() == before

    (ws / "broken.ipynb").write_text('{"cells": "not a list"}')
    with pytest.raises(NotebookFileError, match=r"broken\.ipynb is not a valid notebook"):
        call(env, EditCell(), cell="0", source="x", notebook="broken.ipynb")
    assert (ws / "broken.ipynb").read_text() == '{"cells": "not a list"}'
    with pytest.raises(NotebookFileError, match=r"notes.txt is not a notebook \(.ipynb\) file"):
        call(env, EditCell(), cell="0", source="x", notebook="notes.txt")
    env["notebook"] = None
    with pytest.raises(NotebookFileError, match="no notebook file is known"):
        call(env, EditCell(), cell="0", source="x")


def test_hostile_paths_are_refused_by_the_workspace_confinement(ws: Path, env: dict[str, Any], tmp_path: Path) -> None:
    outside = tmp_path / "outside.ipynb"
    make_notebook(outside, "secret = 1")
    before = outside.read_bytes()
    with pytest.raises(PathOutsideRootError):
        call(env, EditCell(), cell="1", source="x", notebook=str(outside))
    with pytest.raises(PathOutsideRootError):
        call(env, EditCell(), cell="1", source="x", notebook="../outside.ipynb")
    (ws / "link.ipynb").symlink_to(outside)
    with pytest.raises(PathOutsideRootError):
        call(env, RunCell(lambda: {}), cell="1", notebook="link.ipynb")
    assert outside.read_bytes() == before
    os.mkfifo(ws / "fifo.ipynb")
    with pytest.raises(OSError, match=r"not a regular file|FIFO"):
        call(env, EditCell(), cell="1", source="x", notebook="fifo.ipynb")


STARTED = "started.mark"
"""The cell's code makes this file as its first act, so the test interrupts code that runs."""
COUNTING = ("import time\nfor i in range(600):\n    ticks += 1\n    if i == 0:\n"
            f"        open({STARTED!r}, 'w').close()\n    time.sleep(0.05)")
KERNEL_SETUP = """
import brute_nb
from brute_nb.testing.scripted import Scripted, call, reply
brute_nb.configure(notebook="demo.ipynb", approve="notebook=allow", tools="read,run_cell")
ticks = 0
brute_nb.current().provider = Scripted([reply("Running it.", call("run_cell", {"cell": "1"})), "ok"])
"""


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """A real kernel in ``tmp_path`` whose requests do not allow stdin, as nbclient and nbval send them: no front
    end, so the cell tools use the saved file."""
    from kernel_helpers import kernel as start_kernel

    with start_kernel(tmp_path) as (km, kc):
        kc.allow_stdin = False
        yield km, kc


@pytest.mark.kernel
def test_an_interrupt_stops_the_cell_run_cell_runs(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    """Interrupting the ``%%brute`` cell while ``run_cell`` runs a cell stops that cell's code as an interrupt stops
    a cell; the turn ends as interrupted with a valid session, and the notebook file is left as it was (no half
    run's outputs)."""
    import time

    from kernel_helpers import run, value_of

    from brute_nb.message import INTERRUPTED_RESULT
    from brute_nb.sessions.file import read_session

    km, kc = kernel
    path = tmp_path / "demo.ipynb"
    make_notebook(path, COUNTING)
    before = path.read_bytes()
    assert run(kc, "%load_ext brute_nb")[0]["status"] == "ok"
    assert run(kc, KERNEL_SETUP)[0]["status"] == "ok"

    # The interrupt is sent from this thread: jupyter_client's sync methods called from another thread leave an
    # event loop there unclosed.
    msg_id = kc.execute("%%brute\nrun the counting cell")
    deadline = time.monotonic() + 60
    while not (tmp_path / STARTED).exists():
        assert time.monotonic() < deadline, "run_cell never started the cell's code"
        time.sleep(0.01)
    time.sleep(0.3)
    km.interrupt_kernel()
    while (reply := kc.get_shell_msg(timeout=60))["parent_header"].get("msg_id") != msg_id:
        pass
    while not ((msg := kc.get_iopub_msg(timeout=60))["parent_header"].get("msg_id") == msg_id
               and msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle"):
        pass  # the next cell is sent on idle, as the other kernel tests send it (else it may come back aborted)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    first = value_of(kc, "ticks")
    time.sleep(1.5)
    assert value_of(kc, "ticks") == first, "the cell's loop kept running after the turn was stopped"
    assert 0 < first < 600

    saved = read_session(tmp_path / "demo.brute" / "default.jsonl")
    assert [m.role for m in saved] == ["user", "assistant", "tool"] and saved[-1].content == INTERRUPTED_RESULT
    assert path.read_bytes() == before


DISPLAYING = ("import base64\nimport pandas as pd\nfrom IPython.display import Image, display\n"
              "display(pd.DataFrame({'price': [3, 4], 'item': ['tea', 'jam']}))\n"
              "display(Image(data=base64.b64decode(" + repr(base64.b64encode(PNG).decode()) + ")))")


@pytest.mark.kernel
def test_in_a_real_kernel_what_the_cell_displays_reaches_the_model_not_the_brute_cell(
        kernel: tuple[Any, Any], tmp_path: Path) -> None:
    """In a kernel (ipykernel's ZMQ display publisher) a cell run_cell runs displays a DataFrame and an image: the
    model reads the frame's text and gets the image, the notebook file keeps both under that cell, and neither is
    published into the running ``%%brute`` cell."""
    from kernel_helpers import ok, value_of

    _, kc = kernel
    path = tmp_path / "demo.ipynb"
    make_notebook(path, DISPLAYING)
    ok(kc, "%load_ext brute_nb")
    ok(kc, KERNEL_SETUP)
    outputs = ok(kc, "%%brute\nrun the cell")
    # the cell shows the turn (the tool block quotes the result), never the displays themselves
    bundles = [m["content"]["data"] for m in outputs if m["msg_type"] in ("display_data", "update_display_data")]
    assert bundles and not [b for b in bundles if "image/png" in b or "dataframe" in b.get("text/html", "")]

    tool = value_of(kc, "[m for m in brute_nb.current().provider.requests[-1]['messages'] if m['role'] == 'tool']")
    assert "display:\n   price item\n0      3  tea\n1      4  jam" in tool[0]["content"]
    assert "display (image/png, attached)" in tool[0]["content"]
    assert [a["media_type"] for a in tool[0]["attachments"]] == ["image/png"]
    saved = nbformat.read(path, as_version=4).cells[1].outputs
    assert [o.output_type for o in saved] == ["display_data", "display_data"]
    assert "price item" in saved[0].data["text/plain"] and base64.b64decode(saved[1].data["image/png"]) == PNG


def test_the_users_own_notebook_is_edited_where_it_is_when_the_root_is_a_subfolder(ws: Path) -> None:
    """Issue 39 §2 item 2: every demo with tools sets a workspace root below the notebook's folder; the notebook
    being edited is the user's document, not a workspace file, so it is opened in its own folder (no link out of
    it, a regular file, bounded), and the turn's undo puts it back. A workspace notebook still goes through the
    root, and a result names the document by its file name, never the user's folders."""
    from brute_nb.notebook.kernel_tools.kernel_journal import journal
    from brute_nb.notebook.kernel_tools.turn_undo import undo_turn

    root = ws / "scratch"
    root.mkdir()
    path = ws / "mine.ipynb"
    make_notebook(path, "x = 1\nprint(x / 0)")
    before = path.read_bytes()
    state: dict[str, Any] = {}
    env = {"state": state, "root": str(root), "ask": None, "events": None, "metadata": {}, "notebook": str(path)}
    journal(state).begin(state, "fix it")

    edited = call(env, EditCell(), cell="1", source="x = 1\nprint(x / 1)")
    assert edited["notebook"] == "mine.ipynb" and "+print(x / 1)" in edited["diff"]
    inserted = call(env, InsertCell(), source="y = 2", after="1")
    ran = call(env, RunCell(lambda: {}), cell="1")
    assert "1.0" in ran.text and str(ws) not in repr((edited, inserted, ran.text))
    assert cells(path) == ["# Demo", "x = 1\nprint(x / 1)", "y = 2"]
    assert call(env, EditCell(), cell="1", source="z", notebook=str(path))["notebook"] == "mine.ipynb"

    report = undo_turn(state, root, None, notebook=path)
    assert report is not None and "mine.ipynb" in report and "Could not restore" not in report, report
    assert path.read_bytes() == before
    with pytest.raises(PathOutsideRootError):  # another notebook outside the root is still a workspace path
        call(env, EditCell(), cell="1", source="x", notebook="../mine.ipynb")


def test_the_users_own_notebook_linked_out_of_its_folder_is_refused(ws: Path, tmp_path: Path) -> None:
    away = tmp_path / "away"
    away.mkdir()
    make_notebook(away / "real.ipynb", "secret = 1")
    before = (away / "real.ipynb").read_bytes()
    (ws / "mine.ipynb").symlink_to(away / "real.ipynb")
    env = {"state": {}, "root": str(ws / "sub"), "ask": None, "events": None, "metadata": {},
           "notebook": str(ws / "mine.ipynb")}
    (ws / "sub").mkdir()
    with pytest.raises(PathOutsideRootError):
        call(env, EditCell(), cell="1", source="x")
    assert (away / "real.ipynb").read_bytes() == before


NO_DOCUMENT_SETUP = """
import brute_nb
from brute_nb.testing.scripted import Scripted, call, reply
brute_nb.configure(notebook="demo.ipynb", approve="notebook=allow", tools="read,edit_cell")
brute_nb.current().provider = Scripted([reply("Fixing.", call("edit_cell", {"cell": "1", "source": "x = 1"})),
                                        "Fixed."])
"""


@pytest.mark.kernel
def test_a_client_with_stdin_but_no_notebook_document_gets_the_saved_file_changed(tmp_path: Path) -> None:
    """Issue 39 §2 item 3: a client that allows stdin but shows no notebook document (jupyter console, VS Code; here
    jupyter_client's own, which answers no widget) dropped every edit while the tool reported success and ``%brute
    undo`` reported a restore. Nothing answered, so the saved file is changed, the result says so, and undo puts
    the file back."""
    from kernel_helpers import kernel as start_kernel
    from kernel_helpers import ok

    from brute_nb.sessions.file import read_session

    path = tmp_path / "demo.ipynb"
    make_notebook(path, "x = 1 / 0")
    before = path.read_bytes()
    with start_kernel(tmp_path) as (_, kc):
        assert kc.allow_stdin  # as jupyter console and VS Code send their requests
        ok(kc, "%load_ext brute_nb")
        ok(kc, NO_DOCUMENT_SETUP)
        ok(kc, "%%brute\nfix the cell")
        assert cells(path)[1] == "x = 1"
        result = next(m for m in read_session(tmp_path / "demo.brute" / "default.jsonl") if m.role == "tool")
        assert "no notebook document answered" in str(result.content) and "saved file" in str(result.content)
        undone = "".join(o["content"].get("text", "") for o in ok(kc, "%brute undo") if o["msg_type"] == "stream")
        assert "demo.ipynb: restored" in undone and "source restored" not in undone, undone
    assert path.read_bytes() == before


class AnsweringFront(CellBridge):
    """A front end with a notebook document: says which cells it holds, and answers each operation at once (as a
    chat panel's turn hears it), refusing an edit of a cell it does not have, as ``cell_bridge.js`` does."""

    def __init__(self, cells: dict[str, str]) -> None:
        super().__init__()
        self.sent: list[dict[str, Any]] = []
        self.held = dict(cells)

    def send(self, op: dict[str, Any]) -> int:
        self.sent.append(op)
        n = len(self.sent)
        if op["op"] == "edit" and op["id"] not in self.held:
            self._outcomes[n] = f"the notebook has no cell with id {op['id']}"
        else:
            self._outcomes[n] = ""
            if op["op"] in ("edit", "insert"):
                self.held[op["id"]] = op["source"]
        return n

    def cells(self) -> dict[str, tuple[str, str]] | None:
        return {k: ("code", v) for k, v in self.held.items()}


def test_the_live_document_is_checked_and_its_answer_reported(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39 §2 item 3 without a browser: a cell the open notebook does not have is refused before anything is
    sent, an edit it applied is reported applied (where the kernel can hear it), and run_cell runs what the
    document holds."""
    from brute_nb.notebook.kernel_tools import cell_bridge

    monkeypatch.setattr(cell_bridge, "can_hear", lambda: True)
    path = ws / "a.ipynb"
    make_notebook(path, "x = 1")
    saved_id = nbformat.read(path, as_version=4).cells[1].id
    front = AnsweringFront({saved_id: "x = 1"})
    env = {"state": {}, "root": str(ws), "ask": None, "events": None, "metadata": {}, "notebook": str(path),
           "cell_front": front}
    with pytest.raises(NotebookFileError, match="the open notebook has no cell 'ghost'"):
        call(env, EditCell(), cell="ghost", source="print('ghost')")
    with pytest.raises(NotebookFileError, match="the open notebook has no cell 'ghost'"):
        call(env, RunCell(lambda: {}), cell="ghost")
    assert front.sent == [] and cell_bridge.EDITS_KEY not in env["state"]
    edited = call(env, EditCell(), cell="1", source="x = 2\nx")  # by its saved index, found live by its id
    assert edited["applied"].startswith("yes") and edited["id"] == saved_id
    assert "2" in call(env, RunCell(lambda: {}), cell=saved_id).text
    assert [op["op"] for op in front.sent] == ["edit", "outputs"]


NUMBERED = "total = 6 * 7\ntotal"
NUMBERED_SETUP = """
import threading
import brute_nb
from brute_nb.notebook.kernel_tools.cells import running_cell
from brute_nb.testing.scripted import Scripted, call, reply
brute_nb.configure(notebook="demo.ipynb", approve="notebook=allow", tools="read,run_cell")
brute_nb.current().provider = Scripted([reply("Running it.", call("run_cell", {"cell": "1"})), "Ran.",
                                        reply("Again.", call("run_cell", {"cell": "1"})), "Ran again."])
panel = brute_nb.chat()

def between_cells():  # as a click on Send or "Fix with brute": the turn runs while no cell does
    while running_cell(get_ipython()) is not None:
        time.sleep(0.01)
    panel.send("run the cell")
    panel.wait_idle(120)
    open("turn.done", "w").close()
"""


@pytest.mark.kernel
def test_a_cell_run_cell_ran_is_numbered_as_a_run_of_it(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    """Issue 41 item 4: a cell the agent ran looked unrun (no execution count). Run between cells (the chat
    panel, "Fix with brute") it takes the kernel's next number as a person's run would: the saved cell and its
    result show it, ``In``, ``Out`` and ``_`` hold it, and the next cell is numbered after it. Run by a
    ``%%brute`` cell, it shows that cell's number (the counter cannot move under a running cell) and is kept in
    no history of its own."""
    from kernel_helpers import ok, run, value_of
    from notebook_helpers import wait_for

    _, kc = kernel
    path = tmp_path / "demo.ipynb"
    make_notebook(path, NUMBERED)
    ok(kc, "%load_ext brute_nb\nimport time")
    ok(kc, NUMBERED_SETUP)
    started, _ = run(kc, "threading.Thread(target=between_cells, daemon=True).start()")
    wait_for((tmp_path / "turn.done").exists, "the panel's turn")
    taken = started["execution_count"] + 1  # the next number after the cell that started the turn
    saved = nbformat.read(path, as_version=4).cells[1]
    assert saved.execution_count == taken and saved.outputs[0].execution_count == taken, saved
    asked, _ = run(kc, "numbers = [len(In) - 2, In[-2], _]")  # In[-1] is this cell
    assert asked["execution_count"] == taken + 1  # the next cell comes after the run, not on its number
    assert value_of(kc, "numbers") == [taken, NUMBERED, 42]
    assert value_of(kc, f"[In[{taken}], Out[{taken}], _{taken}]") == [NUMBERED, 42, 42]

    brute, _ = run(kc, "%%brute\nrun the cell again")
    assert brute["status"] == "ok"
    saved = nbformat.read(path, as_version=4).cells[1]
    assert saved.execution_count == brute["execution_count"], saved  # the %%brute cell's own number
    after, _ = run(kc, "len(In)")
    assert after["execution_count"] == brute["execution_count"] + 1
    assert value_of(kc, f"In[{brute['execution_count']}]").startswith("get_ipython().run_cell_magic('brute'")
