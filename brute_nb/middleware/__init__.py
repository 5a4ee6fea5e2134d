"""Middleware: one concern a module, each ``Middleware(app, **options)`` awaited as ``await mw(env)``; ``stack``
holds ``default_stack()``, all of them in their one order.

Names load on first use (PEP 562): ``SessionLog`` pulls in anyio and the tool pipeline pulls in every tool,
which ``%load_ext brute_nb`` must not pay for.
"""

from typing import TYPE_CHECKING, Any

from brute_nb import _lazy

if TYPE_CHECKING:
    from brute_nb.middleware.approvals import Approvals
    from brute_nb.middleware.compaction import DefaultCompactionPipeline
    from brute_nb.middleware.doom_loop import DoomLoopDetection
    from brute_nb.middleware.final_answer import FinalAnswer
    from brute_nb.middleware.partial_reply import PartialReply
    from brute_nb.middleware.retry import RetryReply
    from brute_nb.middleware.session_log import SessionLog
    from brute_nb.middleware.stack import default_stack
    from brute_nb.middleware.system_prompt import SystemPrompt
    from brute_nb.middleware.tool_pipeline import DefaultToolPipeline
    from brute_nb.middleware.tool_result_loop import MaxIterations, ToolResultLoop

_EXPORTS = _lazy.exports({
    "brute_nb.middleware.approvals": ("Approvals",),
    "brute_nb.middleware.compaction": ("DefaultCompactionPipeline",),
    "brute_nb.middleware.doom_loop": ("DoomLoopDetection",),
    "brute_nb.middleware.final_answer": ("FinalAnswer",),
    "brute_nb.middleware.partial_reply": ("PartialReply",),
    "brute_nb.middleware.retry": ("RetryReply",),
    "brute_nb.middleware.tool_result_loop": ("MaxIterations", "ToolResultLoop"),
    "brute_nb.middleware.session_log": ("SessionLog",),
    "brute_nb.middleware.stack": ("default_stack",),
    "brute_nb.middleware.system_prompt": ("SystemPrompt",),
    "brute_nb.middleware.tool_pipeline": ("DefaultToolPipeline",),
})


def __getattr__(name: str) -> Any:
    return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)


__all__ = [
    "Approvals",
    "DefaultCompactionPipeline",
    "DefaultToolPipeline",
    "DoomLoopDetection",
    "FinalAnswer",
    "MaxIterations",
    "PartialReply",
    "RetryReply",
    "SessionLog",
    "SystemPrompt",
    "ToolResultLoop",
    "default_stack",
]
