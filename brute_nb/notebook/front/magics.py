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

from brute_nb.amounts import parse_int
from brute_nb.errors import BruteError, NoModelError, SettingsError
from brute_nb.fill import expand
from brute_nb.notebook import settings as st
from brute_nb.notebook.front import subcommands
from brute_nb.notebook.front.subcommands import check_name
from brute_nb.providers import profiles
from brute_nb.transports import server_tool_names

if TYPE_CHECKING:
    from brute_nb.notebook.registry import Registry

@magics_class
class BruteMagics(Magics):
    def __init__(self, shell: Any, registry: Registry) -> None:
        super().__init__(shell)
        self.registry = registry

    @magic_arguments()
    @argument("subcommand", nargs="*", help=f"(line magic only) {', '.join(subcommands.NAMES)}")
    @argument_group("model", "which model answers, and how it is reached")
    @argument("-m", "--model", help=f"PROVIDER:MODEL, e.g. {', '.join(profiles.model_examples())}, "
                                    f"{profiles.key_names(3)[2]}:..., llm:MODEL, or an alias (%%brute alias)")
    @argument("-o", "--option", action="append", help="a provider parameter KEY=VALUE (repeatable), e.g. "
                                                        "-o temperature=0.2; checked against the SDK; -o none "
                                                        "clears them (another provider's -m does too)")
    @argument("--base-url", help=f"{profiles.SERVERS}, e.g. http://localhost:8000/v1")
    @argument("--system", help="the system prompt (default: one describing the notebook and workspace)")
    @argument("--replay", help="replay recorded model traffic from this cassette (offline)")
    @argument("--record", help="record the model traffic of live runs to this cassette")
    @argument_group("tools", "what the agent may do, and where")
    @argument("--tools", help="all | read-only | none | name,name | +python (default: all)")
    @argument("--server-tools", help=f"tools the provider runs itself, name,name | none: {server_tool_names.summary()}")
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
        from brute_nb.notebook.front.map_api import estimate
        from brute_nb.notebook.front.map_api import map as map_rows

        try:
            checked = st.parse_settings({"model": args.model, "max_iterations": args.max_iterations})
            options: dict[str, Any] = {
                **checked, "system": args.system, "tools": args.tools, "root": args.root,
                "concurrency": args.concurrency and parse_int("--concurrency", args.concurrency),
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
            check_name(args.session)
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
        return subcommands.run_line(self, line)


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
    """``%%brute?`` and ``%brute?``: the cell magic's usage, then the line magic's subcommands from their table."""
    parser = BruteMagics.brute.parser
    parser.prog = "%%brute"
    parser.formatter_class = _Usage
    return f"{parser.format_help()}\nsubcommands of the line magic, %brute SUBCOMMAND:\n{subcommands.help_text()}\n"


BruteMagics.brute.__doc__ = _help_text()


def _is_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))
