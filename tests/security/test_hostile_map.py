"""The map engine's entry points against the shared hostile tables: ``brute_nb.map``, ``df.brute.map``,
``brute_nb.estimate`` and ``df.brute.estimate``, each run with a ``MapContext`` (the notebook's front door builds
one per call; a test hands its own, as a script or a Dask worker would).

What they take: a run name and a root (the path table's names), the files a run keeps under the context's folder
(the path table's plants: the row's session, the folder of row sessions, the run's cache), a frame's values and
column names and the schema a run fills (``hostile.frames``), and a key in a row or a reply (``hostile.keys``).
Whatever comes, the call returns; a refusal is a ``BruteError`` naming what is wrong, raised before any row is
asked; nothing outside the notebook's folder is read or written; no key reaches the frame, the cache or a session.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pydantic
import pytest

import brute_nb.map.accessor  # noqa: F401  # registers df.brute, as the engine's first public use does
from brute_nb.errors import BruteError, SettingsError
from brute_nb.map.api import map_rows, plan, settle
from brute_nb.map.context import MapContext
from brute_nb.map.forecast import estimate
from brute_nb.testing import Scripted
from tests.security.hostile import FRAMES, KEYS, Case
from tests.security.hostile.case import Never
from tests.security.hostile.paths import NAMES, PLANTS, SECRET, Plant, make_outside, outside_files
from tests.security.test_hostile_paths import bounded

KEY = "sk-ant-api03-hostile-map-7c1d9e0f2a"

Run = Callable[[pd.DataFrame, str, dict[str, Any]], Any]
ENTRIES: dict[str, Run] = {
    "map": lambda df, template, options: map_rows(template, df, progress=False, **options),
    "accessor-map": lambda df, template, options: df.brute.map(template, progress=False, **options),
    "estimate": lambda df, template, options: estimate(template, df, **options),
    "accessor-estimate": lambda df, template, options: df.brute.estimate(template, **options),
}
RUNS = ("map", "accessor-map")
"""The entries that run rows (an estimate sends nothing)."""


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    monkeypatch.chdir(folder)  # relative names start from the notebook's folder, as in a kernel
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # a key the redaction knows
    return folder


def context(root: Path) -> MapContext:
    return MapContext(sessions=root / "nb.brute")


def refused(result: Any, *, names: str) -> None:
    assert isinstance(result, SettingsError), f"not refused with a clear error: {result!r}"
    assert names in str(result), f"the error does not name {names}: {result}"


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in NAMES])
def test_a_hostile_run_name_is_refused_before_any_row(root: Path, tmp_path: Path, case: Case, entry: str) -> None:
    outside = make_outside(tmp_path)
    before = outside_files(outside)
    options = {"model": Never(), "name": case.data(outside), "context": context(root)}

    result = bounded(lambda: ENTRIES[entry](pd.DataFrame({"w": ["a"]}), "Say {w}", options), tmp_path)

    refused(result, names="session name")
    assert outside_files(outside) == before and not (root / "nb.brute").exists()


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in NAMES if "bad-name" in c.tags])
def test_a_root_that_cannot_be_a_folder_is_refused_before_any_row(root: Path, tmp_path: Path, case: Case,
                                                                  entry: str) -> None:
    """``root=`` is the user's to point anywhere (the path table's ways out are theirs), but a name no system takes
    is refused up front by name, not a ``ValueError`` from deep inside the run."""
    outside = make_outside(tmp_path)
    options = {"model": Never(), "root": case.data(outside), "tools": "read", "context": context(root)}

    result = bounded(lambda: ENTRIES[entry](pd.DataFrame({"w": ["a"]}), "Say {w}", options), tmp_path)

    refused(result, names="root=")


def _row_session(root: Path, df: pd.DataFrame, model: Any) -> Path:
    spec, _ = settle("Say {w}", df, schema=None, tools="none", model=model, system=None, name="run", root=None,
                     max_iterations=20, cache=True, backend="local", concurrency=8, context=context(root))
    _, jobs = plan(spec, df)
    return spec.sessions / f"{jobs[0].key}.jsonl"


PLACES: dict[str, Callable[[Path, pd.DataFrame, Any], Path]] = {
    "row-session": _row_session,
    # another file in the folder of row sessions: with folder-link-out, that folder leads out while the row's own
    # session is still to be written
    "row-folder": lambda root, df, model: _row_session(root, df, model).with_name("planted.jsonl"),
    "cache": lambda root, df, model: root / "nb.brute" / "map" / "run.jsonl",
}


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in PLANTS if c.id != "huge"])
def test_a_run_never_reads_or_writes_through_a_planted_path(root: Path, tmp_path: Path, case: Case,
                                                            place: str) -> None:
    """A run's files live in the context's folder, confined to the notebook's folder: a link out of it (the row
    session, or the folder of row sessions, linked elsewhere) is never read or written through. (A 2 GiB file is
    left out: a row session has no size bound, as a long chat is the user's.)"""
    outside = make_outside(tmp_path)
    df = pd.DataFrame({"w": ["a"]})
    model = Scripted(["ok"])
    where = PLACES[place](root, df, model)
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_bytes(b"")
    assert isinstance(case.data, Plant)
    case.data.make(where, outside)
    before = outside_files(outside)

    result = bounded(lambda: map_rows("Say {w}", df, model=model, name="run", progress=False,
                                      context=context(root)), tmp_path)

    if isinstance(result, BaseException):
        assert isinstance(result, BruteError | OSError), f"{case.expect}: unclear {result!r}"
    else:
        assert SECRET not in result.to_string(), case.expect
        if case.tags & {"escape", "special"} and "shared" not in case.tags and place == "row-session":
            assert result["error"][0], f"{case.expect}: the row was answered through it"
    assert outside_files(outside) == before, f"{case.expect}: something outside the notebook's folder changed"


def _frame(case: Case) -> tuple[pd.DataFrame, str]:
    """The case's frame and a template that reads the hostile part."""
    if "column" in case.tags:
        template = "Say {row[" + repr(str(case.data)) + "]}"
        if "twice" in case.tags:
            return pd.DataFrame([["v", "u"]], columns=[case.data, str(case.data)]), template
        return pd.DataFrame({case.data: ["v"]}), template
    value = case.data.replace("{key}", KEY) if isinstance(case.data, str) else case.data
    return pd.DataFrame({"w": [value]}), "Say {w}"


def _schema(field: str) -> type[pydantic.BaseModel]:
    model: type[pydantic.BaseModel] = pydantic.create_model("Answer", **{field: (str, ...)})  # type: ignore[call-overload]
    return model


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in FRAMES])
def test_a_hostile_frame_runs_or_is_refused_before_any_row(root: Path, tmp_path: Path, case: Case,
                                                           entry: str) -> None:
    if "schema" in case.tags:
        df, template = pd.DataFrame({"w": ["a"]}), "Say {w}"
        options: dict[str, Any] = {"schema": _schema(case.data)}
        model = Scripted([f'{{"{case.data}": "x"}}'])
    else:
        df, template = _frame(case)
        options, model = {}, Scripted(["ok"])

    result = bounded(lambda: ENTRIES[entry](df, template, {**options, "model": model, "context": context(root)}),
                     tmp_path)

    if isinstance(result, BaseException):
        assert isinstance(result, SettingsError), f"{case.expect}: unclear {type(result).__name__}: {result}"
        assert not model.requests, f"{case.expect}: refused only after a row was asked"
        return
    assert "twice" not in case.tags, f"{case.expect}: it ran"
    if entry in RUNS:
        assert not result["error"].notna().any(), f"{case.expect}: {result['error'].tolist()}"
        sent = str(model.requests)
        assert KEY not in sent and KEY not in result.to_string(), case.expect
        if case.id in ("value-a-template", "value-markup", "value-nul"):
            assert repr(case.data)[1:-1] in sent, f"{case.expect}: the value was not sent as written"
        if "column" in case.tags:
            assert "Say v" in sent, f"{case.expect}: the column's value was not what was sent"
    if "schema" in case.tags and entry in RUNS:
        assert result[case.data].tolist() == ["x"], case.expect


def _key_case() -> Case:
    return next(c for c in KEYS if c.id == "key-in-the-prompt")


@pytest.mark.parametrize("entry", RUNS)
def test_a_key_in_a_row_or_a_reply_reaches_no_frame_cache_or_session(root: Path, entry: str) -> None:
    """The keys table's prompt case, for map: a row quoting the key, and a reply quoting it back. A cached re-run
    shows what the first run shows."""
    case = _key_case()
    model = Scripted([f"your key is {KEY}"])
    df = pd.DataFrame({"w": [f"the key is {KEY}"]})

    first = ENTRIES[entry](df, "Say {w}", {"model": model, "context": context(root), "name": "keys"})
    asked = len(model.requests)
    again = ENTRIES[entry](df, "Say {w}", {"model": model, "context": context(root), "name": "keys"})

    assert len(model.requests) == asked and KEY not in str(model.requests), case.expect
    assert KEY not in first.to_string() and KEY not in again.to_string(), case.expect
    assert first["reply"].tolist() == again["reply"].tolist() and again["cached"].all()
    for path in (root / "nb.brute").rglob("*"):
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), f"{case.expect}: {path}"


def test_the_everyday_run_still_works(root: Path) -> None:
    """The same calls with nothing hostile: answered, cached, every file under the notebook's folder."""
    out = map_rows("Say {w}", pd.DataFrame({"w": ["a"]}), model=Scripted(["ok"]), name="run", progress=False,
                   context=context(root))
    assert out["reply"].tolist() == ["ok"] and Path(out["session"][0]).is_relative_to(root)
    assert os.path.isfile(root / "nb.brute" / "map" / "run.jsonl")


@pytest.mark.parametrize("level", ["scratch", "row"])
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in PLANTS if c.id == "folder-link-out"])
def test_a_rows_scratch_copy_is_never_made_through_a_link_out(root: Path, tmp_path: Path, case: Case,
                                                              level: str) -> None:
    """With tools that write, a row works in its own copy of the root under ``<run>/scratch/<key>``: that folder, or
    the scratch folder, linked out of the notebook's folder would take the copy of the user's files, and the row's
    writes, outside it. The row is refused instead (its error says where), and nothing outside changes."""
    outside = make_outside(tmp_path)
    (root / "work").mkdir()
    (root / "work" / "notes.txt").write_text("the user's notes")
    df = pd.DataFrame({"w": ["a"]})
    write = {"id": "c1", "name": "write", "arguments": {"file_path": "out.txt", "content": "x"}}
    model = Scripted([{"content": "", "tool_calls": [write]}, "done"])
    spec, _ = settle("Say {w}", df, schema=None, tools="write", model=model, system=None, name="run",
                     root=root / "work", max_iterations=20, cache=True, backend="local", concurrency=8,
                     context=context(root))
    _, jobs = plan(spec, df)
    where = (spec.scratch / jobs[0].key if level == "row" else spec.scratch) / "planted.txt"
    where.parent.mkdir(parents=True)
    where.write_text("")
    assert isinstance(case.data, Plant)
    case.data.make(where, outside)
    before = outside_files(outside)

    result = bounded(lambda: map_rows("Say {w}", df, model=model, name="run", tools="write", root=root / "work",
                                      progress=False, context=context(root)), tmp_path)

    assert not isinstance(result, BaseException), result
    assert outside_files(outside) == before, f"{case.expect}: the row's copy or its writes went outside"
    assert result["error"][0], "the row ran in a folder outside the notebook's"


@pytest.mark.parametrize("field", ["sessions", "root", "replay", "record"])
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in NAMES])
def test_a_map_context_takes_paths_as_text_and_refuses_what_no_file_can_be(root: Path, tmp_path: Path, case: Case,
                                                                           field: str) -> None:
    """``MapContext`` is an entry point too (a script or a Dask job builds its own): its paths may come as text; a
    way out of the folder is the builder's choice, but a name no file can have is refused when it is built."""
    value = case.data(make_outside(tmp_path))
    fields: dict[str, Any] = {"sessions": root / "nb.brute", field: value}
    if "bad-name" in case.tags:
        with pytest.raises(SettingsError, match=f"MapContext\\({field}="):
            MapContext(**fields)
    else:
        assert getattr(MapContext(**fields), field) == Path(value)


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("given", [{"sessions": "nb.brute"}, "nb.brute", 5])
def test_a_context_that_is_not_one_is_refused_by_name(root: Path, tmp_path: Path, entry: str, given: Any) -> None:
    result = bounded(lambda: ENTRIES[entry](pd.DataFrame({"w": ["a"]}), "Say {w}",
                                            {"model": Never(), "context": given}), tmp_path)
    refused(result, names="context=")


def test_a_context_built_with_text_runs_where_it_says(root: Path) -> None:
    out = map_rows("Say {w}", pd.DataFrame({"w": ["a"]}), model=Scripted(["ok"]), name="run", progress=False,
                   context=MapContext(sessions=str(root / "nb.brute")))  # type: ignore[arg-type]
    assert out["reply"].tolist() == ["ok"] and (root / "nb.brute" / "map" / "run.jsonl").is_file()
