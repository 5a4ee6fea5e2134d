"""read / write / patch / remove / undo: Brute's caps and messages, its bugs fixed, and the workspace root."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from brute_nb.errors import PathOutsideRootError
from brute_nb.tools import FSPatch, FSRead, FSRemove, FSUndo, FSWrite, ToolOutput, toolset

pytestmark = pytest.mark.anyio


async def test_read_numbers_lines_and_pages(ws: Path, run: Any) -> None:
    (ws / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 2501)))
    out = await run(FSRead, file_path="a.txt")
    assert isinstance(out, ToolOutput) and out.truncated
    lines = out.text.splitlines()
    assert lines[0] == "1\tl1" and lines[1999] == "2000\tl2000"
    assert out.text.endswith("\n\n(Showing lines 1-2000 of 2500. Use start_line=2001 to continue.)")
    ranged = await run(FSRead, file_path="a.txt", start_line="2499", end_line=2600)
    assert ranged.text == "2499\tl2499\n2500\tl2500\n"
    past = await run(FSRead, file_path="a.txt", start_line=9999)
    assert "past the end" in past.text


async def test_read_byte_and_line_caps(ws: Path, run: Any) -> None:
    (ws / "wide.txt").write_text("y" * 2500 + "\n" + ("z" * 1000 + "\n") * 100)
    out = (await run(FSRead, file_path="wide.txt")).text
    first = out.splitlines()[0]
    assert first == "1\t" + "y" * 2000 + "... (line truncated to 2000 chars)"
    assert len(out.encode()) <= 51_200 + 200
    assert "Use start_line=" in out


async def test_read_directory_binary_missing_and_suggestions(ws: Path, run: Any) -> None:
    (ws / "sub").mkdir()
    (ws / "config.yaml").write_text("a: 1\n")
    (ws / ".hidden").write_text("")
    (ws / "data.bin").write_bytes(b"abc\0def")
    (ws / "pic.PNG").write_text("not really")
    assert await run(FSRead, file_path=".") == "config.yaml (file)\ndata.bin (file)\npic.PNG (file)\nsub (dir)"
    with pytest.raises(ValueError, match="Cannot read binary file"):
        await run(FSRead, file_path="data.bin")
    with pytest.raises(ValueError, match="Cannot read binary file"):
        await run(FSRead, file_path="pic.PNG")
    with pytest.raises(FileNotFoundError) as info:
        await run(FSRead, file_path="confg.yaml")
    assert str(info.value) == f"File not found: {ws / 'confg.yaml'}. Did you mean: config.yaml?"
    assert (await run(FSRead, file_path="sub")) == ""


async def test_write_patch_undo_history(ws: Path, run: Any) -> None:
    created = await run(FSWrite, file_path="d/new.py", content="a = 1\nb = 2\n")
    assert created["bytes"] == 12 and created["diff"].startswith("@@ -0,0 +1,2 @@")
    patched = await run(FSPatch, file_path="d/new.py", old_string="a = 1", new_string=r"a = '\1\\'")
    assert (ws / "d/new.py").read_text() == "a = '\\1\\\\'\nb = 2\n"  # literal, no regex escapes
    assert patched["replacements"] == 1 and "-a = 1" in patched["diff"]
    assert (await run(FSUndo, path="d/new.py"))["action"] == "restored"
    assert (ws / "d/new.py").read_text() == "a = 1\nb = 2\n"
    assert (await run(FSUndo, path="d/new.py"))["action"] == "deleted (file did not exist before)"
    assert not (ws / "d/new.py").exists()
    with pytest.raises(LookupError, match="No undo history available for: "):
        await run(FSUndo, path="d/new.py")


async def test_patch_refusals_push_no_snapshot(ws: Path, run: Any, env: dict[str, Any]) -> None:
    (ws / "f.txt").write_text("x x x\n")
    with pytest.raises(ValueError, match="must not be empty"):
        await run(FSPatch, file_path="f.txt", old_string="", new_string="y")
    with pytest.raises(ValueError, match="old_string not found in"):
        await run(FSPatch, file_path="f.txt", old_string="q", new_string="y")
    with pytest.raises(ValueError, match=r"occurs 3 times.*replace_all=true"):
        await run(FSPatch, file_path="f.txt", old_string="x", new_string="y")
    with pytest.raises(FileNotFoundError, match="File not found"):
        await run(FSPatch, file_path="nope.txt", old_string="x", new_string="y")
    assert "snapshots" not in env["state"] or env["state"]["snapshots"].depth(ws / "f.txt") == 0
    out = await run(FSPatch, file_path="f.txt", old_string="x", new_string="y", replace_all="true")
    assert out["replacements"] == 3 and (ws / "f.txt").read_text() == "y y y\n"
    out = await run(FSPatch, file_path="f.txt", old_string="y y", new_string="z", replace_all="false")
    assert out["replacements"] == 1


async def test_remove_file_and_dirs(ws: Path, run: Any) -> None:
    (ws / "f.txt").write_text("keep me")
    (ws / "empty").mkdir()
    (ws / "full").mkdir()
    (ws / "full" / "x").write_text("")
    assert (await run(FSRemove, path="f.txt"))["success"] is True
    assert not (ws / "f.txt").exists()
    await run(FSUndo, path="f.txt")
    assert (ws / "f.txt").read_text() == "keep me"
    await run(FSRemove, path="empty")
    assert not (ws / "empty").exists()
    with pytest.raises(OSError, match="Directory not empty"):
        await run(FSRemove, path="full")
    with pytest.raises(FileNotFoundError, match="Path not found"):
        await run(FSRemove, path="ghost")


async def test_failed_write_leaves_no_snapshot(ws: Path, run: Any, env: dict[str, Any]) -> None:
    (ws / "blocker").write_text("a file, so blocker/x cannot be created")
    with pytest.raises(OSError):
        await run(FSWrite, file_path="blocker/x", content="y")
    with pytest.raises(LookupError):
        await run(FSUndo, path="blocker/x")


async def test_paths_outside_the_root_are_refused(ws: Path, tmp_path: Path, run: Any, env: dict[str, Any]) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    (ws / "link").symlink_to(outside)
    for path in ("../secret.txt", str(outside), "link"):
        with pytest.raises(PathOutsideRootError, match="outside the workspace root"):
            await run(FSRead, file_path=path)
    with pytest.raises(PathOutsideRootError):
        await run(FSWrite, file_path="../evil.txt", content="x")
    assert not (tmp_path / "evil.txt").exists()
    allowed = next(t for t in toolset(allow_outside_root=True) if t.name == "read")
    assert (await run(allowed, file_path="../secret.txt")).text == "1\ts"
    env["allow_outside_root"] = True
    assert (await run(FSRead, file_path="link")).text == "1\ts"


async def test_root_defaults_to_cwd_read_at_run_time(ws: Path, run: Any, env: dict[str, Any],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    env["root"] = None
    monkeypatch.chdir(ws)
    (ws / "here.txt").write_text("h\n")
    assert (await run(FSRead, file_path="here.txt")).text == "1\th\n"
    assert os.getcwd() == str(ws)


async def test_state_is_per_agent(ws: Path, run: Any, env: dict[str, Any]) -> None:
    await run(FSWrite, file_path="a.txt", content="1")
    other = type(run)({**env, "state": {}})
    with pytest.raises(LookupError):
        await other(FSUndo, path="a.txt")
    await run(FSUndo, path="a.txt")
    assert not (ws / "a.txt").exists()


async def test_results_name_files_relative_to_the_root(ws: Path, run: Any, env: dict[str, Any]) -> None:
    # Sessions are shared with their notebooks: a result must not carry the machine's directory layout.
    (ws / "sub").mkdir()
    assert (await run(FSWrite, file_path="sub/a.txt", content="x\n"))["file_path"] == "sub/a.txt"
    out = await run(FSPatch, file_path="./sub/../sub/a.txt", old_string="x", new_string="y")
    assert out["file_path"] == "sub/a.txt"
    assert (await run(FSUndo, path="sub/a.txt"))["path"] == "sub/a.txt"
    assert (await run(FSRemove, path="sub/a.txt"))["path"] == "sub/a.txt"
    outside = ws.parent / "outside.txt"
    env["allow_outside_root"] = True  # a path outside the root stays absolute: it is not the project's
    assert (await run(FSWrite, file_path=str(outside), content="z"))["file_path"] == str(outside)


async def test_missing_file_suggestions_keep_case_and_skip_far_names(ws: Path, run: Any) -> None:
    (ws / "README.md").write_text("x")
    (ws / "setup.cfg").write_text("x")
    with pytest.raises(FileNotFoundError) as info:
        await run(FSRead, file_path="readme.md.txt")
    assert str(info.value).endswith("Did you mean: README.md?")
    with pytest.raises(FileNotFoundError) as info:
        await run(FSRead, file_path="zzzzzzzz")
    assert "Did you mean" not in str(info.value)
