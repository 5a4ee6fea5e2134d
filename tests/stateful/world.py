"""The world the model of a notebook user works in (``test_notebook_user``): a folder with a notebook, the loopback
fake as the providers' public hosts and as a local server with its own key, an IPython shell with brute_nb loaded,
and the checks the invariants run after every step.

The fake is honest about what the model may do: ``Brain`` answers the first request of a turn with the turn's plan
(a text, or tool calls) and a request that follows a tool result with a text, and it never calls a tool when the
request forbids it (``tool_choice`` none, in each API's own shape). Faults are script items of the fake, so they
come before any answer of the brain, one per request, as a real provider's would.

A kernel restart is a fresh ``InteractiveShell`` with the extension loaded again, on the same folder and
environment: the namespace, the sessions' settings and their undo history are gone, the files stay. The Python
process is the same, so what a real restart would also clear in modules (a key remembered for redaction, the warm-up
thread's imports) is kept; none of the invariants depends on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brute_nb.message import ToolCall, unanswered_calls
from brute_nb.testing import FakeProvider, Reply
from brute_nb.testing.rules import request_problems
from tests.stateful.watchdog import StepHung

ENV_KEYS = {"anthropic": "sk-ant-env-model-0001", "openai": "sk-oai-env-model-0002"}
"""The keys in the environment, one per vendor: each may go only to its own host."""
LOCAL_KEY = "sk-local-model-0003"
"""The key of the local OpenAI-compatible server (``base_url`` + ``api_key``)."""
MODELS = {"anthropic": "anthropic:claude-fake", "chat": "openai:gpt-fake", "responses": "openai-responses:gpt-fake"}
"""What ``-m`` names for each API the fake speaks."""
API_OF = {"anthropic": "anthropic", "chat": "openai_chat", "responses": "openai_responses"}
VENDOR_OF_API = {"anthropic": "anthropic", "openai_chat": "openai", "openai_responses": "openai"}
CLEARED = ("BRUTE_MODEL", "OLLAMA_HOST", "BRUTE_NB_NOTEBOOK", "BRUTE_STALL_TIMEOUT")
CELLS = [(f"cell-{i}", f"c_{i} = {i}") for i in range(3)]
"""The cells of the user's notebook when the model starts: each sets one variable, so a run shows in the kernel."""
SUB = "work"
"""A subfolder of the notebook's folder, the workspace root the demos set (``root=...``): the notebook is outside."""
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _tool_result_last(body: dict[str, Any]) -> bool:
    """Whether the request's last message is a tool result (the model is asked to go on after a tool), in any of
    the three APIs' shapes: Responses' ``function_call_output`` item, a Chat Completions ``tool`` message, an
    Anthropic user message ending in a ``tool_result`` block."""
    items = body.get("input") if isinstance(body.get("input"), list) else body.get("messages")
    if not items:
        return False
    last = items[-1]
    if last.get("type") == "function_call_output" or last.get("role") == "tool":
        return True
    content = last.get("content")  # a prompt after a result is merged into its message: the last block counts
    return isinstance(content, list) and bool(content) and content[-1].get("type") == "tool_result"


def _tools_forbidden(body: dict[str, Any]) -> bool:
    """``tool_choice`` none (``"none"``, or Anthropic's ``{"type": "none"}``), or no tools at all."""
    choice = body.get("tool_choice")
    if choice == "none" or (isinstance(choice, dict) and choice.get("type") == "none"):
        return True
    return not body.get("tools")


@dataclass
class Plan:
    """What the model does in the coming turn: calls first (if any), then ``text``; ``stubborn`` keeps calling
    tools for as long as it may (a model that never stops on its own)."""

    text: str
    calls: tuple[ToolCall, ...] = ()
    stubborn: bool = False


class Brain:
    """The fake's responder: the reply a request gets when no fault is scripted for it."""

    def __init__(self) -> None:
        self.plan = Plan("ok")
        self.called = False
        """Whether the plan's calls were made this turn: a model that is not stubborn calls its tools once."""
        self.lock = threading.Lock()

    def start(self, plan: Plan, *, called: bool = False) -> None:
        with self.lock:
            self.plan, self.called = plan, called

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            plan = self.plan
            fresh = not self.called and not _tool_result_last(body)
            if plan.calls and not _tools_forbidden(body) and (plan.stubborn or fresh):
                self.called = True
                return Reply(calls=plan.calls)
        return Reply(text=plan.text)


@dataclass
class Cell:
    """What one cell did: its error (None when it succeeded) and everything it printed or displayed."""

    source: str
    error: BaseException | None
    text: str

    @property
    def failed(self) -> bool:
        return self.error is not None


@dataclass
class World:
    """The folder, the fakes, the environment and the shell of one run of the model."""

    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="brute-user-")))
    brain: Brain = field(default_factory=Brain)
    shell: Any = None
    saved_env: dict[str, str | None] = field(default_factory=dict)
    cwd: str = field(default_factory=os.getcwd)
    """The process's folder before: the kernel's is the notebook's (a relative ``--attach`` is read from there)."""
    traced: Any = None
    answer: str | None = None
    """What the person at the notebook answers when a tool asks (``y``, ``n``), or None: no one can answer (the
    kernel's client sends no stdin, as nbclient's), so ``ask`` is ``deny``."""
    asking: Any = None

    def __post_init__(self) -> None:
        self.public = FakeProvider(api_key=None, responder=self.brain).start()
        """The providers' own hosts (``ANTHROPIC_BASE_URL`` and ``OPENAI_BASE_URL`` name it): any key is let in,
        and the checks see which one came."""
        self.local = FakeProvider(api_key=LOCAL_KEY, responder=self.brain).start()
        """A local OpenAI-compatible server with its own key, reached only through ``base_url`` + ``api_key``."""
        self.checked = {id(self.public): 0, id(self.local): 0}
        self.notebook = self.folder / "nb.ipynb"
        self.sessions = self.folder / "nb.brute"
        write_notebook(self.notebook, CELLS)
        (self.folder / SUB).mkdir()
        env = {"ANTHROPIC_API_KEY": ENV_KEYS["anthropic"], "ANTHROPIC_BASE_URL": self.public.base_url,
               "OPENAI_API_KEY": ENV_KEYS["openai"], "OPENAI_BASE_URL": self.public.openai_base_url,
               "XDG_CONFIG_HOME": str(self.folder / ".config")}
        for name in (*env, *CLEARED, *(k for k in os.environ if k.endswith(("_API_KEY", "_BASE_URL")))):
            self.saved_env.setdefault(name, os.environ.get(name))
        for name in CLEARED:
            os.environ.pop(name, None)
        for name in [k for k in os.environ if k.endswith(("_API_KEY", "_BASE_URL"))]:
            del os.environ[name]
        os.environ.update(env)
        os.chdir(self.folder)
        self.start_shell()

    def start_shell(self) -> None:
        from IPython.core.interactiveshell import InteractiveShell

        self.shell = InteractiveShell.instance()
        self.shell.run_line_magic("load_ext", "brute_nb")
        self.run(f"%brute config notebook={self.notebook} root={self.folder}")

    def stop_shell(self) -> None:
        from IPython.core.interactiveshell import InteractiveShell

        if self.shell is not None:
            self.shell.run_line_magic("unload_ext", "brute_nb")
            InteractiveShell.clear_instance()
            self.shell = None

    def restart(self) -> None:
        self.stop_shell()
        self.start_shell()

    def tracer(self, provider: Any) -> None:
        """Tracing on (``provider``: what ``trace.get_tracer_provider`` answers, as after the user's
        ``set_tracer_provider``) or off (None: the API's own answer again). Not process-wide: OpenTelemetry lets a
        process set its provider once."""
        from opentelemetry import trace

        if self.traced is None:
            self.traced = trace.get_tracer_provider
        trace.get_tracer_provider = provider or self.traced  # type: ignore[assignment]

    def answering(self, answer: str | None) -> None:
        """Someone at the notebook answers approval questions with ``answer`` (None: no one can). brute_nb asks
        through ``input()`` when the kernel's client allows stdin (``approvals.default_asker``): here that test is
        answered for it, and ``input`` in that module gives the answer."""
        from brute_nb.notebook import approvals

        if self.asking is None:
            self.asking = approvals.default_asker
            approvals.input = lambda prompt="": self.answer or ""  # type: ignore[attr-defined]
            approvals.default_asker = lambda: approvals.input_asker if self.answer else None
        self.answer = answer

    def close(self) -> None:
        try:
            self.stop_shell()
        finally:
            if self.asking is not None:
                from brute_nb.notebook import approvals

                approvals.default_asker = self.asking
                del approvals.input  # type: ignore[attr-defined]
            if self.traced is not None:
                self.tracer(None)
            os.chdir(self.cwd)
            self.public.close()
            self.local.close()
            for name, value in self.saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            shutil.rmtree(self.folder, ignore_errors=True)

    def run(self, source: str) -> Cell:
        """Run ``source`` as a cell, as the kernel would: an error ends the cell and is shown, never raised here.

        Only an exception that is no error of the cell's code (pytest-timeout's, the watchdog's) is raised again:
        ``run_cell`` swallows every exception, and one that ended the test there would leave the run going on."""
        from IPython.utils.capture import capture_output

        with capture_output() as captured:
            result = self.shell.run_cell(source, store_history=True)
        error = result.error_before_exec or result.error_in_exec
        if error is not None and not isinstance(error, Exception | KeyboardInterrupt):
            raise StepHung(f"{source.splitlines()[0]!r} was ended by {type(error).__name__}: {error}") from error
        shown = [captured.stdout, captured.stderr]
        shown += [str(o.data.get("text/plain", "")) for o in captured.outputs]
        return Cell(source, error, ANSI.sub("", "\n".join(shown)))

    def sent_kinds(self, host: str | None = None) -> frozenset[str]:
        """The block kinds the fakes (or the one of ``host``) sent in replies: their API takes them back."""
        fakes = {"public": self.public, "local": self.local}
        return frozenset().union(*(f.sent_kinds for name, f in fakes.items() if host in (None, name)))

    def requests(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """The requests the fakes received since the last call, with the fake's name (public or local)."""
        for name, fake in (("public", self.public), ("local", self.local)):
            with fake._lock:
                new = fake.requests[self.checked[id(fake)]:]
                self.checked[id(fake)] = len(fake.requests)
            for request in new:
                yield name, request

    def session_file(self, name: str) -> Path:
        return self.sessions / f"{name}.jsonl"


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> None:
    """A saved notebook of code cells, each ``(id, source)``, as Jupyter writes one (nbformat 4.5: cells have ids)."""
    import nbformat
    import nbformat.v4

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source, id=cell_id) for cell_id, source in cells])
    path.write_text(nbformat.writes(nb))


@contextlib.contextmanager
def saving(path: Path, cells: list[tuple[str, str]], hold: float = 0.3) -> Iterator[None]:
    """A person's Ctrl+S while the block runs: Jupyter Server's own save of ``cells`` (``atomic_writing``: the old
    bytes aside as ``.~name``, the file truncated and written again), held half-way for ``hold`` s."""
    import nbformat
    import nbformat.v4
    from jupyter_server.services.contents.fileio import atomic_writing

    text = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source, id=cell_id)
                                                           for cell_id, source in cells]))
    cut, finish = threading.Event(), threading.Event()

    def save() -> None:
        with atomic_writing(str(path)) as f:
            f.write(text[: len(text) // 2])
            f.flush()
            cut.set()
            finish.wait(30)
            f.write(text[len(text) // 2:])

    saver = threading.Thread(target=save, daemon=True)
    saver.start()
    assert cut.wait(30), "the save never began"
    timer = threading.Timer(hold, finish.set)
    timer.start()
    try:
        yield
    finally:
        finish.set()
        timer.cancel()
        saver.join(30)


def notebook_cells(path: Path) -> list[tuple[str, str]]:
    """``(id, source)`` of each cell of the saved notebook."""
    import nbformat

    return [(str(c.id), str(c.source)) for c in nbformat.reads(path.read_text(), as_version=4).cells]


def sent_key(headers: dict[str, str]) -> str:
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def key_problems(host: str, request: dict[str, Any]) -> list[str]:
    """A key only to its host: the env key of the request's vendor on the public fake, the local key on the local."""
    key = sent_key(request["headers"])
    expected = LOCAL_KEY if host == "local" else ENV_KEYS[VENDOR_OF_API[request["api"]]]
    if key != expected:
        shown = next((name for name, value in {**ENV_KEYS, "local": LOCAL_KEY}.items() if value == key), key[:8])
        return [f"{host} {request['path']} carried the {shown} key, not its own"]
    return []


def wire_problems(request: dict[str, Any], also: frozenset[str] = frozenset()) -> list[str]:
    """What the API would refuse the request for: an orphan result, an unanswered call, a bad id, ...; ``also``:
    the block kinds its host sent in replies (an API takes back what it sent)."""
    return [f"{request['path']}: {p}" for p in request_problems(request["api"], request["json"], also)]


def file_ids(folder: Path) -> set[str]:
    """The ids of every message held in any session file, archive or backup under ``folder``."""
    ids: set[str] = set()
    if not folder.is_dir():
        return ids
    for path in folder.iterdir():
        if ".jsonl" not in path.name or path.name.endswith(".lock") or not path.is_file():
            continue
        for line in path.read_bytes().splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict) and isinstance(value.get("meta"), dict) and value["meta"].get("id"):
                ids.add(str(value["meta"]["id"]))
    return ids


def session_problems(path: Path, also: frozenset[str] = frozenset()) -> list[str]:
    """The session file as it stands is one every provider would accept (after the turn's prompt), with no torn line
    and no call left without its result; ``also``: the block kinds the providers sent in replies."""
    from brute_nb.message import Message
    from brute_nb.providers.anthropic import AnthropicMessages
    from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
    from brute_nb.sessions.file import read_session

    if not path.exists():
        return []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        messages = read_session(path)
    found = [f"{path.name}: {w.message}" for w in caught]
    found += [f"{path.name}: call {c.id} ({c.name}) has no result" for c in unanswered_calls(messages)]
    log = [*messages, Message("user", "go on")]
    for api, provider in (("anthropic", AnthropicMessages("claude-fake", api_key="k")),
                          ("openai_chat", OpenAIChat("gpt-fake", api_key="k")),
                          ("openai_responses", OpenAIResponses("gpt-fake", api_key="k"))):
        found += [f"{path.name} as {api}: {p}"
                  for p in request_problems(api, provider.request({"messages": log}), also)]
    return found


def error_problems(cell: Cell, allowed: tuple[type[BaseException], ...] = ()) -> list[str]:
    """An error ends a cell as one short message saying what to do: brute_nb's own error or a usage error, never a
    traceback through brute_nb's internals."""
    from IPython.core.error import UsageError

    from brute_nb.errors import BruteError

    if cell.error is None:
        return []
    found = []
    if not isinstance(cell.error, (BruteError, UsageError, *allowed)):
        found.append(f"{cell.source.splitlines()[0]!r} ended in {type(cell.error).__name__}: {cell.error}")
    if "Traceback (most recent call last)" in cell.text or re.search(r'File "[^"]*brute_nb', cell.text):
        found.append(f"{cell.source.splitlines()[0]!r} showed a traceback:\n{cell.text[-2000:]}")
    if len(str(cell.error)) > 1200:
        found.append(f"{cell.source.splitlines()[0]!r}: an error of {len(str(cell.error))} characters")
    return found
