"""Built-in tools, their registry and the executor that runs them in lanes."""
