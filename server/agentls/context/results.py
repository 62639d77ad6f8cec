"""The tool-result budget: huge outputs go to a file, the model gets a path and a preview.

One `cat` of a log or a broad grep can fill the context window in a single turn. Claude
Code caps a result at 50,000 characters and the parallel results of one message at
200,000; anything larger is saved under the session's `tool-results/` directory and
replaced by a `<persisted-output>` stub the model can follow up with Read. Stubs depend
only on the result and the spill path, so the same input always yields the same bytes and
the cached prompt prefix stays stable once a stub is in the history. Only text is measured
and spilled: a result's images stay beside its stub (they are bounded per image already).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.messages import ResultPart, TextBlock, ToolResultBlock
from agentls.workspace.view import write_atomically

Spill = Callable[[str, str], Path]

# Room for the stub's own wording and the spill path; a result not bigger than its
# preview plus this is not worth replacing.
_STUB_ALLOWANCE = 1_000
_NAME_LIMIT = 100


@dataclass(frozen=True)
class ResultBudget:
    max_result_chars: int = 50_000
    max_message_chars: int = 200_000
    preview_chars: int = 2_000


def apply_result_budget(
    results: Sequence[ToolResultBlock], budget: ResultBudget, spill: Spill
) -> list[ToolResultBlock]:
    """`results` with every oversized one spilled, then the largest until the message fits.

    Order and error flags are kept; `spill(tool_use_id, content)` saves the full text.
    """
    out = [
        _persist(r, budget, spill) if len(r.text()) > budget.max_result_chars else r
        for r in results
    ]
    total = sum(len(r.text()) for r in out)
    while total > budget.max_message_chars:
        index = _largest_worth_persisting(out, results, budget)
        if index is None:
            break
        replaced = _persist(out[index], budget, spill)
        total -= len(out[index].text()) - len(replaced.text())
        out[index] = replaced
    return out


def _largest_worth_persisting(
    current: Sequence[ToolResultBlock], original: Sequence[ToolResultBlock], budget: ResultBudget
) -> int | None:
    """The index of the largest result not yet persisted whose stub would be smaller."""
    floor = budget.preview_chars + _STUB_ALLOWANCE
    candidates = [
        i
        for i, (now, was) in enumerate(zip(current, original, strict=True))
        if now is was and len(now.text()) > floor
    ]
    # max() keeps the first of equal sizes, so ties resolve the same way every time.
    return max(candidates, key=lambda i: len(current[i].text()), default=None)


def _persist(result: ToolResultBlock, budget: ResultBudget, spill: Spill) -> ToolResultBlock:
    text = result.text()
    path = spill(result.tool_use_id, text)
    stub = persisted_stub(text, path, budget.preview_chars)
    images = result.images()
    content: str | tuple[ResultPart, ...] = (TextBlock(stub), *images) if images else stub
    return ToolResultBlock(result.tool_use_id, content, result.is_error)


def persisted_stub(content: str, path: Path, preview_chars: int) -> str:
    """The `<persisted-output>` text that stands in for `content`, saved at `path`."""
    preview = _preview(content, preview_chars)
    return (
        "<persisted-output>\n"
        f"Output too large ({len(content):,} characters). Full output saved to: {path}\n\n"
        f"Preview (first {len(preview):,} characters):\n"
        f"{preview}\n"
        "...\n"
        "Use the Read tool on that file, with offset and limit, to see the rest.\n"
        "</persisted-output>"
    )


def _preview(content: str, limit: int) -> str:
    """The first `limit` characters, cut after the last newline when it is past halfway."""
    head = content[:limit]
    newline = head.rfind("\n")
    return head[:newline] if len(content) > limit and newline >= limit // 2 else head


def write_spill_file(directory: Path) -> Spill:
    """A spill function that saves each result as `directory/<tool_use_id>.txt`."""

    def spill(tool_use_id: str, content: str) -> Path:
        target = directory / f"{spill_file_stem(tool_use_id)}.txt"
        write_atomically(target, content, errors="replace")
        return target

    return spill


def spill_file_stem(tool_use_id: str) -> str:
    """A safe file name for `tool_use_id`; a hash suffix keeps altered ids distinct."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", tool_use_id)[:_NAME_LIMIT]
    if clean == tool_use_id and clean:
        return clean
    digest = hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{clean or 'result'}-{digest}"
