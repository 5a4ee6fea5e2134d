"""Runs one turn for a cell: the agent as a task on the kernel's one brute_nb loop (``brute_nb.event_loop``, where the
SDK client's kept-alive connections live), the cell's view subscribed to its events.

The task runs in a copy of the cell's context so everything it shows lands in this cell, and the cell
waits for it (output after the cell went idle is lost to nbclient and nbval). A kernel interrupt cancels the
worker; its cleanup closes the tool calls, keeps the text streamed so far (``PartialReply``) and persists the log
before the KeyboardInterrupt is re-raised, so the cell ends as interrupted and "Run all" stops (kernel-notes Q1,
Q2). The cell shows one line saying so, and the interrupt under it shows as one line and a hint
(``short_errors.interrupted``); brute_nb's own frames carry ``__tracebackhide__`` for ``%tb``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Protocol

from brute_nb.agent import Agent
from brute_nb.env import Env
from brute_nb.errors import BruteError
from brute_nb.event_loop import Worker
from brute_nb.notebook.views.display import CellView
from brute_nb.notebook.views.live import LiveSink, NoLive, WidgetLive
from brute_nb.notebook.views.short_errors import interrupted

STOPPED = "interrupted: the turn was stopped; the reply so far is kept, and the session file is saved and valid"


class Session(Protocol):
    """What the runner needs of a session (``NotebookAgent``, which sits above it and calls it from ``ask``)."""

    name: str

    @property
    def agent(self) -> Agent: ...

    @property
    def replayed(self) -> bool: ...

    def aask(self, prompt: str, **extra: Any) -> Coroutine[Any, Any, Env]: ...


class TurnView(Protocol):
    """What the runner needs of a turn's view (``CellView``, ``TerminalView``): each renders its own ``TurnModel``."""

    def start(self) -> None: ...

    def attach(self, agent: Any) -> None: ...

    def detach(self, agent: Any) -> None: ...

    def asker(self, ask: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]: ...

    def finish(self, *, env: Mapping[str, Any] | None = None, notice: str | None = None, kind: str = "note",
               extra_stats: Mapping[str, Any] | None = None, failed: bool = False) -> None: ...


def live_sink() -> LiveSink:
    """The live widget where someone watches; nothing live in a headless run (nbclient, nbval and papermill send
    no stdin), whose saved outputs are the final ones anyway and whose notebook must not keep widget state."""
    from brute_nb.notebook.approvals import stdin_available

    return WidgetLive() if stdin_available() else NoLive()


def run_turn(nb: Session, prompt: str, *, display: bool = True, quiet: bool = False, **extra: Any) -> Env:
    __tracebackhide__ = True  # IPython leaves this frame out of an interrupted cell's traceback
    from brute_nb.notebook import warm

    # Building the agent imports the SDK: not while the warm-up thread is still importing it.
    with warm.turn() as tell_warm:
        return _run_turn(nb, prompt, tell_warm, display=display, quiet=quiet, **extra)


def _run_turn(nb: Session, prompt: str, tell_warm: bool, *, display: bool, quiet: bool, **extra: Any) -> Env:
    __tracebackhide__ = True
    from brute_nb.notebook import warm

    agent = nb.agent
    if tell_warm:  # the first cell: the warm-up's second phase starts once this request is out (warm.py)
        agent.on("model_call", warm.request_out)
    view: TurnView | None = None
    if display:
        from brute_nb.notebook.views.terminal import TerminalView, is_terminal

        if is_terminal():  # a terminal cannot update a display in place
            view = TerminalView(quiet=quiet, replayed=nb.replayed)
        else:
            view = CellView(session=nb.name, quiet=quiet, replayed=nb.replayed, live=live_sink())
    if view is not None:
        view.start()
        view.attach(agent)
        if "approval_asker" not in extra:
            from brute_nb.notebook.approvals import default_asker

            ask = default_asker()
            if ask is not None:  # someone can answer: the question shows at the tool's place in the cell
                extra["approval_asker"] = view.asker(ask)
    worker = Worker(lambda: nb.aask(prompt, **extra), name=f"brute-{nb.name}")
    try:
        worker.start()
        env: Env = worker.wait()
    except KeyboardInterrupt as stop:
        if view is not None:
            view.finish(notice=STOPPED, kind="interrupted")
        interrupted(stop)  # under the one-line notice: one line and the hint, not frames of the wait
        raise
    except BruteError:
        if view is not None:
            view.finish(failed=True)  # the error's own output says what failed, in one line (short_errors)
        raise
    except BaseException as exc:
        if view is not None:
            view.finish(notice=f"{type(exc).__name__}: {exc}", kind="error")
        raise
    finally:
        if view is not None:
            view.detach(agent)
        if tell_warm:
            agent.off("model_call", warm.request_out)
    if view is not None:
        view.finish(env=env)
    return env
