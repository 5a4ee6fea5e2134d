"""Whole numbers and dollar amounts as a user types them, each refused with a message naming the option.

``%%brute`` options, ``%brute config`` and ``configure()`` (``notebook.settings``) and ``map``'s own arguments
(``concurrency=``, ``max_iterations=``, ``confirm_above=``) read them through these, so a value is accepted or
refused with the same words wherever it was given.
"""

from __future__ import annotations

from brute_nb.errors import SettingsError


def parse_int(name: str, value: str | int, minimum: int = 1) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be a whole number, got {value!r}") from None
    if number < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, got {number}")
    return number


def parse_cost(name: str, value: str | float) -> float:
    """A ceiling in US dollars (``0.5``, ``$0.50``); ``none`` or ``off`` is no ceiling (infinity)."""
    if isinstance(value, str) and value.strip().lower() in ("none", "off"):
        return float("inf")
    try:
        number = float(value.strip().removeprefix("$").replace(",", "") if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} is a cost in US dollars (like 0.50), or none; got {value!r}") from None
    if not number >= 0:
        raise SettingsError(f"{name} is a cost in US dollars of 0 or more, or none; got {value!r}")
    return number
