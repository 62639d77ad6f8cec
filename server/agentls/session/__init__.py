"""Sessions: history, one running turn at a time, and the transcript on disk."""
