"""SessionLock: one holder at a time across lock objects and processes, the same lock as a plain filelock."""

from __future__ import annotations

from pathlib import Path

import filelock
import pytest

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


