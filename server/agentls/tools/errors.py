"""ToolError, the failure a model reads, in a leaf so that what tools use (processes,
background shells) can raise it without importing the Tool seam."""


class ToolError(Exception):
    """A failure the model should read: it becomes an `is_error` tool_result."""
