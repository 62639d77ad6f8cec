"""The agent loop: model call, tools, results, repeat, until a stop condition."""
