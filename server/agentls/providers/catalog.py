"""The models a server offers, for clients' model pickers: fetched once, cached per server."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from agentls.errors import AgentError
from agentls.providers.base import ListsModels, ModelInfo, Provider, ProviderError

CACHE_SECONDS = 600.0


class ModelListUnavailable(AgentError):
    code = 1005


@dataclass(frozen=True, slots=True)
class ModelList:
    models: list[ModelInfo]
    cached: bool


class ModelCatalog:
    """`/v1/models` answers by (provider, endpoint), kept for `ttl` seconds."""

    def __init__(
        self, ttl: float = CACHE_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._clock = clock
        self._cache: dict[tuple[str, str], tuple[float, list[ModelInfo]]] = {}

    async def models(self, provider: Provider, configured: str, refresh: bool = False) -> ModelList:
        """The server's models with `configured` first (listed even when the server omits it)."""
        if not isinstance(provider, ListsModels):
            raise ModelListUnavailable(f"The {provider.name} provider cannot list its models.")
        key = (provider.name, provider.endpoint)
        hit = self._cache.get(key)
        cached = hit is not None and not refresh and self._clock() - hit[0] < self._ttl
        if hit is not None and cached:
            listed = hit[1]
        else:
            listed = await _fetch(provider)
            self._cache[key] = (self._clock(), listed)
        return ModelList(_configured_first(listed, configured), cached)


async def _fetch(provider: ListsModels) -> list[ModelInfo]:
    try:
        return await provider.list_models()
    except ProviderError as exc:
        if exc.status in (404, 405) or exc.kind == "not_found":
            message = (
                f"The server at {provider.endpoint} has no model list (GET models answered "
                f"{exc.status or 'not found'}). Name the model in the settings (`model`, "
                "AGENTLS_MODEL) or with agent/setModel."
            )
        else:
            message = f"Listing the models at {provider.endpoint} failed: {exc.message}"
        raise ModelListUnavailable(message, {"kind": exc.kind, "status": exc.status}) from exc


def _configured_first(models: list[ModelInfo], configured: str) -> list[ModelInfo]:
    rest = [m for m in models if m.id != configured]
    first = next((m for m in models if m.id == configured), ModelInfo(configured))
    return [first, *rest]
