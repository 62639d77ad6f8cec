"""The tool-result budget: oversized results are spilled to files and stubbed stably."""

from __future__ import annotations

from pathlib import Path

from agentls.context.results import (
    ResultBudget,
    apply_result_budget,
    spill_file_stem,
    write_spill_file,
)
from agentls.messages import ToolResultBlock


def lines(count: int, width: int = 79) -> str:
    return "".join(f"{i:06d} " + "x" * (width - 8) + "\n" for i in range(count))


class Recorder:
    """A spill function that keeps what it was asked to save."""

    def __init__(self) -> None:
        self.saved: dict[str, str] = {}

    def __call__(self, tool_use_id: str, content: str) -> Path:
        self.saved[tool_use_id] = content
        return Path("/home/u/.agentls/sessions/s1/tool-results") / f"{tool_use_id}.txt"


def test_a_one_megabyte_result_is_spilled_with_path_and_preview(tmp_path: Path) -> None:
    big = lines(13_000)
    assert len(big) > 1_000_000
    directory = tmp_path / "sessions" / "s1" / "tool-results"
    [stub] = apply_result_budget(
        [ToolResultBlock("toolu_01", big)], ResultBudget(), write_spill_file(directory)
    )
    saved = directory / "toolu_01.txt"
    assert saved.read_text(encoding="utf-8") == big
    assert stub.tool_use_id == "toolu_01" and not stub.is_error
    assert stub.content.startswith("<persisted-output>\n")
    assert stub.content.endswith("</persisted-output>")
    assert str(saved) in stub.content
    assert f"{len(big):,} characters" in stub.content
    assert "Read tool" in stub.content and "offset and limit" in stub.content
    assert len(stub.content) < 3_000


def test_the_preview_is_the_head_cut_at_a_newline() -> None:
    big = lines(1_000)
    [stub] = apply_result_budget([ToolResultBlock("a", big)], ResultBudget(), Recorder())
    preview = stub.content.split("characters):\n", 1)[1].split("\n...\n", 1)[0]
    assert big.startswith(preview + "\n")
    assert 1_000 <= len(preview) <= 2_000
    assert preview.endswith("x")


def test_results_under_the_limits_are_untouched() -> None:
    spill = Recorder()
    results = [ToolResultBlock("a", lines(100)), ToolResultBlock("b", "", is_error=True)]
    out = apply_result_budget(results, ResultBudget(), spill)
    assert out == results
    assert all(a is b for a, b in zip(out, results, strict=True))
    assert spill.saved == {}


def test_the_message_cap_replaces_the_largest_results_first() -> None:
    sizes = {"a": 30_000, "b": 45_000, "c": 10_000, "d": 40_000, "e": 35_000}
    results = [ToolResultBlock(i, "y" * n, is_error=i == "d") for i, n in sizes.items()]
    budget = ResultBudget(max_result_chars=50_000, max_message_chars=100_000)
    spill = Recorder()
    out = apply_result_budget(results, budget, spill)
    assert [r.tool_use_id for r in out] == list(sizes)
    assert list(spill.saved) == ["b", "d"]
    assert out[1].content.startswith("<persisted-output>")
    assert out[3].content.startswith("<persisted-output>") and out[3].is_error
    assert [out[i] for i in (0, 2, 4)] == [results[i] for i in (0, 2, 4)]
    assert sum(len(r.content) for r in out) <= 100_000


def test_per_result_spills_count_before_the_message_cap() -> None:
    results = [ToolResultBlock("huge", "z" * 80_000), ToolResultBlock("mid", "z" * 40_000)]
    spill = Recorder()
    out = apply_result_budget(results, ResultBudget(max_message_chars=60_000), spill)
    assert list(spill.saved) == ["huge"]
    assert out[1] is results[1]


def test_small_results_are_not_replaced_when_stubs_would_not_help() -> None:
    results = [ToolResultBlock(f"t{i}", "w" * 1_500) for i in range(10)]
    spill = Recorder()
    out = apply_result_budget(results, ResultBudget(max_message_chars=5_000), spill)
    assert out == results and spill.saved == {}


def test_same_input_gives_identical_stubs(tmp_path: Path) -> None:
    results = [ToolResultBlock("a", lines(2_000)), ToolResultBlock("b", lines(900))]
    budget = ResultBudget(max_result_chars=100_000, max_message_chars=150_000)
    first = apply_result_budget(results, budget, write_spill_file(tmp_path))
    second = apply_result_budget(results, budget, write_spill_file(tmp_path))
    assert first == second
    assert first[0].content.startswith("<persisted-output>") and first[1] is results[1]


def test_spill_file_names_are_safe_and_distinct(tmp_path: Path) -> None:
    assert spill_file_stem("toolu_01ABC") == "toolu_01ABC"
    odd = spill_file_stem("../../etc/passwd")
    assert "/" not in odd and not odd.startswith(".")
    assert spill_file_stem("a/b") != spill_file_stem("a_b")
    assert spill_file_stem("").startswith("result-")
    path = write_spill_file(tmp_path / "out")("../escape", "content")
    assert path.parent == tmp_path / "out"
    assert path.read_text(encoding="utf-8") == "content"
    assert [p.name for p in (tmp_path / "out").iterdir()] == [path.name]
