"""The Bash sandbox: its modes and setting (settings.py), the bwrap box (box.py), and
whether a failed command failed because of the box (blame.py)."""

from agentls.sandbox.blame import blamed_on_sandbox
from agentls.sandbox.box import (
    READ_ONLY_WRITES,
    Sandbox,
    bwrap_command,
    prepare_sandbox,
    sandbox_status,
)
from agentls.sandbox.settings import NO_BOX, SandboxSettings, parse_sandbox

__all__ = [
    "NO_BOX",
    "READ_ONLY_WRITES",
    "Sandbox",
    "SandboxSettings",
    "blamed_on_sandbox",
    "bwrap_command",
    "parse_sandbox",
    "prepare_sandbox",
    "sandbox_status",
]
