"""The `webSearch` setting: which search backend WebSearch asks, where, with which key.

Without it the WebSearch tool is not offered at all. The key itself never sits in a
settings file: the setting names the environment variable that holds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

SearchProvider = Literal["searxng", "brave"]
SEARCH_PROVIDERS: tuple[SearchProvider, ...] = get_args(SearchProvider)
# Where a provider lives when the setting gives no url (SearXNG is always self-hosted).
DEFAULT_URLS: dict[SearchProvider, str] = {
    "brave": "https://api.search.brave.com/res/v1/web/search",
}
_KEYS = frozenset({"provider", "url", "apiKeyEnv"})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class SearchBackend:
    provider: SearchProvider
    url: str
    # The environment variable holding the API key (Brave needs one; SearXNG may).
    api_key_env: str | None = None


def parse_search_backend(value: Any) -> SearchBackend | None:
    """`{provider, url, apiKeyEnv}` as settings spell it (null: none); ValueError if bad."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError("must be an object {provider, url, apiKeyEnv}, or null")
    unknown = set(value) - _KEYS
    if unknown:
        raise ValueError(f"has unknown keys {', '.join(sorted(unknown))}")
    provider = value.get("provider")
    if provider not in SEARCH_PROVIDERS:
        raise ValueError(f"provider must be one of {', '.join(SEARCH_PROVIDERS)}")
    url = value.get("url") or DEFAULT_URLS.get(provider)
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"url must be the {provider} server's http(s) address")
    key_env = value.get("apiKeyEnv")
    if key_env is not None and not (isinstance(key_env, str) and _ENV_NAME.fullmatch(key_env)):
        raise ValueError("apiKeyEnv must be the name of an environment variable")
    if provider == "brave" and key_env is None:
        raise ValueError("brave needs apiKeyEnv, the variable that holds its API key")
    return SearchBackend(provider, url, key_env)


@dataclass(frozen=True, slots=True)
class WebOptions:
    """What a session's web tools need from its settings and environment."""

    allow_private: bool = False
    search: SearchBackend | None = None
    # The key read from the variable `search.api_key_env` names, when set.
    search_key: str | None = None

    @classmethod
    def from_settings(
        cls, allow_private: bool, search: SearchBackend | None, env: Mapping[str, str]
    ) -> WebOptions:
        key = env.get(search.api_key_env) if search and search.api_key_env else None
        return cls(allow_private, search, key or None)
