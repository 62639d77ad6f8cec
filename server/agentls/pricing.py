"""What a model call cost, in US dollars, from the providers' published per-token prices.

Prices are USD per million tokens: input, output, cache reads and cache writes, as the
providers list them for their standard (not batch) APIs. OpenAI bills cached input at its
own rate and has no cache-write charge. A model the table does not know (a local server,
a new release) gets no cost at all rather than a guess. The `prices` setting adds or
overrides models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentls.model_table import by_model
from agentls.usage import Usage


@dataclass(frozen=True, slots=True)
class Price:
    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, usage: Usage) -> float:
        """The dollars one call's usage costs."""
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000


# Longer prefixes first within a family: the first matching row wins.
_PRICES: tuple[tuple[tuple[str, ...], Price], ...] = (
    (("claude-opus-4-5",), Price(5.0, 25.0, 0.50, 6.25)),
    (("claude-opus-4", "claude-3-opus"), Price(15.0, 75.0, 1.50, 18.75)),
    (("claude-sonnet-4", "claude-3-7-sonnet", "claude-3-5-sonnet"), Price(3.0, 15.0, 0.30, 3.75)),
    (("claude-haiku-4",), Price(1.0, 5.0, 0.10, 1.25)),
    (("claude-3-5-haiku",), Price(0.80, 4.0, 0.08, 1.0)),
    (("claude-3-haiku",), Price(0.25, 1.25, 0.03, 0.30)),
    (("gpt-4o-mini",), Price(0.15, 0.60, 0.075, 0.0)),
    (("gpt-4o",), Price(2.50, 10.0, 1.25, 0.0)),
    (("gpt-4.1-nano",), Price(0.10, 0.40, 0.025, 0.0)),
    (("gpt-4.1-mini",), Price(0.40, 1.60, 0.10, 0.0)),
    (("gpt-4.1",), Price(2.0, 8.0, 0.50, 0.0)),
    (("gpt-5-nano",), Price(0.05, 0.40, 0.005, 0.0)),
    (("gpt-5-mini",), Price(0.25, 2.0, 0.025, 0.0)),
    (("gpt-5",), Price(1.25, 10.0, 0.125, 0.0)),
    (("o4-mini", "o3-mini"), Price(1.10, 4.40, 0.275, 0.0)),
    (("o3",), Price(2.0, 8.0, 0.50, 0.0)),
)


def add_cost(total: float | None, more: float | None) -> float | None:
    """A running dollar total plus one more cost; once one part is unknown, so is the sum."""
    return None if total is None or more is None else total + more


def price_for(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The model's price: an override by exact name, else the table, else None."""
    if overrides and model in overrides:
        return overrides[model]
    return by_model(model, _PRICES, None)
