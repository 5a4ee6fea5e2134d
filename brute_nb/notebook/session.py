"""NotebookAgent: the session agent behind ``%%brute``, the chat widget and ``brute_nb.current()``.

One per (notebook, session). It owns the ``Agent`` and rebuilds its stack when settings change, handing the new
stack the old ``agent.state`` so undo history and todos survive a ``--model`` switch, and the old model provider
unless the model, replay or record setting changed (a replayed cassette goes on where it was; a recorded one is
not started afresh). Event handlers added with ``on`` are carried to every rebuilt stack. Everything it shows is
derived from the log (``log``, ``df``, ``usage``); it keeps no parallel copy.

It knows nothing of the registry or the front ends above it: the stack is built from its settings
(``stack.build_agent``), and a registry that owns it is told about a fork through ``on_fork``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brute_nb.agent import Agent, Handler
from brute_nb.confine import Signature, signature
from brute_nb.env import Env
from brute_nb.errors import BruteError
from brute_nb.events import emit
from brute_nb.log import Log
from brute_nb.message import role_of
from brute_nb.notebook.settings import Settings
from brute_nb.prompt_cache import session_key
from brute_nb.providers import profiles
from brute_nb.sessions.file import SessionFile

if TYPE_CHECKING:
    from brute_nb.notebook.kernel_tools.kernel_journal import Journal


class NotebookAgent:
    """A named session beside a notebook, with its agent, settings and file."""

    def __init__(self, name: str, session_path: Path, *, settings: Settings | None = None,
                 notebook: Path | None = None) -> None:
        self.name = name
        self.session_path = Path(session_path)
        self.notebook = notebook
        self.settings = settings or Settings()
        self.provider: Handler | None = None
        self._agent: Agent | None = None
        self._key: tuple[Any, ...] | None = None
        self._state: dict[str, Any] = {}
        self._model: tuple[tuple[Any, ...], Handler] | None = None
        self._handlers: list[tuple[str, Callable[[dict[str, Any], Any], Any]]] = []
        self._left: Signature | None = None
        """The session file's signature as the last turn left it: another one means the file was deleted or
        replaced since (a demo's second Run All), so the last turn's log is no longer where the session is."""
        self.on_fork: Callable[[NotebookAgent], Any] | None = None
        """Set by the registry that owns this session: ``load`` hands it the fork, which becomes current."""
        self._retired: list[Any] = []
        """Providers this session made and replaced (its settings changed): closed at its next turn's start or end
        (``_close_retired``), each once no call of it is in flight."""
        self.host_line: Callable[[NotebookAgent], str | None] | None = None
        """Set by the registry: the line saying this turn goes to another host than the last turn of another
        session did (``Registry.crossing``), said at the start of every turn, whichever front end runs it."""

    @property
    def root(self) -> Path:
        return Path(self.settings.root or (self.notebook.parent if self.notebook else os.getcwd())).resolve()

    @property
    def agent(self) -> Agent:
        """The agent for the current settings; rebuilt (state kept) when they change."""
        key = (*self.settings.stack_key(), id(self.provider), self._environment())
        if self._agent is None or key != self._key:
            from brute_nb.notebook.stack import build_agent

            self._agent = build_agent(self.settings, name=self.name, session_path=self.session_path,
                                      notebook=self.notebook, provider=self.model_provider())
            self._agent.state = self._state
            for event, fn in self._handlers:
                self._agent.on(event, fn)
            self._key = key
        return self._agent

    def model_provider(self) -> Handler:
        """The model call: ``provider`` if set, else one made from the settings and the environment, kept while
        both hold: a key set after a 401 (``os.environ[...] = ...``) is used by the next turn, no reload needed."""
        if self.provider is not None:
            return self.provider
        from brute_nb.providers import auto

        s = self.settings
        key = (s.model, s.replay, s.record, s.base_url, s.api_key, repr(sorted(s.options.items())), s.stall_timeout,
               self._environment())
        if self._model is None or self._model[0] != key:
            extra: dict[str, Any] = {"base_url": s.base_url} if s.base_url else {}
            if s.api_key:
                extra["api_key"] = s.api_key
            if s.stall_timeout is not None:
                extra["stall_timeout"] = s.stall_timeout
            if self._model is not None:
                self._retired.append(self._model[1])
            self._model = (key, auto(s.model, replay=s.replay, record=s.record, **extra, **s.options))
        return self._model[1]

    async def _close_retired(self) -> None:
        """Close the clients of the providers this session replaced: each kept its idle kept-alive connection open
        on the kernel's loop, which never ends (a fork sharing one makes a new client when it next calls)."""
        retired, self._retired = self._retired, []
        for provider in retired:
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()

    def close(self) -> None:
        """Close this session's model clients (the extension unloads); a later turn makes new ones."""
        from brute_nb.event_loop import run_sync

        if self._model is not None:
            self._retired.append(self._model[1])
            self._model = None
        if self._retired:
            run_sync(self._close_retired)

    def host(self) -> str | None:
        """Where this session's requests go (``scheme://host:port``): its base URL, else the one its environment
        sets (``OPENAI_BASE_URL``), else its provider's own; None when nothing is sent (a replay) or it cannot tell
        (no provider configured yet, a model call of the user's)."""
        from urllib.parse import urlsplit

        try:
            provider: Any = self.model_provider()
        except BruteError:
            return None
        if getattr(provider, "replaying", False):
            return None
        variable = getattr(provider, "base_url_variable", None)
        url = (getattr(provider, "base_url", None) or (os.environ.get(variable) if variable else None)
               or getattr(provider, "home_url", None))
        if not isinstance(url, str) or not url:
            return None
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}" if parts.netloc else url

    def _environment(self) -> str | None:
        """What of the environment the model call depends on: nothing for a set provider or a replay (a replayed
        cassette must go on where it was), else ``environment_fingerprint``."""
        return None if self.provider is not None or self.settings.replay else environment_fingerprint()

    def on(self, event: str, fn: Callable[[dict[str, Any], Any], Any]) -> NotebookAgent:
        """Subscribe ``fn(env, payload)`` to an event (``brute_nb.EVENTS``) for every later turn of this session,
        across settings changes (``agent.on`` lasts only until the stack is rebuilt)."""
        from brute_nb.events import EVENTS

        if event not in EVENTS:
            raise BruteError(f"unknown event {event!r}; events: {', '.join(EVENTS)}")
        self._handlers.append((event, fn))
        if self._agent is not None:
            self._agent.on(event, fn)
        return self

    def off(self, event: str, fn: Callable[[dict[str, Any], Any], Any]) -> NotebookAgent:
        """Remove a handler added with ``on``."""
        if (event, fn) in self._handlers:
            self._handlers.remove((event, fn))
        if self._agent is not None:
            self._agent.off(event, fn)
        return self

    def configure(self, **changes: Any) -> None:
        """Apply parsed settings (``settings.parse_settings``), checking now what needs the stack or the SDK (tool
        names, provider parameters); a value refused leaves the settings as they were."""
        before = self.settings
        if "model" in changes and provider_of(changes["model"]) != provider_of(before.model):
            # They were given for the other provider: its server, its key, its SDK call's parameters (an option
            # kept would refuse every later switch, as anthropic's create takes no temperature).
            left: dict[str, Any] = {"base_url": None, "api_key": None, "options": {}}
            changes = {**{k: v for k, v in left.items() if k not in changes}, **changes}
        if changes.get("base_url", before.base_url) != before.base_url and "api_key" not in changes:
            changes = {**changes, "api_key": None}  # a key given for one server never goes to another
        self.settings = self.settings.updated(**changes)
        try:
            self._check(set(changes))
        except BaseException:
            self.settings = before
            raise

    def _check(self, changed: set[str]) -> None:
        from brute_nb.errors import SettingsError
        from brute_nb.notebook.stack import select_tools
        from brute_nb.providers.options import OptionError

        if "tools" in changed:
            select_tools(self.settings.tools, notebook=True)  # an unknown name is refused now, not at the turn
        if self.settings.options and {"options", "model", "base_url", "api_key"} & changed:
            try:
                self.model_provider()
            except OptionError as exc:
                raise SettingsError(str(exc)) from None
            except BruteError:
                pass  # no provider configured yet: the turn will say so

    def go_live(self) -> None:
        """Leave the recording (``%brute live``): the next turn's model comes from the settings and the keys."""
        import dataclasses

        self.settings = dataclasses.replace(self.settings, replay=None)

    @property
    def replayed(self) -> bool:
        return bool(getattr(self.model_provider(), "replaying", False))

    async def aask(self, prompt: str, **extra: Any) -> Env:
        """Run one turn (no display); returns the env."""
        from brute_nb.notebook.kernel_tools.cell_bridge import front
        from brute_nb.notebook.kernel_tools.kernel_journal import TURN_KEY, journal

        extra.setdefault("cache_key", session_key(self.session_path))  # one prompt cache per session
        extra.setdefault("cell_front", front())  # the cell tools edit the live notebook where a person has it open
        # Where files and cells stand now, so %brute undo takes back this turn's changes (and the kernel's) together.
        extra.setdefault(TURN_KEY, journal(self._state).begin(self._state, prompt))
        agent = self.agent
        await self._close_retired()
        line = self.host_line(self) if self.host_line is not None else None
        say = _saying(line)
        if say is not None:
            agent.on("turn_start", say)
        try:
            return await agent.astart(prompt, root=self.root, notebook=self.notebook, **extra)
        finally:
            if say is not None:
                agent.off("turn_start", say)
            self._left = self._signature()
            await self._close_retired()  # one replaced while this turn used it: the turn is done with it now

    def _signature(self) -> Signature | None:
        try:
            return signature(os.stat(self.session_path))
        except OSError:
            return None

    def _last_messages(self) -> Log | None:
        """The last turn's log while the session file is as that turn left it; None: read the file."""
        env = self._agent.last_env if self._agent is not None else None
        if env is None or self._signature() != self._left:
            return None
        return Log(m for m in env["messages"])

    def ask(self, prompt: str, *, display: bool = True) -> str:
        """Run one turn from Python, shown in the current cell like ``%%brute``; returns the reply text."""
        from brute_nb.notebook.runner import run_turn

        env = run_turn(self, prompt, display=display)
        return final_text(env["messages"])

    @property
    def log(self) -> Log:
        """The whole conversation: the last turn's log, or the session file before any turn in this kernel and once
        the file is no longer as that turn left it (deleted by a demo's second Run All, replaced, written elsewhere).

        Reading never builds the agent, so the log of a saved session can be inspected with no provider set up.
        """
        messages = self._last_messages()
        return messages if messages is not None else Log(SessionFile(self.session_path).load()[0])

    @property
    def df(self) -> Any:
        from brute_nb.frames import frame
        from brute_nb.sessions.columns import read_frame

        if self._last_messages() is None:
            return read_frame(self.session_path)  # the columns straight from the file's lines: no Message a line
        return frame(self.log)

    @property
    def tool_calls_df(self) -> Any:
        from brute_nb.frames import tool_calls_frame

        return tool_calls_frame(self.log)

    @property
    def usage(self) -> Any:
        """Tokens and cost (USD) per turn and in total, from the assistant messages' meta.

        Tokens are ``Usage``'s (input includes cache reads and writes, whatever the provider reported), as the footer,
        the budget and the price count them; the frame's own columns keep what the provider reported.
        """
        import pandas as pd

        from brute_nb.frames import KIND
        from brute_nb.usage import Usage

        df = self.df
        assistant = df[df["role"] == "assistant"]
        usages = [Usage.of_meta(meta or {}) for meta in assistant["meta"]]
        counts = {name: pd.array([None if u is None else getattr(u, name) for u in usages], dtype="Int64")
                  for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")}
        table = pd.DataFrame({"turn": assistant["turn"].array, **counts, "cost": assistant["cost"].array})
        per_turn = table.groupby("turn").sum(min_count=1)
        per_turn["model_calls"] = assistant.groupby("turn").size()
        # The total row is built in each column's own dtype and appended: setting it with .loc turned every column
        # into Float64 on pandas 2 (tokens shown as 1520.0, model calls as 1.0), where pandas 3 kept them.
        sums: dict[Any, Any] = {}
        for name, column in per_turn.items():
            value: Any = column.sum() if name == "model_calls" else column.sum(min_count=1)  # unknown stays unknown
            dtype: Any = column.dtype
            sums[name] = pd.array([value], dtype=dtype)
        out = pd.concat([per_turn, pd.DataFrame(sums, index=pd.Index(["total"], name=per_turn.index.name))])
        out.attrs[KIND] = "usage"  # a notebook shows its cost in dollars (views/frame_view.py)
        return out

    @property
    def last(self) -> Any:
        """The session's last assistant reply (``current().last.parsed``, ``.cost``), or None."""
        return next((m for m in reversed(self.log) if role_of(m) == "assistant"), None)

    @property
    def journal(self) -> Journal:
        """What the agent's code did to the kernel's namespace, turn by turn (``%brute undo``, ``%brute why``)."""
        from brute_nb.notebook.kernel_tools.kernel_journal import journal

        return journal(self._state)

    def reset(self) -> Path | None:
        """Start the session's conversation afresh; the old file is kept, renamed with a timestamp.

        The settings stay: they are the session's until changed (``%%brute --new -o ...`` sets and resets in one
        cell), and clearing the model, base URL and key here would send the next prompt to another host."""
        from brute_nb.notebook.paths import timestamped_backup

        self._forget()
        if self.session_path.exists():
            return timestamped_backup(self.session_path)
        return None

    def _forget(self) -> None:
        if self._agent is not None:
            self._agent.last_env = None
        self._agent = None
        self._key = None

    def undo(self, path: str | None = None) -> str:
        """Revert the agent's last turn: the variables its code changed, the files and the cells, together, with
        one report of what could not be put back; or the last change to ``path``."""
        from brute_nb.event_loop import run_sync
        from brute_nb.notebook.kernel_tools.cell_bridge import front, undo_last
        from brute_nb.notebook.kernel_tools.cell_tools import DocumentUndo
        from brute_nb.notebook.kernel_tools.turn_undo import undo_turn
        from brute_nb.tools import use_env
        from brute_nb.tools.results import render
        from brute_nb.tools.stores import snapshots

        if path is None:
            bridge = front()
            done = undo_turn(self._state, self.root, bridge, notebook=self.notebook) or undo_last(self._state, bridge)
            if done is not None:
                return done

        env: Env = {"state": self._state, "root": self.root, "ask": None, "events": None, "metadata": {},
                    "notebook": self.notebook}
        with use_env(env):
            target = path or snapshots().last()
            if target is None:
                return NOTHING_TO_UNDO
            result = run_sync(lambda: DocumentUndo().execute(path=target))  # the user's notebook is put back too
        return render(result).text

    def load(self, df: Any, name: str | None = None) -> NotebookAgent:
        """Continue from an edited frame, saved as a fork in a new session file (the original is untouched).

        The fork keeps this session's settings and provider and, when this session is the kernel's, becomes
        the current session, so the next ``%%brute`` continues from the edited history.
        """
        from brute_nb.frames import log_from_frame
        from brute_nb.notebook.paths import fork_name
        from brute_nb.sendable import close_unanswered

        log = log_from_frame(df)
        close_unanswered(log)
        folder = self.session_path.parent
        existing = [p.name[: -len(".jsonl")] for p in folder.glob("*.jsonl")]
        fork = name or fork_name(existing, self.name)
        path = folder / f"{fork}.jsonl"
        if path.exists():
            raise BruteError(f"{path} already exists; pick another name for the fork")
        file = SessionFile(path)
        file.resolve()  # a link named like the fork that points out of the folder is refused, as for any session
        file.rewrite([m for m in log if role_of(m) != "system"], dropped=[])
        forked = NotebookAgent(fork, path, settings=self.settings, notebook=self.notebook)
        forked.provider = self.provider
        forked._model = self._model  # the same model connection: a replayed cassette goes on in order
        if self.on_fork is not None:
            self.on_fork(forked)
        return forked

    def __repr__(self) -> str:
        return f"NotebookAgent(session={self.name!r}, path={str(self.session_path)!r})"


NOTHING_TO_UNDO = ("nothing to undo: the agent has changed no variable, file or cell in this kernel (undo history "
                   "is kept in the kernel's memory, so a restart forgets it)")

PROVIDER_VARIABLES = ("BRUTE_MODEL", *(v for p in profiles.builtin() for v in (p.host_variable, p.model_variable) if v))
"""Besides the keys and base URLs (``PROVIDER_SUFFIXES``): what else chooses a provider or its model."""
PROVIDER_SUFFIXES = ("_API_KEY", "_BASE_URL", "_AUTH_TOKEN", "_API_BASE", "_ORG_ID", "_PROJECT_ID")


def _saying(line: str | None) -> Callable[[Env, Any], None] | None:
    """A ``turn_start`` handler that says ``line`` as the turn's ``notice`` (every view shows one), or None."""
    if not line:
        return None

    def say(env: Env, payload: Any) -> None:
        emit(env, "notice", {"message": line})

    return say


def provider_of(model: str | None) -> str:
    """The provider a ``--model`` names (``anthropic`` of ``anthropic:claude-x``); with none, the one a base URL
    is used with (``BRUTE_MODEL``'s, else ``openai``, as ``providers.auto`` picks)."""
    spec = model or os.environ.get("BRUTE_MODEL") or ""
    return spec.split(":", 1)[0] if ":" in spec else profiles.SERVER_KIND


def environment_fingerprint() -> str:
    """A digest of the variables ``auto()`` and the SDK clients read, and of the stored keys file's identity: it
    changes when the user sets, saves or fixes a key, so the provider built from them is rebuilt. Only the digest is
    kept, never a key."""
    from brute_nb.providers import keys

    env = os.environ
    names = sorted(k for k in env if k in PROVIDER_VARIABLES or k.endswith(PROVIDER_SUFFIXES))
    digest = hashlib.sha256(repr(keys.fingerprint()).encode())
    for name in names:
        digest.update(f"{name}\0{env[name]}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def final_text(messages: list[Any]) -> str:
    for m in reversed(messages):
        if role_of(m) == "assistant" and m.content:
            return str(m.content)
    return ""
