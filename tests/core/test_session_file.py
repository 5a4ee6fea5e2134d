"""SessionFile alone: each operation on a session file is all or nothing, and says file:line when it refuses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from brute_nb import confine
from brute_nb.errors import SessionLogError
from brute_nb.message import Message, Role
from brute_nb.sessions import file as session_file
from brute_nb.sessions.file import SessionFile, SessionFileWarning


def msg(text: str) -> Message:
    return Message(Role.USER, text)


def test_append_then_load_round_trips_and_changes_the_signature(tmp_path: Path) -> None:
    f = SessionFile(tmp_path / "s.jsonl")
    assert f.load() == ([], None) and f.signature() is None
    first = f.append([msg("a"), msg("b")])
    assert f.signature() == first
    second = f.append([msg("c")])
    messages, seen = f.load()
    assert [m.content for m in messages] == ["a", "b", "c"] and seen == second != first


def test_append_to_a_file_missing_its_last_newline_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(msg("a").to_json())  # whole JSON, no newline: a hand edit, not a torn write
    f = SessionFile(path)
    f.append([msg("b")])
    assert [m.content for m in f.load()[0]] == ["a", "b"]


def test_an_append_reads_the_last_byte_only_of_a_file_it_did_not_leave_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line a message: the file as this SessionFile's last append left it ends with that line's newline, so the
    next append skips the read; a file another writer touched since is read again (and repaired)."""
    reads: list[int] = []
    real_pread = os.pread

    def pread(fd: int, n: int, offset: int) -> bytes:
        reads.append(n)
        return real_pread(fd, n, offset)

    monkeypatch.setattr(os, "pread", pread)
    path = tmp_path / "s.jsonl"
    path.write_text(msg("a").to_json() + "\n")  # written before this SessionFile
    f = SessionFile(path)
    f.append([msg("b")])  # the first append reads the last byte
    f.append([msg("c")])
    f.append([msg("d")])
    assert reads == [1]
    with path.open("a") as other:
        other.write(msg("e").to_json())  # another writer, whole JSON and no newline
    f.append([msg("f")])
    assert reads[:2] == [1, 1] and len(reads) == 3  # read again: its last byte, then the whole file (torn?)
    assert [m.content for m in f.load()[0]] == ["a", "b", "c", "d", "e", "f"]


def test_a_failed_append_is_rolled_back_to_the_size_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = SessionFile(tmp_path / "s.jsonl")
    f.append([msg("kept")])
    before = f.real.read_bytes()

    def full_disk(fd: int, data: bytes) -> None:
        os.write(fd, data[:5])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(session_file, "_write_all", full_disk)
    with pytest.raises(SessionLogError, match=r"No space left on device\. The file is as it was before"):
        f.append([msg("lost")])
    assert f.real.read_bytes() == before


def test_load_names_file_and_line_of_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(msg("a").to_json() + "\n{not json\n" + msg("c").to_json() + "\n")
    with pytest.raises(SessionLogError, match=rf"^{path}:2: not valid JSON"):
        SessionFile(path).load()


def test_a_torn_tail_is_skipped_without_the_lock_and_set_aside_with_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data = msg("a").to_json() + "\n" + '{"role": "user", "cont'
    path.write_text(data)
    f = SessionFile(path)
    with pytest.warns(SessionFileWarning, match=rf"{path}:2: the last line is cut off"):
        messages, _ = f.load()
    assert [m.content for m in messages] == ["a"] and path.read_text() == data  # a reader changes nothing
    assert f.lock.try_acquire()
    try:
        with pytest.warns(SessionFileWarning, match=rf"{path}:2: the last line was cut off mid-write"):
            messages, seen = f.load()
    finally:
        f.lock.release()
    assert [m.content for m in messages] == ["a"]
    assert (tmp_path / "s.torn.txt").read_text() == '{"role": "user", "cont\n'  # kept, not dropped
    assert path.read_text() == msg("a").to_json() + "\n" and seen == f.signature()


def test_rewrite_archives_what_left_then_swaps_the_file(tmp_path: Path) -> None:
    f = SessionFile(tmp_path / "s.jsonl")
    a, b, c = msg("a"), msg("b"), msg("c")
    f.append([a, b, c])
    seen = f.rewrite([a, c], [b])
    assert [m.content for m in f.load()[0]] == ["a", "c"] and seen == f.signature()
    assert [m.content for m in SessionFile(tmp_path / "s.archive.jsonl").load()[0]] == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.archive.jsonl", "s.jsonl"]  # no temp file left


def test_a_failed_rewrite_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = SessionFile(tmp_path / "s.jsonl", archive=False)
    f.append([msg("a"), msg("b")])
    before = f.real.read_bytes()

    def no_rename(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(confine.os, "rename", no_rename)
    with pytest.raises(SessionLogError, match="Input/output error"):
        f.rewrite([msg("a")], [])
    assert f.real.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]  # the temp file is gone too


def test_resolve_refuses_a_link_out_of_root_and_follows_one_inside(tmp_path: Path) -> None:
    outside, inside = tmp_path / "outside.jsonl", tmp_path / "nb" / "real.jsonl"
    inside.parent.mkdir()
    outside.write_text("")
    inside.write_text("")
    (tmp_path / "nb" / "out.jsonl").symlink_to(outside)
    (tmp_path / "nb" / "in.jsonl").symlink_to(inside)
    with pytest.raises(SessionLogError, match=r"is a link to .*outside.jsonl, outside"):
        SessionFile(tmp_path / "nb" / "out.jsonl").resolve()
    f = SessionFile(tmp_path / "nb" / "in.jsonl")
    f.resolve()
    f.append([msg("a")])
    assert f.real == inside and [m.content for m in SessionFile(inside).load()[0]] == ["a"]


def test_resolve_follows_a_linked_folder_and_refuses_one_out_of_root(tmp_path: Path) -> None:
    """The folder is resolved once for the three files: a link in it still counts, as for the files themselves."""
    root, elsewhere = tmp_path / "nb", tmp_path / "elsewhere"
    (root / "real").mkdir(parents=True)
    elsewhere.mkdir()
    (root / "inner").symlink_to(root / "real")
    (root / "out").symlink_to(elsewhere)
    with pytest.raises(SessionLogError, match=r"is a link to .*elsewhere.*, outside"):
        SessionFile(root / "out" / "s.jsonl", root=root).resolve()
    f = SessionFile(root / "inner" / "s.jsonl", root=root)
    f.resolve()
    assert f.real == root / "real" / "s.jsonl" and f.real_archive == root / "real" / "s.archive.jsonl"
    assert not (elsewhere / "s.jsonl.lock").exists()


def test_resolve_sees_a_folder_swapped_for_a_link_out_on_its_next_call(tmp_path: Path) -> None:
    """The usual layout (<root>/<stem>.brute/) takes the folder as the real root's entry after one lstat: a folder
    replaced by a link between two turns is resolved, and refused, at the next turn's resolve."""
    root, elsewhere = tmp_path / "nb", tmp_path / "elsewhere"
    (root / "s.brute").mkdir(parents=True)
    elsewhere.mkdir()
    f = SessionFile(root / "s.brute" / "s.jsonl", root=root)
    f.resolve()
    assert f.real == root / "s.brute" / "s.jsonl"
    (root / "s.brute").rmdir()
    (root / "s.brute").symlink_to(elsewhere)
    with pytest.raises(SessionLogError, match=r"is a link to .*elsewhere.*, outside"):
        f.resolve()
    linked_root = tmp_path / "linked"
    linked_root.symlink_to(root)  # a root given through a link: its folder is still found under the real root
    (root / "s.brute").unlink()
    (root / "s.brute").mkdir()
    g = SessionFile(linked_root / "s.brute" / "s.jsonl", root=linked_root)
    g.resolve()
    assert g.real == root / "s.brute" / "s.jsonl" and g.real_root == root


def _walk(check: object) -> dict[str, object]:
    return {name: getattr(check, name) for name in check.__slots__}  # type: ignore[attr-defined]


def test_a_file_read_ahead_is_loaded_without_a_parse_while_it_is_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29 §5: the notebook's warm-up reads the session ahead; its first turn's ``load`` then takes what was
    read, the reader's walk included, exactly as reading the file would have made it."""
    from brute_nb.message import ToolCall
    from brute_nb.sendable import ReadCheck

    path = tmp_path / "nb.brute" / "s.jsonl"
    path.parent.mkdir()
    SessionFile(path).append([msg("a"), Message(Role.ASSISTANT, "", tool_calls=[ToolCall("c1", "read", {})]),
                              Message(Role.TOOL, "r", tool_call_id="c1"), msg("b")])
    fresh_check = ReadCheck()
    fresh = SessionFile(path, root=tmp_path).load(fresh_check)
    assert session_file.preload(SessionFile(path, root=tmp_path), ReadCheck())
    monkeypatch.setattr(session_file, "_parse", lambda *a, **k: pytest.fail("parsed again"))
    check = ReadCheck()
    assert SessionFile(path, root=tmp_path).load(check) == fresh
    assert _walk(check) == _walk(fresh_check) and check.open is False and check.count == 4
    monkeypatch.undo()
    assert SessionFile(path, root=tmp_path).load() == fresh  # taken once: the next load reads the file


def test_a_file_changed_after_its_read_ahead_is_read_again(tmp_path: Path) -> None:
    from brute_nb.sendable import ReadCheck

    path = tmp_path / "s.jsonl"
    SessionFile(path).append([msg("a")])
    assert session_file.preload(SessionFile(path), ReadCheck())
    SessionFile(path).append([msg("b")])  # another writer, after the read ahead
    messages, _ = SessionFile(path).load()
    assert [m.content for m in messages] == ["a", "b"]


def test_a_read_ahead_keeps_nothing_for_a_torn_file_and_goes_at_the_next_load_of_any_file(tmp_path: Path) -> None:
    """A torn last line is the turn's to set aside under the lock, with its warning: nothing read ahead for it, nor
    for a file over the bound. One file is kept, until any load."""
    from brute_nb.sendable import ReadCheck

    torn = tmp_path / "torn.jsonl"
    torn.write_text(msg("a").to_json() + "\n" + '{"role": "user", "cont')
    assert not session_file.preload(SessionFile(torn), ReadCheck())
    big = tmp_path / "big.jsonl"
    SessionFile(big).append([msg("x" * 100)])
    assert not session_file.preload(SessionFile(big), ReadCheck(), max_bytes=100)  # left to its turn
    assert session_file._preloaded is None
    other, mine = tmp_path / "other.jsonl", tmp_path / "mine.jsonl"
    SessionFile(other).append([msg("o")])
    SessionFile(mine).append([msg("m")])
    assert session_file.preload(SessionFile(mine), ReadCheck())
    SessionFile(other).load()
    assert session_file._preloaded is None  # a load of another file let it go: it is not kept for ever


def _after_the_clock_moves_past(path: Path) -> None:
    """Return once the filesystem's clock has moved past ``path``'s last change (its ticks are 1-10 ms), so a
    change made from now on gets another change time: a loop on the clock itself, nothing timed."""
    probe = path.with_name(path.name + ".probe")
    changed = path.stat().st_ctime_ns
    while True:
        probe.write_bytes(b"")
        if probe.stat().st_ctime_ns > changed:
            probe.unlink()
            return


def test_a_same_size_rewrite_with_its_old_mtime_put_back_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39 §2.15: size and mtime are the user's to set (``os.utime``, ``touch -r``, a tool that keeps times);
    the change time is not, so a rewrite shows in it."""
    from brute_nb.sendable import ReadCheck

    monkeypatch.setattr(session_file, "SETTLED_NS", 0)  # trust the signature alone: no second look at the bytes
    path = tmp_path / "s.jsonl"
    SessionFile(path).append([msg("old")])
    _after_the_clock_moves_past(path)
    assert session_file.preload(SessionFile(path), ReadCheck())
    st = path.stat()
    path.write_bytes(msg("new").to_json().encode() + b"\n")  # same size, same inode
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    messages, _ = SessionFile(path).load()
    assert [m.content for m in messages] == ["new"]


def test_a_read_ahead_of_a_file_changed_just_before_is_used_only_if_its_bytes_are_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The change time is only as fine as the filesystem's clock (a tick of 1-10 ms; 2 s on some): a file changed
    within a tick of its read ahead can change again, same size, and keep every time. Such a read ahead is checked
    against the file's bytes when it is taken. Here a filesystem whose clock never moved: a signature blind to
    time."""
    from brute_nb.sendable import ReadCheck

    monkeypatch.setattr(session_file, "signature", lambda st: (st.st_dev, st.st_ino, st.st_size, 0, 0))
    path = tmp_path / "s.jsonl"
    SessionFile(path).append([msg("old")])
    assert session_file.preload(SessionFile(path), ReadCheck())
    path.write_bytes(msg("new").to_json().encode() + b"\n")
    assert [m.content for m in SessionFile(path).load()[0]] == ["new"]

    assert session_file.preload(SessionFile(path), ReadCheck())  # unchanged: taken, not parsed again
    monkeypatch.setattr(session_file, "_parse", lambda *a, **k: pytest.fail("parsed again"))
    assert [m.content for m in SessionFile(path).load()[0]] == ["new"]
