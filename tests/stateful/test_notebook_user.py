"""A model of a notebook user (issue 39, section 1): random sequences of what a person does in a notebook, played
through the front door (``%%brute`` and ``%brute`` cells in an IPython shell with brute_nb loaded) against the
loopback fake through the real SDKs, with the invariants of ``/work/shared/architecture.md`` checked after every
step. ``world.py`` says what the world is (and how a restart is played); this file says what the user does and what
must hold.

The everyday run plays a few sequences; CI's fault stage plays many (``--hypothesis-profile=user-model``). A failing
sequence is shrunk by hypothesis and kept below as a plain test replaying it. Every step (and every check) is bounded
by ``watchdog``: one that hangs fails the run within about a minute, naming itself, the steps before it and where
each thread and brute_nb task waited, instead of holding CI until its timeout.
"""

from __future__ import annotations

import _thread
import dataclasses
import functools
import json
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from IPython.core.error import UsageError

from brute_nb.sessions.file import read_session
from brute_nb.testing import (
    Fault,
    Reply,
    call,
    error_mid_stream,
    failed_mid_stream,
    overloaded_mid_stream,
    rate_limit,
    refused,
    server_error,
    truncated,
)
from tests.stateful.watchdog import bounded
from tests.stateful.world import (
    CELLS,
    ENV_KEYS,
    LOCAL_KEY,
    MODELS,
    SUB,
    Cell,
    Plan,
    World,
    error_problems,
    file_ids,
    key_problems,
    notebook_cells,
    saving,
    session_problems,
    wire_problems,
    write_notebook,
)

SESSIONS = ("default", "other")
TOOL_ACTIONS = ("write", "python", "both", "cell-edit", "cell-insert", "cell-run")
"""What a turn's tools do: write a file, run python, both at once, or one of the cell tools."""
ABSENT = "<absent>"
FAULTS: dict[str, Callable[[str], Fault]] = {
    "429": lambda kind: rate_limit(retry_after=0.05),
    "500": lambda kind: server_error(),
    "529": lambda kind: overloaded_mid_stream(after=2),
    "429-mid-stream": lambda kind: error_mid_stream(429, "Rate limit reached for requests.", after=3),
    "failed-mid-stream": lambda kind: failed_mid_stream(500, after=3),
    "400-mid-stream": lambda kind: error_mid_stream(400, "Invalid value for 'top_p': expected at most 1.", after=3),
    "cut": lambda kind: truncated(after=2),
    "400-parameter": lambda kind: parameter_400(kind),
}
"""Provider faults, each as the API of the session's ``kind`` sends it: an error mid-stream is Anthropic's ``event:
error``, a Chat Completions ``{"error"}`` line, a Responses ``error`` event (``failed-mid-stream``: its
``response.failed`` event; the other APIs send their error event)."""


def parameter_400(kind: str) -> Fault:
    """A 400 about a parameter in each API's own words: Anthropic names the field at the head of its message,
    OpenAI's body names it in ``param``."""
    if kind == "anthropic":
        return refused("max_tokens: 999999 > 64000, which is the maximum allowed number of output tokens for "
                       "claude-fake")
    field = "max_output_tokens" if kind == "responses" else "max_tokens"
    return refused(f"{field} is too large: 999999. This model supports at most 16384 completion tokens, whereas "
                   "you provided 999999.", param=field)
FUTURE_BLOCKS: dict[str, Callable[[int, str], tuple[dict[str, Any], ...]]] = {
    "anthropic": lambda n, text: ({"type": "hologram_2031", "id": f"holo_{n}", "frames": [{"t": 0, "data": "AAEC"}]},
                                  {"type": "text", "text": text}),
    "responses": lambda n, text: ({"type": "hologram_2031", "id": f"holo_{n}", "status": "completed"},
                                  {"type": "message", "id": f"msg_holo_{n}", "status": "completed",
                                   "role": "assistant", "content": [{"type": "output_text", "text": text,
                                                                     "annotations": []}]}),
    "chat": lambda n, text: ({"type": "hologram_2031", "id": f"holo_{n}"}, {"type": "text", "text": text}),
}
"""A reply holding a block (an output item, a content part) of a kind no API has yet, then the text, per API the
session speaks."""
BRUTE_FRAME = re.compile(r'File \\"[^"]*brute_nb/')
"""A traceback frame in brute_nb's own code, as it shows in a request's JSON."""
RETRIED = {"429", "500", "529", "429-mid-stream", "failed-mid-stream", "cut"}
NOT_RETRIED = {"400-mid-stream"}
"""Faults mid-stream the turn must not ask again: the same request would fail the same way."""
OPTIONS: dict[str, tuple[set[str], str | None, Any]] = {
    "temperature=0.5": ({"chat", "responses"}, "temperature", 0.5),
    "max_tokens=2000": ({"anthropic", "chat"}, "max_tokens", 2000),
    "none": (set(MODELS), None, None),
    "'betas=[\"compact-2026-01-12\"]'": ({"anthropic"}, None, None),
    "'extra_headers={\"X-Trace\":\"user-model\"}'": (set(MODELS), None, None),
}
"""``-o`` values: the APIs whose SDK takes each, and what the request then carries (a beta flag and an extra
header are headers: the beta API's call, then every later one of the provider, must go on working)."""
"""Faults the turn gets past: the SDK retries a 429 and a 500 before it hands the reply back, the turn (``RetryReply``)
the same faults sent mid-stream, on every API, and a cut connection after; both as often as the SDK's default
``max_retries``. An invalid request mid-stream is not asked again."""


def step(**strategies: Any) -> Callable[[Callable[..., None]], Any]:
    """``rule(**strategies)``, its run bounded by the watchdog (a step that hangs fails, naming itself and the steps
    before it) and added to the sequence a later hang reports."""

    def wrap(fn: Callable[..., None]) -> Any:
        @functools.wraps(fn)
        def bounded_step(self: NotebookUser, **data: Any) -> None:
            name = f"{fn.__name__}({', '.join(f'{k}={v!r}' for k, v in data.items())})"
            with bounded(name, self.steps):
                fn(self, **data)
            self.steps.append(name)

        return rule(**strategies)(bounded_step)

    return wrap


def check(fn: Callable[[NotebookUser], None]) -> Any:
    """``invariant()``, bounded like a step."""

    @functools.wraps(fn)
    def bounded_check(self: NotebookUser) -> None:
        with bounded(f"the check {fn.__name__}", self.steps):
            fn(self)

    return invariant()(bounded_check)



@dataclass
class Turn:
    """What one agent turn changed in the kernel and the folder, for ``%brute undo``."""

    files: dict[str, str] = field(default_factory=dict)
    """File name -> its content before the turn (ABSENT: there was none)."""
    files_after: dict[str, str] = field(default_factory=dict)
    variables: dict[str, Any] = field(default_factory=dict)
    variables_after: dict[str, Any] = field(default_factory=dict)
    cells: list[tuple[str, str]] | None = None
    """The notebook's cells before the turn, when it edited or inserted one (``%brute undo`` puts them back)."""
    undone: bool = False

    @property
    def work(self) -> bool:
        return bool(self.files or self.variables or self.cells is not None) and not self.undone


@dataclass
class Session:
    """What the user set for one session (settings stick to it) and its turns."""

    kind: str = "anthropic"
    """The API its turns speak (``MODELS``'s keys): with no model set, the environment's first key picks it."""
    python: bool = False
    """The python tool is on and allowed (``tools=+python``, ``approve=python=allow``)."""
    write: bool = True
    write_asks: bool = False
    """``approve=write=ask``: a write runs when the person answers yes (``write`` is then not read)."""
    cells: bool = False
    """The cell tools are allowed (``approve=notebook=allow``; they ask by default, and no one answers here)."""
    root: str = ""
    """The workspace root, as a folder under the notebook's ("": the notebook's own, ``SUB``: a subfolder)."""
    priced: bool = True
    """Its model is one the price table knows (the environment's default); the fake's own names are not."""
    confirm: float | None = None
    """``confirm_above``: a map whose estimate may cost more is refused (no one here can answer its question)."""
    final_answer: bool = True
    limited: bool = False
    """``--max-iterations 1``: a turn stops after its first model call (then answers, if ``final_answer``)."""
    spent: bool = False
    """``--budget tokens=1``: the same, as the budget is spent by the first call (a cell's option sticks)."""
    cost_budget: bool = False
    """A cost ceiling: on a model the price table does not know it cannot be kept, so a turn is refused before its
    first request, saying so."""
    turns: list[Turn] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        """A turn is refused before anything is sent (a cost ceiling on a model without a price)."""
        return self.cost_budget and not self.priced


class NotebookUser(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.world = World()
        self.current = "default"
        self.sessions = {"default": Session()}
        """The sessions the kernel has made; a new one starts from the settings of the session in use."""
        self.namespace: dict[str, Any] = {}
        """Names the user and the agent set, with the value each must have now (the kernel's state)."""
        self.files: dict[str, str] = {}
        """Files in the root, with the content each must have now (ABSENT: none)."""
        self.made: dict[str, str] = {}
        """File name -> what the user last wrote there, until the agent writes it: then the agent's snapshot holds
        it. Each must be somewhere under the folder, whatever ``%brute undo`` did (it keeps a version changed
        since the agent's edit beside the file it restores)."""
        self.cells = list(CELLS)
        """The saved notebook's cells, ``(id, source)``: each source is ``c_N = VALUE``."""
        self.made_cells: dict[str, str] = {}
        """Cell id -> the source the user last gave it, until the agent edits that cell: each must be in the
        notebook or in the version ``%brute undo`` keeps beside it."""
        self.ids: set[str] = set()
        self.count = 0
        self.user_failed = False
        """Whether a cell of the user's code failed (or a turn's tool call): what ``%brute fix`` sends. brute_nb's own
        errors (a provider fault, an interrupted turn) are passed over: no model can fix them."""
        self.defined: set[str] = set()
        """What the user defined for later cells: ``Answer`` (a schema), ``df`` (a frame to map over)."""
        self.hostile_rows = False
        """Whether ``df`` is the hostile one (``user_defines``)."""
        self.spans: Any = None
        """The exporter of the tracer provider the user set (tracing on), or None (off)."""
        self.steps: list[str] = []
        """The steps played so far, for the message of a step that hangs (hypothesis prints no sequence then)."""

    def teardown(self) -> None:
        self.world.close()

    # --- what the user does ---------------------------------------------------------------------------------------

    @initialize()
    def start(self) -> None:
        self.ids = file_ids(self.world.sessions)

    @step(session=st.sampled_from((None, *SESSIONS)), model=st.sampled_from((None, *MODELS)),
          action=st.sampled_from(("text", "write", "python", "both")), slot=st.integers(0, 2), new=st.booleans())
    def turn(self, session: str | None, model: str | None, action: str, slot: int, new: bool) -> None:
        options = [f"-s {session}" if session else "", f"-m {MODELS[model]}" if model else "", "--new" if new else ""]
        self.agent_turn(" ".join(o for o in options if o), action, slot, session=session, kind=model)

    @step(option=st.sampled_from(sorted(OPTIONS)))
    def turn_with_option(self, option: str) -> None:
        """``-o KEY=VALUE`` for the session's provider (refused, sending nothing, where its SDK takes no such
        parameter), or ``-o none``; a later ``-m`` of another provider must go on working (options belong to the
        provider they were given with)."""
        kinds, key, value = OPTIONS[option]
        if self.sessions[self.current].kind not in kinds:
            sent = self.sent()
            cell = self.world.run(f"%%brute -o {option}\nprompt")
            assert isinstance(cell.error, UsageError) and error_problems(cell) == [], cell.error
            assert self.sent() == sent
            return
        self.agent_turn(f"-o {option}", "text", 0)
        if key is not None:
            body = (self.world.public.requests + self.world.local.requests)[-1]["json"]
            assert body.get(key) == value, f"-o {option} is not in the request: {body.get(key)!r}"

    @step(action=st.sampled_from(TOOL_ACTIONS), slot=st.integers(0, 2),
          fault=st.sampled_from(sorted(FAULTS)), after_tools=st.booleans())
    def turn_with_fault(self, action: str, slot: int, fault: str, after_tools: bool) -> None:
        """A provider fault on the turn's first request, or on the one after its tools ran."""
        self.agent_turn("", action, slot, fault=fault, after_tools=after_tools)

    @step(action=st.sampled_from(TOOL_ACTIONS), slot=st.integers(0, 2), stubborn=st.booleans())
    def turn_at_a_limit(self, action: str, slot: int, stubborn: bool) -> None:
        """``--max-iterations 1``: the tools of the first reply run, then the turn ends with the model's answer."""
        self.sessions[self.current].limited = True
        self.agent_turn("--max-iterations 1", action, slot, stubborn=stubborn)

    @precondition(lambda self: not self.sessions[self.current].refused)  # nothing would stream
    @step()
    def interrupt_mid_stream(self) -> None:
        """Stop (a kernel interrupt) while the reply streams: the turn ends interrupted, the text so far is kept."""
        count = self.next_count()
        text = f"reply {count} " + "streaming slowly " * 60
        self.world.brain.start(Plan(text))
        before = len(self.world.public.requests) + len(self.world.local.requests)
        self.world.public.responder = self.world.local.responder = lambda body: Reply(text=text, delay=0.03)
        stopper = threading.Thread(target=self._interrupt_once_sent, args=(before,), daemon=True)
        stopper.start()
        try:
            cell = self.world.run(f"%%brute\nprompt {count}")
        finally:
            stopper.join()
            self.world.public.responder = self.world.local.responder = self.world.brain
        assert isinstance(cell.error, KeyboardInterrupt), (cell.error, cell.text[-1500:])
        assert error_problems(cell, (KeyboardInterrupt,)) == []
        assert "interrupted" in cell.text
        self.sessions[self.current].turns.append(Turn())

    @precondition(lambda self: not self.sessions[self.current].refused)  # no tool would run
    @step(slot=st.integers(0, 2))
    def interrupt_mid_tool(self, slot: int) -> None:
        """Stop while the python tool's code runs (a sleep, then an assignment it never reaches): the turn ends
        interrupted, the call has its result in the file, the variable is as it was."""
        if not self.sessions[self.current].python:
            return
        count = self.next_count()
        code = f"__import__('time').sleep(3)\na_{slot} = [{count}]"  # binds no name before the sleep
        self.world.brain.start(Plan(f"reply {count}", (call("python", {"code": code}),)))
        stopper = threading.Thread(target=self._interrupt_once_sent, args=(self.sent(), 1.0), daemon=True)
        stopper.start()
        try:
            cell = self.world.run(f"%%brute\nprompt {count}")
        finally:
            stopper.join()
        assert isinstance(cell.error, KeyboardInterrupt), (cell.error, cell.text[-1500:])
        assert error_problems(cell, (KeyboardInterrupt,)) == []
        self.sessions[self.current].turns.append(Turn())
        time.sleep(2.5)  # the code's thread wakes from its sleep into the interrupt, before the checks read a_N

    @step(command=st.sampled_from(("log", "usage", "sessions", "export", "why")), slot=st.integers(0, 2))
    def look(self, command: str, slot: int) -> None:
        """What the user reads of the sessions: the log holds the session file's messages; nothing fails but in
        one short line."""
        cell = self.world.run(f"%brute {command}" + (f" a_{slot}" if command == "why" else ""))
        assert error_problems(cell) == []
        path = self.world.session_file(self.current)
        held = len(read_session(path)) if path.exists() else 0
        if command == "log":
            assert cell.error is None, cell.text[-1500:]
            frame = self.world.shell.user_ns["_"]
            assert len(frame[frame.role != "system"]) == held, cell.text[-1500:]  # the system prompt is not saved
        elif command == "export" and held:
            assert cell.error is None, cell.text[-1500:]

    def _interrupt_once_sent(self, before: int, after: float = 0.3) -> None:
        deadline = time.monotonic() + 30
        while len(self.world.public.requests) + len(self.world.local.requests) <= before:
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        time.sleep(after)  # a few events streamed, or the tool began
        _thread.interrupt_main()

    @step(name=st.sampled_from(SESSIONS))
    def use_session(self, name: str) -> None:
        self.ok(f"%brute use {name}")
        self.switch(name)

    @step(python=st.booleans(), write=st.booleans(), cells=st.booleans(), asks=st.booleans())
    def config_tools(self, python: bool, write: bool, cells: bool = False, asks: bool = False) -> None:
        """Which tools run: python (off unless named), write allowed, denied or asked (``asks``), the cell tools
        allowed or asked (their default)."""
        tools = "+python" if python else "all"
        writes = "ask" if asks else "allow" if write else "deny"
        approve = f"python={'allow' if python else 'ask'},write={writes},notebook={'allow' if cells else 'ask'}"
        self.ok(f"%brute config tools={tools} approve={approve}")
        s = self.sessions[self.current]
        s.python, s.write, s.write_asks, s.cells = python, write, asks, cells

    @step(answer=st.sampled_from((None, "y", "n")))
    def user_answers(self, answer: str | None) -> None:
        """From now on a person answers what a tool asks, yes or no (None: no one can, as under nbclient)."""
        self.world.answering(answer)

    @step(model=st.sampled_from(sorted(MODELS)))
    def config_model(self, model: str) -> None:
        self.ok(f"%brute config model={MODELS[model]}")
        self.sessions[self.current].kind = model
        self.sessions[self.current].priced = False

    @step(sub=st.booleans())
    def config_root(self, sub: bool) -> None:
        """The workspace root in a subfolder (as the demos with tools set it) or the notebook's own folder: the
        file tools work under it, the cell tools on the notebook outside it."""
        self.ok(f"%brute config root={self.world.folder / SUB if sub else self.world.folder}")
        self.sessions[self.current].root = SUB if sub else ""

    @step(where=st.sampled_from(("config model=", "config base_url=", "alias fast ", "keys set ")))
    def user_pastes_a_key_as_a_name(self, where: str) -> None:
        """A key pasted where a model, a URL, an alias or a provider's name goes (it is in no environment yet, so no
        redaction knows it): the cell fails in one line without repeating it, and nothing changes or keeps it."""
        pasted = "sk-ant-api03-" + f"{self.next_count():04d}" + "PastedNotAModelPastedNotAModel00"
        cell = self.world.run(f"%brute {where}{pasted}")
        assert cell.error is not None and error_problems(cell) == [], cell.text[-1500:]
        assert pasted not in cell.text + str(cell.error), f"%brute {where}... repeated the key"
        kept = [p for p in self.world.folder.rglob("*") if p.is_file() and pasted.encode() in p.read_bytes()]
        assert kept == [], f"the pasted key was kept in {kept}"

    @step(value=st.sampled_from(("none", "0.000001", "1000")))
    def config_confirm_above(self, value: str) -> None:
        self.ok(f"%brute config confirm_above={value}")
        self.sessions[self.current].confirm = None if value == "none" else float(value)

    @step(op=st.sampled_from(("edit", "insert", "run")), slot=st.integers(0, 2))
    def cell_turn(self, op: str, slot: int) -> None:
        """The agent edits, inserts or runs a cell of the user's notebook (the saved file: no front end here),
        whatever the workspace root."""
        self.agent_turn("", f"cell-{op}", slot)

    @step(op=st.sampled_from(("edit", "insert", "run")), slot=st.integers(0, 2))
    def cell_turn_during_a_save(self, op: str, slot: int) -> None:
        """The user saves the notebook (Ctrl+S) as the agent's cell turn starts: Jupyter writes the file in place, so
        for a moment it is cut short beside its ``.~`` copy. The turn reads the whole notebook, as if no save were
        under way (``cell_tools.saved``)."""
        with saving(self.world.notebook, self.cells):
            self.agent_turn("", f"cell-{op}", slot)

    @step(over=st.booleans())
    def estimate(self, over: bool) -> None:
        """``--estimate`` sends nothing: with ``--over`` it prices the map, without it is refused in one line."""
        sent = self.sent()
        if over and "df" in self.defined:
            cell = self.ok("%%brute --over df --estimate\nsay {x}")
            assert "nothing was sent" in cell.text, cell.text[-1500:]
        else:
            cell = self.world.run("%%brute --estimate\nprompt")
            assert isinstance(cell.error, UsageError) and error_problems(cell) == [], cell.error
        assert self.sent() == sent, "--estimate sent a request"

    @step(on=st.booleans())
    def config_final_answer(self, on: bool) -> None:
        self.ok(f"%brute config final_answer={str(on).lower()}")
        self.sessions[self.current].final_answer = on

    @step(budget=st.sampled_from(("tokens=1000000", "tools=20,time=600", "cost=100", "none")))
    def config_budget(self, budget: str) -> None:
        """A ceiling no turn of the model reaches (the budget's middleware joins the stack and must let turns be), or
        none: either takes the place of a spent one."""
        self.ok(f"%brute config budget={budget}")
        s = self.sessions[self.current]
        s.spent, s.cost_budget = False, budget.startswith("cost")

    @step(action=st.sampled_from(("text", *TOOL_ACTIONS)), slot=st.integers(0, 2))
    def turn_over_budget(self, action: str, slot: int) -> None:
        """``--budget tokens=1``: the first call spends it, its tools run, then the turn ends with the answer."""
        s = self.sessions[self.current]
        s.spent, s.cost_budget = True, False
        self.agent_turn("--budget tokens=1", action, slot)

    @step()
    def config_unlimited(self) -> None:
        self.ok("%brute config max_iterations=50")
        self.sessions[self.current].limited = False

    @step(slot=st.integers(0, 2))
    def user_sets_a_variable(self, slot: int) -> None:
        count = self.next_count()
        self.ok(f"u_{slot} = 'user {count}'")
        self.namespace[f"u_{slot}"] = f"user {count}"

    @step(slot=st.integers(0, 2))
    def user_rebinds_the_agents_variable(self, slot: int) -> None:
        count = self.next_count()
        self.ok(f"a_{slot} = 'user {count}'")
        self.namespace[f"a_{slot}"] = f"user {count}"

    @step(slot=st.integers(0, 2))
    def user_appends_to_the_agents_list(self, slot: int) -> None:
        """The user adds a row to what the agent made: a change in place, which ``%brute undo`` must leave."""
        if not isinstance(self.namespace.get(f"a_{slot}"), list):
            return
        count = self.next_count()
        self.ok(f"a_{slot}.append('user {count}')")
        self.namespace[f"a_{slot}"] = [*self.namespace[f"a_{slot}"], f"user {count}"]

    @step(slot=st.integers(0, 2))
    def user_writes_a_file(self, slot: int) -> None:
        count = self.next_count()
        content = f"user {count}"
        name = self.here(f"f_{slot}.txt")
        (self.world.folder / name).write_text(content)
        self.files[name] = content
        self.made[name] = content

    @step(slot=st.integers(0, 2))
    def user_edits_a_cell(self, slot: int) -> None:
        """The user changes a cell and the notebook is saved (as Jupyter saves it): the agent's undo of an earlier
        edit must not lose it."""
        count = self.next_count()
        index = slot % len(self.cells)
        cell_id, source = self.cells[index]
        self.cells[index] = (cell_id, f"{source.split(' = ')[0]} = {count}")
        write_notebook(self.world.notebook, self.cells)
        self.made_cells[cell_id] = self.cells[index][1]

    @step()
    def user_cell_fails(self) -> None:
        cell = self.world.run("1 / 0")
        assert isinstance(cell.error, ZeroDivisionError)
        self.user_failed = True

    @step()
    def fix(self) -> None:
        """``%brute fix``: the last error goes to the agent, which answers."""
        if not self.user_failed:
            cell = self.ok("%brute fix")
            assert "No error yet" in cell.text
            return
        self.agent_turn("", "text", 0, source="%brute fix")

    @step()
    def undo(self) -> None:
        self.ok("%brute undo")
        turn = next((t for t in reversed(self.sessions[self.current].turns) if t.work), None)
        if turn is None:
            return
        turn.undone = True
        for name, before in turn.files.items():
            self.files[name] = before  # a version changed since is kept beside it (``made`` checks it is)
        for name, before in turn.variables.items():
            if self.namespace.get(name, ABSENT) == turn.variables_after[name]:
                self.namespace[name] = before
        if turn.cells is not None:
            self.cells = list(turn.cells)

    @precondition(lambda self: self.sessions[self.current].kind in FUTURE_BLOCKS
                  and not self.sessions[self.current].refused)
    @step()
    def turn_with_a_provider_block(self) -> None:
        """The reply carries a block of a kind no API has yet: the turn the API billed ends well, one quiet row names
        the kind, and the block goes back as it came on the session's next requests to its API (the invariants check
        that the API takes them); a Chat server's parts stay in the log (the next Chat server may be another)."""
        count = self.next_count()
        text = f"reply {count}"
        blocks = FUTURE_BLOCKS[self.sessions[self.current].kind](count, text)
        self.world.brain.start(Plan(text))
        for fake in (self.world.public, self.world.local):
            fake.add(Reply(blocks=blocks))
        try:
            cell = self.world.run(f"%%brute\nprompt {count}")
        finally:
            for fake in (self.world.public, self.world.local):
                fake.script.clear()
        assert error_problems(cell) == [] and cell.error is None, f"turn {count} failed: {cell.error!r}"
        assert "provider block: hologram_2031" in cell.text, cell.text[-2000:]
        assert "Warning" not in cell.text, cell.text[-2000:]
        saved = [m.content for m in read_session(self.world.session_file(self.current)) if m.role == "assistant"]
        assert text in saved, f"turn {count}'s reply is not saved"

    @step(how=st.sampled_from(("config", "configure", "config-off", "configure-off")))
    def config_local_server(self, how: str) -> None:
        """``base_url`` + ``api_key``: the session's turns go to a local server with the key given for it; ``none``
        goes back to the provider's own host, with its key from the environment (the local server's stays behind).
        From ``%brute config`` or from Python (``configure``)."""
        on = not how.endswith("-off")
        url = self.world.local.openai_base_url if on else "none"
        if how.startswith("configure"):
            key = f", api_key={LOCAL_KEY!r}" if on else ""
            self.ok(f"import brute_nb\nbrute_nb.configure(model={MODELS['chat']!r}, base_url={url!r}{key})")
        else:
            self.ok(f"%brute config model={MODELS['chat']} base_url={url}" + (f" api_key={LOCAL_KEY}" if on else ""))
        self.sessions[self.current].kind = "chat"
        self.sessions[self.current].priced = False

    @step(what=st.sampled_from(("Answer", "df", "df-hostile")))
    def user_defines(self, what: str) -> None:
        """A schema, or a frame to map over; ``df-hostile`` holds what a frame loaded from someone's file may (the
        hostile table's frames section): braces that read like a template, markup, the user's own key."""
        if what == "Answer":
            self.ok("from pydantic import BaseModel\n\nclass Answer(BaseModel):\n    value: int")
        elif what == "df":
            self.ok("import pandas as pd\ndf = pd.DataFrame({'x': [1, 2, 3]})")
        else:
            self.ok("import os\nimport pandas as pd\ndf = pd.DataFrame({'x': ['{x} {row}', '<b>markup</b>', "
                    "os.environ['ANTHROPIC_API_KEY']]})")
        self.hostile_rows = what == "df-hostile" or (self.hostile_rows and what != "df")
        self.defined.add(what.split("-")[0])

    @precondition(lambda self: "Answer" in self.defined)
    @step()
    def turn_with_schema(self) -> None:
        """``--schema``: the reply is structured output, validated against the user's model."""
        count = self.count + 1
        self.agent_turn("--schema Answer", "text", 0, text=f'{{"value": {count}}}')
        if not self.sessions[self.current].refused:
            assert self.world.run("import brute_nb\nbrute_nb.current().last.parsed").error is None

    @step()
    def turn_with_attachment(self) -> None:
        count = self.next_count()
        (self.world.folder / "note.txt").write_text(f"note {count}")
        self.agent_turn("--attach note.txt", "text", 0)

    @precondition(lambda self: "df" in self.defined)
    @step(fault=st.sampled_from((None, "429", "529", "429-mid-stream", "failed-mid-stream", "cut")))
    def map_over_rows(self, fault: str | None = None) -> None:
        """``%%brute --over df``: one answer a row, from the session's model, each row's request its own; a fault
        on one row's request is asked again, as the SDK would (mid-stream too, on every API)."""
        count = self.next_count()
        self.world.brain.start(Plan(f"row answer {count}"))
        s, sent = self.sessions[self.current], self.sent()
        if fault is not None:
            for fake in (self.world.public, self.world.local):
                fake.add(FAULTS[fault](s.kind))
        try:
            cell = self.world.run(f"%%brute --over df --quiet\nsay {{x}} ({count})")
        finally:
            for fake in (self.world.public, self.world.local):
                fake.script.clear()
        # 3 rows of up to max_tokens (16,000) each on the default model cost at most about $0.48; the fake's own
        # model names have no price, so their estimate has no ceiling and counts as above any confirm_above
        if s.confirm is not None and (not s.priced or s.confirm < 0.48):
            assert cell.error is not None and error_problems(cell) == [], cell.text[-1500:]
            assert self.sent() == sent, "a map refused by confirm_above sent a request"
            return
        assert cell.error is None, f"the map failed: {cell.error!r}\n{cell.text[-2000:]}"
        result = self.world.shell.user_ns["_"]
        answered = [reply == f"row answer {count}" for reply in result["reply"]]
        assert len(result) == 3 and any(answered), result
        assert all(answered), result.to_dict()
        if self.hostile_rows:  # a row quoting the key: no request body, no frame, no row session holds it
            bodies = json.dumps([r["json"] for fake in (self.world.public, self.world.local) for r in fake.requests])
            assert ENV_KEYS["anthropic"] not in bodies + result.to_string(), "a row's key left the kernel"
            assert "{x} {row}" in bodies, "a row's braces were read as a template"

    @step(on=st.booleans())
    def tracing(self, on: bool) -> None:
        """The user sets a tracer provider (an SDK's, exporting in memory) or takes it away."""
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        if on and self.spans is None:
            self.spans = InMemorySpanExporter()
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(self.spans))
            self.world.tracer(lambda: provider)
        elif not on and self.spans is not None:
            self.world.tracer(None)
            self.spans = None

    @step()
    def restart(self) -> None:
        """A kernel restart: the namespace, the settings and undo history go; the folder stays."""
        self.world.restart()
        self.current = "default"
        self.sessions = {"default": Session()}
        self.namespace = {}
        self.user_failed = False
        self.defined = set()

    @step()
    def remove_the_sessions_folder(self) -> None:
        """The user deletes the sessions' folder: what was in it is theirs to delete; the next turn starts afresh."""
        shutil.rmtree(self.world.sessions, ignore_errors=True)
        self.ids = set()

    # --- the invariants -------------------------------------------------------------------------------------------

    @check
    def every_request_is_one_the_api_accepts_with_the_key_of_its_host(self) -> None:
        found = []
        for host, request in self.world.requests():
            found += key_problems(host, request) + wire_problems(request, self.world.sent_kinds(host))
            if BRUTE_FRAME.search(json.dumps(request["json"])):
                found.append(f"{request['path']} carried a frame of brute_nb's own code (a fix of brute_nb's error)")
        assert found == []

    @check
    def session_files_are_valid_for_every_provider_and_keep_every_message(self) -> None:
        found = []
        for name in SESSIONS:
            found += session_problems(self.world.session_file(name), self.world.sent_kinds())
        assert found == []
        now = file_ids(self.world.sessions)
        assert self.ids <= now, f"{len(self.ids - now)} message(s) lost from the session files"
        self.ids = now

    @check
    def the_kernel_holds_what_the_user_and_the_agent_left(self) -> None:
        if self.world.shell is None:
            return
        ns = self.world.shell.user_ns
        assert {k: ns.get(k, ABSENT) for k in self.namespace} == self.namespace
        files = {name: (self.world.folder / name) for name in self.files}
        assert {k: p.read_text() if p.exists() else ABSENT for k, p in files.items()} == self.files
        texts = {p.read_text(errors="replace") for p in self.world.folder.rglob("f_*") if p.is_file()}
        assert set(self.made.values()) <= texts, f"the user's {sorted(set(self.made.values()) - texts)} lost"
        assert notebook_cells(self.world.notebook) == self.cells
        saved = "".join(p.read_text(errors="replace") for p in self.world.folder.glob(f"{self.world.notebook.name}*"))
        lost = [source for source in self.made_cells.values() if json.dumps(source) not in saved]
        assert lost == [], f"the user's cells {lost} lost"

    # --- helpers --------------------------------------------------------------------------------------------------

    def sent(self) -> int:
        """How many requests the fakes have received."""
        return len(self.world.public.requests) + len(self.world.local.requests)

    def next_count(self) -> int:
        self.count += 1
        return self.count

    def switch(self, name: str) -> None:
        if name not in self.sessions:
            self.sessions[name] = dataclasses.replace(self.sessions[self.current], turns=[])
        self.current = name

    def ok(self, source: str) -> Cell:
        cell = self.world.run(source)
        assert cell.error is None, f"{source!r} failed: {cell.error!r}\n{cell.text[-2000:]}"
        return cell

    def agent_turn(self, options: str, action: str, slot: int, *, session: str | None = None,
                   fault: str | None = None, after_tools: bool = False, stubborn: bool = False,
                   source: str | None = None, text: str | None = None, kind: str | None = None) -> None:
        count = self.next_count()
        if session:
            self.switch(session)
        s = self.sessions[self.current]
        if kind:
            s.kind, s.priced = kind, False
        calls = []
        if action in ("write", "both"):
            calls.append(call("write", {"file_path": f"f_{slot}.txt", "content": f"agent {count}"}))
        if action in ("python", "both"):
            calls.append(call("python", {"code": f"a_{slot} = [{count}]"}))
        if action.startswith("cell-"):
            calls.append(self.cell_call(action, slot, count))
        text = text or f"reply {count}"
        traced = len(self.spans.get_finished_spans()) if self.spans is not None else 0
        before, sent = self.before(slot), self.sent()
        faulted = fault is not None and not (after_tools and not calls)
        self.world.brain.start(Plan(text, tuple(calls), stubborn=stubborn), called=faulted and after_tools)
        if faulted:
            assert fault is not None
            script: list[Reply | Fault] = [Reply(calls=tuple(calls))] if after_tools else []
            for fake in (self.world.public, self.world.local):
                fake.add(*script, FAULTS[fault](s.kind))
        try:
            cell = self.world.run(source or f"%%brute {options}\nprompt {count}")
        finally:
            for fake in (self.world.public, self.world.local):
                fake.script.clear()
        assert error_problems(cell) == []
        if s.refused:  # a cost ceiling on a model without a price: refused before its first request
            assert cell.error is not None and "no price" in str(cell.error), cell.text[-1500:]
            assert self.sent() == sent, "a cost budget on a model without a price let a request through"
            return
        retried = fault in RETRIED
        tools_ran = not faulted or after_tools or retried
        if tools_ran and calls:
            self.apply(s, count, slot, action, before)
            # a %%brute cell whose tool calls failed is an error %brute fix sends, as a cell's exception is
            refused = (action in ("write", "both") and not self.may_write(s),
                       action in ("python", "both") and not s.python,
                       action.startswith("cell-") and not self.may_edit_cells(s))
            if any(refused):
                self.user_failed = True
        if fault == "400-parameter":
            marked = [m for m in read_session(self.world.session_file(self.current)) if m.meta.get("refused")]
            assert marked == [], "a 400 about a parameter marked the turn's input as refused"
        if fault in NOT_RETRIED and faulted:
            assert cell.error is not None and "not asked again" in str(cell.error), cell.text[-1500:]
            assert self.sent() == sent + (2 if after_tools else 1), "an invalid request mid-stream was asked again"
        if faulted and not retried:
            return  # the turn may fail, in one short line (checked above); the invariants say the rest
        assert cell.error is None, f"turn {count} failed: {cell.error!r}\n{cell.text[-2000:]}"
        stopped = s.limited or s.spent
        answered = not stopped or s.final_answer or not calls
        if answered:
            saved = [m.content for m in read_session(self.world.session_file(self.current)) if m.role == "assistant"]
            assert text in saved, f"turn {count}'s reply is not saved"
        if self.spans is not None:
            spans = self.spans.get_finished_spans()[traced:]
            turns = [s for s in spans if s.name.startswith("invoke_agent")]
            assert len(turns) == 1, f"turn {count} made {len(turns)} turn spans"
            # content capture is off: no prompt, reply, argument or tool output is exported (a failed tool's status
            # names its error's class only)
            words = (f"prompt {count}", f"agent {count}", f"a_{slot}", f"f_{slot}", f" = {count}", text)
            assert [(s.name, w) for s in spans for w in words if w in span_text(s)] == []

    def may_write(self, s: Session) -> bool:
        return self.world.answer == "y" if s.write_asks else s.write

    def may_edit_cells(self, s: Session) -> bool:
        return s.cells or self.world.answer == "y"

    def here(self, name: str) -> str:
        """``name`` in the workspace root of the session in use, as a path under the notebook's folder."""
        root = self.sessions[self.current].root
        return f"{root}/{name}" if root else name

    def before(self, slot: int) -> tuple[str, Any, Any]:
        """The file and the variables of ``slot`` (the agent's, and the one its cell sets) as they are before a
        turn."""
        path = self.world.folder / self.here(f"f_{slot}.txt")
        ns = self.world.shell.user_ns
        cell_name = self.cells[slot % len(self.cells)][1].split(" = ")[0]
        return path.read_text() if path.exists() else ABSENT, ns.get(f"a_{slot}", ABSENT), ns.get(cell_name, ABSENT)

    def cell_call(self, action: str, slot: int, count: int) -> Any:
        """The cell tool's call: an edit or a run of a cell named by its id, an insert after one named by its
        index (as the notebook tool lists it)."""
        index = slot % len(self.cells)
        cell_id, source = self.cells[index]
        if action == "cell-edit":
            return call("edit_cell", {"cell": cell_id, "source": f"{source.split(' = ')[0]} = {count}"})
        if action == "cell-insert":
            return call("insert_cell", {"source": f"c_9 = {count}", "after": str(index)})
        return call("run_cell", {"cell": cell_id})

    def apply_cell(self, turn: Turn, action: str, slot: int, count: int, before: Any) -> None:
        index = slot % len(self.cells)
        cell_id, source = self.cells[index]
        name, value = source.split(" = ")
        turn.cells = list(self.cells)  # a run saves its outputs in the file: undo puts the file back too
        if action == "cell-run":
            turn.variables[name] = before
            self.namespace[name] = turn.variables_after[name] = int(value)
        elif action == "cell-edit":
            self.cells[index] = (cell_id, f"{name} = {count}")
            self.made_cells.pop(cell_id, None)
        else:  # the new cell's id is the one the tool gave it, read back from the file
            self.cells.insert(index + 1, (notebook_cells(self.world.notebook)[index + 1][0], f"c_9 = {count}"))

    def apply(self, s: Session, count: int, slot: int, action: str, before: tuple[str, Any, Any]) -> None:
        turn = Turn()
        if action.startswith("cell-") and self.may_edit_cells(s):
            self.apply_cell(turn, action, slot, count, before[2])
        if action in ("write", "both") and self.may_write(s):
            name = self.here(f"f_{slot}.txt")
            turn.files[name] = before[0]
            self.made.pop(name, None)
            self.files[name] = turn.files_after[name] = f"agent {count}"
        if action in ("python", "both") and s.python:
            name = f"a_{slot}"
            turn.variables[name] = before[1]
            self.namespace[name] = turn.variables_after[name] = [count]
        s.turns.append(turn)


def span_text(span: Any) -> str:
    """Everything a span exports as text: its attributes, its status, its events."""
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    return repr((dict(span.attributes or {}), span.status.description, events))


def strength() -> settings:
    """A few short sequences in the everyday run (about a minute), CI's profile (``user-model``) as it is, and
    ``user-model-explore`` for new random sequences; the first two play the same sequences every run.

    The everyday run reports a failing sequence as it was played (12 steps at most), unshrunk: shrinking replays
    sequences for up to five minutes, past the suite's 300 s timeout. That is how the model was taken off main: a
    failing everyday run went on shrinking, pytest-timeout fired inside a replayed turn, ``run_cell`` swallowed its
    exception and the run went on (replayed 6 Dec: the everyday run of cd6914f fails, then shrinks for 341 s)."""
    if settings.default in (settings.get_profile("user-model"), settings.get_profile("user-model-explore")):
        return settings.default
    return everyday()


def everyday() -> settings:
    return settings(settings.default, max_examples=8, stateful_step_count=12, derandomize=True,
                    phases=[p for p in Phase if p is not Phase.shrink])


def test_a_notebook_user() -> None:
    run_state_machine_as_test(NotebookUser, settings=strength())


def test_the_everyday_run_fails_without_shrinking() -> None:
    assert Phase.shrink not in everyday().phases


# --- sequences the model found, shrunk, kept -------------------------------------------------------------------------


def replay(*steps: Callable[[NotebookUser], Any]) -> None:
    """Play ``steps`` as the model would, every invariant checked after each."""
    machine = NotebookUser()
    try:
        machine.start()
        check(machine)
        for step in steps:
            step(machine)
            check(machine)
    finally:
        machine.teardown()


def check(machine: NotebookUser) -> None:
    machine.every_request_is_one_the_api_accepts_with_the_key_of_its_host()
    machine.session_files_are_valid_for_every_provider_and_keep_every_message()
    machine.the_kernel_holds_what_the_user_and_the_agent_left()


def test_a_key_given_for_a_local_server_stays_with_it() -> None:
    """Clearing ``base_url`` left its key set, and the next turn sent the local server's key to the public host."""
    replay(lambda m: m.config_local_server(how="config"),
           lambda m: m.turn(session=None, model=None, action="text", slot=0, new=False),
           lambda m: m.config_local_server(how="config-off"),
           lambda m: m.turn(session=None, model=None, action="text", slot=0, new=False))


def test_a_529_mid_stream_is_retried() -> None:
    replay(lambda m: m.turn_with_fault(action="write", slot=0, fault="529", after_tools=False))


def test_the_answer_at_a_limit_is_an_answer() -> None:
    replay(lambda m: m.turn_at_a_limit(action="write", slot=0, stubborn=True))


def test_undo_leaves_a_row_the_user_added() -> None:
    replay(lambda m: m.config_tools(python=True, write=True),
           lambda m: m.turn(session=None, model=None, action="python", slot=0, new=False),
           lambda m: m.user_appends_to_the_agents_list(slot=0),
           lambda m: m.undo())


def test_fix_never_sends_brute_nbs_own_traceback() -> None:
    replay(lambda m: m.turn_with_fault(action="write", slot=0, fault="cut", after_tools=False),
           lambda m: m.fix())


def test_a_400_about_a_parameter_marks_no_input_refused() -> None:
    replay(lambda m: m.turn_with_fault(action="write", slot=0, fault="400-parameter", after_tools=True))


def test_a_schema_turn_after_settings_on_the_responses_api() -> None:
    replay(lambda m: m.user_defines(what="Answer"),
           lambda m: m.config_final_answer(on=False),
           lambda m: m.config_model(model="responses"),
           lambda m: m.turn_with_schema())


@pytest.mark.parametrize("fault", ["529", "429-mid-stream", "failed-mid-stream", "400-mid-stream"])
@pytest.mark.parametrize("model", ["chat", "responses"])
def test_an_error_mid_stream_on_an_openai_api_is_retried_as_anthropics_is(model: str, fault: str) -> None:
    """OpenAI's error events carry no HTTP status (a Chat Completions ``{"error"}`` line, a Responses ``error`` or
    ``response.failed`` event): the turn failed on an overload or a rate limit that Anthropic's turn retried, and a
    Responses ``response.failed`` for an invalid request was asked again as a cut stream. Now each is the status
    its code stands for: retried, or (an invalid request) one line saying it was not asked again."""
    replay(lambda m: m.config_model(model=model),
           lambda m: m.turn_with_fault(action="write", after_tools=False, fault=fault, slot=0))


def test_the_answer_at_a_limit_is_retried_after_an_overload() -> None:
    """The answer at a limit (after the tools ran) was asked outside ``RetryReply``: a 529 on it failed the turn."""
    replay(lambda m: m.turn_at_a_limit(action="write", slot=0, stubborn=False),
           lambda m: m.turn_with_fault(action="write", after_tools=True, fault="529", slot=0))


@pytest.mark.parametrize("python", [False, True])
def test_a_connection_cut_after_the_tools_ran_is_retried(python: bool) -> None:
    """The step a run of the everyday budget was stopped in (by pytest-timeout, whose exception ``run_cell``
    swallowed): the connection cut mid-stream after the turn's tools ran, with the python tool refused or allowed."""
    replay(lambda m: m.config_tools(python=python, write=True),
           lambda m: m.turn_with_fault(action="both", after_tools=True, fault="cut", slot=0),
           lambda m: m.turn(session=None, model=None, action="both", slot=0, new=False))


def test_a_chat_servers_part_is_never_sent_to_another_server() -> None:
    """A local server's reply held a part of a new kind; the session then went back to the public host, which
    refused it (a 400 that also marked the turn's prompt refused, so the next turn failed the same way)."""
    replay(lambda m: m.config_local_server(how="config"),
           lambda m: m.turn_with_a_provider_block(),
           lambda m: m.config_local_server(how="config-off"),
           lambda m: m.turn(session=None, model=None, action="text", slot=0, new=False),
           lambda m: m.turn(session=None, model=None, action="text", slot=0, new=False))


def test_a_provider_block_goes_back_on_each_api_and_stays_with_it() -> None:
    """A block of a kind no API has yet, on Anthropic and then on the Responses API of the same session, each sent
    back to its own API on the turns after (tools run between) and to neither of the others."""
    replay(lambda m: m.turn_with_a_provider_block(),
           lambda m: m.turn(session=None, model=None, action="write", slot=0, new=False),
           lambda m: m.config_model(model="responses"),
           lambda m: m.turn_with_a_provider_block(),
           lambda m: m.turn(session=None, model=None, action="write", slot=1, new=False),
           lambda m: m.turn(session=None, model="chat", action="text", slot=0, new=False),
           lambda m: m.turn(session=None, model="anthropic", action="text", slot=1, new=False))


@pytest.mark.parametrize("op", ["edit", "insert", "run"])
def test_a_cell_turn_during_a_save_acts_on_the_whole_notebook(op: str) -> None:
    """A person's Ctrl+S as the agent's cell turn starts (Jupyter writes the notebook in place): the turn acts on
    the whole notebook, and a later undo puts back what the user had."""
    replay(lambda m: m.config_tools(python=False, write=True, cells=True),
           lambda m: m.cell_turn_during_a_save(op=op, slot=1),
           lambda m: m.undo())


def test_a_map_over_a_hostile_frame_sends_its_rows_as_text_and_no_key() -> None:
    replay(lambda m: m.user_defines(what="df-hostile"), lambda m: m.map_over_rows(fault=None),
           lambda m: m.map_over_rows(fault="429"))


def test_a_key_pasted_as_a_name_is_refused_unrepeated() -> None:
    replay(*(lambda m, w=where: m.user_pastes_a_key_as_a_name(where=w)
             for where in ("config model=", "config base_url=", "alias fast ", "keys set ")),
           lambda m: m.turn(session=None, model=None, action="text", slot=0, new=False))


@pytest.mark.parametrize("model", ["anthropic", "responses"])
def test_a_cost_budget_on_a_model_without_a_price_sends_nothing(model: str) -> None:
    """The fake's model names have no price: the turn with tools stopped only after its first paid call, and then
    paid for the answer at the stop too."""
    replay(lambda m: m.config_budget(budget="cost=100"),
           lambda m: m.config_model(model=model),
           lambda m: m.turn(session=None, model=None, action="write", slot=0, new=False))
