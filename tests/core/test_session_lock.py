"""SessionLock: one holder at a time (flock), interoperating with filelock, with filelock where flock is refused."""

from __future__ import annotations

import errno
from pathlib import Path
from types import SimpleNamespace

import filelock
import pytest

from brute_nb.middleware import session_lock
from brute_nb.middleware.session_lock import SessionLock


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


def test_a_file_system_without_flock_falls_back_to_filelock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if session_lock.fcntl is None:
        pytest.skip("no fcntl here: filelock is the only path")

    def refuse(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "no locks available")

    # A stand-in module: filelock itself (the fallback) keeps the real fcntl.
    refusing = SimpleNamespace(flock=refuse, LOCK_EX=session_lock.fcntl.LOCK_EX, LOCK_NB=session_lock.fcntl.LOCK_NB,
                               LOCK_UN=session_lock.fcntl.LOCK_UN)
    monkeypatch.setattr(session_lock, "fcntl", refusing)
    first, second = SessionLock(tmp_path / "s.jsonl.lock"), SessionLock(tmp_path / "s.jsonl.lock")
    assert first.try_acquire()
    assert first._fallback is not None
    assert first.held
    assert not second.try_acquire()
    first.release()
    assert not first.held
    assert second.try_acquire()
    second.release()
