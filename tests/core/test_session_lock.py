"""SessionLock: one holder at a time across lock objects and processes, the same lock as a plain filelock."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import filelock
import pytest

from brute_nb.sessions.lock import SessionLock


def test_one_holder_at_a_time_and_release_frees_it(tmp_path: Path) -> None:
    first, second = SessionLock(tmp_path / "s.jsonl.lock"), SessionLock(tmp_path / "s.jsonl.lock")
    assert first.try_acquire()
    assert first.held
    assert not second.try_acquire()
    first.release()
    assert not first.held
    assert second.try_acquire()
    second.release()


def test_a_filelock_holder_keeps_it_out_and_the_other_way_round(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.lock"
    other = filelock.FileLock(str(path), thread_local=False)
    lock = SessionLock(path)
    with other:
        assert not lock.try_acquire()
    assert lock.try_acquire()
    with pytest.raises(filelock.Timeout):
        other.acquire(timeout=0)
    lock.release()


def test_creates_the_missing_folder(tmp_path: Path) -> None:
    lock = SessionLock(tmp_path / "new" / "folder" / "s.jsonl.lock")
    assert lock.try_acquire()
    lock.release()
    assert (tmp_path / "new" / "folder" / "s.jsonl.lock").exists()




def test_a_lock_file_deleted_between_turns_is_not_locked_twice(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.lock"
    first, second = SessionLock(path), SessionLock(path)
    assert first.try_acquire()
    first.release()
    path.unlink()  # a user tidying the folder between two turns
    assert second.try_acquire()
    assert not first.try_acquire()  # the new file is locked: no holder of the deleted inode
    with pytest.raises(filelock.Timeout):
        filelock.FileLock(str(path), thread_local=False).acquire(timeout=0)
    second.release()


def test_a_lock_file_replaced_while_it_was_taken_is_taken_again(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl.lock"
    real = filelock.lock_descriptor
    replaced: list[int] = []

    def replace_then_lock(fd: int, *, blocking: bool = True) -> bool:
        if not replaced:  # another process deletes and recreates the file between our open and our lock
            path.unlink()
            path.write_text("")
            replaced.append(fd)
        return real(fd, blocking=blocking)

    monkeypatch.setattr(filelock, "lock_descriptor", replace_then_lock)
    lock = SessionLock(path)
    assert lock.try_acquire() and replaced
    monkeypatch.undo()
    with pytest.raises(filelock.Timeout):  # the lock is on the file that is there now
        filelock.FileLock(str(path), thread_local=False).acquire(timeout=0)
    lock.release()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_neither_holds_nor_frees_the_parents_lock(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.lock"
    lock = SessionLock(path)
    assert lock.try_acquire()
    pid = os.fork()
    if pid == 0:  # the child: it must not think it holds the lock, and releasing must not free the parent's
        code = 0 if not lock.held else 1
        lock.release()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert not SessionLock(path).try_acquire()  # still the parent's
    lock.release()
    assert SessionLock(path).try_acquire()


def test_without_the_native_lock_it_falls_back_to_filelock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_flock(fd: int, *, blocking: bool = True) -> bool:
        raise OSError(errno.ENOSYS, "flock not supported")

    monkeypatch.setattr(filelock, "lock_descriptor", no_flock)
    used: list[str] = []
    monkeypatch.setattr(SessionLock, "_try_fallback", lambda self: used.append("fallback") or True)
    lock = SessionLock(tmp_path / "s.jsonl.lock")
    assert lock.try_acquire() and used == ["fallback"]
