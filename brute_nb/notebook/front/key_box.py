"""The first ``%%brute`` with no model: one short line, and where a person can click, a box to paste a key
(``views.key_entry``, the one the chat panel shows too).

jupyter-ai has a settings screen for this; here the box comes to the cell that needed it. In a notebook front end
(a kernel whose client allows stdin: JupyterLab, Notebook 7) the cell shows a password box, the provider it is for
and two buttons: "use for this kernel" (the key goes into this kernel's environment only, as if set there) and
"save" (``providers.keys``: the user's config, readable by them only). Either way the box turns into the session's
chat panel and sends the cell's prompt, so the same cell runs without a restart (as "Fix with brute" does: the
click arrives after the cell has ended, when the kernel is free to hear it). The key never stays in the widget.

Where no one can click (a terminal, nbclient), the line says the next thing to type. The cell still fails (a short
``UsageError``), so "Run all" stops at the first cell that needs a model rather than showing a box in every one.
"""

from __future__ import annotations

from html import escape
from typing import Any

from IPython.core.error import UsageError

from brute_nb.notebook.views.key_entry import KeyEntry
from brute_nb.providers import profiles

IN_NOTEBOOK = "no model key yet: paste one in the box above, and this cell runs (no restart)"
IN_NOTEBOOK_NO_PROMPT = "no model key yet: paste one in the box above, then run your %%brute cell again"
READY = "the key is set: the next %%brute cells go to a real model"
_FIRST, _THEN = profiles.key_names(2)
IN_TERMINAL = f"no model key yet: type %brute keys set {_FIRST} (or {_THEN}), then run this cell again"
HEADLESS = f"no model key yet: run brute-nb keys set {_FIRST} (or {_THEN}) in a terminal, then run this notebook again"
STYLE = ("<style>.jp-OutputArea:has(.brute-key-box .brute-chat) "
         ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']{display:none}</style>")
"""Once the box has become the chat panel, the line saying there was no key is out of date: JupyterLab hides it
(the saved notebook keeps it, as the cell's error)."""


def offer(shell: Any, prompt: str | None, session: str) -> None:
    """Show the box where someone can use it, then end the cell with the one short line. With no ``prompt``
    (``%brute live``), the box only takes the key; the user runs their cell again."""
    from brute_nb.notebook.approvals import stdin_available

    in_kernel = getattr(shell, "kernel", None) is not None
    if in_kernel and stdin_available():
        from IPython.display import display

        display({"text/html": STYLE, "text/plain": ""}, raw=True)  # type: ignore[no-untyped-call]
        display(panel(prompt, session))  # type: ignore[no-untyped-call]
        raise UsageError(IN_NOTEBOOK if prompt is not None else IN_NOTEBOOK_NO_PROMPT)
    raise UsageError(IN_TERMINAL if stdin_available() else HEADLESS)


def panel(prompt: str | None, session: str) -> KeyEntry:
    """The box (``views.key_entry``); once a key is set it becomes the session's chat panel and sends ``prompt``,
    or, with no ``prompt`` to send, says that the key is set."""

    def then(entry: KeyEntry) -> None:
        if prompt is None:
            entry.children = (entry.status,)
            entry.status.value = escape(READY)
            return
        from brute_nb.notebook.front.widget import chat

        chat_panel = chat(session=session)
        entry.children = (chat_panel,)
        chat_panel.send(prompt)

    return KeyEntry(then)
