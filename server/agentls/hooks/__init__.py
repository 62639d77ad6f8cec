"""Hooks: user-configured commands on the agent's events (settings `hooks`), and typed
in-process callbacks for programs that embed the Python API."""
