"""``%load_ext brute_nb`` run again (a setup cell re-run, a second Run All) says nothing.

IPython answers a second ``%load_ext`` of a loaded extension with two lines ("The brute_nb extension is already
loaded. To reload it, use: %reload_ext brute_nb") that ask for something nobody needs: the setup cell did what it
says. While brute_nb is loaded the shell's ``load_ext`` magic is IPython's own, wrapped: brute_nb's name, already
loaded, is passed over quietly and every other goes to IPython's; unloading puts IPython's back (``%reload_ext``
unloads first, so it reloads as before).
"""

from __future__ import annotations

from typing import Any

NAME = "brute_nb"


def install(ipython: Any) -> None:
    line = ipython.magics_manager.magics["line"]
    ipythons = line.get("load_ext")
    if ipythons is None or getattr(ipythons, "brute_nb_quiet", False):
        return

    def load_ext(module_str: str) -> Any:
        if module_str.strip() == NAME and NAME in ipython.extension_manager.loaded:
            return None
        return ipythons(module_str)

    load_ext.__doc__ = ipythons.__doc__
    load_ext.__wrapped__ = ipythons  # type: ignore[attr-defined]
    load_ext.brute_nb_quiet = True  # type: ignore[attr-defined]
    line["load_ext"] = load_ext


def uninstall(ipython: Any) -> None:
    line = ipython.magics_manager.magics["line"]
    ours = line.get("load_ext")
    if getattr(ours, "brute_nb_quiet", False):
        line["load_ext"] = ours.__wrapped__
