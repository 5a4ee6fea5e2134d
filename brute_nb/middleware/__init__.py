"""Middleware: one concern a module, each ``Middleware(app, **options)`` awaited as ``await mw(env)``."""

from brute_nb.middleware.compaction import DefaultCompactionPipeline
from brute_nb.middleware.loop import MaxIterations, ToolResultLoop
from brute_nb.middleware.session_log import SessionLog
from brute_nb.middleware.system_prompt import SystemPrompt
from brute_nb.middleware.tool_pipeline import DefaultToolPipeline

__all__ = [
    "DefaultCompactionPipeline",
    "DefaultToolPipeline",
    "MaxIterations",
    "SessionLog",
    "SystemPrompt",
    "ToolResultLoop",
]
