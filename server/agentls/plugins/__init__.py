"""Plugins: folders bundling commands, agents, skills, hooks and MCP servers (Claude
Code's format, or agentls's own manifest folder), installed under AGENTLS_HOME."""
