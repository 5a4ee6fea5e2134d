"""The chat panel's static copy: the transcript and status as plain HTML, an output of its own beside the panel.

A widget output only renders while its model lives in the kernel. After a restart, or in a notebook reopened
without its kernel, JupyterLab shows "Error displaying widget: model not found" and never the ``text/html`` the
same output carries. So a displayed panel publishes two outputs: this copy (with a display id), then the widget.
``STYLE`` (in the copy, so it needs no kernel or widget code) shows exactly one of them: the copy hides while a
live panel is rendered in its output area; the widget output hides while its node holds no element (its error
line, or the wait for its model; not the panel's own text-only buttons); after a kernel restart the panel's script
marks the area ended (``brute-chat-ended``) and the copy takes the dead panel's place.
nbconvert, GitHub and nbviewer show the copy. It opens with a line saying it is a saved copy and the exact lines that
bring a live panel back over the same session (``revive``): shown alone, it must not read as a chat with no Send.

The copy follows the conversation: it is published again under its display id after every turn (nbclient and
nbconvert store the last one). Its HTML is the panel's own, already sanitised (``render``), and the style is ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any
from uuid import uuid4

ENDED = "brute-chat-ended"

STYLE = (
    "<style>"
    ".jp-OutputArea:has(.brute-transcript):not(.brute-chat-ended) .brute-chat-static{display:none}"
    # Only the widget output's own node, which holds text alone while it waits ("Loading widget...") or failed
    # ("Error displaying widget: model not found"); a button inside the live panel has text alone too.
    ".jp-OutputArea:has(.brute-chat-static) .jp-OutputArea-output:not(:has(*)){display:none}"
    ".brute-chat-ended .jupyter-widgets{display:none}"
    # In JupyterLab's side area (front/side.py) the panel has no cell to number, and the side area lays its outputs
    # in a row: the copy and the panel take its whole width, one above the other.
    ".jupyterlab-sidecar:has(.brute-chat-static){flex-direction:column}"
    ".jupyterlab-sidecar:has(.brute-chat-static) .jp-OutputArea-prompt{display:none}"
    "</style>"
)


def revive(session: str, side: bool) -> str:
    """What to type in a cell for a live panel over ``session`` in a kernel that starts afresh (a restarted kernel
    has no extension loaded and its current session is "default")."""
    lines = ["%load_ext brute_nb"]
    if session != "default":
        lines.append(f"%brute use {session}")
    lines.append("%brute chat --side" if side else "%brute chat")
    return "\n".join(lines)


def saved_html(session: str, side: bool) -> str:
    return ('<div class="brute-chat-saved" style="opacity:.75;font-size:90%">'
            "A saved copy of the chat: the kernel it ran in has stopped, so nothing here is live. For a live panel "
            "over the same conversation, run the notebook again, or run this in a cell:"
            f'<pre style="margin:.3em 0">{escape(revive(session, side))}</pre></div>')


def static_bundle(transcript_html: str, status_html: str, text: str, *, session: str = "default",
                  side: bool = False) -> dict[str, str]:
    """The copy's outputs: what it is and how to get a live one, the panel's sanitised transcript and status line;
    the conversation as plain text."""
    html = (f'{STYLE}<div class="brute-chat-static">{saved_html(session, side)}{transcript_html}{status_html}'
            "</div>")
    return {"text/html": html, "text/plain": text}


class StaticCopy:
    """Where a panel's copy is shown: published by ``show`` under one display id, brought up to date by ``update``."""

    def __init__(self) -> None:
        self.display_id = f"brute-chat-{uuid4().hex}"
        self.shown = False

    def show(self, bundle: Mapping[str, Any]) -> None:
        from IPython.display import display

        display(dict(bundle), raw=True, display_id=self.display_id)  # type: ignore[no-untyped-call]
        self.shown = True

    def update(self, bundle: Mapping[str, Any]) -> None:
        """Publish the copy again (nothing before it was shown): every output with its display id follows."""
        if not self.shown:
            return
        from IPython.display import update_display

        update_display(dict(bundle), raw=True, display_id=self.display_id)  # type: ignore[no-untyped-call]
