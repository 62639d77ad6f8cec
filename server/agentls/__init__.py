"""agentls: an agent loop served to editors the way a language server is."""

__version__ = "0.1.0"
