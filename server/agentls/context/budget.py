"""The token budget: how full the context window is, checked before money is spent.

Providers report exact token counts, but only after a request. Between requests the
history grows by tool results and user messages, so the budget is the provider's last
reported number plus an estimate of what was added since; before the first report, and
after a compaction makes that number stale, the whole prompt is estimated. The levels
(warn, compact, block) tell the loop when to warn the user, when to compact the history,
and when to refuse to send a request that would overflow the window.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias, assert_never

from agentls.images import IMAGE_TOKENS
from agentls.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentls.model_table import by_model

Level: TypeAlias = Literal["normal", "warn", "compact", "block"]

# Role markers and message framing, roughly what both Anthropic and OpenAI add.
MESSAGE_OVERHEAD = 4
# Block type tags, ids and delimiters around each content block.
BLOCK_OVERHEAD = 3

DEFAULT_WINDOW = 128_000
# First matching prefix wins, so longer prefixes come before shorter ones they start with.
_WINDOWS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("claude",), 200_000),
    (("gpt-4.1",), 1_047_576),
    (("gpt-4o", "gpt-4-turbo"), 128_000),
    (("gpt-5",), 400_000),
    (("o1", "o3", "o4"), 200_000),
    (("deepseek",), 128_000),
    (("qwen",), 131_072),
    (("llama",), 131_072),
    (("mistral", "mixtral"), 32_768),
)


def estimate_tokens(text: str) -> int:
    """An estimate of the tokens `text` costs, without a tokenizer.

    The rule: an ASCII character is a quarter of a token (the usual 4 characters per
    token), and each UTF-8 byte beyond the first of a non-ASCII character adds 3/8 of a
    token. So a 2-byte character (accented Latin, Cyrillic, Greek) costs 5/8, a 3-byte one
    (CJK, most other scripts) about 1, and a 4-byte one (emoji) 11/8; the sum is rounded
    up. Against the Claude and GPT tokenizers this is usually within ±15% on English prose
    and ±30% on code and non-English text (dense punctuation tokenises worse, long common
    words better). That margin is why the thresholds leave headroom, and why the provider's
    reported count replaces the estimate as soon as it arrives.

    It runs on every request, so it is two C-level passes at most: `isascii()` and, for
    non-ASCII text, one UTF-8 encode to count the extra bytes.
    """
    if text.isascii():
        return (len(text) + 3) // 4
    # Lone surrogates can reach us from JSON; they count as the 3 bytes they would encode to.
    extra = len(text.encode("utf-8", "surrogatepass")) - len(text)
    return (2 * len(text) + 3 * extra + 7) // 8


def estimate_message_tokens(message: Message) -> int:
    """An estimate of the tokens one message costs in a request.

    An image counts as IMAGE_TOKENS whatever its size: providers bill pixels, not the
    base64 that carries them.
    """
    return MESSAGE_OVERHEAD + sum(
        BLOCK_OVERHEAD + _block_tokens(block) for block in message.content
    )


def _block_tokens(block: ContentBlock) -> int:
    if isinstance(block, ImageBlock):
        return IMAGE_TOKENS
    if isinstance(block, ToolResultBlock):
        return estimate_tokens(block.text()) + IMAGE_TOKENS * len(block.images())
    return estimate_tokens(_block_text(block))


def estimate_messages_tokens(messages: Iterable[Message]) -> int:
    """An estimate of the tokens a history costs in a request."""
    return sum(estimate_message_tokens(m) for m in messages)


def _block_text(block: TextBlock | ThinkingBlock | ToolUseBlock) -> str:
    """The text of a block that the provider tokenizes."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ThinkingBlock):
        # The signature is opaque and verified, not tokenized into the context.
        return block.thinking
    if isinstance(block, ToolUseBlock):
        arguments = json.dumps(block.input, separators=(",", ":"), ensure_ascii=False, default=str)
        return block.name + arguments
    assert_never(block)


def context_window_for(model: str, configured: int | None) -> int:
    """The model's context window in tokens: the configured `contextWindow` if set, else a default.

    The table is a default by model-name prefix, matched case-insensitively on the part
    after the last "/" (so "openai/gpt-4o" and "Qwen/Qwen2.5-72B" match); providers change
    windows and serve models under other names, which is what `contextWindow` is for.
    """
    if configured is not None and configured > 0:
        return configured
    return by_model(model, _WINDOWS, DEFAULT_WINDOW)


@dataclass(frozen=True, slots=True)
class BudgetThresholds:
    """Fractions of the window at which each level starts; each bound is inclusive."""

    warn: float = 0.60
    compact: float = 0.80
    block: float = 0.95

    def __post_init__(self) -> None:
        if not 0 < self.warn < self.compact < self.block <= 1:
            raise ValueError(
                "thresholds must satisfy 0 < warn < compact < block <= 1, got "
                f"warn={self.warn}, compact={self.compact}, block={self.block}"
            )


class TokenBudget:
    """How many tokens the next request will occupy, and what level of the window that is.

    `window` is what the prompt may fill: callers that reserve room for the reply pass the
    model's context window minus max_tokens. `overhead_tokens` estimates the system prompt
    and tool definitions, which only the provider's reported count otherwise covers.
    """

    def __init__(self, window: int, thresholds: BudgetThresholds, overhead_tokens: int) -> None:
        if window <= 0:
            raise ValueError(f"window must be positive, got {window}")
        if overhead_tokens < 0:
            raise ValueError(f"overhead_tokens must not be negative, got {overhead_tokens}")
        self.window = window
        self.thresholds = thresholds
        self.overhead_tokens = overhead_tokens
        self._reported: int | None = None
        self._covered = 0

    def record_usage(self, context_tokens: int, message_count: int) -> None:
        """Take the provider's count as covering the first `message_count` messages.

        `Usage.context_tokens` includes the reply's output tokens, so pass the length of
        the history with the reply appended; the reply is then not counted twice.
        """
        self._reported = context_tokens
        self._covered = message_count

    def reset_after_compaction(self) -> None:
        """Forget the provider's count: it measured a history that no longer exists."""
        self._reported = None
        self._covered = 0

    def estimate(self, messages: Sequence[Message]) -> int:
        """Tokens a request with `messages` would occupy: last reported count plus what is new."""
        if self._reported is None or len(messages) < self._covered:
            return self.overhead_tokens + estimate_messages_tokens(messages)
        return self._reported + estimate_messages_tokens(messages[self._covered :])

    def fraction(self, tokens: int) -> float:
        """The share of the window `tokens` fill (above 1 when they overflow it)."""
        return tokens / self.window

    def level(self, tokens: int) -> Level:
        """The level `tokens` reach; a level starts exactly at its threshold."""
        share = self.fraction(tokens)
        if share >= self.thresholds.block:
            return "block"
        if share >= self.thresholds.compact:
            return "compact"
        if share >= self.thresholds.warn:
            return "warn"
        return "normal"
