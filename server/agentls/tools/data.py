"""QueryData, SummarizeData and ValidateData: working with the caller's data.

A caller may hand a session structured JSON data plus an intent. Pasting all of it into
the prompt does not scale and makes the model count and filter by eye, which it does
badly; these tools let it select with JMESPath, see the data's shape and statistics
(agentls.json_summary), and check it against a JSON Schema, each answer bounded in size.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentls.json_summary import brief, describe, plural
from agentls.tool_values import ToolKind
from agentls.tools.base import ReadOnlyTool, ToolContext, ToolError, ToolOutput, short_title

# jmespath and jsonschema (about 13 MB and 60 ms together) load on a data tool's first call.
if TYPE_CHECKING:
    import jmespath.exceptions
    import jsonschema
    from jsonschema.protocols import Validator

MAX_RESULT_CHARS = 20_000
MAX_ERRORS = 100
ERROR_MESSAGE_CHARS = 300
NULL_RESULT = "The expression matched nothing (null)."
# The order types are listed in, so summaries read the same for the same data.
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


class QueryDataInput(BaseModel):
    expression: str = Field(
        min_length=1, description="A JMESPath expression evaluated against the structured data"
    )


class QueryDataTool(ReadOnlyTool[QueryDataInput]):
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

    def title(self, args: QueryDataInput) -> str:
        """`Query data: <expression>`."""
        return short_title("Query data", args.expression)

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


class SummarizeDataInput(BaseModel):
    expression: str | None = Field(
        default=None,
        min_length=1,
        description="A JMESPath expression selecting the part to summarise (default: all)",
    )


class SummarizeDataTool(ReadOnlyTool[SummarizeDataInput]):
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

    def title(self, args: SummarizeDataInput) -> str:
        """`Summarize data`, with the expression when there is one."""
        return short_title("Summarize data", args.expression)

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


class ValidateDataTool(ReadOnlyTool[ValidateDataInput]):
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

    def title(self, args: ValidateDataInput) -> str:
        """`Validate data`, with the expression when there is one."""
        return short_title("Validate data", args.expression)

    async def run(self, args: ValidateDataInput, ctx: ToolContext) -> ToolOutput:
        """`Valid: …`, or every error by path (capped), for the (selected) data."""
        value = select(ctx, args.expression)
        errors = validation_errors(args.json_schema, value)
        shape = "null: the expression matched nothing" if value is None else brief(value)
        what = f"{_subject(args.expression)} ({shape})"
        if not errors:
            return ToolOutput(f"Valid: the data matches the schema. Validated {what}.")
        lines = [f"Invalid: {plural(len(errors), 'error')} validating {what}:"]
        lines.extend(_error_line(error) for error in errors[:MAX_ERRORS])
        if len(errors) > MAX_ERRORS:
            lines.append(f"… and {len(errors) - MAX_ERRORS:,} more errors.")
        body, truncated = cap_text("\n".join(lines), "Validate a smaller part with an expression.")
        return ToolOutput(body, truncated=truncated or len(errors) > MAX_ERRORS)
