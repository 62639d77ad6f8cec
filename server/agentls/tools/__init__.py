"""The built-in tools, the Tool seam they share (base.py) and their registry; the
processes Bash and the background shells run (process.py; a background shell's
pseudo-terminal is pty_process.py's, its output made plain text by terminal_text.py).
The executor that runs calls in lanes is the loop's (agentls.loop.executor)."""
