"""The chat panel beside the notebook: the same ``ChatWidget`` (same kernel agent, same session) shown in
JupyterLab's side area through ``sidecar``'s widget, whose prebuilt JupyterLab extension opens a tab there as soon as
the widget is created (no cell has to display it).

The side area holds the panel as a cell would: its static copy, then the live view (``chat_static.STYLE`` shows one
of them), so after a kernel restart the tab shows the saved copy and what to type, as a cell does. One side panel per
session: opening it again (a second Run All) closes the old tab and opens the new panel, which starts where the
session is. ``sidecar`` is imported here, on the first side panel, never at ``%load_ext``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def output(bundle: Mapping[str, Any]) -> dict[str, Any]:
    """One display output of an ``Output`` widget (what ``display`` inside ``with out:`` would have recorded)."""
    return {"output_type": "display_data", "data": dict(bundle), "metadata": {}}


class SideCopy:
    """The static copy of a panel shown in a sidecar: ``show`` and ``update`` write the sidecar's outputs (the copy,
    then the live view), where ``StaticCopy`` publishes under a display id."""

    def __init__(self, car: Any, view: Mapping[str, Any]) -> None:
        self.car = car
        self.view = output({**view, "text/plain": ""})  # the copy has the text

    def show(self, bundle: Mapping[str, Any]) -> None:
        self.car.outputs = (output(bundle), self.view)

    update = show


def open_beside(session: str, view: Mapping[str, Any], open_now: dict[str, Any]) -> SideCopy:
    """A new side-area tab titled for ``session`` that will show the panel whose widget view is ``view``, closing
    the tab ``open_now`` (the registry's side panels, by session) holds for that session; the panel shows its copy
    there through the ``SideCopy`` returned."""
    from sidecar import Sidecar

    old = open_now.pop(session, None)
    if old is not None:
        old.close()  # its tab goes with its model
    car = Sidecar(title=f"brute chat · {session}", anchor="right")
    open_now[session] = car
    return SideCopy(car, view)
