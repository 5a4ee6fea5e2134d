"""A notebook agent's stack: the core's ``default_stack`` (``brute_nb.middleware.stack``), built from its
settings, with what only a kernel has: its tools, its system prompt and a person to ask.

Every layer of the default stack is on: SessionLog (the session file beside the notebook) -> SystemPrompt (built
afresh each turn) -> Approvals (``--approve``, asking in the cell) -> FinalAnswer (unless ``final_answer=false``)
-> ToolResultLoop -> MaxIterations -> Budget (when ``--budget`` is set) -> DoomLoopDetection ->
DefaultCompactionPipeline (the summary written by the session's own model unless ``summarize=false``) ->
DefaultToolPipeline -> PartialReply -> RetryReply -> TurnContext (``--context`` cells) -> the provider.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from brute_nb.agent import Agent
from brute_nb.env import Env
from brute_nb.errors import SettingsError
from brute_nb.notebook.settings import Settings

SYSTEM_PROMPT = """\
You are a coding and data agent working inside a Jupyter notebook{notebook}.
The workspace root is {root}; file tools resolve relative paths against it and refuse paths outside it.
Your replies render as Markdown in the notebook cell, and the user sees every tool call you make, with its \
arguments and result, as a collapsible block. Prefer small, verifiable steps: read before you edit, run the \
tests after you change code, and say plainly what you did and what is left."""


def default_system_prompt(notebook: Path | None, root: Path, *, skills: bool = True,
                          namespace: Mapping[str, Any] | None = None) -> str:
    """Brute's order for a notebook: who the agent is and where, the environment (``<env>``: root, git, platform,
    date, Python and key packages, the kernel's DataFrames), the skills under the root (when the skill tool is on),
    then the project's own rules (AGENTS.md, CLAUDE.md). Built afresh at every turn (what it reads from files is
    kept while they are unchanged: see ``read_instructions``, ``parse_skill``). ``root`` is resolved here, once, so
    the prompt names the real folder and the sections below need not walk it again."""
    from brute_nb.notebook.kernel_tools.environment import environment_section, instructions_section

    root = root.resolve()  # once: the sections below are given the real path
    where = f" ({notebook})" if notebook else ""
    parts = [SYSTEM_PROMPT.format(notebook=where, root=root), environment_section(root, notebook, namespace)]
    if skills:
        from brute_nb.tools.builtin.skill import skills_section

        parts.append(skills_section(root))
    parts.append(instructions_section(root, notebook, resolved=True))
    return "\n\n".join(p for p in parts if p)


def system_prompt(s: Settings, notebook: Path | None, root: Path, *, skills: bool) -> str:
    """The system prompt a turn sends: the user's own (``--system``), else the default built now."""
    if s.system is not None:
        return s.system
    return default_system_prompt(notebook, root, skills=skills, namespace=user_namespace())  # resolves root


def user_namespace() -> Mapping[str, Any] | None:
    """The kernel's user namespace (for the DataFrames the prompt lists), None outside IPython."""
    from IPython import get_ipython

    shell = get_ipython()
    return None if shell is None else shell.user_ns


def select_tools(spec: str | tuple[Any, ...], *, notebook: bool = False) -> list[Any]:
    """The core's ``tools.selection.select_tools``, with the kernel's tools registered so a name finds them
    (``+python``). ``notebook=True`` (a kernel's agent, not a map row) adds the notebook tools to ``all`` and the
    read-only ones (``notebook``, ``variables``) to ``read-only``."""
    from brute_nb.notebook import kernel_tools
    from brute_nb.notebook.kernel_tools.notebook_tools import NOTEBOOK_TOOLS, READ_ONLY_NAMES
    from brute_nb.tools.selection import select_tools as select

    kernel_tools.register()  # done by %load_ext; again here for a notebook agent or map row built without it
    if not notebook:
        return select(spec)
    return select(spec, extra=list(NOTEBOOK_TOOLS.values()),
                  extra_read_only=[NOTEBOOK_TOOLS[n] for n in READ_ONLY_NAMES])


def mcp_tools(session: str, settings: Settings) -> list[Any]:
    """The session's MCP servers (started, restarted or stopped to match ``--mcp``) as tools."""
    servers = settings.mcp.servers if settings.mcp else ()
    if not servers and "brute_nb.tools.mcp_tools" not in sys.modules:
        return []  # never used here: nothing to stop, and no reason to import it
    from brute_nb.tools.mcp_connection import MCPServerError
    from brute_nb.tools.mcp_tools import sync

    try:
        return sync(f"session:{session}", servers)
    except MCPServerError as exc:
        raise SettingsError(f"{exc}\nFix the server or its entry, or stop using it: %brute config mcp=none") from None


def build_agent(s: Settings, *, name: str, session_path: Path, notebook: Path | None,
                provider: Callable[[Env], Any]) -> Agent:
    """The core's ``default_stack`` for settings ``s``, persisting to ``session_path`` and calling ``provider``
    (also the summariser and the final answer's model); every layer is on but those the settings turn off.

    Built from values, not from the session object, so the stack knows nothing above it; the workspace root comes
    from the turn's env (``env["root"]``), as the file tools read it."""
    from brute_nb.middleware.stack import default_stack
    from brute_nb.notebook.approvals import default_asker
    from brute_nb.notebook.paths import session_root

    tools = select_tools(s.tools, notebook=True) + mcp_tools(name, s) + list(s.server_tools)
    skills = any(t.name == "skill" for t in tools)  # listing skills the model cannot load would mislead it

    def system(env: Env) -> str:
        return system_prompt(s, notebook, Path(env.get("root") or Path.cwd()), skills=skills)

    return default_stack(provider, session=session_path, session_root=session_root(session_path), system=system,
                         approve=s.approve, ask=default_asker, final_answer=s.final_answer,
                         max_iterations=s.max_iterations, budget=s.budget, window=s.window,
                         summarize=s.summarize, tools=tools)
