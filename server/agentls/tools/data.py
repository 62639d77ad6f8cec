"""QueryData, SummarizeData, ValidateData and AskUser: working with the caller's data.

A caller may hand a session structured JSON data plus an intent. Pasting all of it into
the prompt does not scale and makes the model count and filter by eye, which it does
badly; these tools let it select with JMESPath, see the data's shape and statistics, and
check it against a JSON Schema, each answer bounded in size. AskUser covers the other gap:
when the task cannot continue without a decision only the user can make.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentls.tools.base import (
    Location,
    ToolContext,
    ToolError,
    ToolKind,
    ToolOutput,
    UserQuestionCancelled,
)

# jmespath and jsonschema (about 13 MB and 60 ms together) load on a data tool's first call.
if TYPE_CHECKING:
    import jmespath.exceptions
    import jsonschema
    from jsonschema.protocols import Validator

MAX_RESULT_CHARS = 20_000
SUMMARY_LEVELS = 3
SUMMARY_MAX_KEYS = 50
SUMMARY_MAX_FIELDS = 50
SUMMARY_KEY_NAMES = 10
TOP_VALUES = 5
DISTINCT_CAP = 10_000
PREVIEW_CHARS = 40
MAX_ERRORS = 100
ERROR_MESSAGE_CHARS = 300
TITLE_CHARS = 80
INDENT = "  "
NULL_RESULT = "The expression matched nothing (null)."
# The order types are listed in, so summaries read the same for the same data.
JSON_TYPES = ("object", "array", "string", "number", "boolean", "null")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _require_data(ctx: ToolContext) -> Any:
    data = ctx.data.structured_data
    if data is None:
        raise ToolError(
            "There is no structured data in this session: the caller did not hand any "
            "(there is no <structuredData> block in <userContext>). Work from the "
            "conversation and the workspace instead."
        )
    return data


def _parse_error(expression: str, exc: jmespath.exceptions.ParseError) -> ToolError:
    message = str(exc)
    position = exc.lex_position
    if isinstance(position, int) and f"column {position}" not in message:
        message += f" (at column {position})"
    return ToolError(f"Invalid JMESPath expression {expression!r}: {message}")


def evaluate(expression: str, data: Any) -> Any:
    """The JMESPath result of `expression` on `data`, or a ToolError with the parser's message."""
    import jmespath
    import jmespath.exceptions

    try:
        return jmespath.search(expression, data)
    except jmespath.exceptions.ParseError as exc:
        raise _parse_error(expression, exc) from exc
    except jmespath.exceptions.JMESPathError as exc:
        raise ToolError(f"The JMESPath expression {expression!r} failed: {exc}") from exc


def select(ctx: ToolContext, expression: str | None) -> Any:
    """The session's structured data, or the part of it `expression` selects."""
    data = _require_data(ctx)
    return data if expression is None else evaluate(expression, data)


def _subject(expression: str | None) -> str:
    return "the structured data" if expression is None else f"the result of `{expression}`"


def cap_text(text: str, hint: str) -> tuple[str, bool]:
    """`text` cut to MAX_RESULT_CHARS at a line end, with a note on what was cut and why."""
    if len(text) <= MAX_RESULT_CHARS:
        return text, False
    cut = text.rfind("\n", 0, MAX_RESULT_CHARS)
    kept = text[: cut if cut > 0 else MAX_RESULT_CHARS]
    note = (
        f"\n\n[Truncated: showing {len(kept):,} of {len(text):,} characters; "
        f"{len(text) - len(kept):,} were cut. {hint}]"
    )
    return kept + note, True


def _title(prefix: str, text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    if not lines:
        return prefix
    line = lines[0]
    if len(line) > TITLE_CHARS:
        line = line[:TITLE_CHARS] + "…"
    return f"{prefix}: {line}"


class QueryDataInput(BaseModel):
    expression: str = Field(
        min_length=1, description="A JMESPath expression evaluated against the structured data"
    )


class QueryDataTool:
    """Selects part of the caller's structured data with a JMESPath expression."""

    name: str = "QueryData"
    description: str = (
        "Queries the structured data the caller handed this session (the JSON in the "
        "<structuredData> block of <userContext>) with a JMESPath expression, and returns the "
        "result as pretty-printed JSON. Use it to pick out, filter, project, count or sort "
        'parts of the data rather than reading it all yourself. Examples: "length(orders)"; '
        '"items[?price > `10`].name" (JSON literals go in backticks); '
        '"sort_by(orders, &total)[-3:].{id: id, total: total}". Results longer than 20,000 '
        "characters are cut with a note: then narrow the expression (a slice such as "
        "`orders[:20]`, or fewer fields). A null result means the expression matched nothing; "
        "check the field names with SummarizeData."
    )
    input_model: type[BaseModel] = QueryDataInput
    kind: ToolKind = "search"

    def is_read_only(self, args: QueryDataInput) -> bool:
        """Querying never changes anything."""
        return True

    def title(self, args: QueryDataInput) -> str:
        """`Query data: <expression>`."""
        return _title("Query data", args.expression)

    def locations(self, args: QueryDataInput, cwd: Path) -> list[Location]:
        """No files: the data lives in the session."""
        return []

    def rule_content(self, args: QueryDataInput, cwd: Path) -> str | None:
        """Nothing for permission rules to match."""
        return None

    async def run(self, args: QueryDataInput, ctx: ToolContext) -> ToolOutput:
        """The expression's result as JSON, capped in size."""
        result = select(ctx, args.expression)
        if result is None:
            return ToolOutput(NULL_RESULT)
        text = json.dumps(result, ensure_ascii=False, indent=2, default=str)
        hint = (
            "Use a narrower expression: a slice such as `[:20]`, a filter, fewer fields "
            "(`[].{id: id, name: name}`), or `length(...)` to count."
        )
        body, truncated = cap_text(text, hint)
        return ToolOutput(body, truncated=truncated)


def json_type(value: Any) -> str:
    """The JSON type name of a decoded JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _number(value: float) -> str:
    if not isinstance(value, int):
        return format(value, ".10g")
    try:
        return str(value)
    except ValueError:
        # Python refuses to print integers of more than 4,300 digits.
        return f"an integer of {value.bit_length():,} bits"


def _mean(numbers: Sequence[float]) -> str:
    try:
        return _number(sum(numbers) / len(numbers))
    except (OverflowError, ValueError):
        return "not computable (the numbers are too large)"


def _preview(text: str) -> str:
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + "…"
    return json.dumps(text, ensure_ascii=False)


def _span(low: int, high: int) -> str:
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


def _key_name(key: str) -> str:
    return key if _IDENTIFIER.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _names(keys: Iterable[str], total: int) -> str:
    shown = ", ".join(_key_name(key) for key in itertools.islice(keys, SUMMARY_KEY_NAMES))
    more = total - SUMMARY_KEY_NAMES
    return shown + (f", … {more:,} more" if more > 0 else "")


def brief(value: Any) -> str:
    """A one-line description: a container's size, a scalar's type and value."""
    kind = json_type(value)
    if kind == "object":
        return f"object with {_plural(len(value), 'key')}"
    if kind == "array":
        return f"array of {_plural(len(value), 'item')}"
    if kind == "string":
        return f"string {_preview(value)}"
    if kind in ("number", "boolean"):
        return f"{kind} {json.dumps(value)}"
    return kind


@dataclass(slots=True)
class _ValueStats:
    """Statistics over many JSON values: type counts, and per type what varies."""

    types: Counter[str] = field(default_factory=Counter)
    numbers: list[float] = field(default_factory=list)
    strings: Counter[str] = field(default_factory=Counter)
    untracked_strings: int = 0
    string_lengths: list[int] = field(default_factory=list)
    booleans: Counter[bool] = field(default_factory=Counter)
    array_lengths: list[int] = field(default_factory=list)
    object_keys: dict[str, None] = field(default_factory=dict)

    def add(self, value: Any) -> None:
        """Count one value."""
        kind = json_type(value)
        self.types[kind] += 1
        if kind == "number":
            self.numbers.append(value)
        elif kind == "string":
            self._add_string(value)
        elif kind == "boolean":
            self.booleans[value] += 1
        elif kind == "array":
            self.array_lengths.append(len(value))
        elif kind == "object":
            self.object_keys.update(dict.fromkeys(value))

    def _add_string(self, value: str) -> None:
        self.string_lengths.append(len(value))
        # Distinct values are counted up to a cap, so memory stays bounded on huge arrays.
        if value in self.strings or len(self.strings) < DISTINCT_CAP:
            self.strings[value] += 1
        else:
            self.untracked_strings += 1

    def type_counts(self) -> str:
        """`string ×3, null ×1` in JSON_TYPES order, then any non-JSON types."""
        order = [*JSON_TYPES, *sorted(set(self.types) - set(JSON_TYPES))]
        return ", ".join(f"{kind} ×{self.types[kind]:,}" for kind in order if self.types[kind])

    def lines(self, *, with_keys: bool = True) -> list[str]:
        """One line per type that has something to say, in a fixed order."""
        lines = []
        if self.numbers:
            lines.append(self._number_line())
        if self.strings or self.untracked_strings:
            lines.append(self._string_line())
        if self.booleans:
            lines.append(
                f"booleans: true ×{self.booleans[True]:,}, false ×{self.booleans[False]:,}"
            )
        if self.array_lengths:
            lengths = self.array_lengths
            total = sum(lengths)
            lines.append(
                f"arrays: length {_span(min(lengths), max(lengths))} "
                f"({_plural(total, 'item')} in total)"
            )
        if self.object_keys and with_keys:
            lines.append(f"objects: keys {_names(self.object_keys, len(self.object_keys))}")
        return lines

    def _number_line(self) -> str:
        low, high = min(self.numbers), max(self.numbers)
        return f"numbers: min {_number(low)}, max {_number(high)}, mean {_mean(self.numbers)}"

    def _string_line(self) -> str:
        distinct = len(self.strings)
        lengths = _span(min(self.string_lengths), max(self.string_lengths))
        if self.untracked_strings:
            counted = (
                f"over {DISTINCT_CAP:,} distinct; most common (of the first {DISTINCT_CAP:,} seen)"
            )
        elif distinct > 1 and distinct == len(self.string_lengths):
            examples = ", ".join(_preview(text) for text in itertools.islice(self.strings, 3))
            return (
                f"strings: {distinct:,} distinct (all different), e.g. {examples}; length {lengths}"
            )
        else:
            counted = f"{distinct:,} distinct; most common"
        ranked = sorted(self.strings.items(), key=lambda item: (-item[1], item[0]))
        top = ", ".join(f"{_preview(text)} ×{count:,}" for text, count in ranked[:TOP_VALUES])
        return f"strings: {counted} {top}; length {lengths}"


def _indented(lines: Iterable[str], depth: int = 1) -> list[str]:
    return [INDENT * depth + line for line in lines]


def _field_lines(objects: Sequence[dict[str, Any]]) -> list[str]:
    """Per-field statistics over objects: presence, types, and what varies per type."""
    fields: dict[str, _ValueStats] = {}
    for obj in objects:
        for key, value in obj.items():
            fields.setdefault(key, _ValueStats()).add(value)
    lines = [f"fields of its {_plural(len(objects), 'object')}:"]
    for key, stats in itertools.islice(fields.items(), SUMMARY_MAX_FIELDS):
        presence = f"present in {sum(stats.types.values()):,}/{len(objects):,}"
        lines.append(f"{INDENT}{_key_name(key)}: {presence}; {stats.type_counts()}")
        lines.extend(_indented(stats.lines(), 2))
    if len(fields) > SUMMARY_MAX_FIELDS:
        lines.append(f"{INDENT}… and {len(fields) - SUMMARY_MAX_FIELDS:,} more fields")
    return lines


def _array_lines(items: Sequence[Any]) -> list[str]:
    stats = _ValueStats()
    for item in items:
        stats.add(item)
    header = f"array of {_plural(len(items), 'item')}"
    if not items:
        return [header + " (empty)"]
    objects = [item for item in items if isinstance(item, dict)]
    lines = [f"{header}: {stats.type_counts()}"]
    lines.extend(_indented(stats.lines(with_keys=not objects)))
    if objects:
        lines.extend(_indented(_field_lines(objects)))
    return lines


def _object_lines(obj: dict[str, Any], levels: int) -> list[str]:
    lines = [f"object with {_plural(len(obj), 'key')}"]
    for key, value in itertools.islice(obj.items(), SUMMARY_MAX_KEYS):
        described = describe(value, levels - 1)
        lines.append(f"{INDENT}{_key_name(key)}: {described[0]}")
        lines.extend(_indented(described[1:]))
    if len(obj) > SUMMARY_MAX_KEYS:
        lines.append(f"{INDENT}… and {len(obj) - SUMMARY_MAX_KEYS:,} more keys")
    return lines


def describe(value: Any, levels: int = SUMMARY_LEVELS) -> list[str]:
    """Summary lines for `value`, expanding containers `levels` deep; the first line is brief."""
    if levels <= 0:
        return [brief(value)]
    if isinstance(value, dict):
        return _object_lines(value, levels)
    if isinstance(value, list | tuple):
        return _array_lines(value)
    return [brief(value)]


class SummarizeDataInput(BaseModel):
    expression: str | None = Field(
        default=None,
        min_length=1,
        description="A JMESPath expression selecting the part to summarise (default: all)",
    )


class SummarizeDataTool:
    """Describes the shape and statistics of the caller's structured data."""

    name: str = "SummarizeData"
    description: str = (
        "Summarises the structured data the caller handed this session (the <structuredData> "
        "block in <userContext>), or the part an optional JMESPath expression selects, as "
        "indented plain text. Objects list each key with its value's type (a scalar with its "
        "value), three levels deep. Arrays give their length and element type counts, then "
        "statistics: numbers min/max/mean, strings distinct count, the 5 most common values "
        "and length range, booleans true/false counts, nested arrays by length, nested "
        "objects by their keys. For an array of objects these come per field, with how many "
        "objects have the field and the types seen (null counts included). Use it first on "
        "unfamiliar data; summarise a nested array with an expression such as "
        "`orders[].items[]`, then use QueryData for specifics."
    )
    input_model: type[BaseModel] = SummarizeDataInput
    kind: ToolKind = "think"

    def is_read_only(self, args: SummarizeDataInput) -> bool:
        """Summarising never changes anything."""
        return True

    def title(self, args: SummarizeDataInput) -> str:
        """`Summarize data`, with the expression when there is one."""
        return _title("Summarize data", args.expression)

    def locations(self, args: SummarizeDataInput, cwd: Path) -> list[Location]:
        """No files: the data lives in the session."""
        return []

    def rule_content(self, args: SummarizeDataInput, cwd: Path) -> str | None:
        """Nothing for permission rules to match."""
        return None

    async def run(self, args: SummarizeDataInput, ctx: ToolContext) -> ToolOutput:
        """The summary text of the (selected) data, capped in size."""
        value = select(ctx, args.expression)
        if value is None:
            return ToolOutput(NULL_RESULT)
        text = f"Summary of {_subject(args.expression)}:\n" + "\n".join(describe(value))
        hint = "Summarise a smaller part by passing an expression."
        body, truncated = cap_text(text, hint)
        return ToolOutput(body, truncated=truncated)


def json_path(parts: Iterable[str | int]) -> str:
    """`$.path.to[3].field` for a sequence of keys and indexes; odd keys as `["a b"]`."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            path += f".{part}"
        else:
            path += f"[{json.dumps(part, ensure_ascii=False)}]"
    return path


def _path_key(error: jsonschema.ValidationError) -> tuple[tuple[tuple[int, int, str], ...], str]:
    parts = tuple(
        (0, part, "") if isinstance(part, int) else (1, 0, str(part))
        for part in error.absolute_path
    )
    return parts, error.message


def _error_line(error: jsonschema.ValidationError) -> str:
    message = error.message
    if len(message) > ERROR_MESSAGE_CHARS:
        message = message[:ERROR_MESSAGE_CHARS] + "…"
    return f"{json_path(error.absolute_path)}: {message}"


def _checked_validator(schema: dict[str, Any]) -> Validator:
    import jsonschema
    from jsonschema.validators import Draft202012Validator, validator_for

    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ToolError(
            f"The schema is invalid at {json_path(exc.absolute_path)}: {exc.message}"
        ) from exc
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def validation_errors(schema: dict[str, Any], value: Any) -> list[jsonschema.ValidationError]:
    """Every error of `value` against `schema`, sorted by path; a ToolError for a bad schema."""
    import referencing.exceptions

    validator = _checked_validator(schema)
    try:
        return sorted(validator.iter_errors(value), key=_path_key)
    except referencing.exceptions.Unresolvable as exc:
        raise ToolError(f"The schema has a $ref that cannot be resolved: {exc}") from exc


class ValidateDataInput(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    json_schema: dict[str, Any] = Field(
        alias="schema", description="The JSON Schema to validate against, as a JSON object"
    )
    expression: str | None = Field(
        default=None,
        min_length=1,
        description="A JMESPath expression selecting the part to validate (default: all)",
    )

    @field_validator("json_schema", mode="before")
    @classmethod
    def _schema_sent_as_text(cls, value: Any) -> Any:
        # Models sometimes send a nested object as a JSON string; accept it when it parses.
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError:
                return value
        return value


class ValidateDataTool:
    """Checks the caller's structured data against a JSON Schema, listing every error."""

    name: str = "ValidateData"
    description: str = (
        "Validates the structured data the caller handed this session (the <structuredData> "
        "block in <userContext>), or the part an optional JMESPath expression selects, "
        "against a JSON Schema (draft 2020-12 unless its $schema names another draft; "
        "`format` is checked for formats such as date, email, ipv4 and uuid). Returns "
        '"Valid: …" with what was validated, or every error sorted by location, one per line '
        "as `$.path.to[3].field: message` (paths relative to the validated value; the first "
        "100 are listed, then a count of the rest). An invalid schema is reported as an "
        "error naming the problem."
    )
    input_model: type[BaseModel] = ValidateDataInput
    kind: ToolKind = "think"

    def is_read_only(self, args: ValidateDataInput) -> bool:
        """Validating never changes anything."""
        return True

    def title(self, args: ValidateDataInput) -> str:
        """`Validate data`, with the expression when there is one."""
        return _title("Validate data", args.expression)

    def locations(self, args: ValidateDataInput, cwd: Path) -> list[Location]:
        """No files: the data lives in the session."""
        return []

    def rule_content(self, args: ValidateDataInput, cwd: Path) -> str | None:
        """Nothing for permission rules to match."""
        return None

    async def run(self, args: ValidateDataInput, ctx: ToolContext) -> ToolOutput:
        """`Valid: …`, or every error by path (capped), for the (selected) data."""
        value = select(ctx, args.expression)
        errors = validation_errors(args.json_schema, value)
        shape = "null: the expression matched nothing" if value is None else brief(value)
        what = f"{_subject(args.expression)} ({shape})"
        if not errors:
            return ToolOutput(f"Valid: the data matches the schema. Validated {what}.")
        lines = [f"Invalid: {_plural(len(errors), 'error')} validating {what}:"]
        lines.extend(_error_line(error) for error in errors[:MAX_ERRORS])
        if len(errors) > MAX_ERRORS:
            lines.append(f"… and {len(errors) - MAX_ERRORS:,} more errors.")
        body, truncated = cap_text("\n".join(lines), "Validate a smaller part with an expression.")
        return ToolOutput(body, truncated=truncated or len(errors) > MAX_ERRORS)


class AskUserInput(BaseModel):
    question: str = Field(min_length=1, description="One clear, self-contained question")
    choices: list[str] | None = Field(
        default=None, description="Answers to offer, when the answer is one of a few options"
    )


def _answer_text(answer: str, choices: list[str] | None) -> str:
    if not answer.strip():
        return "The user answered with an empty reply."
    text = f"The user answered: {answer}"
    offered = {choice.strip().casefold() for choice in choices or []}
    if offered and answer.strip().casefold() not in offered:
        listed = ", ".join(json.dumps(choice, ensure_ascii=False) for choice in choices or [])
        text += f"\n(That is not one of the offered choices ({listed}); they typed it.)"
    return text


class AskUserTool:
    """Asks the user a question and waits for the answer."""

    name: str = "AskUser"
    description: str = (
        "Asks the user a question and waits for the answer; returns "
        '"The user answered: …". Use it only when the task cannot continue without the '
        "user's input: a decision only they can make, or information that is not in the "
        "structured data, the workspace or the conversation. Otherwise make a reasonable "
        "assumption and say so. Ask one clear, self-contained question; pass choices when "
        "the answer is one of a few options (the user may still type something else). "
        "Fails when the question is cancelled (the turn was aborted, or the client cannot "
        "ask questions)."
    )
    input_model: type[BaseModel] = AskUserInput
    kind: ToolKind = "other"

    def is_read_only(self, args: AskUserInput) -> bool:
        """Asking changes nothing in the workspace."""
        return True

    def title(self, args: AskUserInput) -> str:
        """`Ask the user: <question>`."""
        return _title("Ask the user", args.question)

    def locations(self, args: AskUserInput, cwd: Path) -> list[Location]:
        """No files."""
        return []

    def rule_content(self, args: AskUserInput, cwd: Path) -> str | None:
        """Nothing for permission rules to match."""
        return None

    async def run(self, args: AskUserInput, ctx: ToolContext) -> ToolOutput:
        """The user's answer, or a ToolError when the question was cancelled."""
        choices = args.choices or None
        try:
            answer = await ctx.ask_user(args.question, choices)
        except UserQuestionCancelled as exc:
            reason = str(exc) or "no reason given"
            raise ToolError(
                f"The question was cancelled ({reason}). Continue without the answer if you "
                "can, or stop and say what you need from the user."
            ) from exc
        return ToolOutput(_answer_text(answer, choices))
