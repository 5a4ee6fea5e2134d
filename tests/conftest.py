"""Shared fixtures. Async tests run on asyncio through anyio's pytest plugin."""

from __future__ import annotations

import atexit
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from IPython.core.interactiveshell import InteractiveShell

from tests import leaks

# The user's own config folder (stored keys, model aliases) never reaches a test: a key saved on the machine would
# give a test a model it did not ask for. Kernels and subprocesses the tests start inherit it; a test that needs a
# config of its own sets XDG_CONFIG_HOME (or BRUTE_NB_CONFIG_DIR) to its tmp_path.
_CONFIG = tempfile.TemporaryDirectory(prefix="brute-nb-test-config-")
os.environ["XDG_CONFIG_HOME"] = _CONFIG.name
os.environ.pop("BRUTE_NB_CONFIG_DIR", None)

# Every InteractiveShell registers an exit hook that clears its namespace and runs a full gc.collect(). A test run
# makes hundreds of shells (one per magic test) and ends with a large heap, so those hooks ran for many minutes after
# the last test had passed (tests/notebook alone: 142 s of exit hooks, 0.1 s without them), CI time with nothing
# tested.
# A shell made inside a test loses that hook when the test ends (a test's shell has nothing to save at exit; an
# instance() a later test reuses still works). Shells made at import (a module's own) keep theirs.
_made: list[list[Any]] = []
_shell_init = InteractiveShell.__init__


def _recording_init(self: InteractiveShell, *args: Any, **kwargs: Any) -> None:
    _shell_init(self, *args, **kwargs)
    if _made:
        _made[-1].append(self)


InteractiveShell.__init__ = _recording_init  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _shells_closed() -> Iterator[None]:
    made: list[Any] = []
    _made.append(made)
    try:
        yield
    finally:
        _made.pop()
        for shell in made:
            atexit.unregister(shell.atexit_operations)


@pytest.fixture(autouse=True)
def _sockets_closed() -> Iterator[None]:
    """A socket this test left to the garbage collector fails this test, not whichever test the collector next runs
    in (``tests/leaks.py``). Set up before, and torn down after, every fixture the test asked for."""
    leaks.watch()
    yield
    found = leaks.leaked()
    if found:
        pytest.fail("this test left sockets open for the garbage collector to close; close each client and server "
                    "it opens (a with block or its fixture):\n  " + "\n  ".join(found), pytrace=False)


@pytest.fixture(autouse=True)
def _remembered_keys_forgotten() -> Iterator[None]:
    """A key a test gave the redactor (``redact.remember``: a provider built with it, a key typed at a prompt) is
    forgotten when the test ends. Remembered for the process's life, it held back the end of a later test's text
    that began like it: under ``pytest -n`` a worker runs a different sequence of files, and ``still going`` lost
    its ``g`` to a ``gsk_`` key another file had used."""
    from brute_nb import redact

    with redact._lock:
        kept = set(redact._given)
    yield
    with redact._lock:
        if redact._given != kept:
            redact._given.clear()
            redact._given.update(kept)
            redact._given_version += 1


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fake_provider():  # type: ignore[no-untyped-def]
    """A running loopback FakeProvider (OpenAI chat, Responses and Anthropic); script it with ``.add(...)``."""
    from brute_nb.testing import FakeProvider

    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace folder, the tools' root in ``env``."""
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def env(ws: Path) -> dict[str, Any]:
    """The tool environment a middleware stack would give, rooted at ``ws``."""
    return {"state": {}, "root": str(ws), "ask": None, "events": None, "metadata": {}}


# The fault suite's hypothesis properties (issue 8) at full strength: 10,000 examples each. The everyday run uses
# fewer; run `python -m pytest tests/faults tests/transports --hypothesis-profile=fault-suite` for this.
# A property opts in with `settings(max_examples=max(everyday, settings.default.max_examples))`.
# derandomize: CI runs the same 10,000 examples every time, so a red run is reproducible, not a lottery.
#
# Both profiles leave out hypothesis' timing checks (a per-example deadline, "too slow" data generation): on a
# shared 2-core machine they fail at random, and the project judges speed by benchmarks, never by timed assertions.
UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("everyday", **UNTIMED)
settings.register_profile("fault-suite", max_examples=10_000, derandomize=True, **UNTIMED)
# The model of a notebook user (tests/stateful) at CI's strength: many more and longer sequences than its everyday
# run, the same ones every time (derandomize), about 3 minutes on 2 cores; user-model-explore plays new ones.
settings.register_profile("user-model", max_examples=30, stateful_step_count=20, derandomize=True, **UNTIMED)
settings.register_profile("user-model-explore", max_examples=200, stateful_step_count=25, **UNTIMED)
settings.load_profile("everyday")
