"""Hosted providers reached through their OpenAI-compatible endpoints: Gemini, OpenRouter, DeepSeek, Mistral.

Each is the ``OpenAIChat`` provider (the real ``openai`` SDK) with the provider's base URL and key variable, so a
key in the environment is all it takes (``GEMINI_API_KEY=... `` then ``%%brute``), and ``-m gemini:MODEL`` names a
model. Their profiles (``providers.profiles.compatible``) are the one place these URLs live.
"""

from __future__ import annotations

from typing import Any, ClassVar

from brute_nb.errors import ProviderNotConfiguredError
from brute_nb.providers.openai import OpenAIChat
from brute_nb.providers.profiles import Profile
from brute_nb.providers.profiles.compatible import HOSTED

ENDPOINTS: dict[str, Profile] = {p.kind: p for p in HOSTED}
"""The hosted endpoints by name, in the order ``auto()`` tries them."""


def key_for(name: str) -> str | None:
    """The first of the endpoint's key variables that is set."""
    return ENDPOINTS[name].key()


def configured() -> list[str]:
    """The endpoints whose key is in the environment, in the order ``auto()`` tries them."""
    return [name for name in ENDPOINTS if key_for(name)]


class CompatibleChat(OpenAIChat):
    """``CompatibleChat("gemini", "gemini-2.5-pro")``: OpenAIChat at that provider's endpoint, with its key."""

    def __init__(self, name: str, model: str | None = None, **options: Any) -> None:
        endpoint = ENDPOINTS[name]
        options.setdefault("base_url", endpoint.base_url)
        super().__init__(model or endpoint.default_model, **options)
        self.name = name
        self.home_url = endpoint.base_url

    base_url_variable: ClassVar[str | None] = None  # OPENAI_BASE_URL is OpenAI's, not this endpoint's

    def key_variables(self) -> tuple[str, ...]:
        return ENDPOINTS[self.name].key_variables

    def key_name(self) -> str:
        return self.name

    def host_key(self) -> str | None:
        """The endpoint's own key at its own URL (the SDK would read OPENAI_API_KEY), a given key elsewhere."""
        key = super().host_key() or key_for(self.name)
        if key is None:
            raise ProviderNotConfiguredError(
                f"no key for {self.name}: %brute keys set {self.name} (or set "
                f"{' or '.join(ENDPOINTS[self.name].key_variables)} in the kernel), then run the cell again")
        return key

    @property
    def label(self) -> str:
        return f"{self.name}:{self.model}"
