"""The chat widget's message box: a textarea whose Enter sends and Shift+Enter makes a new line.

ipywidgets' ``Textarea`` sends no key events, so the kernel cannot tell Enter from Shift+Enter; this is an
``anywidget`` with a small inline ES module that can. It owns the one key rule: Enter without Shift (and not while an
input method is composing) sends the text as a ``{"type": "submit", "value": text}`` custom message and clears the
box; every other key, Shift+Enter included, edits the text as a textarea does. The ``value`` trait mirrors the box
both ways, so code can read and set ``chat.input.value``. Imported only when a chat widget is built (anywidget
imports ipywidgets), never by ``%load_ext``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

PLACEHOLDER = "Message the agent (Enter sends, Shift+Enter for a new line)"

# The box is cleared at Enter in the browser, before the kernel hears of it: a kernel busy with a cell handles the
# message only later, and a second Enter meanwhile must not send the same text twice. The text travels in the
# message itself, so what is sent is what was on screen. Shift+Enter inserts its newline itself: JupyterLab cancels a
# line break typed anywhere inside a cell (its output included), keeping Shift+Enter for "run cell"; an inserted text
# tells Lab the key was used, so it runs no cell either. stopPropagation keeps the notebook's own handlers out.
ESM = Path(__file__).with_name("chat_input.js")

# JupyterLab's own variables, so the box matches the theme (light or dark); plain fallbacks elsewhere.
CSS = Path(__file__).with_name("chat_input.css")


class ChatInput(anywidget.AnyWidget):
    """The message box: ``value`` is its text; ``on_submit(fn)`` calls ``fn(text)`` when Enter sends it."""

    _esm = ESM
    _css = CSS
    value = traitlets.Unicode("").tag(sync=True)
    placeholder = traitlets.Unicode(PLACEHOLDER).tag(sync=True)
    disabled = traitlets.Bool(False).tag(sync=True)
    rows = traitlets.Int(3).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._submit_handlers: list[Callable[[str], None]] = []
        self.on_msg(self._on_message)

    def on_submit(self, handler: Callable[[str], None]) -> None:
        """Call ``handler(text)`` each time the user presses Enter (without Shift) in the box."""
        self._submit_handlers.append(handler)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "submit" or self.disabled:
            return
        text = content.get("value")
        text = str(text) if text is not None else self.value  # a front-end that syncs ``value`` first
        self.value = ""
        for handler in self._submit_handlers:
            handler(text)
