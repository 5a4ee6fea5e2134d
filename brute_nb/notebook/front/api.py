"""Thin, lazily importing entry points for the public API (pandas and ipywidgets load on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from brute_nb.notebook.session import NotebookAgent


def current() -> NotebookAgent:
    """The kernel's current session agent: ``.ask``, ``.log``, ``.df``, ``.tool_calls_df``, ``.undo``, ..."""
    from brute_nb.notebook.registry import current as _current

    return _current()


def chat(session: str | None = None, *, side: bool = False, **options: Any) -> Any:
    """A chat panel (ipywidgets) over the same kernel-resident agent and session as ``%%brute``; ``side=True``
    opens it in JupyterLab's side area, beside the notebook (``%brute chat --side``)."""
    from brute_nb.notebook.front.widget import chat as _chat

    return _chat(session=session, side=side, **options)


def configure(**settings: Any) -> NotebookAgent:
    """Change the current session's settings from Python (``%brute config`` without the printout). They are that
    session's: a new session starts from them, sessions already started keep their own.

    Keys (``settings.KEYS``, checked as ``%%brute`` and ``%brute config`` check them): notebook, model, tools,
    system, max_iterations, root, replay, record, window, approve, budget, summarize, context, mcp, base_url (none
    clears it), api_key (a key for base_url, env:NAME, or none),
    options (a dict of provider parameters, checked against the SDK), debug, final_answer, confirm_above (USD:
    a map that may cost more asks first). ``KEY="default"`` (or ``""``) puts a setting back to its default, as
    ``"none"`` does where none is nothing set (not ``tools``: no tools; not ``api_key``: a server that takes no
    key); ``KEY=None`` leaves it as it is.
    ``tools`` may be a list mixing built-in names and your own tools in any shape (``Tool`` subclass, ``@tool``
    function, dict, ``ToolPipeline``, ``SubAgent``): ``configure(tools=["all", word_count])``.
    """
    from brute_nb.notebook.registry import registry

    return registry().configure(settings)
