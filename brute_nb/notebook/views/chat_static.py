"""The chat panel's static copy: the transcript and status as plain HTML, an output of its own beside the panel.

A widget output only renders while its model lives in the kernel. After a restart, or in a notebook reopened
without its kernel, JupyterLab shows "Error displaying widget: model not found" and never the ``text/html`` the
same output carries. So a displayed panel publishes two outputs: this copy (with a display id), then the widget.
``STYLE`` (in the copy, so it needs no kernel or widget code) shows exactly one of them: the copy hides while a
live panel is rendered in its output area; the widget output hides while its node holds no element (its error
line, or the wait for its model; not the panel's own text-only buttons); after a kernel restart the panel's script
marks the area ended (``brute-chat-ended``) and the copy takes the dead panel's place.
nbconvert, GitHub and nbviewer show the copy.

The copy follows the conversation: it is published again under its display id after every turn (nbclient and
nbconvert store the last one). Its HTML is the panel's own, already sanitised (``render``), and the style is ours.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    "</style>"
)


def static_bundle(transcript_html: str, status_html: str, text: str) -> dict[str, str]:
    """The copy's outputs: the panel's sanitised transcript and status line, and the same as plain text."""
    html = f'{STYLE}<div class="brute-chat-static">{transcript_html}{status_html}</div>'
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
