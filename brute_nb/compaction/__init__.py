"""Compaction: what to give up when the conversation fills the model's window (the middleware decides when)."""

from brute_nb.compaction.pipeline import Compaction, CompactionPipeline, Layer
from brute_nb.compaction.sliding_window import SlidingWindow
from brute_nb.compaction.steps import Unit, split
from brute_nb.compaction.summary import COMPACTION_PROMPT, Summarize, Summary
from brute_nb.compaction.tokens import TokenCounter
from brute_nb.compaction.tool_results import ToolResults

__all__ = [
    "COMPACTION_PROMPT",
    "Compaction",
    "CompactionPipeline",
    "Layer",
    "SlidingWindow",
    "Summarize",
    "Summary",
    "TokenCounter",
    "ToolResults",
    "Unit",
    "split",
]
