"""Test doubles that ship with the package, so notebooks and later tests can record against them offline.

``Scripted`` is the in-process fake model (its ``call``/``reply`` builders live in ``brute_nb.testing.scripted``);
``FakeProvider`` is the loopback server that speaks the real APIs (its ``call``/``reply`` are exported here).
"""

from brute_nb.testing.answer_calls import AnswerCalls
from brute_nb.testing.fake_server import API_KEY, FakeProvider
from brute_nb.testing.script import (
    Fault,
    Reply,
    call,
    error_mid_stream,
    failed_mid_stream,
    malformed_json,
    overloaded_mid_stream,
    rate_limit,
    redirect,
    refused,
    reply,
    server_error,
    slow,
    stall,
    truncated,
)
from brute_nb.testing.scripted import Scripted, ScriptExhaustedError

__all__ = [
    "API_KEY",
    "AnswerCalls",
    "FakeProvider",
    "Fault",
    "Reply",
    "ScriptExhaustedError",
    "Scripted",
    "call",
    "error_mid_stream",
    "failed_mid_stream",
    "malformed_json",
    "overloaded_mid_stream",
    "rate_limit",
    "redirect",
    "refused",
    "reply",
    "server_error",
    "slow",
    "stall",
    "truncated",
]
