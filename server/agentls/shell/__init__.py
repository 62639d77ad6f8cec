"""Shell command text as bash reads it; `agentls.shell_syntax` is its face."""
