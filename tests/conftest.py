"""Shared fixtures: a real daemon over stdio (pytest-lsp) and helpers to script it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Every daemon these tests start keeps its transcripts out of the user's home.
os.environ.setdefault("AGENTLS_HOME", tempfile.mkdtemp(prefix="agentls-test-home-"))
for _var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTLS_PROVIDER"):
    os.environ.pop(_var, None)

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))


# Property tests are deterministic in the normal run (CI must never go red at random);
# `--long` runs them at full strength with fresh randomness.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=5_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", help="property and fuzz tests at full strength")


def pytest_configure(config: pytest.Config) -> None:
    settings.load_profile("long" if config.getoption("--long") else "ci")


@pytest.fixture
def long_run(request: pytest.FixtureRequest) -> bool:
    """Whether the run asked for `--long` (fuzzers scale their message counts on it)."""
    return bool(request.config.getoption("--long"))
