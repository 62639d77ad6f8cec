"""Build the provider a session asks for, importing its SDK only then."""

from __future__ import annotations

import importlib
from typing import Literal
from urllib.parse import urlsplit

from agentls.config import Settings
from agentls.errors import ProviderNotConfigured
from agentls.providers.base import Provider
from agentls.providers.http_clients import SharedHttpClients
from agentls.providers.scripted import ScriptedProvider, load_script

_SDK_MODULES = {
    "anthropic": "agentls.providers.anthropic",
    "openai": "agentls.providers.openai_compat",
    "azure": "agentls.providers.openai_compat",
}
# The host of OpenAI's own API, where `openaiApi: "auto"` speaks Responses.
OPENAI_HOST = "api.openai.com"


def openai_api(settings: Settings) -> Literal["chat", "responses"]:
    """The API the openai provider speaks: the setting, or for "auto" Responses on
    OpenAI's own endpoint (no base URL, or api.openai.com) and for the models that only
    it serves, Chat Completions for any other server (they rarely have Responses)."""
    if settings.openai_api != "auto":
        return settings.openai_api
    from agentls.providers.responses_request import is_responses_only

    base_url = settings.openai_base_url
    own_endpoint = not base_url or urlsplit(base_url).hostname == OPENAI_HOST
    return "responses" if own_endpoint or is_responses_only(settings.resolved_model()) else "chat"


def make_provider(settings: Settings, shared: SharedHttpClients | None = None) -> Provider:
    """A provider for `settings`, or ProviderNotConfigured saying what is missing; its HTTP
    client is taken from `shared` (made there once for its connection settings) if given."""
    problem = settings.missing_credentials()
    if problem is not None:
        raise ProviderNotConfigured(problem)
    name = settings.resolved_provider()
    if name == "scripted":
        assert settings.script is not None
        try:
            script = load_script(settings.script)
        except ValueError as exc:
            raise ProviderNotConfigured(
                f"The scripted provider's script is invalid: {exc}"
            ) from exc
        return ScriptedProvider(script, settings.request_log, vision=settings.vision)
    if name == "anthropic":
        from agentls.providers.anthropic import AnthropicProvider

        return AnthropicProvider(
            settings.anthropic_api_key,
            settings.anthropic_base_url,
            vision=settings.vision,
            shared=shared,
        )
    from agentls.providers.openai_compat import OpenAIProvider
    from agentls.providers.openai_request import RequestOptions

    options = RequestOptions(
        stream_usage=settings.openai_stream_usage,
        max_tokens_field=settings.openai_max_tokens_field,
        reasoning_effort=settings.reasoning_effort,
    )
    if name == "azure":
        assert settings.azure_endpoint is not None
        return OpenAIProvider.azure(
            settings.azure_endpoint,
            settings.azure_deployment or settings.resolved_model(),
            settings.azure_api_version,
            settings.azure_api_key,
            vision=settings.vision,
            options=options,
            shared=shared,
        )
    chat = OpenAIProvider(
        settings.openai_api_key,
        settings.openai_base_url,
        vision=settings.vision,
        options=options,
        shared=shared,
    )
    if openai_api(settings) == "chat":
        return chat
    from agentls.providers.openai_responses import OpenAIResponsesProvider
    from agentls.providers.responses_request import ResponsesOptions

    responses = ResponsesOptions(reasoning_effort=settings.reasoning_effort)
    return OpenAIResponsesProvider(chat, vision=settings.vision, options=responses)


def import_sdk(settings: Settings) -> None:
    """Import the configured provider's SDK (0.5–1 s): callers run it off the event loop."""
    module = _SDK_MODULES.get(settings.resolved_provider() or "")
    if module is not None:
        importlib.import_module(module)
