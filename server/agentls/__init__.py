"""agentls: an agent loop served to editors the way a language server is."""

__version__ = "0.1.0"
# The wire contract's version, advertised in initialize (capabilities.experimental.agentls).
PROTOCOL_VERSION = 1
