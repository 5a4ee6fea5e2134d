"""The model's watchdog (``watchdog.bounded``): a step that hangs ends, as a failure naming the step, wherever it
waits: in plain code, in a lock no ``interrupt_main`` wakes, and in a ``%%brute`` turn, whose ``run_cell`` swallows
every exception raised inside it."""

from __future__ import annotations

import threading
import time

import pytest

from brute_nb.testing import stall
from tests.stateful.test_notebook_user import NotebookUser
from tests.stateful.watchdog import StepHung, bounded


def test_a_step_that_sleeps_is_ended_and_named() -> None:
    with pytest.raises(StepHung, match=r"(?s)step sleeper\(\) did not end within 0.5 s.*before it:\n  first"), \
            bounded("sleeper()", ["first"], limit=0.5):
        time.sleep(120)


def test_a_step_stuck_on_a_lock_is_ended() -> None:
    """A lock's acquire without timeout wakes only for a real signal (``interrupt_main`` sets a flag it never
    reads)."""
    lock = threading.Lock()
    lock.acquire()
    try:
        with pytest.raises(StepHung, match="MainThread"), bounded("locked()", limit=0.5):
            lock.acquire()
    finally:
        lock.release()


def test_a_step_that_ends_in_time_is_left_alone() -> None:
    with bounded("quick()", limit=5):
        time.sleep(0.05)
    time.sleep(0.2)  # nothing arrives later


def test_a_turn_that_hangs_in_its_cell_fails_the_step_and_its_worker_is_cancelled() -> None:
    """A stream that goes silent waits the SDK's stall timeout (90 s): past the limit the turn is interrupted (its
    worker cancelled: the loop is free for the next turn) and the step fails with the brute_nb task's stack."""
    machine = NotebookUser()
    try:
        machine.world.public.add(stall(after=2))
        with pytest.raises(StepHung, match=r"(?s)step turn\(\) did not end.*--- task.*_main.*stream"), \
                bounded("turn()", limit=2):
            machine.world.run("%%brute\nprompt")
        cell = machine.world.run("%%brute\nafter the hang")
        assert cell.error is None, cell.text
    finally:
        machine.teardown()


def test_pytest_timeouts_exception_is_not_swallowed_by_the_cell() -> None:
    """pytest-timeout raises its ``Failed`` in the main thread, inside whatever cell runs; ``run_cell`` swallowed it
    and the run went on past its timeout."""
    machine = NotebookUser()
    try:
        with pytest.raises(StepHung, match="was ended by Failed: Timeout"):
            machine.world.run("import pytest\npytest.fail('Timeout (300 s) from pytest-timeout')")
        assert machine.world.run("1 / 0").error.__class__ is ZeroDivisionError  # the user's own error stays in its cell
    finally:
        machine.teardown()


def test_pytest_timeouts_exception_in_a_step_ends_the_run() -> None:
    """Raised in a step outside a cell, pytest-timeout's ``Failed`` was one more failure for hypothesis to shrink,
    for minutes past the timeout; it ends the run."""
    with pytest.raises(StepHung, match=r"step slow\(\) was ended by Failed: Timeout"), bounded("slow()", limit=5):
        pytest.fail("Timeout (300 s) from pytest-timeout")
