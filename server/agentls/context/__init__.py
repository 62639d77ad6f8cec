"""What the model sees: the prompt layers (later: token budget and compaction)."""
