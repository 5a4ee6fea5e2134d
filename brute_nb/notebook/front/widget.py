"""The chat widget: an ipywidgets panel over the same kernel-resident agent and session as ``%%brute``.

It is a view: the turn is ``NotebookAgent.aask`` on a ``Worker`` thread started from the handler (which returns at
once, so the kernel stays free for other cells), and the widget only renders the agent's events with the cell's
own ``TurnModel`` and ``render`` functions. Invariants: one turn at a time per widget, prompts typed meanwhile are
sent in order (FIFO); Stop cancels like an interrupt (SessionLog closes unanswered calls, the file stays valid);
widget writes are coalesced to at most ``MAX_UPDATES_PER_S`` a second (Jupyter drops output past its rate limits).

Keys: the message box is ``ChatInput`` (an anywidget in ``chat_input.py``): Enter sends, Shift+Enter makes a new
line, and the text is sent as typed, newlines included. From code, set ``chat.input.value`` and call
``chat.send_button.click()``, or call ``chat.send(text)``; both queue like Enter does.

The transcript is a ``Transcript`` (``transcript.py``): the same sanitised HTML, plus an "Insert as cell" button
under each code block of a reply that puts the code into a new, unrun cell below the panel's cell. A ``propose_cell``
call in a widget turn shows there the same way (``transcript.proposed`` is the turn's ``env["insert_cell"]``).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections import deque
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import ipywidgets

from brute_nb.cost import format_usd
from brute_nb.errors import BruteError, NoModelError, remember_last
from brute_nb.event_loop import Worker
from brute_nb.message import role_of
from brute_nb.notebook.front.side import SideCopy, open_beside
from brute_nb.notebook.views import render
from brute_nb.notebook.views.chat_static import StaticCopy, static_bundle
from brute_nb.notebook.views.coalesce import Coalescer
from brute_nb.notebook.views.key_entry import KeyEntry
from brute_nb.notebook.views.live import live_html
from brute_nb.notebook.views.tool_html import tool_html
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.notebook.views.transcript import Transcript, proposed
from brute_nb.notebook.views.transcript_html import (
    error_details_html,
    log_html,
    log_text,
    segments_html,
    totals,
    user_html,
)
from brute_nb.notebook.views.turn_model import WAITING, TurnModel

if TYPE_CHECKING:
    from brute_nb.notebook.session import NotebookAgent

STOPPED = "stopped: the turn was cancelled; the session file is saved and valid"
NO_KEY = "no model key yet: paste one here, and what you type goes to a real model (no restart)"


class ChatWidget(ipywidgets.VBox):  # type: ignore[misc]  # ipywidgets is untyped
    """Transcript, input, Send / Stop, approval buttons and a status line over one ``NotebookAgent``.

    A real ``ipywidgets.VBox``, so it goes into an ``HBox``, a tab or a dashboard like any widget; displayed, it
    also carries the transcript as sanitised ``text/html`` and as ``text/plain`` for where no widget can render
    (nbconvert, GitHub, a terminal, a notebook opened without its kernel).
    """

    children: tuple[Any, ...]  # ipywidgets' trait, typed for the key box's coming and going

    def __init__(self, nb: NotebookAgent, *, side: bool = False) -> None:
        self.side = side
        """Shown in JupyterLab's side area (``chat(side=True)``): its saved copy says how to open it there again."""
        self._build()
        super().__init__([self.transcript, self.approval_box, self.input,
                          ipywidgets.HBox([self.send_button, self.stop_button]), self.status])
        self.transcript.anchor = self.model_id  # inserted cells go below the cell that shows this panel
        self.nb = nb
        self.queue: deque[str] = deque()
        self._lock = threading.RLock()
        self._idle = threading.Event()
        self._idle.set()
        self._worker: Worker | None = None
        self._running: TurnModel | None = None  # the turn running now
        self._prompt = ""
        self._blocks: list[str] = []
        self._seen = 0
        self._base: tuple[int, int, int, float | None] = (0, 0, 0, None)
        self._approval: Callable[[str], None] | None = None
        self._origin = contextvars.copy_context()
        self.approval_asked = threading.Event()
        self._out = Coalescer(self._write)
        self.static_copy: StaticCopy | SideCopy = StaticCopy()
        self.key_entry: KeyEntry | None = None
        self._held: list[str] = []  # prompts typed while no key was set, sent once one is
        if self._needs_key():
            self._offer_key()
        self._sync_history()
        self._render(force=True)

    def _build(self) -> None:
        import ipywidgets as w

        # column-reverse anchors the scroll box at its end, so the newest message stays in view as the transcript
        # grows (each write replaces the HTML; a plain box would keep showing older text and hide the reply).
        self.transcript = Transcript(layout=w.Layout(max_height="600px", overflow="auto", display="flex",
                                                 flex_flow="column-reverse"))
        from brute_nb.notebook.views.chat_input import ChatInput

        self.input = ChatInput(layout=w.Layout(width="100%"))
        self.send_button = w.Button(description="Send", button_style="primary", icon="paper-plane")
        self.stop_button = w.Button(description="Stop", icon="stop", disabled=True)
        self.status = w.HTML()
        self.approval_text = w.HTML()
        self.allow_button = w.Button(description="Allow", button_style="success")
        self.deny_button = w.Button(description="Deny", button_style="danger")
        self.always_button = w.Button(description="Always allow")
        buttons = w.HBox([self.allow_button, self.deny_button, self.always_button])
        self.approval_box = w.VBox([self.approval_text, buttons], layout=w.Layout(display="none"))
        self.send_button.on_click(lambda _: self._send_input())
        self.stop_button.on_click(lambda _: self.stop())
        self.allow_button.on_click(lambda _: self._answer("allow"))
        self.deny_button.on_click(lambda _: self._answer("deny"))
        self.always_button.on_click(lambda _: self._answer("always"))
        self.input.on_submit(self.send)  # Enter in the box: the box has already cleared itself

    @property
    def box(self) -> ChatWidget:
        """The panel itself (it used to wrap a ``VBox``; kept for code that put ``chat.box`` in a layout)."""
        return self

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget view, with the transcript so far as a static fallback beside it (a panel nested in a layout;
        displayed alone, it shows ``_ipython_display_``'s two outputs)."""
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        copy = self.static()
        bundle["text/html"] = self.transcript_html + self.status_html
        bundle["text/plain"] = copy["text/plain"]
        return bundle

    def _ipython_display_(self) -> None:
        """The static copy (``chat_static``: what JupyterLab shows after a restart instead of "model not found",
        and what exports show), then the live panel; a side panel (``chat(side=True)``) is beside the notebook
        already, so a cell that shows it says where it is."""
        from IPython.display import display

        if self.side:
            display({"text/plain": beside_line(self.nb.name)}, raw=True)  # type: ignore[no-untyped-call]
            return
        self.static_copy.show(self.static())
        view = {**self.view_bundle(), "text/plain": ""}  # the copy has the text
        display(view, raw=True)  # type: ignore[no-untyped-call]

    def view_bundle(self) -> dict[str, Any]:
        """The live panel's own output (the widget view), without the static fallback ``_repr_mimebundle_`` adds."""
        return dict(super()._repr_mimebundle_() or {})

    def static(self) -> dict[str, str]:
        """The static copy's outputs for the conversation as it is now."""
        conversation = log_text(self._conversation())
        status = render.plain(self._status_text(None))
        text = f"{conversation}\n\n{status}" if conversation else status
        return static_bundle(self.transcript_html, self.status_html, text, session=self.nb.name, side=self.side)

    # Input and queue: these run in the kernel's main thread and return at once.

    def _send_input(self) -> None:
        text = self.input.value
        self.input.value = ""
        self.send(text)

    def send(self, text: str, buffers: Any = None) -> None:
        """Queue a prompt; it is sent now if the agent is idle, else after the turns queued before it.

        (A dict is ipywidgets' own custom message, which ``Widget.send`` sends: ``focus()`` and ``blur()`` use it.)
        """
        if not isinstance(text, str):
            super().send(text, buffers)
            return
        text = text.strip("\n")
        if not text.strip():
            return
        if self.key_entry is not None:
            with self._lock:
                self._held.append(text)
            self._render()
            return
        from brute_nb.notebook import warm

        warm.settled()  # the turn imports the SDK: not while the warm-up thread is still importing it
        with self._lock:
            self._origin = contextvars.copy_context()
            self.queue.append(text)
            if self._worker is None:
                self._start_next()
        self._render()

    # No key: the box the first %%brute shows (views.key_entry), above the input, until a key is set.

    def _needs_key(self) -> bool:
        try:
            self.nb.model_provider()
        except NoModelError:
            return True
        except BruteError:  # another problem (a bad option, an unreadable keys file): the first turn says which
            return False
        return False

    def _offer_key(self) -> None:
        with self._lock:
            if self.key_entry is not None:
                return
            self.key_entry = KeyEntry(self._key_set, note=NO_KEY)
            shown = tuple(self.children)  # transcript, approvals, then the input: the box goes above it
            self.children = (*shown[:2], self.key_entry, *shown[2:])

    def _key_set(self, entry: KeyEntry) -> None:
        """A key was pasted: the box goes, and what was typed meanwhile is sent (the next turn builds its model
        with the key, as after ``os.environ[...] = ...``)."""
        with self._lock:
            self.children = tuple(child for child in self.children if child is not entry)
            self.key_entry = None
            held, self._held = self._held, []
        for text in held:
            self.send(text)
        self._render(force=True)

    def _hold(self, prompt: str) -> None:
        """The key went away after the panel was made (a turn found none): hold this prompt and the queue, and
        offer the box; called on the worker thread, which then goes idle."""
        with self._lock:
            self._held.extend([prompt, *self.queue])
            self.queue.clear()
        self._offer_key()
        self._render(force=True)  # before going idle, so a waiter sees the prompt held
        with self._lock:
            self._start_next()

    def stop(self) -> None:
        """Cancel the running turn (as an interrupt would) and drop the queue, putting its text back in the box."""
        with self._lock:
            dropped = list(self.queue)
            self.queue.clear()
            worker = self._worker
        if worker is not None:
            worker.cancel()
        if dropped and not self.input.value.strip():
            self.input.value = "\n\n".join(dropped)
        self._render()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no turn runs and none is queued; False on timeout."""
        return self._idle.wait(timeout)

    async def idle(self) -> None:
        """``await panel.idle()`` in a cell: ``wait_idle`` that leaves the kernel's event loop free meanwhile
        (bound it with ``anyio.fail_after`` or ``asyncio.timeout``)."""
        await anyio.to_thread.run_sync(self._idle.wait, abandon_on_cancel=True)

    @property
    def running(self) -> bool:
        return self._worker is not None

    @property
    def transcript_html(self) -> str:
        """The transcript as shown, after writing any update the coalescer still holds."""
        self._out.flush()
        return str(self.transcript.value) + str(self.transcript.live)

    @property
    def status_html(self) -> str:
        """The status line as shown, after writing any update the coalescer still holds."""
        self._out.flush()
        return str(self.status.value)

    def _start_next(self) -> None:
        """Start the next queued turn, or go idle (called with the lock held)."""
        if not self.queue:
            self._worker = None
            self._idle.set()
            return
        text = self.queue.popleft()
        self._idle.clear()
        # Built in the handler's context, never the finishing worker's: a copy of a running loop's context makes
        # anyio refuse to start another loop ("Already running asyncio in this thread").
        worker: Worker = self._origin.copy().run(Worker, lambda: self._turn(text), name=f"brute-chat-{self.nb.name}")
        self._worker = worker
        worker.start()

    # The turn: runs on the worker thread and writes only to widgets.

    async def _turn(self, prompt: str) -> None:
        turn = TurnModel(watch=lambda *_: self._render())
        agent: Any = None
        notice: tuple[str, str] | None = None
        error: BaseException | None = None
        held = False
        try:
            agent = self.nb.agent
            turn.replayed = self.nb.replayed  # the footer says "replayed", as a %%brute cell's does
            self._sync_history()
            turn.start()
            turn.attach(agent)
            with self._lock:
                self._running, self._prompt = turn, prompt
            self._render(force=True)
            await self.nb.aask(prompt, approval_asker=self._ask_approval, insert_cell=proposed)
        except anyio.get_cancelled_exc_class():
            notice = (STOPPED, "interrupted")
            raise
        except Exception as exc:  # shown in the transcript; the kernel and the widget go on
            held = isinstance(exc, NoModelError) and agent is None  # no turn began: the box says what to do
            said = str(exc) if getattr(exc, "shown_plain", False) else f"{type(exc).__name__}: {exc}"
            notice, error = (said, "error"), exc
            remember_last(exc)  # %tb shows it too, as the message of a replay's mismatch says
        finally:
            if agent is not None:
                turn.detach(agent)
            if held:
                self._hold(prompt)
            else:
                self._finish(turn, prompt, notice, error)

    def _finish(self, turn: TurnModel, prompt: str, notice: tuple[str, str] | None,
                error: BaseException | None = None) -> None:
        items = turn.final_segments()
        parts = [user_html(prompt)]
        if turn.repaired:
            parts.append(render.notice_bundle(turn.repaired, "interrupted")["text/html"])
        parts.append(segments_html(items))
        stats = turn.stats(sum(isinstance(i, ToolView) for i in items))
        if stats.get("cut_off"):
            parts.append(render.notice_bundle(render.CUT_OFF_NOTICE, "interrupted")["text/html"])
        if turn.stopped:
            parts.append(render.notice_bundle(turn.stopped, "interrupted")["text/html"])
        if notice is not None:
            parts.append(render.notice_bundle(*notice)["text/html"])
        if error is not None:
            parts.append(error_details_html(error))
        parts.append(render.footer_bundle(stats)["text/html"])
        with self._lock:
            self._blocks.append("".join(parts))
            self._running = None
            self._mark_seen()
        self._render(force=True)  # before going idle, so a waiter sees the finished transcript
        self.static_copy.update(self.static())  # exports show the conversation, not the panel as first shown
        with self._lock:
            self._start_next()

    def _conversation(self) -> list[Any]:
        return [m for m in self.nb.log if role_of(m) != "system"]

    def _sync_history(self) -> None:
        """Render what the log holds that this widget has not shown: history, or turns run from cells."""
        messages = self._conversation()
        with self._lock:
            if len(messages) > self._seen:
                self._blocks.append(log_html(messages[self._seen:], replayed=self.nb.replayed))
            self._seen = len(messages)
            self._base = totals(messages)

    def _mark_seen(self) -> None:
        messages = self._conversation()
        self._seen = len(messages)
        self._base = totals(messages)

    # Approvals: the Approvals middleware awaits this when the policy says "ask".

    async def _ask_approval(self, call: Any, risk: str) -> str:
        event = anyio.Event()
        token = anyio.lowlevel.current_token()
        answer: list[str] = []

        def resolve(choice: str) -> None:
            answer.append(choice)
            # RuntimeError: the turn ended (Stop) before the click arrived.
            with contextlib.suppress(RuntimeError):
                anyio.from_thread.run_sync(event.set, token=token)

        self.approval_text.value = (
            f"<b>Allow this {escape(risk)} call?</b>"
            + tool_html(ToolView(call_id=call.id, name=call.name, arguments=call.arguments, status="asking"),
                               open_=True))
        with self._lock:
            self._approval = resolve
            row = self._running.tools.get(call.id) if self._running is not None else None
            if row is not None:
                row.status = WAITING
        self._render(force=True)
        self.approval_box.layout.display = "flex"
        self.approval_asked.set()
        try:
            await event.wait()
        finally:
            with self._lock:
                self._approval = None
                if row is not None and row.status == WAITING:
                    row.status = "running"
            self._render(force=True)
            self.approval_box.layout.display = "none"
            self.approval_asked.clear()
        return answer[0] if answer else "deny"

    def _answer(self, choice: str) -> None:
        with self._lock:
            resolve, self._approval = self._approval, None
            self.approval_asked.clear()  # at once, so a second click cannot answer the next question
        if resolve is not None:
            resolve(choice)

    # Rendering: every write goes through the coalescer.

    def _render(self, force: bool = False) -> None:
        with self._lock:
            html = "".join(self._blocks)
            turn = self._running
            live = "" if turn is None else user_html(self._prompt) + live_html(turn.segments)
            status = self._status_text(turn)
        running = f'<div class="brute-chat">{live}</div>' if live else ""
        self._out.push((f'<div class="brute-chat">{html}</div>', running, status, turn is not None), force=force)

    def _status_text(self, turn: TurnModel | None) -> str:
        inp, out, tools, cost = self._base
        if turn is not None:
            t_in, t_out, t_tools, t_cost = totals([m for m in turn.messages if role_of(m) != "user"])
            inp, out, tools = inp + t_in, out + t_out, tools + t_tools
            cost = cost if t_cost is None else (cost or 0.0) + t_cost
        bits = [self._model(), "running" if turn is not None else "idle", f"{inp:,} in / {out:,} out tokens",
                f"{tools} tool call{'s' if tools != 1 else ''}"]
        if cost is not None and not self._replayed():  # as the cell's footer: a replay cost nothing
            bits.append(format_usd(cost))
        if self.queue:
            bits.append(f"{len(self.queue)} queued")
        if self._held:
            bits.append(f"{len(self._held)} waiting for a key")
        return " · ".join(bits)

    def _replayed(self) -> bool:
        try:
            return self.nb.replayed
        except BruteError:  # nothing configured yet
            return False

    def _model(self) -> str:
        """The model the status line names: as configured, else the one the session's provider picked (a replayed
        session's comes from its cassette)."""
        if self.nb.settings.model:
            return str(self.nb.settings.model)
        try:
            handler = self.nb.model_provider()  # the agent's own model call, without building its stack
        except BruteError:  # nothing configured yet; the first turn's error says what to set
            return "default model"
        return str(getattr(handler, "model", None) or "default model")

    def _write(self, value: tuple[str, str, str, bool]) -> None:
        # Two traits: the finished turns change once a turn, so an update while a reply streams sends only the
        # running turn (traitlets syncs a trait only when its value changes), never the whole history again.
        # One message for both: a finished turn moves from ``live`` to ``value``, and two messages would show it
        # twice (or not at all) between them; under load that gap is long enough to see.
        html, live, status, running = value
        with self.transcript.hold_sync():
            self.transcript.value = html
            self.transcript.live = live
        self.status.value = f'<div class="brute-status" style="opacity:.7;font-size:85%">{escape(status)}</div>'
        self.stop_button.disabled = not running


def beside_line(session: str) -> str:
    return (f"The chat (session {session}) is open beside the notebook, in JupyterLab's side area. (Elsewhere, "
            "%brute chat shows it in a cell.)")


def chat(session: str | None = None, *, side: bool = False, **options: Any) -> ChatWidget:
    """A chat panel over the kernel's session ``session`` (default: the current one); options as ``%%brute``.
    ``side=True`` opens it in JupyterLab's side area, replacing the side panel that session had."""
    from brute_nb.notebook.registry import registry

    reg = registry()
    panel = ChatWidget(reg.configure(options, session), side=side)
    if side:
        panel.static_copy = open_beside(panel.nb.name, panel.view_bundle(), reg.beside)
        panel.static_copy.show(panel.static())
    return panel
