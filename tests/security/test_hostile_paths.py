"""Every entry point that opens or writes a path, against the shared hostile path table (issue 25).

Each entry point says which kinds of case it must refuse (with a clear error, not a hang or a crash); for every
case it is run against, nothing from outside the root may show up in what it returns, nothing outside may be
created or changed, and it must return. A case an entry point does not take is left out of its pairs, with the
reason beside the entry.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from brute_nb import Message
from brute_nb.attachments import attachment, from_bytes
from brute_nb.errors import BruteError
from brute_nb.map.cache import MapCache
from brute_nb.sessions.file import SessionFile
from brute_nb.tools import Adapter, FSPatch, FSRead, FSRemove, FSSearch, FSWrite, use_env
from brute_nb.tools.builtin.skill import discover_skills
from brute_nb.tools.mcp_config import load as load_mcp
from brute_nb.tools.truncation import truncate
from tests.security.hostile import Case
from tests.security.hostile.paths import NAMES, PLANTS, SECRET, Plant, make_outside, outside_files

HANG = 15.0
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
PNG_SHA = hashlib.sha256(PNG).hexdigest()


@dataclass(frozen=True)
class Entry:
    """An entry point: where it opens (relative to the root), what it must refuse, and how to run it.

    ``refuses`` and ``takes`` hold tags or case ids. ``run(root, where)`` returns the text it produced (what it
    returned, or would send); ``prepare`` sets up what must exist before the case is planted (a session line
    naming an attachment, say); ``arm(outside)`` then makes what the case put outside tempting to read (a valid
    skill, say).
    """

    name: str
    where: str
    refuses: frozenset[str]
    takes: frozenset[str]
    run: Callable[[Path, Path], str]
    prepare: Callable[[Path, Path], None] = field(default=lambda root, where: None)
    arm: Callable[[Path], None] = field(default=lambda outside: None)


def tool_env(root: Path) -> dict[str, Any]:
    return {"state": {}, "root": str(root), "ask": None, "events": None, "metadata": {}}


def call(root: Path, tool: Any, **arguments: Any) -> str:
    async def go() -> Any:
        with use_env(tool_env(root)):
            return await Adapter.wrap(tool).call(arguments)

    return str(anyio.run(go))


def _session(root: Path) -> SessionFile:
    file = SessionFile(root / "nb.brute" / "chat.jsonl", root=root)
    file.resolve()
    return file


def _session_load(root: Path, where: Path) -> str:
    return repr(_session(root).load()[0])


def _session_preload(root: Path, where: Path) -> str:
    from brute_nb.sendable import ReadCheck
    from brute_nb.sessions.file import preload

    kept = preload(SessionFile(root / "nb.brute" / "chat.jsonl", root=root), ReadCheck())
    return f"{kept} {_session_load(root, where)}"


def _session_append(root: Path, where: Path) -> str:
    _session(root).append([Message("user", "a new line")])
    return ""


def _store_attachment(root: Path, where: Path) -> str:
    _session(root).append([Message("user", "look", attachments=[from_bytes(PNG, "image/png")])])
    return ""


def _stored_line(root: Path, where: Path) -> None:
    _store_attachment(root, where)


def _read_attachment(root: Path, where: Path) -> str:
    messages, _ = _session(root).load()
    return "".join(a.read_bytes().decode("latin-1") for m in messages for a in m.attachments)


def _overflow(root: Path, where: Path) -> str:
    with use_env(tool_env(root)):
        out = truncate("".join(f"line {i}\n" for i in range(5000)))
    saved = Path(out.overflow_path).read_text() if out.overflow_path else ""
    return out.text + saved


def _valid_skills(outside: Path) -> None:
    for p in outside.rglob("SKILL.md"):  # a valid skill, so reading it would put the secret in the prompt
        p.write_text(f"---\ndescription: {SECRET}\n---\n{SECRET}\n")


def _skills(root: Path, where: Path) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return repr(discover_skills(root))


def _map_cache(root: Path, where: Path) -> str:
    cache = MapCache(where, root=root)
    text = repr(cache.records)
    with cache:
        cache.add([{"key": "k", "reply": "ok", "error": None, "session": "k.jsonl"}])
    return text


def _aliases(root: Path, where: Path) -> str:
    from brute_nb.providers import aliases

    os.environ["XDG_CONFIG_HOME"] = str(root / "cfg")
    try:
        return repr(aliases.save("fast", "anthropic:claude-haiku-4-5"))
    finally:
        del os.environ["XDG_CONFIG_HOME"]


def _keys(root: Path, where: Path) -> str:
    """The stored keys file (issue 41): read, then a key saved over whatever the case planted."""
    from brute_nb.providers import keys

    os.environ["BRUTE_NB_CONFIG_DIR"] = str(root / "cfg" / "brute_nb")
    try:
        text = repr(keys.load())
        keys.save("anthropic", "sk-ant-hostile-paths-0001")
        return text
    finally:
        del os.environ["BRUTE_NB_CONFIG_DIR"]


def _read_frame(root: Path, where: Path) -> str:
    from brute_nb import read_frame

    return read_frame(where).to_string()


def _cell_edit(root: Path, where: Path) -> str:
    from brute_nb.notebook.kernel_tools.cell_tools import EditCell

    return call(root, EditCell, cell="0", source="x", notebook=str(where.relative_to(root)))


def _cell_edit_document(root: Path, where: Path) -> str:
    """The user's own notebook, open beside a workspace root that is a subfolder (issue 39): confined to its own
    folder instead."""
    from brute_nb.notebook.kernel_tools.cell_tools import EditCell

    async def go() -> Any:
        with use_env({**tool_env(root / "work"), "notebook": str(where)}):
            return await Adapter.wrap(EditCell).call({"cell": "0", "source": "x"})

    (root / "work").mkdir(exist_ok=True)
    return str(anyio.run(go))


def _notebook_tool_document(root: Path, where: Path) -> str:
    """The read-only notebook tool on the user's own notebook, opened as the cell tools open it (issue 39)."""
    from brute_nb.notebook.kernel_tools.notebook_tools import Notebook

    async def go() -> Any:
        with use_env({**tool_env(root / "work"), "notebook": str(where)}):
            return await Adapter.wrap(Notebook(shell=lambda: None)).call({"action": "list"})

    (root / "work").mkdir(exist_ok=True)
    return str(anyio.run(go))


def _proposal_document(root: Path, where: Path) -> str:
    """A proposal's look at the saved cell below the running one (``propose_cell``, ``%brute fix``): a file it may
    not read means the cell below is unknown, so the proposal is made; it never fails the turn."""
    from brute_nb.notebook.kernel_tools.notebook_tools import insert_cell

    shell = type("Shell", (), {"parent_header": {}, "user_ns": {}, "set_next_input": lambda *a, **k: None})()
    return str(insert_cell(shell, "print(1)", where))


def _save_aside(root: Path, where: Path) -> str:
    """The notebook cut short by a save, with Jupyter's ``.~`` copy beside it as the case planted it: the read
    waits (briefly here) for a save that never ends, and says so, never opening the copy."""
    from brute_nb.notebook.kernel_tools import cell_tools
    from brute_nb.notebook.kernel_tools.notebook_tools import Notebook

    notebook = where.with_name(where.name.removeprefix(".~"))
    wait, cell_tools.SAVE_WAIT = cell_tools.SAVE_WAIT, 0.2

    async def go() -> Any:
        with use_env({**tool_env(root / "work"), "notebook": str(notebook)}):
            return await Adapter.wrap(Notebook(shell=lambda: None)).call({"action": "list"})

    try:
        return str(anyio.run(go))
    finally:
        cell_tools.SAVE_WAIT = wait


def _cut_notebook(root: Path, where: Path) -> None:
    where.with_name(where.name.removeprefix(".~")).write_text('{"cells": [')


def _instructions(root: Path, where: Path) -> str:
    from brute_nb.notebook.kernel_tools.environment import instructions_section

    return instructions_section(root, where.parent / "nb.ipynb")  # the notebook's folder's rules


def _export(root: Path, where: Path) -> str:
    from brute_nb.notebook.commands.export import write

    return str(write(b"# a transcript\n", where, root, replace=True))


def _sessions_index(root: Path, where: Path) -> str:
    import brute_nb

    return str(brute_nb.sessions(root).to_string())


ESCAPE = frozenset({"escape"})
SPECIAL = frozenset({"special"})
NOT_FILES = frozenset({"fifo", "socket", "device"})
EVERY = frozenset({"escape", "special", "huge", "write"})

ENTRIES: tuple[Entry, ...] = (
    # read lists a folder; a hard link inside the root is a file inside it
    Entry("tool-read", "work/notes.txt", ESCAPE | NOT_FILES, EVERY - {"write"},
          lambda root, where: call(root, FSRead, file_path="work/notes.txt")),
    # The writers read the old content whole for undo, so a 2 GiB file is not a case for them.
    Entry("tool-write", "work/notes.txt", ESCAPE | SPECIAL, EVERY - {"huge"},
          lambda root, where: call(root, FSWrite, file_path="work/notes.txt", content="new")),
    Entry("tool-patch", "work/notes.txt", ESCAPE | SPECIAL, EVERY - {"huge"},
          lambda root, where: call(root, FSPatch, file_path="work/notes.txt", old_string=SECRET[:7],
                                   new_string="x")),
    Entry("tool-remove", "work/notes.txt", ESCAPE | SPECIAL, EVERY - {"huge"},
          lambda root, where: call(root, FSRemove, path="work/notes.txt")),
    Entry("tool-search", "work/notes.txt", frozenset(), EVERY - {"write"},
          lambda root, where: call(root, FSSearch, pattern=SECRET[8:], path="work")),
    # A file the user names is theirs to name (a link out is their choice); it must still be a bounded file.
    Entry("attach", "chart.png", SPECIAL | {"huge"}, SPECIAL | {"huge"},
          lambda root, where: attachment(where).media_type),
    # Sessions have no size bound (a long chat is the user's), and appending through a hard link writes the
    # linked file by design of an append; git never carries hard links, so a clone cannot plant one.
    Entry("session-load", "nb.brute/chat.jsonl", ESCAPE | SPECIAL, ESCAPE | SPECIAL, _session_load),
    Entry("session-append", "nb.brute/chat.jsonl", ESCAPE | SPECIAL, ESCAPE | SPECIAL, _session_append),
    # Issue 29: the warm-up reads the notebook's session ahead of its first turn, through the same confinement.
    Entry("session-preload", "nb.brute/chat.jsonl", ESCAPE | SPECIAL, ESCAPE | SPECIAL, _session_preload),
    # A link or a huge file under a hash name is replaced by the right bytes (never written through); a folder
    # on the way that leads out, or a special file in the way, stops the write.
    Entry("attachments-store", f"nb.brute/attachments/{PNG_SHA}.png",
          frozenset({"folder-link-out", "fifo", "socket", "folder-in-place"}), EVERY, _store_attachment),
    Entry("attachments-read", f"nb.brute/attachments/{PNG_SHA}.png", EVERY, EVERY, _read_attachment,
          prepare=_stored_line),
    Entry("overflow", ".brute/overflow/.gitignore", frozenset(), EVERY, _overflow),
    Entry("skills", ".brute/skills/x/SKILL.md", frozenset(), EVERY, _skills, arm=_valid_skills),
    Entry("mcp-config", "servers.json", SPECIAL | {"huge"}, SPECIAL | {"huge"},
          lambda root, where: repr(load_mcp(where))),
    Entry("map-cache", "nb.brute/map/run.jsonl", ESCAPE | SPECIAL, ESCAPE | SPECIAL | {"write"}, _map_cache),
    # The user's own config folder, which no repository plants into: a link there is the user's (dotfiles).
    Entry("aliases", "cfg/brute_nb/aliases.json", SPECIAL | {"huge"}, SPECIAL | {"huge", "hard-link-out"},
          _aliases),
    # Stored keys, in the same folder and by the same rule (a link is the user's); a key is never written into
    # anything but a regular file.
    Entry("keys-file", "cfg/brute_nb/keys.json", SPECIAL | {"huge"}, SPECIAL | {"huge", "hard-link-out"}, _keys),
    Entry("read-frame", "chat.jsonl", SPECIAL, SPECIAL, _read_frame),
    # Issue 28: the cell tools rewrite a notebook (read whole for undo, bounded); the project's instructions are
    # left out of the prompt when they are anything but a regular file inside the root; an export is a write; the
    # sessions index lists what it can read and names the rest.
    Entry("cell-edit", "work/nb.ipynb", ESCAPE | SPECIAL | {"huge"}, EVERY, _cell_edit),
    # The user's own notebook, outside the workspace root: a folder on its way that is a link is where the user
    # keeps it (Jupyter opened it there), but the file itself never links out of its folder.
    # The notebook tool reads what a file at the notebook's path holds only when it is a regular file: a FIFO or
    # a device is "no saved notebook", and a link out or a huge file is refused.
    Entry("notebook-tool-document", "nb.ipynb", frozenset({"huge", "link-out", "link-chain-out"}), EVERY - {"write"},
          _notebook_tool_document),
    Entry("cell-edit-document", "nb.ipynb", SPECIAL | {"huge", "link-out", "link-chain-out", "dangling-link-out"},
          EVERY, _cell_edit_document),
    Entry("proposal-document", "nb.ipynb", frozenset(), EVERY - {"write"}, _proposal_document),
    # Jupyter's copy of a notebook while it saves in place: only looked at (lstat), whatever it is.
    Entry("save-aside", "docs/.~nb.ipynb", EVERY, EVERY - {"write"}, _save_aside,
          prepare=_cut_notebook),
    Entry("instructions", "work/AGENTS.md", frozenset(), EVERY - {"write"}, _instructions, arm=_valid_skills),
    Entry("export", "nb.brute/chat.md", ESCAPE | SPECIAL, ESCAPE | SPECIAL | {"write"}, _export),
    Entry("sessions-index", "nb.brute/chat.jsonl", frozenset(), EVERY - {"write"}, _sessions_index),
)


def applies(entry: Entry, case: Case) -> bool:
    return bool((case.tags | {case.id}) & entry.takes)


def must_refuse(entry: Entry, case: Case) -> bool:
    return bool((case.tags | {case.id}) & entry.refuses)


PAIRS = [pytest.param(entry, case, id=f"{entry.name}-{case.id}") for entry in ENTRIES for case in PLANTS
         if applies(entry, case)]


def bounded(fn: Callable[[], str], base: Path) -> str | BaseException:
    """``fn()``'s text or exception; fails the test if it does not return (then unblocks any FIFO)."""
    box: list[str | BaseException] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # the test inspects whatever was raised
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG)
    if thread.is_alive():
        for fifo in base.rglob("*"):
            if fifo.is_fifo():
                for _ in range(3):
                    os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
        pytest.fail("the call hung")
    return box[0]


@pytest.mark.parametrize(("entry", "case"), PAIRS)
def test_entry_point_holds_against_a_planted_path(tmp_path: Path, entry: Entry, case: Case) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = make_outside(tmp_path)
    where = root / entry.where
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_bytes(PNG if where.suffix == ".png" else b"")
    entry.prepare(root, where)
    assert isinstance(case.data, Plant)
    case.data.make(where, outside)
    entry.arm(outside)
    before = outside_files(outside)

    result = bounded(lambda: entry.run(root, where), tmp_path)

    if must_refuse(entry, case):
        assert isinstance(result, BruteError | OSError), f"{case.expect}: got {result!r}"
        assert str(result).strip(), "the error says nothing"
    elif isinstance(result, BaseException):
        assert isinstance(result, BruteError | OSError | ValueError), f"{case.expect}: unclear {result!r}"
    if "shared" not in case.tags:  # a hard link inside the root is a file inside it: its content may show
        assert SECRET not in str(result), case.expect
    assert outside_files(outside) == before, f"{case.expect}: something outside the root changed"


TOOL_CALLS: dict[str, Callable[[Path, str], str]] = {
    "read": lambda root, name: call(root, FSRead, file_path=name),
    "write": lambda root, name: call(root, FSWrite, file_path=name, content="new"),
    "patch": lambda root, name: call(root, FSPatch, file_path=name, old_string=SECRET[:7], new_string="x"),
    "remove": lambda root, name: call(root, FSRemove, path=name),
    "fs_search": lambda root, name: call(root, FSSearch, pattern=SECRET[8:], path=name),
    "edit_cell": lambda root, name: _cell_tool(root, "EditCell", cell="0", source="x", notebook=name),
    "run_cell": lambda root, name: _cell_tool(root, "RunCell", cell="0", notebook=name),
}


def _cell_tool(root: Path, name: str, **arguments: Any) -> str:
    from brute_nb.notebook.kernel_tools import cell_tools

    return call(root, getattr(cell_tools, name), **arguments)


@pytest.mark.parametrize("tool", sorted(TOOL_CALLS))
@pytest.mark.parametrize("case", NAMES, ids=[c.id for c in NAMES])
def test_a_tool_refuses_a_hostile_name(tmp_path: Path, tool: str, case: Case) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    outside = make_outside(tmp_path)
    before = outside_files(outside)

    result = bounded(lambda: TOOL_CALLS[tool](root, case.data(outside)), tmp_path)

    assert isinstance(result, BruteError | OSError | ValueError), f"{case.expect}: got {result!r}"
    assert str(result).strip() and "\x00" not in str(result).replace("\\x00", "")
    assert SECRET not in str(result), case.expect
    assert outside_files(outside) == before
