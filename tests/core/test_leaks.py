"""The suite's own leak check (``tests/leaks.py``): a socket a test leaves to the garbage collector is found at
that test's end (issue 39 §2.16)."""

from __future__ import annotations

import socket
import weakref
from typing import Any

from tests import leaks


def _cycle() -> None:
    """A socket kept only by a reference cycle, as a client whose pool refers back to it is."""
    holder: dict[str, Any] = {"socket": socket.socket()}
    holder["self"] = holder


def test_a_socket_left_in_a_cycle_is_found_when_the_test_ends() -> None:
    leaks.watch()
    _cycle()
    found = leaks.leaked()
    assert len(found) == 1 and "unclosed <socket.socket" in found[0], found


def test_a_socket_whose_cycle_reached_the_oldest_generation_is_found_too() -> None:
    """A test that allocates much has the collector move what it holds to the oldest generation on the way: a
    socket in a cycle dropped after that is found all the same."""
    import gc

    leaks.watch()
    held: dict[str, Any] = {"socket": socket.socket()}
    held["self"] = held
    gc.collect()  # alive now: moved to the oldest generation, as a collection during the test would
    del held
    found = leaks.leaked()
    assert len(found) == 1 and "unclosed <socket.socket" in found[0], found


def test_what_was_there_before_the_test_is_not_collected_at_its_end() -> None:
    """The heap made before the test is set aside while it runs, so the collection at its end is the test's size."""
    import gc

    class Node:
        pass

    before = Node()
    before.self = before  # type: ignore[attr-defined]  # garbage from before the test, as the suite leaves some
    ref = weakref.ref(before)
    del before
    leaks.watch()
    _cycle()
    assert len(leaks.leaked()) == 1
    assert ref() is not None  # not walked: frozen until the test ended
    gc.collect()
    assert ref() is None


def test_a_closed_socket_and_one_still_in_use_are_not_leaks() -> None:
    leaks.watch()
    with socket.socket():
        pass
    kept = socket.socket()
    try:
        assert leaks.leaked() == []
    finally:
        kept.close()


def test_a_socket_made_before_the_watch_is_not_this_tests() -> None:
    before: dict[str, Any] = {"socket": socket.socket()}
    before["self"] = before
    leaks.watch()
    try:
        assert leaks.left_open() == []
    finally:
        before["socket"].close()
        leaks.watch()
