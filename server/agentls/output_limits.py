"""How many output tokens a model may be asked for, and what a refusal says the cap is.

A request over a model's cap is refused with HTTP 400 rather than trimmed, so every
request is clamped to the cap: the `maxOutputTokens` setting when given, else a limit a
server stated in an earlier refusal, else the table below (the providers' documented
maxima), else no clamp. Servers that state their limit in the refusal teach it once.
"""

from __future__ import annotations

import re

from agentls.model_table import by_model

# Longest prefixes first within a family: the first matching row wins.
_OUTPUT_LIMITS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("claude-3-5-haiku", "claude-3-5-sonnet"), 8_192),
    (("claude-3-haiku", "claude-3-opus", "claude-3-sonnet"), 4_096),
    (("claude-3-7-sonnet",), 64_000),
    (("claude-opus-4",), 32_000),
    (("claude-sonnet-4", "claude-haiku-4"), 64_000),
    (("gpt-4o", "chatgpt-4o"), 16_384),
    (("gpt-4.1",), 32_768),
    (("gpt-4-turbo", "gpt-3.5"), 4_096),
    (("gpt-4",), 8_192),
    (("gpt-5",), 128_000),
    (("o1-mini",), 65_536),
    (("o1", "o3", "o4"), 100_000),
    (("deepseek-chat",), 8_192),
    (("deepseek-reasoner",), 64_000),
)

# Limits servers stated in refusals, by model name, for the life of the process.
_learned: dict[str, int] = {}

# How servers state the cap when they refuse a `max_tokens`:
_STATED_LIMIT = (
    # OpenAI: "… This model supports at most 16384 completion tokens, whereas you provided …"
    re.compile(r"supports at most (\d+) completion tokens"),
    # Anthropic: "max_tokens: 32000 > 8192, which is the maximum allowed number of output tokens"
    re.compile(r"max_tokens: \d+ > (\d+), which is the maximum"),
    # DeepSeek: "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]"
    re.compile(r"valid range of max_tokens is \[\d+, (\d+)\]"),
)
# vLLM: "… maximum context length is 4096 tokens and your request has 100 input tokens
# (32000 > 4096 - 100)": what is left of the window after the input.
_VLLM_LIMIT = re.compile(
    r"max_tokens.{0,80}?maximum context length is (\d+) tokens and your request has (\d+) "
    r"input tokens",
    re.IGNORECASE | re.DOTALL,
)


def output_limit_for(model: str, configured: int | None = None) -> int | None:
    """The most output tokens to ask `model` for; None when nothing is known."""
    if configured is not None and configured > 0:
        return configured
    return _learned.get(model) or by_model(model, _OUTPUT_LIMITS, None)


def stated_output_limit(message: str) -> int | None:
    """The output-token cap an error message states, when it refuses `max_tokens`."""
    for pattern in _STATED_LIMIT:
        match = pattern.search(message)
        if match:
            return int(match[1])
    match = _VLLM_LIMIT.search(message)
    if match and int(match[1]) > int(match[2]):
        return int(match[1]) - int(match[2])
    return None


def learn_output_limit(model: str, limit: int) -> None:
    """Remember a cap a server stated, so later requests start within it."""
    _learned[model] = limit
