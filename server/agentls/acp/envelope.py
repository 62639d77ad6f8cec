"""What an ACP line must be before the SDK sees it: a JSON-RPC message, strictly typed.

The SDK answers a request whatever its `id` (an object, a float, `true`), treats anything
with an `id` and no `method` as a response (a malformed one could end its read loop), and
validates params leniently (`true` for an integer, `5` for a string pass). Here every
message is checked first: a broken request is answered -32600 (id null when its id is not
a string or an integer) or -32602 with the fields at fault; a broken notification or
anything shaped like a response (or a notification of no method the agent has) is
dropped with a line in the log, never answered.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from acp import schema as acp
from acp.meta import AGENT_METHODS
from pydantic import BaseModel, ValidationError

from agentls.api import unnameable
from agentls.errors import InvalidParams
from agentls.json_text import is_unicode

log = logging.getLogger(__name__)
# The params model the SDK validates each method's params with.
PARAMS: Final[dict[str, type[BaseModel]]] = {
    AGENT_METHODS["initialize"]: acp.InitializeRequest,
    AGENT_METHODS["authenticate"]: acp.AuthenticateRequest,
    AGENT_METHODS["session_new"]: acp.NewSessionRequest,
    AGENT_METHODS["session_load"]: acp.LoadSessionRequest,
    AGENT_METHODS["session_list"]: acp.ListSessionsRequest,
    AGENT_METHODS["session_close"]: acp.CloseSessionRequest,
    AGENT_METHODS["session_delete"]: acp.DeleteSessionRequest,
    AGENT_METHODS["session_set_mode"]: acp.SetSessionModeRequest,
    AGENT_METHODS["session_prompt"]: acp.PromptRequest,
    AGENT_METHODS["session_fork"]: acp.ForkSessionRequest,
    AGENT_METHODS["session_resume"]: acp.ResumeSessionRequest,
    AGENT_METHODS["session_cancel"]: acp.CancelNotification,
}
NOTIFICATIONS: Final = frozenset({AGENT_METHODS["session_cancel"]})
# A message without a method that has one of these is a response, answered or not.
RESPONSE_KEYS: Final = frozenset({"id", "result", "error"})


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a message is not passed on, and the error it is answered with (if any)."""

    code: int
    message: str
    # None: nothing is sent (a notification or a response is never answered).
    answer_id: str | int | None
    answer: bool
    data: Any = None


def check(message: Any) -> Refusal | None:
    """None for a message the SDK may handle; otherwise how to refuse it."""
    if not isinstance(message, dict):
        return Refusal(-32600, "Invalid Request: a message must be a JSON object", None, True)
    if "method" not in message:
        if RESPONSE_KEYS & message.keys():
            return _check_response(message)
        return Refusal(-32600, "Invalid Request: a message needs a method", None, True)
    request = "id" in message
    msg_id = message.get("id")
    if request and not _valid_id(msg_id):
        return Refusal(-32600, "Invalid Request: id must be a string or an integer", None, True)
    answer_id = msg_id if request else None
    problem = _envelope_problem(message)
    if problem is not None:
        return Refusal(-32600, f"Invalid Request: {problem}", answer_id, request)
    method = message["method"]
    if not request and method in PARAMS and method not in NOTIFICATIONS:
        return Refusal(-32600, f"{method} is a request, not a notification", None, False)
    if not request and method not in NOTIFICATIONS and not method.startswith("_"):
        # Unknown: dropped with a short line (the SDK logged a traceback naming all of it).
        return Refusal(-32601, f"no notification {method[:80]!r}", None, False)
    return _check_params(message["method"], message.get("params"), answer_id, request)


def _envelope_problem(message: dict[str, Any]) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if not isinstance(message["method"], str):
        return "method must be a string"
    params = message.get("params")
    if params is not None and not isinstance(params, dict | list):
        return "params must be an object or an array"
    return None


def _check_params(
    method: str, params: Any, answer_id: str | int | None, request: bool
) -> Refusal | None:
    model = PARAMS.get(method)
    if method == AGENT_METHODS["session_set_config_option"]:
        # As the SDK picks: a boolean option by its `type`, else a select.
        boolean = isinstance(params, dict) and params.get("type") == "boolean"
        model = (
            acp.SetSessionConfigOptionBooleanRequest
            if boolean
            else acp.SetSessionConfigOptionSelectRequest
        )
    if model is None:
        return None
    if not is_unicode(params):
        message = f"Invalid params for {method}: a string holds a lone surrogate, not Unicode"
        return Refusal(-32602, message, answer_id, request)
    unnameable_path = next(_path_problems(params), None)
    if unnameable_path is not None:
        field, problem = unnameable_path
        message = f"Invalid params for {method}: {field}: {problem}"
        return Refusal(-32602, message, answer_id, request, [{"field": field, "message": problem}])
    try:
        parsed = model.model_validate(params, strict=True)
    except ValidationError as exc:
        errors = [
            {"field": ".".join(str(p) for p in err["loc"]), "message": err["msg"]}
            for err in exc.errors(include_url=False)
        ]
        summary = "; ".join(f"{e['field'] or 'params'}: {e['message']}" for e in errors[:5])
        message = f"Invalid params for {method}: {summary}"
        return Refusal(-32602, message, answer_id, request, errors)
    # The SDK passes `_meta`'s keys to the handler as keyword arguments, after the fields:
    # one named like a field would replace that field's checked value.
    meta = getattr(parsed, "field_meta", None) or {}
    clashes = sorted(k for k in meta if k in model.model_fields or _is_alias(model, k))
    if clashes:
        message = f"Invalid params for {method}: _meta may not set {', '.join(clashes)}"
        return Refusal(-32602, message, answer_id, request)
    return None


def _path_problems(params: Any) -> Iterator[tuple[str, str]]:
    """The directories in `params` the OS could not name (a NUL, too long): refused here,
    as the OS would fail on them deep in a handler (-32603); and a relative root."""
    if not isinstance(params, dict):
        return
    cwd = params.get("cwd")
    if isinstance(cwd, str) and (problem := unnameable(cwd)) is not None:
        yield "cwd", problem
    directories = params.get("additionalDirectories")
    for index, item in enumerate(directories if isinstance(directories, list) else []):
        if isinstance(item, str) and (problem := _root_problem(item)) is not None:
            yield f"additionalDirectories.{index}", problem


def _root_problem(directory: str) -> str | None:
    """Why an additional root cannot be one: ACP says each is an absolute path."""
    if not Path(directory).is_absolute():
        return "must be an absolute path"
    return unnameable(directory)


def _is_alias(model: type[BaseModel], key: str) -> bool:
    return any(info.alias == key for info in model.model_fields.values())


def _check_response(message: dict[str, Any]) -> Refusal | None:
    error = message.get("error")
    valid = (
        message.get("jsonrpc") == "2.0"
        and _valid_id(message.get("id"))
        and ("result" in message) != ("error" in message)
        and ("result" in message or _valid_error(error))
    )
    if valid:
        return None
    return Refusal(-32600, "Invalid response: dropped", None, False)


def _valid_error(error: Any) -> bool:
    code = error.get("code") if isinstance(error, dict) else None
    return _valid_id(code) and isinstance(code, int) and isinstance(error.get("message"), str)


def _valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def client_capabilities_of(
    given: acp.ClientCapabilities | dict[str, Any] | None,
) -> acp.ClientCapabilities:
    """The client's capabilities as models all the way down. The SDK salvages a malformed
    part (`"fs": []`) into its default, but as a plain dict, where a model is read later
    (`fs.write_text_file`): dumped and validated again, every part is a model."""
    if given is None:
        return acp.ClientCapabilities()
    raw = given if isinstance(given, dict) else given.model_dump(by_alias=True, warnings=False)
    return acp.ClientCapabilities.model_validate(raw)


def absolute_cwd(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise InvalidParams(f"cwd {cwd!r} must be an absolute path", {"field": "cwd"})
    return path
