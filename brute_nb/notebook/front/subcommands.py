"""``%brute SUBCOMMAND``: the line magic's subcommands, one table of functions (``TABLE``).

Each row says how the subcommand is typed, what it does and which function runs it; ``%brute help`` and ``%brute?``
list the table, and a word that is not in it is answered with the names that are, so what a user reads is what
runs (an IDE follows a row to its function; no method is looked up by name). A function takes the magics (its
``registry`` and ``shell``) and the words after the subcommand. Importing this module stays cheap (``%load_ext``
does): what a subcommand needs it imports when it runs.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from IPython.core.error import UsageError

from brute_nb.errors import BruteError, CassetteMismatchError, NoModelError, SettingsError
from brute_nb.notebook import settings as st
from brute_nb.providers import profiles
from brute_nb.redact import redact

if TYPE_CHECKING:
    from brute_nb.notebook.registry import Registry


class Host(Protocol):
    """What a subcommand reads from the magics: the kernel's sessions and its shell."""

    registry: Registry
    shell: Any


@dataclass(frozen=True)
class Subcommand:
    """One row: ``usage`` as typed after ``%brute``, ``help`` (lines after the first indented under it), ``run``."""

    usage: str
    help: str
    run: Callable[[Host, list[str]], Any]
    aliases: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.usage.split()[0]


def run_line(m: Host, line: str) -> Any:
    """Run ``%brute LINE``: its first word names a row of ``TABLE``; a ``BruteError`` is the user's ``UsageError``."""
    __tracebackhide__ = True
    try:
        words = shlex.split(line)  # quotes keep a value with spaces whole: config system="be brief"
    except ValueError as exc:
        raise UsageError(f"%brute {line.strip()}: {exc}") from None
    if not words:
        return _help(m, [])
    command = BY_NAME.get(words[0])
    if command is None:
        raise UsageError(f"unknown %brute subcommand {words[0]!r}; the subcommands are {', '.join(NAMES)}\n"
                         f"{help_text()}")
    try:
        return command.run(m, words[1:])
    except CassetteMismatchError:
        raise  # shown short as it is (short_errors), so %tb keeps the diff its message points to
    except BruteError as exc:
        raise UsageError(str(exc)) from None


def _help(m: Host, rest: list[str]) -> None:
    if rest == ["config"]:
        from brute_nb.notebook.front import config_help

        print(config_help.text())
        return
    print(help_text())


def _log(m: Host, rest: list[str]) -> Any:
    return m.registry.current().df


def _tools(m: Host, rest: list[str]) -> Any:
    return m.registry.current().tool_calls_df


def _sessions(m: Host, rest: list[str]) -> Any:
    from brute_nb.notebook.paths import list_sessions

    return list_sessions(m.registry.current().session_path.parent)


def _use(m: Host, rest: list[str]) -> None:
    if len(rest) != 1:
        raise UsageError("usage: %brute use NAME")
    check_name(rest[0])
    nb = m.registry.use(rest[0])
    state = "continuing" if nb.session_path.exists() else "new"
    print(f"session {nb.name} ({state}): {nb.session_path}")


def _reset(m: Host, rest: list[str]) -> None:
    nb = m.registry.current()
    backup = nb.reset()
    print(f"session {nb.name} starts afresh; its settings are kept (%brute config lists them, "
          "%brute config KEY=default puts one back)" + (f"\nthe old file is kept as {backup}" if backup else ""))


def _undo(m: Host, rest: list[str]) -> None:
    if len(rest) > 1:
        raise UsageError("usage: %brute undo [PATH] (quote a path with spaces)")
    try:
        print(m.registry.current().undo(rest[0] if rest else None))
    except LookupError as exc:  # nothing recorded for that path
        raise UsageError(f"{exc}; %brute undo with no path reverts the agent's last change") from None


def _why(m: Host, rest: list[str]) -> Any:
    if len(rest) != 1 or not rest[0].isidentifier():
        raise UsageError("usage: %brute why NAME (a variable's name, e.g. %brute why df)")
    from brute_nb.notebook.commands.provenance import why

    return why(rest[0], list(m.registry.agents.values()), m.shell.user_ns if m.shell else {})


def _fix(m: Host, rest: list[str]) -> None:
    __tracebackhide__ = True
    from brute_nb.notebook.commands import cell_turn

    nb = m.registry.current()
    prompt = cell_turn.fix_prompt(m.shell.user_ns if m.shell else {}, " ".join(rest))
    if prompt is None:
        print(cell_turn.NO_ERROR)
        return
    try:
        cell_turn.run_cell_turn(nb, m.shell, prompt, context=nb.settings.context)
    except NoModelError:
        from brute_nb.notebook.front.key_box import offer

        offer(m.shell, prompt, nb.name)


def _system(m: Host, rest: list[str]) -> None:
    """The system prompt as the next turn sends it (rebuilt each turn: date, frames and rules are current)."""
    from brute_nb.notebook.stack import select_tools, system_prompt

    nb = m.registry.current()
    skills = any(t.name == "skill" for t in select_tools(nb.settings.tools, notebook=True))
    print(system_prompt(nb.settings, nb.notebook, nb.root, skills=skills))


def _export(m: Host, rest: list[str]) -> None:
    from brute_nb.notebook.commands.export import default_path, export, preview, shown, write

    fmt, paths = "html", []
    words = iter(rest)
    for word in words:
        if word.startswith("--format"):
            fmt = word.partition("=")[2] or next(words, "")
        else:
            paths.append(word)
    if len(paths) > 1:
        raise UsageError("usage: %brute export [--format md|html|ipynb] [PATH] (quote a path with spaces)")
    nb = m.registry.current()
    messages = list(nb.log)
    if not messages:
        raise UsageError(f"session {nb.name} has no messages yet: nothing to export")
    data = export(messages, fmt, f"{nb.name}: {preview(messages)}")
    folder = nb.session_path.parent.parent  # the notebook's folder: <folder>/<stem>.brute/<session>.jsonl
    target = Path(paths[0]).expanduser() if paths else default_path(nb.session_path, fmt)
    written = write(data, target if target.is_absolute() else folder / target, folder, replace=not paths)
    from IPython.display import display

    text = f"session {nb.name} ({len(messages)} messages) exported as {fmt}: {written}"
    display(shown(written, folder, text), raw=True)  # type: ignore[no-untyped-call]


def _search(m: Host, rest: list[str]) -> Any:
    from brute_nb.sessions.index import search

    if not rest:
        raise UsageError("usage: %brute search TEXT (the messages of this notebook's sessions that mention it)")
    return search(" ".join(rest), m.registry.current().session_path.parent.parent)


def _usage(m: Host, rest: list[str]) -> Any:
    return m.registry.current().usage


def _alias(m: Host, rest: list[str]) -> None:
    from brute_nb.notebook.commands.model_commands import alias

    alias(rest)


def _models(m: Host, rest: list[str]) -> None:
    from brute_nb.notebook.commands.model_commands import models

    models(m.registry.current())


def _keys(m: Host, rest: list[str]) -> None:
    from brute_nb.notebook.commands.model_commands import keys

    keys(rest)


def _live(m: Host, rest: list[str]) -> None:
    """Every session of this kernel leaves its recording; ``BRUTE_LIVE=1`` is what the demos' setup cells read,
    so running one again keeps it live. No restart: the next turn builds its model from the keys."""
    import os

    from brute_nb.notebook.front.key_box import offer
    from brute_nb.providers.catalog import key_source

    if rest:
        raise UsageError("usage: %brute live")
    os.environ["BRUTE_LIVE"] = "1"
    for nb in m.registry.agents.values():
        nb.go_live()
    nb = m.registry.current()
    try:
        provider = nb.model_provider()
    except NoModelError:
        offer(m.shell, None, nb.name)
        return
    label = getattr(provider, "label", type(provider).__name__)
    name = label.split(":")[0]
    profile = profiles.of(name)
    source = key_source(profile.stored_as if profile is not None else name)
    print(f"live: the next %%brute cells go to {label}" + (f" (key: {source})" if source else ""))


def _plugins(m: Host, rest: list[str]) -> None:
    from brute_nb.notebook.commands.model_commands import installed

    installed()


def _chat(m: Host, rest: list[str]) -> Any:
    from brute_nb.notebook.front.widget import chat

    if rest not in ([], ["--side"]):
        raise UsageError("usage: %brute chat [--side]")
    return chat(session=m.registry.current_name, side=bool(rest))


def _config(m: Host, rest: list[str]) -> None:
    reg = m.registry
    nb = reg.current()
    if rest:
        try:
            nb = reg.configure(config_pairs(rest))
        except (SettingsError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        print(f"these settings are session {nb.name}'s: a new session (-s NAME) starts from them, sessions "
              "already started keep their own")
    loc = reg.location
    s = nb.settings
    print(f"notebook:       {here(loc.path)}  (from {loc.source})")
    print(f"session:        {nb.name}  ->  {here(nb.session_path)}")
    print(f"root:           {here(nb.root)}")
    print(f"{'model:':<15} {s.model}")
    print(f"{'tools:':<15} {st.describe_tools(s.tools)}")
    for key in ("max_iterations", "window", "context", "replay", "record", "approve"):
        value = getattr(s, key)
        print(f"{key + ':':<15} {here(value) if key in ('replay', 'record') and value else value}")
    from brute_nb.middleware.budget import limits_text

    # a sub-cent ceiling as itself ($0.00005, not 5e-05); none set: "{}", as the demos recorded it
    print(f"{'budget:':<15} {limits_text(s.budget) if s.budget else s.budget}")
    if not s.summarize:  # shown when off only: the default listing (recorded in the demos) stays as it was
        print(f"{'summarize:':<15} False  (compaction stops at the free rungs)")
    if not s.final_answer:
        print(f"{'final_answer:':<15} False  (a turn stopped by a limit ends without the model's answer)")
    for key in ("mcp", "base_url", "options", "server_tools"):  # shown once set (older outputs stay as recorded)
        if getattr(s, key):  # redacted: a gateway's key in an extra header, an MCP server's token
            print(f"{key + ':':<15} {redact(str(getattr(s, key)))}")
    if s.confirm_above is not None and s.confirm_above != float("inf"):  # shown once set, like the ones above
        from brute_nb.cost import format_usd

        print(f"{'confirm_above:':<15} {format_usd(s.confirm_above)}  (a map that may cost more asks first)")
    if s.api_key:  # a key typed here is never shown; a variable's name or "none" is no secret
        shown = s.api_key if s.api_key.lower() == "none" or s.api_key.startswith("env:") else "(set, not shown)"
        print(f"{'api_key:':<15} {shown}")
    if reg.debug:
        print(f"{'debug:':<15} True  (brute_nb's errors show their full traceback)")
    print(f"{'system:':<15} {'(default)' if s.system is None else s.system}")


def check_name(name: str) -> None:
    from brute_nb.sessions.names import check_session_name

    try:
        check_session_name(name)
    except BruteError as exc:
        raise UsageError(str(exc)) from None


def config_pairs(words: list[str]) -> dict[str, str]:
    """``%brute config`` words, one ``key=value`` each; a value may hold commas and ``=`` (tools=read,fs_search);
    nothing after ``=`` (``api_key=``) puts the setting back to its default."""
    pairs = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"%brute config takes key=value words; {word!r} is not one "
                                   "(quote a value with spaces: system=\"be brief\")")
        pairs[key.strip()] = value.strip()
    return pairs


def here(path: Any) -> str:
    """A path as ``%brute config`` shows it: relative to the kernel's folder (Jupyter starts a kernel in its
    notebook's) when it is inside it, whole when it is elsewhere."""
    full = Path(path).absolute()
    try:
        return str(full.relative_to(Path.cwd())) or "."
    except ValueError:
        return str(path)


KEYS_HELP = ", ".join(st.KEYS[:8]) + ",\n" + ", ".join(st.KEYS[8:])
TABLE: tuple[Subcommand, ...] = (
    Subcommand("log", "the session's messages as a DataFrame", _log),
    Subcommand("tools", "its tool calls (with results) as a DataFrame", _tools),
    Subcommand("sessions", "the sessions saved beside this notebook", _sessions),
    Subcommand("use NAME", "switch to (or start) session NAME", _use),
    Subcommand("reset", "start the current session's conversation afresh (the old file is kept, timestamped);\n"
                        "its settings stay (model, options, base URL...): KEY=default puts one back", _reset),
    Subcommand("undo [PATH]", "revert the agent's last turn: the variables its code changed, its files and cells\n"
                              "together (or the last change to PATH); says what it could not restore", _undo),
    Subcommand("why NAME", "the turn, tool call and code that last assigned NAME in the kernel (the python tool or "
                           "a\ncell the agent ran), with the session line (file:line) or the cell", _why),
    Subcommand("fix [WORDS]", "send the last error (cell, traceback, values) to the agent to explain and fix", _fix),
    Subcommand("usage", "tokens and cost (USD) per turn and in total", _usage),
    Subcommand("system", "the system prompt as the next turn sends it (environment and project rules included)",
               _system),
    Subcommand("export [--format md|html|ipynb] [PATH]",
               "the session as a readable transcript (default: html, beside the session file)", _export),
    Subcommand("search TEXT", "the messages that mention TEXT, in every session under this notebook's folder",
               _search),
    Subcommand("config [k=v ...]", f"show or change settings ({KEYS_HELP});\n"
                                   "shows where the notebook path came from; k=default puts one back "
                                   "(%brute config?)", _config),
    Subcommand("chat [--side]", "a chat panel over the same session, in the cell (--side: in JupyterLab's side "
                                "area,\nbeside the notebook); %brute widget is the same", _chat, aliases=("widget",)),
    Subcommand("alias [NAME SPEC]", "model aliases (saved in your config), e.g. alias fast "
                                    f"{profiles.FAST_MODEL}", _alias),
    Subcommand("keys [set NAME]", "which providers have a key (and from where); set asks for one, hidden, and "
                                  "saves it", _keys),
    Subcommand("live", "leave a recording: the next turns go to a real model (a demo's setup cell, run\n"
                       "again, stays live: BRUTE_LIVE=1); asks for a key if none is set", _live),
    Subcommand("models", "the providers configured here, aliases, and the current provider's models", _models),
    Subcommand("plugins", "the providers (-m PREFIX:MODEL) and tools (--tools NAME) installed, built-ins included",
               _plugins),
    Subcommand("help", "this text", _help),
)
BY_NAME = {name: row for row in TABLE for name in (row.name, *row.aliases)}
NAMES = tuple(row.name for row in TABLE)
USAGE_WIDTH = 17
"""Where the help column starts after ``%brute ``: a longer usage puts its help on the next line."""


def help_text() -> str:
    """``%brute help``: every row of ``TABLE``, its usage then what it does."""
    indent = " " * (len("%brute ") + USAGE_WIDTH + 1)
    lines = []
    for row in TABLE:
        first, *more = row.help.split("\n")
        if len(row.usage) > USAGE_WIDTH:
            lines += [f"%brute {row.usage}", indent + first]
        else:
            lines.append(f"%brute {row.usage:<{USAGE_WIDTH}} {first}")
        lines += [indent + line for line in more]
    return "\n".join(lines)
