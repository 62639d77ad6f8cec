"""What the agent asks the person at an ACP client: permission for a call, and AskUser's
questions. Each asks the client and returns the answer for the core; a client that
fails or goes away counts as no answer, never as an error in the turn.
"""

from __future__ import annotations

import logging
from typing import Any

from acp import RequestError
from acp import schema as acp

from agentls.events import AskUserRequest, PermissionRequest
from agentls.permissions.asking import PermissionAnswer

log = logging.getLogger(__name__)
NO_ANSWER = "(no answer: the user dismissed the question)"
CANNOT_ASK = (
    "This editor (an ACP client) cannot show free-text questions. Choose a sensible default, "
    "say which one you chose, and go on."
)


async def ask_permission(
    client: Any, session_id: str, request: PermissionRequest, call: acp.ToolCallUpdate
) -> str | None:
    """session/request_permission: the chosen option's id, or None when the request was
    dismissed or could not be put."""
    options = [
        acp.PermissionOption(
            option_id=o.option_id,
            # An "always" option shows the rule it saves.
            name=f"{o.name} ({o.rule})" if o.rule else o.name,
            kind=o.kind,
        )
        for o in request.options
    ]
    try:
        answer = await client.request_permission(
            session_id=session_id, tool_call=call, options=options
        )
    except (RequestError, ConnectionError) as exc:
        log.warning("session/request_permission failed: %s", exc)
        return None
    outcome = answer.outcome
    return outcome.option_id if isinstance(outcome, acp.AllowedOutcome) else None


def dismissed(request: PermissionRequest) -> PermissionAnswer:
    """The answer to a request dismissed without a choice: the call does not run, the turn
    goes on. A dismissed plan is rejected (keeping on planning would only ask again)."""
    option_id = "plan_reject" if request.plan is not None else "reject_once"
    return PermissionAnswer(option_id, "The user dismissed the request.")


async def ask_question(
    client: Any, session_id: str, request: AskUserRequest, can_elicit: bool
) -> str:
    """AskUser's answer: a form (`elicitation/create`) when the client offers one, else
    the choices as a permission request's options (ACP v1 has no question request); a
    free-text question with neither cannot be put, and the model hears so."""
    try:
        if can_elicit:
            return await _elicit(client, session_id, request)
        if request.choices:
            return await _choose(client, session_id, request, list(request.choices))
    except (RequestError, ConnectionError) as exc:
        log.warning("AskUser could not be put to the client: %s", exc)
        return NO_ANSWER
    return CANNOT_ASK


async def _elicit(client: Any, session_id: str, request: AskUserRequest) -> str:
    answer = acp.ElicitationStringPropertySchema(
        type="string",
        title="Answer",
        enum=list(request.choices) if request.choices else None,
    )
    mode = acp.ElicitationFormSessionMode(
        session_id=session_id,
        tool_call_id=request.tool_call_id,
        requested_schema=acp.ElicitationSchema(
            type="object", properties={"answer": answer}, required=["answer"]
        ),
    )
    reply = await client.create_elicitation(message=request.question, mode=mode)
    if isinstance(reply, acp.AcceptElicitationResponse) and reply.content:
        return str(reply.content.get("answer", ""))
    return NO_ANSWER


async def _choose(client: Any, session_id: str, request: AskUserRequest, choices: list[str]) -> str:
    options = [
        acp.PermissionOption(option_id=f"choice-{i}", name=choice, kind="allow_once")
        for i, choice in enumerate(choices)
    ]
    call = acp.ToolCallUpdate(
        tool_call_id=request.tool_call_id, title=request.question, status="pending"
    )
    reply = await client.request_permission(session_id=session_id, tool_call=call, options=options)
    outcome = reply.outcome
    if not isinstance(outcome, acp.AllowedOutcome):
        return NO_ANSWER
    index = outcome.option_id.removeprefix("choice-")
    return choices[int(index)] if index.isdigit() and int(index) < len(choices) else NO_ANSWER
