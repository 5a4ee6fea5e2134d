"""TerminalView: shows a turn in terminal IPython, where there is no rich front end.

A terminal cannot update a display in place (every ``update_display`` would print again, mostly blank lines), and
it shows Markdown as raw text. So here the reply streams as it comes and is rendered as Markdown by ``rich`` (a
``Live`` region redrawn in place on a terminal; printed once when the output is not one), and each tool call is one
line when it ends. Invariants: what reaches the terminal is ``render.plain`` text (no escape sequences from the
model or a tool, no key) and rich draws no hyperlinks (an OSC 8 link is itself an escape sequence); tool names and
arguments are printed as ``Text``, never read as rich markup.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from typing import Any

from brute_nb.notebook.views import render
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.notebook.views.tool_text import LINE_STYLE, tool_line
from brute_nb.notebook.views.turn_model import TurnModel, provider_blocks


def is_terminal(shell: Any = None) -> bool:
    """Whether ``%%brute`` runs where nothing renders HTML: terminal IPython (``TerminalInteractiveShell``)."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    return any(cls.__name__ == "TerminalInteractiveShell" for cls in type(shell).__mro__)


class TerminalView:
    """Renders one turn's ``TurnModel`` in a terminal: the same events and final segments a cell reads, printed."""

    def __init__(self, *, quiet: bool = False, replayed: bool = False, console: Any = None) -> None:
        from rich.console import Console

        self.model = TurnModel(replayed=replayed, watch=self.changed)
        self.quiet = quiet
        self.console = console or Console(file=sys.stdout)
        self._text = ""
        self._region: Any = None  # the rich Live region of the reply being streamed, if any
        self._print_lock = threading.RLock()

    def start(self) -> None:
        """The turn's clock starts; nothing to reserve: a terminal has no display to update."""
        self.model.start()

    def attach(self, agent: Any) -> None:
        self.model.attach(agent)

    def detach(self, agent: Any) -> None:
        self.model.detach(agent)
        with self._print_lock:
            self._end_region()

    def changed(self, event: str, item: Any) -> None:
        """The model took an event (``TurnModel.watch``): the reply streams, a tool call ends in one line."""
        if event == "reply":
            with self._print_lock:
                streamed = self._region is not None
                if not streamed:
                    self._provider_blocks(item)  # before the text, where the cell shows them
                    if item.content:
                        self._text = str(item.content)  # a provider that did not stream
                        self._start_region()
                self._end_region()
                if streamed:
                    self._provider_blocks(item)  # the reply says what else it held only once its text has streamed
        elif event == "text":
            with self._print_lock:
                self._text += item
                if self._region is None:
                    self._start_region()
                else:
                    self._region.update(self._markdown(), refresh=False)  # drawn at the Live's own rate
        elif event == "tool_call":
            with self._print_lock:
                self._end_region()
        elif event == "tool_result" and not self.quiet:
            # One line, so no result text (its size says there is one): the row's summary, as the cell says it.
            self._line(tool_line(item), LINE_STYLE.get(item.tone, ""))
        elif event == "compacted" and not self.quiet:
            with self._print_lock:
                self._end_region()
                self._line(item, "dim")

    def asker(self, ask: Any) -> Any:
        """The question follows what was printed; the streamed reply is closed first so it is not redrawn."""

        def in_place(call: Any, risk: str) -> Any:
            with self._print_lock:
                self._end_region()
            return ask(call, risk)

        return in_place

    def finish(self, *, env: Mapping[str, Any] | None = None, notice: str | None = None, kind: str = "note",
               extra_stats: Mapping[str, Any] | None = None, failed: bool = False) -> None:
        with self._print_lock:
            self._end_region()
        model = self.model
        tool_calls = sum(isinstance(item, ToolView) for item in model.final_segments())
        stats = {**model.stats(tool_calls), **(extra_stats or {})}
        if model.repaired:
            self._line(model.repaired, "yellow")
        if stats.get("cut_off"):
            self._line(render.CUT_OFF_NOTICE, "yellow")
        if model.stopped and not self.quiet:
            self._line(model.stopped, "yellow")
        if notice:
            self._line(notice, "red" if kind == "error" else "yellow")
        if model.wants_footer(quiet=self.quiet, failed=failed):
            self._line(render.footer_text(stats), "dim")

    def _markdown(self) -> Any:
        from rich.markdown import Markdown

        return Markdown(render.plain(self._text), hyperlinks=False)

    def _start_region(self) -> None:
        from rich.live import Live

        self._region = Live(self._markdown(), console=self.console, refresh_per_second=8, transient=False,
                          vertical_overflow="visible")
        self._region.start()

    def _end_region(self) -> None:
        """Draw the reply's final Markdown and leave it in the scrollback."""
        if self._region is not None:
            self._region.update(self._markdown(), refresh=True)
            self._region.stop()
            self._region = None
        self._text = ""

    def _provider_blocks(self, reply: Any) -> None:
        """A line for each kind of block the reply held that brute_nb does not read (``turn_model.provider_blocks``),
        as quiet as the cell's row."""
        if not self.quiet:
            for kind in provider_blocks(getattr(reply, "meta", None) or {}):
                self._line(f"provider block: {kind}", "dim")

    def _line(self, text: str, style: str = "") -> None:
        from rich.text import Text

        with self._print_lock:
            self.console.print(Text(render.plain(text), style=style), soft_wrap=True, highlight=False)
