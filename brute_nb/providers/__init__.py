"""Providers: ready-made handlers for ``agent.run``; the only code that calls a model SDK."""

from brute_nb.providers.scripted import Scripted, ScriptExhaustedError, call, reply

__all__ = ["ScriptExhaustedError", "Scripted", "call", "reply"]
