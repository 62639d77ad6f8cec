"""Permission rules and modes: the one place that decides whether a tool call runs, asks the
user, or is refused, so the executor never has to reason about policy itself."""
