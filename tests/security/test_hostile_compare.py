"""brute_nb.compare against the shared hostile path table: the session it replays, and a map result's row
sessions, are read only from inside the notebook's folder; a planted link out, a FIFO, a device or a folder is
refused with a clear error, nothing from outside shows, nothing outside changes, and no model is asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import brute_nb
from brute_nb.errors import BruteError
from tests.security.hostile import Case
from tests.security.hostile.case import Never
from tests.security.hostile.paths import NAMES, PLANTS, SECRET, Plant, make_outside, outside_files
from tests.security.test_hostile_paths import ESCAPE, SPECIAL, bounded

ROW = "0123456789abcdef01234567"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from brute_nb.notebook import registry

    folder = tmp_path / "root"
    folder.mkdir()
    monkeypatch.setenv("BRUTE_NB_NOTEBOOK", str(folder / "nb.ipynb"))
    monkeypatch.setattr(registry, "_registry", None)
    return folder


CASES = [pytest.param(case, id=case.id) for case in PLANTS if case.tags & (ESCAPE | SPECIAL)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape", ["session", "map-row"])
def test_a_planted_source_is_refused(root: Path, tmp_path: Path, case: Case, shape: str) -> None:
    outside = make_outside(tmp_path)
    where = root / ("nb.brute/chat.jsonl" if shape == "session" else f"nb.brute/map/run/sessions/{ROW}.jsonl")
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_bytes(b"")
    assert isinstance(case.data, Plant)
    case.data.make(where, outside)
    before = outside_files(outside)
    source: Any = "chat" if shape == "session" else pd.DataFrame({"session": [str(where)]})

    result = bounded(lambda: repr(brute_nb.compare(source, models=[Never()], progress=False)), tmp_path)

    assert isinstance(result, BruteError | OSError), f"{case.expect}: got {result!r}"
    assert str(result).strip() and SECRET not in str(result)
    assert outside_files(outside) == before


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in NAMES if "escape" in c.tags])
def test_a_row_session_outside_the_notebook_folder_is_refused(root: Path, tmp_path: Path, case: Case,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    outside = make_outside(tmp_path)
    monkeypatch.chdir(root)  # relative names start from the notebook's folder, as in a kernel
    frame = pd.DataFrame({"session": [case.data(outside)]})

    result = bounded(lambda: repr(brute_nb.compare(frame, models=[Never()], progress=False)), tmp_path)

    assert isinstance(result, BruteError | OSError), f"{case.expect}: got {result!r}"
    assert SECRET not in str(result)


def test_a_session_named_as_a_path_out_is_refused(root: Path, tmp_path: Path) -> None:
    outside = make_outside(tmp_path)
    (outside / "chat.jsonl").write_text('{"role": "user", "content": "' + SECRET + '"}\n')
    result = bounded(lambda: repr(brute_nb.compare(str(outside / "chat.jsonl"), models=[Never()])), tmp_path)
    assert isinstance(result, BruteError | OSError) and SECRET not in str(result)


WRITES = [pytest.param(c, id=c.id) for c in PLANTS if c.id in ("folder-link-out", "link-out", "dangling-link-out")]


@pytest.mark.parametrize("case", WRITES)
def test_a_replayed_turn_is_never_written_out_of_the_notebook_folder(root: Path, tmp_path: Path, case: Case) -> None:
    """The replay's own session (``<stem>.brute/compare/<run>/<model>.jsonl``) is confined to the notebook's folder
    like every file of a run: a compare folder (or the replay's file) that links out is never written through."""
    from brute_nb.map.comparison import session_file
    from brute_nb.map.context import MapContext
    from brute_nb.map.spec import digest
    from brute_nb.testing import Scripted

    (root / "nb.brute").mkdir()
    (root / "nb.brute" / "chat.jsonl").write_text('{"role": "user", "content": "hi"}\n'
                                                  '{"role": "assistant", "content": "hello"}\n')
    model = Scripted(["ok"], model="replayed")
    run = root / "nb.brute" / "compare" / "run"
    where = run / f"{digest('scripted:replayed')}.jsonl" if case.id != "folder-link-out" else run / "planted.jsonl"
    where.parent.mkdir(parents=True)
    where.write_bytes(b"")
    outside = make_outside(tmp_path)
    assert isinstance(case.data, Plant)
    case.data.make(where, outside)
    before = outside_files(outside)
    ctx = MapContext(sessions=root / "nb.brute")
    assert session_file("chat", ctx).is_file()

    result = bounded(lambda: repr(brute_nb.compare("chat", models=[model], name="run", context=ctx)), tmp_path)

    assert isinstance(result, str | BruteError), f"{case.expect}: unclear {result!r}"
    assert SECRET not in str(result) and outside_files(outside) == before, case.expect
