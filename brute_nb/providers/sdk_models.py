"""The model names the installed SDKs list, and the ones they mark deprecated: the vendors' own word on a name.

Both SDKs ship their model table as a ``Literal`` type (``anthropic.types.Model``, ``openai.types.shared.ChatModel``
and ``ResponsesModel``). Anthropic lists its deprecated models in ``anthropic._data.DEPRECATED_MODELS`` (the SDK
warns when one is called); OpenAI writes them only in the ``Deprecated values`` docstring beside ``ChatModel``, read
here from the module's source. A default model, and every model the README or a demo names, must be listed and
not deprecated (``tests/providers/test_model_tables.py``), so a user with a key never meets a 404 on the first cell.
Reading this imports the SDKs' type modules: only ``%brute models`` and the tests ask.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any, get_args

TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "anthropic": (("anthropic.types.model", "Model"),),
    "openai": (("openai.types.shared.chat_model", "ChatModel"),
               ("openai.types.shared.responses_model", "ResponsesModel")),
}
"""Per provider, the SDK modules and ``Literal`` aliases that list its model names."""
TABLES["openai-responses"] = TABLES["openai"]

_QUOTED = re.compile(r'"([^"\s]+)"')


def literal_names(alias: Any) -> set[str]:
    """Every string inside a ``Literal`` (nested in ``Union``s and other aliases)."""
    found: set[str] = set()
    for arg in get_args(alias):
        if isinstance(arg, str):
            found.add(arg)
        else:
            found |= literal_names(arg)
    return found


def listed(provider: str) -> set[str] | None:
    """The model names ``provider``'s SDK lists, or None for a provider whose SDK ships no table."""
    if provider not in TABLES:
        return None
    names: set[str] = set()
    for module, alias in TABLES[provider]:
        names |= literal_names(getattr(importlib.import_module(module), alias))
    return names


def deprecated(provider: str) -> set[str]:
    """The names ``provider``'s SDK marks deprecated (retired ones included)."""
    if provider == "anthropic":
        from anthropic._data import DEPRECATED_MODELS

        return set(DEPRECATED_MODELS)
    if provider not in TABLES:
        return set()
    names: set[str] = set()
    for module, _ in TABLES[provider]:
        source = inspect.getsource(importlib.import_module(module))
        _, marker, notes = source.partition("Deprecated values:")
        if marker:
            names |= set(_QUOTED.findall(notes))
    return names


def problem(provider: str, model: str) -> str | None:
    """Why ``provider:model`` is not a current model of the installed SDK (None when it is, or nothing is known)."""
    names = listed(provider)
    if names is None:
        return None
    if model not in names:
        return f"{provider}:{model} is not in the installed {TABLES[provider][0][0].split('.')[0]} SDK's model list"
    if model in deprecated(provider):
        return f"{provider}:{model} is marked deprecated in the installed {TABLES[provider][0][0].split('.')[0]} SDK"
    return None
