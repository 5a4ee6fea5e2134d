"""The execution count a cell run by the agent (``run_cell``) takes, so a fixed cell looks run, as it was.

A person's run of a cell takes the kernel's next number ``n``: IPython keeps its source as ``In[n]`` (and in its
history), its value as ``Out[n]``, ``_n`` and ``_``, brute_nb its error as ``Err[n]``, and the next cell gets
``n + 1``. The agent's run between cells (the chat panel's turn, "Fix with brute": the kernel is idle) does the
same, so the cell shows ``[n]`` and what a person reads back (``Out[n]``, ``_``, ``%brute fix``, ``--context``) is
what it would be had they run the cell themselves.

While a cell runs (a ``%%brute`` turn), a run of another cell could only come after it, and the counter cannot move
under it: ipykernel answers the running cell's number as the counter minus one when the cell ends, so moving it
would renumber that cell. The agent's run is then part of the cell that ran it, and shows that cell's number,
with nothing kept apart from it (as a cell that calls ``%run`` keeps one number). A run in a namespace other than
the kernel's (a test's dict) is no kernel run: it takes no number.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from brute_nb.notebook.kernel_tools.cells import describe_error, errors, recorder_of, running_cell


@dataclass(frozen=True)
class Count:
    """The number a run takes (None: none), and whether it is its own (kept in ``In``/``Out``/``Err``)."""

    number: int | None = None
    own: bool = False


NONE = Count()


def take(source: str, namespace: dict[str, Any]) -> Count:
    """The number of the run of ``source`` about to start in ``namespace``; a run between cells takes the kernel's
    next one, its source stored as ``In[n]`` and in the history, as IPython stores a cell's before running it."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or namespace is not shell.user_ns:
        return NONE
    running = running_cell(shell)
    if running is not None:
        return Count(running)
    number = int(shell.execution_count)
    shell.execution_count = number + 1
    try:
        transformed = shell.transform_cell(source)
    except Exception:  # IPython stores the raw source too when it cannot transform a cell
        transformed = source
    shell.history_manager.store_inputs(number, transformed, source)
    recorder = recorder_of(shell)
    if recorder is not None:
        recorder.last = max(recorder.last, number)  # a cell nbval runs next is numbered after this one
    return Count(number, own=True)


def keep(count: Count, source: str, value: Any, error: BaseException | None) -> None:
    """What a run taking its own number left, kept as a cell's is: the value as ``Out[n]``, ``_n`` and ``_`` (the
    older ones moved to ``__`` and ``___``), or the error as ``Err[n]``."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or not count.own or count.number is None:
        return
    number = count.number
    if error is not None:
        recorder = recorder_of(shell)
        names = recorder.names if recorder is not None else {}
        with contextlib.suppress(Exception):  # as the recorder's hook: a summary that fails is no cell error
            errors(shell.user_ns)[number] = describe_error(error, number, source, names)
        return
    if value is None:
        return
    if shell.execution_count - 1 == number:  # nothing ran since: the display hook numbers it as this run
        with hook_reading(shell, number):
            shell.displayhook.update_user_ns(value)
    else:
        shell.user_ns["_oh"][number] = value
        shell.user_ns[f"_{number}"] = value


@contextlib.contextmanager
def hook_reading(shell: Any, number: int) -> Iterator[None]:
    """The counter, while the display hook keeps a value, where the hook reads it as ``number`` (its
    ``prompt_count``), as it stands while a person's run of cell ``number`` shows its value.

    IPython 9 moves the counter before it runs a cell and its hook reads the counter minus one: that is ``number``
    already, and nothing changes. IPython 8 (the declared minimum is 8.14) moves it after the cell and its hook reads
    the counter itself, which ``take`` moved past ``number`` before the run: it would keep the value as ``Out`` of
    the next cell. The counter is put back at once."""
    moved = number - shell.displayhook.prompt_count
    if moved == 0:
        yield
        return
    shell.execution_count += moved
    try:
        yield
    finally:
        shell.execution_count -= moved
