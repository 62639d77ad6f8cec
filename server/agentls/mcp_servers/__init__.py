"""MCP servers as tools: settings, one connection per server, the tools they offer.

Only `config`, `state` and `servers` load with the daemon; the SDK (about a second to
import) is loaded off the event loop when a session first starts a server.
"""
