"""What a model call costs: the price table, overrides from settings, and the usage event."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.config import load_settings
from agentls.loop.run import QueryState, run_turn
from agentls.messages import user_text
from agentls.pricing import Price, price_for
from agentls.usage import Usage
from test_loop import make_deps


@pytest.mark.parametrize(
    ("model", "input_price", "output_price"),
    [
        ("claude-sonnet-4-5-20250929", 3.0, 15.0),
        ("claude-opus-4-5", 5.0, 25.0),
        ("claude-opus-4-1", 15.0, 75.0),
        ("claude-haiku-4-5", 1.0, 5.0),
        ("gpt-4o-mini-2024-07-18", 0.15, 0.60),
        ("gpt-4o", 2.50, 10.0),
        ("openai/gpt-4.1-mini", 0.40, 1.60),
        ("gpt-5-mini", 0.25, 2.0),
        ("o4-mini", 1.10, 4.40),
    ],
)
def test_the_table_knows_the_common_models(
    model: str, input_price: float, output_price: float
) -> None:
    price = price_for(model)
    assert price is not None and (price.input, price.output) == (input_price, output_price)


def test_unknown_models_have_no_price() -> None:
    assert price_for("smollm2") is None and price_for("qwen2.5-coder:32b") is None


def test_cost_counts_every_kind_of_token() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=2_000_000)
    sonnet = price_for("claude-sonnet-4-5")
    assert sonnet is not None
    # 3 + 1.5 + 0.6 dollars.
    assert sonnet.cost(usage) == pytest.approx(5.1)
    usage = Usage(input_tokens=0, output_tokens=0, cache_write_tokens=1_000_000)
    assert sonnet.cost(usage) == pytest.approx(3.75)


def test_settings_add_prices(tmp_path: Path) -> None:
    problems: list[str] = []
    prices = {"my-local": {"input": 0.1, "output": 0.2}, "bad": {"input": -1, "output": 1}}
    settings = load_settings(tmp_path, {}, {"prices": prices}, problems)
    assert settings.prices == {} and len(problems) == 1
    settings = load_settings(tmp_path, {}, {"prices": {"my-local": {"input": 0.1, "output": 0.2}}})
    assert price_for("my-local", settings.prices) == Price(0.1, 0.2, 0.0, 0.0)


async def test_usage_events_carry_the_cost(tmp_path: Path) -> None:
    usage = {"input_tokens": 10_000, "output_tokens": 1_000}
    deps, _ = make_deps(
        tmp_path,
        [{"text": "hi", "usage": usage}],
        model="gpt-4.1",
        price=price_for("gpt-4.1"),
    )
    events = [e async for e in run_turn(QueryState("t", [user_text("go")]), deps)]
    [event] = [e for e in events if e.type == "usage"]
    # 10,000 × $2/M + 1,000 × $8/M.
    assert event.cost_usd == pytest.approx(0.028)
    deps, _ = make_deps(tmp_path, [{"text": "hi", "usage": usage}])
    events = [e async for e in run_turn(QueryState("t", [user_text("go")]), deps)]
    assert [e.cost_usd for e in events if e.type == "usage"] == [None]
