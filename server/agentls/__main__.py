"""`python -m agentls` runs the console script."""

from agentls.cli import console

console()
