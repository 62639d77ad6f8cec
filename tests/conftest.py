"""Shared fixtures: a real daemon over stdio (pytest-lsp) and helpers to script it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

# Every daemon these tests start keeps its transcripts out of the user's home.
os.environ.setdefault("AGENTLS_HOME", tempfile.mkdtemp(prefix="agentls-test-home-"))
for _var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTLS_PROVIDER"):
    os.environ.pop(_var, None)

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))
