"""The box to paste an API key into: provider, password, "use for this kernel", "save", and a line for what went
wrong. One box for every place that finds no model: the first ``%%brute`` (``front.key_box``) and the chat panel.

It keeps no key: the password field is emptied the moment a button is clicked, whatever happens next. The key goes
where every key goes (``providers.keys``: the kernel's environment, or the user's config readable by them only), so
the host rule and redaction hold for it; the box only says when a key is set, and its owner decides what follows.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

import ipywidgets

from brute_nb.errors import BruteError
from brute_nb.providers import keys, profiles
from brute_nb.providers.catalog import keyed


def guess(key: str) -> str | None:
    """The provider a key's prefix names (``Profile.key_prefixes``), if it names one: the box picks that provider as
    the key is pasted."""
    text = key.strip()
    return next((p.kind for p in profiles.keyed() if p.key_prefixes and text.startswith(p.key_prefixes)), None)


class KeyEntry(ipywidgets.VBox):  # type: ignore[misc]  # ipywidgets is untyped
    """``children``: the row (provider, secret, use, save), then ``status``. ``then(self)`` runs once a key is
    set, in the handler of the click that set it."""

    def __init__(self, then: Callable[[KeyEntry], None], note: str = "") -> None:
        # The row wraps and no part is wider than its box: beside the notebook (the chat's side panel, ~250 px)
        # a row of fixed widths ran past the edge, with the key field and both buttons out of reach.
        names = list(keyed())
        self.provider = ipywidgets.Dropdown(options=names, value=names[0], description="key for",
                                            layout=ipywidgets.Layout(width="14em", max_width="100%"))
        self.secret = ipywidgets.Password(placeholder="paste your API key",
                                          layout=ipywidgets.Layout(width="24em", max_width="100%"))
        self.use = ipywidgets.Button(description="use for this kernel", tooltip="kept in this kernel's memory only")
        self.save = ipywidgets.Button(description="save", tooltip=f"saved in {keys.path()}, readable by you only")
        self.status = ipywidgets.HTML(escape(note))
        row = ipywidgets.HBox([self.provider, self.secret, self.use, self.save],
                              layout=ipywidgets.Layout(flex_flow="row wrap"))
        super().__init__([row, self.status])
        self.add_class("brute-key-box")
        self._then = then
        self.secret.observe(self._pasted, names="value")
        self.use.on_click(lambda _: self._go(False))
        self.save.on_click(lambda _: self._go(True))

    def _pasted(self, change: dict[str, Any]) -> None:
        named = guess(str(change["new"]))
        if named is not None:
            self.provider.value = named

    def _go(self, saving: bool) -> None:
        name, text = str(self.provider.value), str(self.secret.value)
        self.secret.value = ""  # the key leaves the widget's state at once, whatever happens next
        try:
            if saving:
                keys.save(name, text)
            else:
                keys.use_for_kernel(name, keyed()[name][0], text)
        except BruteError as exc:
            self.status.value = f"<span style='color:var(--jp-error-color1,#c00)'>{escape(str(exc))}</span>"
            return
        self._then(self)
