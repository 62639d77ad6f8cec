"""acpx (tests/test_acp_real_client.py's harness) with the adapter's own commands: a
`/queue` prompt typed in acpx reaches the model without its command word, as the
available_commands_update acpx received advertised. Skipped without node or acpx."""

from __future__ import annotations

import json

from test_acp_real_client import Acpx, acpx, pytestmark, write_jsonl

__all__ = ["acpx", "pytestmark"]  # the fixture and the skip marks, used by name


def test_a_queue_command_from_acpx_is_a_plain_message(acpx: Acpx) -> None:
    script = write_jsonl(acpx.root / "script.jsonl", [{"text": "Queued and answered."}])
    log = acpx.root / "requests.jsonl"
    acpx.env.update(
        AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=str(script), AGENTLS_REQUEST_LOG=str(log)
    )

    done = acpx.run("exec", "/queue say hello", flags=("--format", "json"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Queued and answered." in done.stdout
    assert acpx.stop_reasons() == ["end_turn"]
    # What the model was sent: the message without the command word.
    (request,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    sent = json.dumps(request["messages"])
    assert "say hello" in sent and "/queue" not in sent
