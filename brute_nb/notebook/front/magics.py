"""``%%brute`` (a prompt to the kernel's agent) and ``%brute`` (inspect and steer it).

Options go through IPython's ``magic_arguments`` so ``%%brute?`` shows real usage and a bad option is a short
``UsageError``. Options that describe the agent (model, tools, root, replay...) stick to the session for later
cells; ``--new``, ``--quiet`` and ``--raw`` apply to one cell.

Loading this module must stay cheap (``%load_ext brute_nb`` imports it): the kernel agent, its stack, the runner
and pandas are imported inside the magics, on the first ``%%brute`` / ``%brute`` call.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import MagicHelpFormatter, argument, argument_group, magic_arguments

from brute_nb.errors import BruteError, NoModelError, SettingsError
from brute_nb.notebook import settings as st
from brute_nb.notebook.prompt import expand

if TYPE_CHECKING:
    from brute_nb.notebook.registry import Registry

SUBCOMMANDS = """\
%brute log               the session's messages as a DataFrame
%brute tools             its tool calls (with results) as a DataFrame
%brute sessions          the sessions saved beside this notebook
%brute use NAME          switch to (or start) session NAME
%brute reset             start the current session's conversation afresh (the old file is kept, timestamped);
                         its settings stay (model, options, base URL...): KEY=default puts one back
%brute undo [PATH]       revert the agent's last turn: the variables its code changed, its files and cells
                         together (or the last change to PATH); says what it could not restore
%brute why NAME          the turn, tool call and code that last assigned NAME in the kernel (the python tool or a
                         cell the agent ran), with the session line (file:line) or the cell
%brute fix [WORDS]       send the last error (cell, traceback, values) to the agent to explain and fix
%brute usage             tokens and cost (USD) per turn and in total
%brute system            the system prompt as the next turn sends it (environment and project rules included)
%brute export [--format md|html|ipynb] [PATH]
                         the session as a readable transcript (default: html, beside the session file)
%brute search TEXT       the messages that mention TEXT, in every session under this notebook's folder
%brute config [k=v ...]  show or change settings ({keys});
                         shows where the notebook path came from; k=default puts one back (%brute config?)
%brute chat [--side]     a chat panel over the same session, in the cell (--side: in JupyterLab's side area,
                         beside the notebook); %brute widget is the same
%brute alias [NAME SPEC] model aliases (saved in your config), e.g. alias fast anthropic:claude-haiku-4-5
%brute keys [set NAME]   which providers have a key (and from where); set asks for one, hidden, and saves it
%brute live              leave a recording: the next turns go to a real model (a demo's setup cell, run
                         again, stays live: BRUTE_LIVE=1); asks for a key if none is set
%brute models            the providers configured here, aliases, and the current provider's models
%brute plugins           the providers (-m PREFIX:MODEL) and tools (--tools NAME) installed, built-ins included
%brute help              this text"""

SUBCOMMANDS = SUBCOMMANDS.format(keys=", ".join(st.KEYS[:8]) + ",\n                         "
                                 + ", ".join(st.KEYS[8:]))


@magics_class
class BruteMagics(Magics):
    def __init__(self, shell: Any, registry: Registry) -> None:
        super().__init__(shell)
        self.registry = registry

    @magic_arguments()
    @argument("subcommand", nargs="*", help="(line magic only) log, tools, sessions, use, reset, undo, why, fix, "
                                            "usage, system, config, chat, help")
    @argument_group("model", "which model answers, and how it is reached")
    @argument("-m", "--model", help="PROVIDER:MODEL, e.g. anthropic:claude-sonnet-5-5, openai:gpt-5.5, "
                                    "gemini:..., llm:MODEL, or an alias (%%brute alias)")
    @argument("-o", "--option", action="append", help="a provider parameter KEY=VALUE (repeatable), e.g. "
                                                        "-o temperature=0.2; checked against the SDK; -o none "
                                                        "clears them (another provider's -m does too)")
    @argument("--base-url", help="an OpenAI-compatible server (vLLM, LM Studio, llama.cpp, Ollama), e.g. "
                                 "http://localhost:8000/v1")
    @argument("--system", help="the system prompt (default: one describing the notebook and workspace)")
    @argument("--replay", help="replay recorded model traffic from this cassette (offline)")
    @argument("--record", help="record the model traffic of live runs to this cassette")
    @argument_group("tools", "what the agent may do, and where")
    @argument("--tools", help="all | read-only | none | name,name | +python (default: all)")
    @argument("--server-tools", help="tools the provider runs itself: web_search,web_fetch,code_execution | none")
    @argument("--mcp", help='MCP servers: a JSON file {"mcpServers": {...}} (tools named <server>_<tool>), or none')
    @argument("--approve", help="approval policy, e.g. shell=allow,write=ask (classes: read, write, shell, "
                                "network, python, mcp, notebook; modes: allow, ask, deny)")
    @argument("--root", help="workspace root for file tools (default: the notebook's folder)")
    @argument_group("context", "which conversation the prompt joins, and what goes with it")
    @argument("-s", "--session", help="session name (default: default); one JSONL file beside the notebook")
    @argument("--new", action="store_true", help="start the conversation afresh (settings stay); the old file is kept, "
                                                 "timestamped")
    @argument("--context", help="send the last N executed cells (with bounded outputs) as context this turn "
                                "(default: %%brute config context=N, else 0)")
    @argument("--attach", help="files or URLs to send with the prompt, comma-separated: report.pdf,https://x/p.png")
    @argument("--fix", action="store_true", help="send the last error to the agent; the body is extra instructions")
    @argument("--raw", action="store_true", help="do not fill {expr} from the namespace")
    @argument("--eval", action="store_true", help="fill {expr} with any Python expression, calls included "
                                                  "(default: names, attributes and literal subscripts only)")
    @argument_group("output", "what the cell shows, and what the reply is")
    @argument("--quiet", action="store_true", help="show only the reply (no tool blocks, no footer; with --over, no "
                                                   "progress bar)")
    @argument("--code", action="store_true", help="ask for code: the reply's code block goes into a new cell "
                                                  "below, unrun")
    @argument("--schema", help="NAME of a pydantic model or JSON-schema dict in the namespace: the reply is "
                               "structured output, validated (brute_nb.current().last.parsed)")
    @argument_group("cost", "ceilings that end a turn cleanly")
    @argument("--budget", help="ceilings per cell, e.g. tokens=50000,cost=0.50,tools=30,time=300")
    @argument("--max-iterations", help="model calls allowed in one cell (default: 50)")
    @argument_group("map", "the cell once per row of a DataFrame")
    @argument("--over", help="a DataFrame's name: run the cell once per row, {column} filled from the row "
                             "(brute_nb.map); the result is shown and bound to _")
    @argument("--concurrency", help="with --over: rows at once (default: 8)")
    @argument("--batch", action="store_true", help="with --over: send the rows as one provider batch (half price, "
                                                     "results when it ends; re-running resumes it)")
    @argument("--estimate", action="store_true", help="with --over: show the rows, tokens and cost range the run "
                                                      "would have, sending nothing (brute_nb.estimate)")
    @line_cell_magic
    def brute(self, line: str, cell: str | None = None) -> Any:
        """Talk to the agent that lives in this kernel. The cell body is the prompt; ``{expr}`` is filled in.

        As a line magic, ``%brute SUBCOMMAND`` inspects and steers it; see ``%brute help``.
        """
        __tracebackhide__ = True  # an interrupted turn's traceback is the user's cell, not brute_nb's frames
        from brute_nb.notebook import warm

        if cell is None:
            warm.settled()  # the SDK may still be importing on the warm-up thread: one importer at a time
            return self._line(line)
        with warm.turn():  # the same, and the warm-up's reply-side work waits for this cell's request
            return self._cell(line, cell)

    def _cell(self, line: str, cell: str) -> Any:
        __tracebackhide__ = True
        args = parse_options(line)
        if args.subcommand:
            raise UsageError(f"%%brute takes options only, not {' '.join(args.subcommand)!r}; see %%brute?")
        if not cell.strip() and not args.fix:
            raise UsageError("%%brute needs a prompt in the cell body")
        if args.over:
            return self._over(args, cell.strip("\n").rstrip())
        _refuse_map_options(args)
        nb = self._session(args)
        body = cell.strip("\n").rstrip()  # the newline a cell body ends with is not part of what the user asked
        files: list[Any] = []
        prompt = body if args.raw else expand(body, self.shell.user_ns if self.shell else {}, files,
                                              calls=args.eval)
        if args.attach:
            files += self._attach(args.attach)
        context = nb.settings.context if args.context is None else _parse_context(args.context)
        from brute_nb.notebook.commands import cell_turn
        from brute_nb.structured import StructuredOutputError

        if args.fix:
            fix = cell_turn.fix_prompt(self.shell.user_ns if self.shell else {}, prompt)
            if fix is None:
                print(cell_turn.NO_ERROR)
                return None
            prompt = fix
        extra: dict[str, Any] = {"schema": self._schema(args.schema)} if args.schema else {}
        if files:
            extra["attachments"] = files
        try:
            cell_turn.run_cell_turn(nb, self.shell, prompt, quiet=args.quiet, context=context, code=args.code, **extra)
        except StructuredOutputError as exc:
            raise UsageError(f"{exc}. The reply is in the log (brute_nb.current().last)") from None
        except NoModelError:
            from brute_nb.notebook.front.key_box import offer

            offer(self.shell, prompt, nb.name)
        return None

    def _over(self, args: Any, template: str) -> Any:
        """``%%brute --over df``: the body is a map template; the frame it returns is the cell's result."""
        ns = self.shell.user_ns if self.shell else {}
        if args.over not in ns:
            raise UsageError(f"--over {args.over}: no such variable; name a DataFrame defined in this notebook")
        from brute_nb.map import estimate, map_rows

        try:
            checked = st.parse_settings({"model": args.model, "max_iterations": args.max_iterations})
            options: dict[str, Any] = {
                **checked, "system": args.system, "tools": args.tools, "root": args.root,
                "concurrency": args.concurrency and st.parse_int("--concurrency", args.concurrency),
                "batch": args.batch or None,
                "progress": not args.quiet}
            if args.estimate:
                keep = ("model", "system", "tools", "root")
                return estimate(template, ns[args.over], **{k: options[k] for k in keep if options.get(k) is not None})
            return map_rows(template, ns[args.over], **{k: v for k, v in options.items() if v is not None})
        except BruteError as exc:
            raise UsageError(str(exc)) from None

    @staticmethod
    def _attach(spec: str) -> list[Any]:
        """``--attach a.pdf,b.png,https://.../c.png``: each file read now, so a missing one is a short error before
        anything is sent; a URL is sent as a URL (the API reads it)."""
        from brute_nb.attachments import AttachmentError, attachment

        try:
            return [attachment(p.strip() if _is_url(p.strip()) else Path(p.strip()).expanduser())
                    for p in spec.split(",") if p.strip()]
        except AttachmentError as exc:
            raise UsageError(f"--attach: {exc}") from None

    def _schema(self, name: str) -> Any:
        """The schema ``--schema NAME`` names in the user's namespace (a dotted name reaches attributes)."""
        head, *rest = name.split(".")
        ns = self.shell.user_ns if self.shell else {}
        if head not in ns:
            raise UsageError(f"--schema {name}: no such name in the namespace; define a pydantic model (class "
                             f"{head}(BaseModel): ...) or a JSON-schema dict first")
        value = ns[head]
        for part in rest:
            value = getattr(value, part, None)
        from brute_nb.structured import StructuredOutputError, check

        try:
            return check(value, f"--schema {name}")
        except StructuredOutputError as exc:
            raise UsageError(str(exc)) from None

    def _session(self, args: Any) -> Any:
        reg = self.registry
        if args.session:
            _check_name(args.session)
            reg.use(args.session)
        options = {"model": args.model, "system": args.system, "tools": args.tools,
                   "max_iterations": args.max_iterations, "root": args.root, "replay": args.replay,
                   "record": args.record, "approve": args.approve, "budget": args.budget, "mcp": args.mcp,
                   "options": args.option, "base_url": args.base_url, "server_tools": args.server_tools}
        try:
            nb = reg.configure(options)
        except (SettingsError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        if args.new:
            nb.reset()
        return nb

    def _line(self, line: str) -> Any:
        __tracebackhide__ = True
        try:
            words = shlex.split(line)  # quotes keep a value with spaces whole: config system="be brief"
        except ValueError as exc:
            raise UsageError(f"%brute {line.strip()}: {exc}") from None
        if not words:
            return self._help()
        cmd, rest = words[0], words[1:]
        handler = getattr(self, f"_cmd_{cmd}", None)
        if handler is None:
            raise UsageError(f"unknown %brute subcommand {cmd!r}\n{SUBCOMMANDS}")
        try:
            return handler(rest)
        except BruteError as exc:
            raise UsageError(str(exc)) from None

    def _help(self, rest: list[str] | None = None) -> None:
        if rest == ["config"]:
            from brute_nb.notebook.front import config_help

            print(config_help.text())
            return
        print(SUBCOMMANDS)

    _cmd_help = _help

    def _cmd_log(self, rest: list[str]) -> Any:
        return self.registry.current().df

    def _cmd_tools(self, rest: list[str]) -> Any:
        return self.registry.current().tool_calls_df

    def _cmd_sessions(self, rest: list[str]) -> Any:
        from brute_nb.notebook.paths import list_sessions

        return list_sessions(self.registry.current().session_path.parent)

    def _cmd_use(self, rest: list[str]) -> None:
        if len(rest) != 1:
            raise UsageError("usage: %brute use NAME")
        _check_name(rest[0])
        nb = self.registry.use(rest[0])
        state = "continuing" if nb.session_path.exists() else "new"
        print(f"session {nb.name} ({state}): {nb.session_path}")

    def _cmd_reset(self, rest: list[str]) -> None:
        nb = self.registry.current()
        backup = nb.reset()
        print(f"session {nb.name} starts afresh; its settings are kept (%brute config lists them, "
              "%brute config KEY=default puts one back)" + (f"\nthe old file is kept as {backup}" if backup else ""))

    def _cmd_undo(self, rest: list[str]) -> None:
        if len(rest) > 1:
            raise UsageError("usage: %brute undo [PATH] (quote a path with spaces)")
        try:
            print(self.registry.current().undo(rest[0] if rest else None))
        except LookupError as exc:  # nothing recorded for that path
            raise UsageError(f"{exc}; %brute undo with no path reverts the agent's last change") from None

    def _cmd_why(self, rest: list[str]) -> Any:
        if len(rest) != 1 or not rest[0].isidentifier():
            raise UsageError("usage: %brute why NAME (a variable's name, e.g. %brute why df)")
        from brute_nb.notebook.commands.provenance import why

        return why(rest[0], list(self.registry.agents.values()), self.shell.user_ns if self.shell else {})

    def _cmd_fix(self, rest: list[str]) -> None:
        __tracebackhide__ = True
        from brute_nb.notebook.commands import cell_turn

        nb = self.registry.current()
        prompt = cell_turn.fix_prompt(self.shell.user_ns if self.shell else {}, " ".join(rest))
        if prompt is None:
            print(cell_turn.NO_ERROR)
            return
        try:
            cell_turn.run_cell_turn(nb, self.shell, prompt, context=nb.settings.context)
        except NoModelError:
            from brute_nb.notebook.front.key_box import offer

            offer(self.shell, prompt, nb.name)

    def _cmd_system(self, rest: list[str]) -> None:
        """The system prompt as the next turn sends it (rebuilt each turn: date, frames and rules are current)."""
        from brute_nb.notebook.stack import select_tools, system_prompt

        nb = self.registry.current()
        skills = any(t.name == "skill" for t in select_tools(nb.settings.tools, notebook=True))
        print(system_prompt(nb.settings, nb.notebook, nb.root, skills=skills))

    def _cmd_export(self, rest: list[str]) -> None:
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
        nb = self.registry.current()
        messages = list(nb.log)
        if not messages:
            raise UsageError(f"session {nb.name} has no messages yet: nothing to export")
        data = export(messages, fmt, f"{nb.name}: {preview(messages)}")
        folder = nb.session_path.parent.parent  # the notebook's folder: <folder>/<stem>.brute/<session>.jsonl
        target = Path(paths[0]).expanduser() if paths else default_path(nb.session_path, fmt)
        written = write(data, target if target.is_absolute() else folder / target, folder, replace=not paths)
        from IPython.display import display

        text = f"session {nb.name} ({len(messages)} messages) exported as {fmt}: {written}"
        display(shown(written, folder, text), raw=True)

    def _cmd_search(self, rest: list[str]) -> Any:
        from brute_nb.sessions.index import search

        if not rest:
            raise UsageError("usage: %brute search TEXT (the messages of this notebook's sessions that mention it)")
        return search(" ".join(rest), self.registry.current().session_path.parent.parent)

    def _cmd_usage(self, rest: list[str]) -> Any:
        return self.registry.current().usage

    def _cmd_alias(self, rest: list[str]) -> None:
        from brute_nb.notebook.commands.model_commands import alias

        alias(rest)

    def _cmd_models(self, rest: list[str]) -> None:
        from brute_nb.notebook.commands.model_commands import models

        models(self.registry.current())

    def _cmd_keys(self, rest: list[str]) -> None:
        from brute_nb.notebook.commands.model_commands import keys

        keys(rest)

    def _cmd_live(self, rest: list[str]) -> None:
        """Every session of this kernel leaves its recording; ``BRUTE_LIVE=1`` is what the demos' setup cells read,
        so running one again keeps it live. No restart: the next turn builds its model from the keys."""
        import os

        from brute_nb.notebook.front.key_box import offer
        from brute_nb.providers.catalog import key_source

        if rest:
            raise UsageError("usage: %brute live")
        os.environ["BRUTE_LIVE"] = "1"
        for nb in self.registry.agents.values():
            nb.go_live()
        nb = self.registry.current()
        try:
            provider = nb.model_provider()
        except NoModelError:
            offer(self.shell, None, nb.name)
            return
        label = getattr(provider, "label", type(provider).__name__)
        name = label.split(":")[0]
        source = key_source({"openai-responses": "openai"}.get(name, name))
        print(f"live: the next %%brute cells go to {label}" + (f" (key: {source})" if source else ""))

    def _cmd_plugins(self, rest: list[str]) -> None:
        from brute_nb.notebook.commands.model_commands import installed

        installed()

    def _cmd_chat(self, rest: list[str]) -> Any:
        from brute_nb.notebook.front.widget import chat

        if rest not in ([], ["--side"]):
            raise UsageError("usage: %brute chat [--side]")
        return chat(session=self.registry.current_name, side=bool(rest))

    _cmd_widget = _cmd_chat

    def _cmd_config(self, rest: list[str]) -> None:
        reg = self.registry
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
        print(f"notebook:       {_here(loc.path)}  (from {loc.source})")
        print(f"session:        {nb.name}  ->  {_here(nb.session_path)}")
        print(f"root:           {_here(nb.root)}")
        print(f"{'model:':<15} {s.model}")
        print(f"{'tools:':<15} {st.describe_tools(s.tools)}")
        for key in ("max_iterations", "window", "context", "replay", "record", "approve"):
            value = getattr(s, key)
            print(f"{key + ':':<15} {_here(value) if key in ('replay', 'record') and value else value}")
        from brute_nb.middleware.budget import limits_text

        # a sub-cent ceiling as itself ($0.00005, not 5e-05); none set: "{}", as the demos recorded it
        print(f"{'budget:':<15} {limits_text(s.budget) if s.budget else s.budget}")
        if not s.summarize:  # shown when off only: the default listing (recorded in the demos) stays as it was
            print(f"{'summarize:':<15} False  (compaction stops at the free rungs)")
        if not s.final_answer:
            print(f"{'final_answer:':<15} False  (a turn stopped by a limit ends without the model's answer)")
        for key in ("mcp", "base_url", "options", "server_tools"):  # shown once set (older outputs stay as recorded)
            if getattr(s, key):
                print(f"{key + ':':<15} {getattr(s, key)}")
        if s.confirm_above is not None and s.confirm_above != float("inf"):  # shown once set, like the ones above
            from brute_nb.cost import format_usd

            print(f"{'confirm_above:':<15} {format_usd(s.confirm_above)}  (a map that may cost more asks first)")
        if s.api_key:  # a key typed here is never shown; a variable's name or "none" is no secret
            shown = s.api_key if s.api_key.lower() == "none" or s.api_key.startswith("env:") else "(set, not shown)"
            print(f"{'api_key:':<15} {shown}")
        if reg.debug:
            print(f"{'debug:':<15} True  (brute_nb's errors show their full traceback)")
        print(f"{'system:':<15} {'(default)' if s.system is None else s.system}")


def _parse_context(value: str) -> int:
    """``--context N`` is this cell's only (``%brute config context=N`` keeps it), checked as the setting is."""
    try:
        return int(st.parse_settings({"context": value})["context"])
    except SettingsError as exc:
        raise UsageError(str(exc)) from None


def _refuse_map_options(args: Any) -> None:
    """A map's option on a plain turn is refused before anything is sent: ignored, ``--estimate`` would pay for
    the very prompt the user asked to price. A single turn is not estimated: what it sends is this session's whole
    history, and how many calls it makes depends on the replies, so the cap it can have is a budget."""
    given = [flag for flag, value in (("--estimate", args.estimate), ("--batch", args.batch),
                                      ("--concurrency", args.concurrency)) if value]
    if not given:
        return
    hint = ("; a single turn cannot be priced beforehand (it sends the session's history, and the replies decide "
            "how many calls it makes): cap it with --budget cost=0.50" if "--estimate" in given else "")
    raise UsageError(f"{given[0]} works with --over DF (a map over a DataFrame's rows), and this cell has no "
                     f"--over, so nothing was sent{hint}")


def _check_name(name: str) -> None:
    from brute_nb.notebook.paths import check_session_name

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


def parse_options(line: str) -> Any:
    """``%%brute`` options, split as a shell would: ``--system "Be brief."`` gives ``Be brief.`` (IPython's own
    ``parse_argstring`` splits in non-POSIX mode, which keeps the quotes in the value)."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"%%brute {line.strip()}: {exc}") from None
    return BruteMagics.brute.parser.parse_args(words)


class _Usage(MagicHelpFormatter):
    """``usage: %%brute ...`` instead of IPython's ``::`` code-block opener (meant for Sphinx, shown raw by ``?``)."""

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: Any = None) -> None:
        argparse.HelpFormatter.add_usage(self, usage, actions, groups, "usage: ")


def _help_text() -> str:
    """``%%brute?``: the cell magic's usage first (the line magic's subcommands follow in ``%brute help``)."""
    parser = BruteMagics.brute.parser
    parser.prog = "%%brute"
    parser.formatter_class = _Usage
    return str(parser.format_help())


BruteMagics.brute.__doc__ = _help_text()


def _here(path: Any) -> str:
    """A path as ``%brute config`` shows it: relative to the kernel's folder (Jupyter starts a kernel in its
    notebook's) when it is inside it, whole when it is elsewhere."""
    full = Path(path).absolute()
    try:
        return str(full.relative_to(Path.cwd())) or "."
    except ValueError:
        return str(path)


def _is_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))
