"""Tools: every shape behind one Adapter, and Brute's built-in coding toolset (``ALL``, ``READ_ONLY``, ``toolset``).

Names load on first use (PEP 562): the overflow cleanup that ``%load_ext brute_nb`` starts imports
``brute_nb.tools.truncation``, which must not pull in every tool (and anyio) with it. The built-in sets live in
``brute_nb.tools.builtin``.
"""

from typing import TYPE_CHECKING, Any

from brute_nb import _lazy

if TYPE_CHECKING:
    from brute_nb.tools.adapter import Adapter, wrap_all
    from brute_nb.tools.base import FunctionTool, Tool, tool
    from brute_nb.tools.builtin import ALL, READ_ONLY, NetFetch, toolset
    from brute_nb.tools.builtin.fetch import Fetch
    from brute_nb.tools.builtin.fs_common import WorkspaceTool
    from brute_nb.tools.builtin.fs_edit import FSPatch, FSRemove, FSUndo, FSWrite
    from brute_nb.tools.builtin.fs_read import FSRead
    from brute_nb.tools.builtin.fs_search import FSSearch
    from brute_nb.tools.builtin.question import Question
    from brute_nb.tools.builtin.shell import Shell
    from brute_nb.tools.builtin.skill import (
        Skill,
        SkillLoad,
        SkillWarning,
        discover_skills,
        skills_prompt,
        skills_section,
    )
    from brute_nb.tools.builtin.todo import TodoRead, TodoWrite
    from brute_nb.tools.context import current_env, use_env
    from brute_nb.tools.mcp_tools import mcp
    from brute_nb.tools.pipeline import ToolPipeline, ValidateParams
    from brute_nb.tools.stores import FileMutationQueue, SnapshotStore, TodoStore
    from brute_nb.tools.subagent import SubAgent
    from brute_nb.tools.truncation import ToolOutput, cleanup, truncate

_EXPORTS = _lazy.exports({
    "brute_nb.tools.adapter": ("Adapter", "wrap_all"),
    "brute_nb.tools.base": ("FunctionTool", "Tool", "tool"),
    "brute_nb.tools.builtin": ("ALL", "NetFetch", "READ_ONLY", "toolset"),
    "brute_nb.tools.context": ("current_env", "use_env"),
    "brute_nb.tools.builtin.fetch": ("Fetch",),
    "brute_nb.tools.builtin.fs_common": ("WorkspaceTool",),
    "brute_nb.tools.builtin.fs_edit": ("FSPatch", "FSRemove", "FSUndo", "FSWrite"),
    "brute_nb.tools.builtin.fs_read": ("FSRead",),
    "brute_nb.tools.builtin.fs_search": ("FSSearch",),
    "brute_nb.tools.mcp_tools": ("mcp",),
    "brute_nb.tools.pipeline": ("ToolPipeline", "ValidateParams"),
    "brute_nb.tools.builtin.question": ("Question",),
    "brute_nb.tools.builtin.shell": ("Shell",),
    "brute_nb.tools.builtin.skill": ("Skill", "SkillLoad", "SkillWarning", "discover_skills", "skills_prompt",
                              "skills_section"),
    "brute_nb.tools.stores": ("FileMutationQueue", "SnapshotStore", "TodoStore"),
    "brute_nb.tools.subagent": ("SubAgent",),
    "brute_nb.tools.builtin.todo": ("TodoRead", "TodoWrite"),
    "brute_nb.tools.truncation": ("ToolOutput", "cleanup", "truncate"),
})


def __getattr__(name: str) -> Any:
    return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)


__all__ = [
    "ALL",
    "READ_ONLY",
    "Adapter",
    "FSPatch",
    "FSRead",
    "FSRemove",
    "FSSearch",
    "FSUndo",
    "FSWrite",
    "Fetch",
    "FileMutationQueue",
    "FunctionTool",
    "NetFetch",
    "Question",
    "Shell",
    "Skill",
    "SkillLoad",
    "SkillWarning",
    "SnapshotStore",
    "SubAgent",
    "TodoRead",
    "TodoStore",
    "TodoWrite",
    "Tool",
    "ToolOutput",
    "ToolPipeline",
    "ValidateParams",
    "WorkspaceTool",
    "cleanup",
    "current_env",
    "discover_skills",
    "mcp",
    "skills_prompt",
    "skills_section",
    "tool",
    "toolset",
    "truncate",
    "use_env",
    "wrap_all",
]
