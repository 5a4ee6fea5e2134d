"""Settings of a kernel-resident agent: what ``%%brute`` options and ``%brute config`` change.

Parsing lives here (pure, tested without a kernel) so every bad value gets one clear ``UsageError``-style
message saying what is allowed. The invariant: one parser and validator per setting (``PARSERS``), used by all
three ways to set one (``%%brute`` options, ``%brute config k=v``, ``brute_nb.configure``/``chat``), so a value
is accepted or refused, with the same message, whichever way it came (``tests/notebook/test_settings_paths.py``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brute_nb.amounts import parse_cost, parse_int
from brute_nb.errors import BruteError, SettingsError

ToolSpec = str | tuple[Any, ...]
"""A tool selection: a spec string (``all``, ``read-only``, ``none``, ``name,name``, ``+python``), or a tuple of
such names and the user's own tools (already wrapped as ``Adapter``s, so a bad tool fails when configured)."""


@dataclass(frozen=True)
class MCPSetting:
    """``--mcp``: where the servers document came from and the servers it names (read when set, so a bad file
    is refused at once and an edited file, set again, counts as a change)."""

    source: str
    servers: tuple[Any, ...] = ()

    def __str__(self) -> str:
        return f"{self.source} ({', '.join(s.name for s in self.servers) or 'no servers'})"


@dataclass
class Settings:
    model: str | None = None
    system: str | None = None
    tools: ToolSpec = "all"
    max_iterations: int = 50
    root: Path | None = None
    replay: Path | None = None
    record: Path | None = None
    window: int = 200_000
    notebook: str | None = None
    approve: dict[str, str] = field(default_factory=dict)
    budget: dict[str, float] = field(default_factory=dict)
    summarize: bool = True
    """Compaction's last rung: fold old turns into a summary written by the session's own model (Brute's ladder)."""
    context: int = 0
    """Executed cells sent with each prompt as context (``--context N``); not part of the stack."""
    mcp: MCPSetting | None = None
    base_url: str | None = None
    """An OpenAI-compatible server (``--base-url``); None when unset or cleared. It belongs to the provider it was given
    with: a later ``--model`` of another provider clears it (``NotebookAgent.configure``)."""
    api_key: str | None = field(default=None, repr=False)
    """A key given for ``base_url`` (or ``env:NAME``, or ``none``); never shown (``providers.credentials``)."""
    options: dict[str, Any] = field(default_factory=dict)
    """Provider parameters (``-o temperature=0.2``), checked against the SDK when the provider is built. Like
    ``base_url`` they belong to the provider they were given with (a later ``--model`` of another provider clears
    them); ``none`` clears them."""
    stall_timeout: float | None = None
    """Seconds a streamed reply may send nothing before the call fails; None: ``BRUTE_STALL_TIMEOUT`` or 90 s."""
    server_tools: tuple[Any, ...] = ()
    """Tools the provider runs itself (``--server-tools web_search``): ``brute_nb.tools.server.ServerTool``s."""
    final_answer: bool = True
    """A turn stopped by a limit ends with one more model call, without tools, for the model's answer."""
    confirm_above: float | None = None
    """USD: a ``map`` whose estimate may cost more asks before it sends anything (``map.confirm``); None never
    asks (``confirm_above=none`` sets infinity, which never asks either and survives ``updated``)."""

    def stack_key(self) -> tuple[Any, ...]:
        """The settings the agent's stack is built from; a change rebuilds it (keeping its state)."""
        return (self.model, self.system, self.tools, self.max_iterations, self.root, self.replay, self.record,
                self.window, tuple(sorted(self.approve.items())), tuple(sorted(self.budget.items())), self.summarize,
                self.mcp, self.base_url, self.api_key, repr(sorted(self.options.items())), self.stall_timeout,
                self.final_answer, self.server_tools)

    def updated(self, **changes: Any) -> Settings:
        """These settings with ``changes`` applied as given: a None is a setting put back to its default (None),
        since ``parse_settings`` has already left out what the user did not give."""
        return dataclasses.replace(self, **changes)


def parse_tools(spec: str | Iterable[Any]) -> ToolSpec:
    """``all``, ``read-only``, ``none``, or a comma list of tool names (``+name`` adds to all).

    From Python it may also be a list mixing such names with tools in any shape ``Adapter.wrap`` takes
    (``Tool`` subclasses, ``@tool`` functions, dicts, ``ToolPipeline``, ``SubAgent``):
    ``configure(tools=["all", Weather, word_count])``. Each tool is checked now, every problem listed at once.
    """
    if isinstance(spec, str):
        spec = spec.strip()
        if not spec:
            raise SettingsError("--tools needs a value: all, read-only, none, or names like read,fs_search")
        return spec
    from brute_nb.errors import ToolDefinitionError
    from brute_nb.tools.adapter import Adapter

    items: list[Any] = []
    problems: list[str] = []
    for item in spec:
        if isinstance(item, str):
            items.append(parse_tools(item))
            continue
        try:
            items.append(Adapter.wrap(item))
        except ToolDefinitionError as exc:
            problems.append(str(exc))
    if problems:
        raise SettingsError("tools: cannot use these tools:\n" + "\n".join(problems))
    if not items:
        raise SettingsError("tools needs at least one entry: 'all', 'none', tool names or your own tools")
    return tuple(items)


def describe_tools(spec: ToolSpec) -> str:
    """The selection as text (``%brute config``): names as given, the user's tools by name."""
    if isinstance(spec, str):
        return spec
    return ",".join(item if isinstance(item, str) else item.name for item in spec)


def parse_seconds(name: str, value: str | float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be a number of seconds, got {value!r}") from None
    if not number > 0 or number == float("inf"):
        raise SettingsError(f"{name} must be a number of seconds above 0, got {value!r}")
    return number


def parse_bool(name: str, value: str | bool) -> bool:
    """``true``/``false`` (also yes/no, on/off, 1/0), any case."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise SettingsError(f"{name} takes true or false, got {value!r}")


def parse_pairs(name: str, spec: str) -> dict[str, str]:
    """``a=b,c=d`` -> ``{"a": "b", "c": "d"}``, with an error naming the bad piece."""
    pairs = {}
    for piece in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = piece.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise SettingsError(f"{name} takes key=value pairs separated by commas; {piece!r} is not one")
        pairs[key.strip()] = value.strip()
    return pairs


def parse_model(spec: str) -> str:
    """``provider:model``, or an alias saved with ``%brute alias`` (stored resolved, so a later edit of the alias
    does not silently change a session's model)."""
    from brute_nb import plugins
    from brute_nb.providers import profiles
    from brute_nb.providers.aliases import resolve
    from brute_nb.providers.auto import is_provider

    if not isinstance(spec, str):
        raise SettingsError(f"--model takes PROVIDER:MODEL as text, got {type(spec).__name__}")
    spec = resolve(spec.strip())
    pasted = profiles.key_like(spec)  # typed, or an alias's target in a hand-edited file
    if pasted is not None:
        raise SettingsError(profiles.pasted_key("the --model given", pasted))
    provider, sep, model = spec.partition(":")

    if not sep or not is_provider(provider) or not model:
        raise SettingsError(
            f"--model takes PROVIDER:MODEL, e.g. {', '.join(profiles.model_examples())} or llm:MODEL (any "
            f"model an installed llm plugin offers); providers: {', '.join(plugins.names(plugins.PROVIDERS))}; "
            f"got {spec!r}"
        )
    return spec


def parse_approve(spec: str | dict[str, str]) -> dict[str, str]:
    """``shell=allow,python=ask`` -> a policy; every bad class or mode is named at once."""
    from brute_nb.middleware.approvals import MODES, RISK_CLASSES, policy_problems

    pairs = parse_pairs("--approve", spec) if isinstance(spec, str) else dict(spec)
    problems = policy_problems(pairs)
    if problems:
        raise SettingsError(f"--approve: {'; '.join(problems)}. Example: --approve shell=allow,python=ask "
                            f"(classes: {', '.join(RISK_CLASSES)}; modes: {', '.join(MODES)})")
    return pairs


def parse_budget(spec: str | dict[str, Any]) -> dict[str, float]:
    """``tokens=50000,tools=30,time=300,session_tokens=1e6`` -> ceilings; every bad piece is named at once."""
    from brute_nb.middleware.budget import OPTIONS

    pairs = parse_pairs("--budget", spec) if isinstance(spec, str) else dict(spec)
    limits: dict[str, float] = {}
    problems = []
    for key, value in pairs.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = -1.0
        if key not in OPTIONS:
            problems.append(f"unknown budget {key!r}")
        elif number < 0:
            problems.append(f"{key} must be a non-negative number, got {value!r}")
        else:
            limits[key] = number
    if problems:
        raise SettingsError(f"--budget: {'; '.join(problems)}. Budgets: {', '.join(OPTIONS)}")
    return limits


def parse_mcp(spec: Any) -> MCPSetting:
    """A servers document (a JSON file path or the dict), or ``none`` to stop using MCP servers."""
    from brute_nb.tools.mcp_config import load

    if isinstance(spec, str) and spec.strip().lower() in ("none", "off", ""):
        return MCPSetting("none")
    source = str(Path(spec).expanduser().resolve()) if isinstance(spec, str | Path) else "dict"
    return MCPSetting(source, tuple(load(source if source != "dict" else spec)))


def parse_options(spec: Any) -> dict[str, Any]:
    """``-o`` pairs (a list of ``KEY=VALUE``, a ``;``-separated string, or a dict) as provider parameters; ``none``
    (``-o none``, ``options=none``) clears them."""
    from brute_nb.providers.options import parse_pairs, remember_secret_headers

    if isinstance(spec, dict):
        options = dict(spec)
    else:
        pairs = spec.split(";") if isinstance(spec, str) else list(spec)
        if [p.strip().lower() for p in pairs] in (["none"], ["off"]):
            return {}
        options = parse_pairs(p for p in pairs if p.strip())
    remember_secret_headers(options)  # a gateway's key in a header: redacted from the listing on, like api_key=
    return options


def parse_root(value: str | Path) -> Path:
    """The workspace root: an existing folder (a typo would leave every file tool refusing every path)."""
    root = Path(value).expanduser()
    if not root.is_dir():
        raise SettingsError(f"--root {str(value)!r} is not a folder")
    return root.resolve()


def parse_notebook(value: Any) -> str:
    """The notebook this kernel runs, as the user names it (any folder: it is theirs), or "" to find it again.

    Its ``<stem>.brute`` folder beside it holds every session and map run, so a name no system takes, or a folder
    named instead of the notebook (whose sessions would go beside that folder, into its parent), is refused here,
    by name, not found later as a ``ValueError`` inside a turn or a run."""
    text = str(value).strip()
    if not text:
        return ""
    shown = repr(text if len(text) <= 60 else text[:60] + "...")
    path = Path(text).expanduser()
    try:
        os.stat(path)
    except FileNotFoundError:  # not saved yet (its folder, too): the first session makes what it needs
        return text
    except (OSError, ValueError) as exc:
        raise SettingsError(f"notebook={shown} cannot name a file ({type(exc).__name__}: "
                            f"{getattr(exc, 'strerror', None) or exc})") from None
    if path.is_dir():
        raise SettingsError(f"notebook={shown} is a folder: name the notebook file in it (like {text.rstrip('/')}"
                            "/analysis.ipynb)")
    return text


def parse_replay(value: str | Path) -> Path:
    """A cassette to replay: an existing file (a missing one would only fail at the first turn)."""
    path = Path(value).expanduser().resolve()
    if not path.is_file():
        raise SettingsError(f"--replay {str(value)!r}: no such cassette file")
    return path


def parse_server_tools(spec: Any) -> tuple[Any, ...]:
    """``web_search,web_fetch``, ``none``, or from Python a list of names and ``ServerTool(...)``s."""
    from brute_nb.errors import ToolDefinitionError
    from brute_nb.tools.server import server_tools

    try:
        return server_tools(spec)
    except ToolDefinitionError as exc:
        raise SettingsError(f"--server-tools: {exc}") from None


def parse_base_url(value: str) -> str:
    """An http(s) URL, or ``none`` (also ``off`` or nothing) to clear it: "" is the cleared value."""
    from urllib.parse import urlsplit

    from brute_nb.providers import profiles

    text = str(value).strip()
    if text.lower() in ("none", "off", ""):
        return ""
    pasted = profiles.key_like(text)
    if pasted is not None:
        raise SettingsError(profiles.pasted_key("the --base-url given", pasted))
    try:
        parts = urlsplit(text)
        url = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # a malformed [IPv6] host
        url = False
    if not url or any(c.isspace() or ord(c) < 32 for c in text):  # a line break would split a request's headers
        raise SettingsError(f"--base-url {text!r} is not an http(s) URL; give one like http://localhost:8000/v1, "
                            "or none to clear it")
    return text


def parse_api_key(value: str) -> str:
    """A key for the base URL: the key, ``env:NAME`` (a variable read when the client is built), ``none`` for a
    server that takes no key; nothing (``api_key=``) clears it. A key typed here is redacted from then on."""
    from brute_nb.providers.credentials import is_key
    from brute_nb.redact import remember

    text = str(value).strip()
    if text.startswith("env:") and not text[4:].strip().isidentifier():
        raise SettingsError(f"api_key={text!r}: name an environment variable after env:, like env:MY_PROXY_KEY")
    if is_key(text):
        remember(text)
    return text


def _pairs_text(value: Any) -> Any:
    """``a=b;c=d`` reads as ``a=b,c=d`` (a ``%brute config`` value cannot hold a comma-free list otherwise)."""
    return value.replace(";", ",") if isinstance(value, str) else value


PARSERS: dict[str, Callable[[Any], Any]] = {
    "notebook": parse_notebook,
    "model": lambda v: parse_model(str(v)),
    "tools": parse_tools,
    "system": str,
    "max_iterations": lambda v: parse_int("--max-iterations", v),
    "root": parse_root,
    "replay": parse_replay,
    "record": lambda v: Path(v).expanduser().resolve(),
    "window": lambda v: parse_int("window", v),
    "approve": lambda v: parse_approve(_pairs_text(v)),
    "budget": lambda v: parse_budget(_pairs_text(v)),
    "summarize": lambda v: parse_bool("summarize", v),
    "context": lambda v: parse_int("--context", v, minimum=0),
    "mcp": parse_mcp,
    "base_url": parse_base_url,
    "api_key": parse_api_key,
    "options": parse_options,
    "stall_timeout": lambda v: parse_seconds("stall_timeout", v),
    "server_tools": parse_server_tools,
    "debug": lambda v: parse_bool("debug", v),
    "final_answer": lambda v: parse_bool("final_answer", v),
    "confirm_above": lambda v: parse_cost("confirm_above", v),
}
"""One parser and validator per setting, shared by ``%%brute`` options, ``%brute config k=v`` and
``brute_nb.configure(**options)`` / ``brute_nb.chat(**options)``: each takes the text a user typed or the Python
value, and a bad one gets the same message whichever way it came. A message names a setting as ``%%brute``
spells it when it is an option there (``--max-iterations``), else by its key (``window``)."""

KEYS = tuple(PARSERS)
"""What ``%brute config key=value`` and ``configure`` set; the help text and the unknown-key error list them."""

KERNEL_KEYS = ("notebook", "debug")
"""Settings of the kernel (where the notebook is, how errors show), not of one session."""

RESET = ("default", "")
"""What puts any setting back to its default, whatever else it takes: ``KEY=default``, or nothing (``KEY=``)."""

NONE_CLEARS = frozenset({"model", "system", "root", "replay", "record", "approve", "budget", "context", "mcp",
                         "base_url", "options", "stall_timeout", "server_tools", "confirm_above", "notebook"})
"""Settings whose ``none`` (or ``off``) is nothing set, which is their default. ``tools=none`` (no tools) and
``api_key=none`` (a server that takes no key) say something else; the settings that always hold a number or
true/false (max_iterations, window, summarize, final_answer, debug) have no none (``summarize=off`` is false)."""


def default_of(key: str) -> Any:
    """The value a setting starts with (``Settings``' field default; ``debug``, the registry's, is off)."""
    field_ = {f.name: f for f in dataclasses.fields(Settings)}.get(key)
    if field_ is None:
        return False
    return field_.default_factory() if field_.default_factory is not dataclasses.MISSING else field_.default


def _parse(key: str, value: Any) -> Any:
    """One setting's value: its default for a reset word, else what its parser makes of it; a ``none`` refused
    says what puts the setting back instead."""
    text = value.strip().lower() if isinstance(value, str) else None
    if text in RESET or (key in NONE_CLEARS and text in ("none", "off")):
        return default_of(key)
    try:
        return PARSERS[key](value)
    except (BruteError, ValueError, TypeError) as exc:
        if text == "none":
            raise SettingsError(f"{exc}; {key}=default puts back its default ({default_of(key)})") from None
        raise


def parse_settings(options: Mapping[str, Any]) -> dict[str, Any]:
    """Every option checked (``-`` and ``_`` alike in keys; None means "leave as is"); every problem named at once.
    ``default`` or nothing (and ``none`` where it is nothing: ``NONE_CLEARS``) gives the setting's default.

    Tool names and provider parameters need the stack and the SDK: the session checks those when it applies the
    result (``NotebookAgent.configure``)."""
    changes: dict[str, Any] = {}
    problems: list[Exception] = []
    unknown: list[str] = []
    for raw, value in options.items():
        key = raw.replace("-", "_")
        if key not in PARSERS:
            unknown.append(repr(raw))
        elif value is not None:
            try:
                changes[key] = _parse(key, value)
            except (BruteError, ValueError, TypeError) as exc:
                problems.append(exc)
    if unknown:
        problems.insert(0, SettingsError(f"unknown setting {', '.join(unknown)}; settable: {', '.join(KEYS)}"))
    if len(problems) == 1:
        raise problems[0]  # its own type: an OptionError stays one
    if problems:
        raise SettingsError("\n".join(str(p) for p in problems))
    return changes
