"""Test doubles that ship with the package, so notebooks and later tests can record against them offline."""

from brute_nb.testing.fake_server import API_KEY, FakeProvider
from brute_nb.testing.script import (
    Fault,
    Reply,
    call,
    malformed_json,
    rate_limit,
    reply,
    server_error,
    slow,
    stall,
    truncated,
)

__all__ = [
    "API_KEY",
    "FakeProvider",
    "Fault",
    "Reply",
    "call",
    "malformed_json",
    "rate_limit",
    "reply",
    "server_error",
    "slow",
    "stall",
    "truncated",
]
