"""A new user's first run of the packaged VS Code extension, in a real VS Code
(code-server, driven in Chromium by `clients/vscode/e2e/drive-first-run.mjs`).

* No provider configured (no key in the environment or the settings): the panel shows its
  first-run view before anything is sent. A message sent anyway stays in the box, and the
  error names the extension's own setup, not environment variables, with Send and Stop
  still in view. The view then sets up an OpenAI-compatible server (a replay server here):
  its URL, a key typed into VS Code's secret storage, a model picked from the server's list.
  The kept message is sent; the model receives it with that key. New shows the empty state
  (model, mode, the session just had), which resumes it in one click.
* Restricted Mode (workspace trust on, the folder untrusted): the panel offers to trust the
  folder and no daemon runs; once trusted in VS Code's trust editor, the daemon starts and
  the message typed meanwhile gets its answer.

Screenshots stay in `clients/vscode/e2e/.work/first-run*/artifacts` (copies of the first-run
view, the empty state and Restricted Mode are in clients/vscode/docs/). Skipped, naming
what is missing, without the toolchain of `clients/vscode/e2e/setup.sh` or Chromium.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replay_server import ReplayServer, ScriptedResponse, openai_text_turn
from test_e2e_vscode import WORK, build_vsix, drive_scenario

MODELS = b'{"object":"list","data":[{"id":"qwen3:8b"},{"id":"llama3.2"}]}'


@pytest.fixture(scope="module")
def vsix() -> Path:
    return build_vsix()


def _scenario(vsix: Path, work: Path, *args: str) -> str:
    """One run of e2e/run-first-run.sh; its output, kept beside its screenshots."""
    return drive_scenario("run-first-run.sh", work, str(vsix), str(work), *args)


def test_the_first_run_without_a_provider_sets_one_up_and_keeps_the_message(vsix: Path) -> None:
    work = WORK / "first-run"
    listing = ScriptedResponse(200, (("content-type", "application/json"),), body=MODELS)
    with ReplayServer([listing, openai_text_turn("Hello from the local model.")]) as model:
        output = _scenario(vsix, work, "first-run", model.openai_base_url)
        requests = list(model.requests)
    for step in ("workbench", "first-run view", "message kept", "set up", "sent", "empty state"):
        assert f"ok {step}" in output, output[-4000:]
    listed, answered = requests
    assert (listed.method, listed.path) == ("GET", "/v1/models")
    assert (answered.method, answered.path) == ("POST", "/v1/chat/completions")
    # The key typed into the first-run view reached the daemon (through secret storage);
    # the model picked from the list is the one asked; the kept message is what was sent.
    assert answered.api_key() == "sk-first-run-key"
    assert answered.body["model"] == "qwen3:8b"
    assert "Say hello" in str(answered.body["messages"][-1]["content"])
    for name in ("first-run", "first-run-error", "empty-state"):
        assert (work / "artifacts" / f"{name}.png").stat().st_size > 0


def test_restricted_mode_waits_for_trust_before_starting_the_daemon(vsix: Path) -> None:
    work = WORK / "first-run-restricted"
    output = _scenario(vsix, work, "restricted")
    for step in ("workbench", "trust state", "trusted"):
        assert f"ok {step}" in output, output[-4000:]
    assert (work / "artifacts" / "restricted-mode.png").stat().st_size > 0


def test_a_daemon_that_cannot_start_is_said_in_the_panel(vsix: Path) -> None:
    """agentls.serverPath names no program: the panel says the daemon did not start (and
    why), instead of "Starting agentls…" for ever."""
    work = WORK / "first-run-no-server"
    output = _scenario(vsix, work, "no-server")
    assert "ok start failure" in output, output[-4000:]
