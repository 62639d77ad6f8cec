"""What the model sees: the prompt and its layers, the window and its budget, compaction,
memory files, the editor's context, and tool results cut to size."""
