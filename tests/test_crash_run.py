"""The crash run: the daemon is SIGKILLed at random moments of a multi-turn session with
tool calls, restarted, the session resumed, and the next turns run; again and again.

Each turn streams text slowly (so kills land mid-stream), reads a file, runs Bash (a
second, so kills land mid-tool; a background shell too), edits and writes files (each asked
about, answered after a random pause, so kills land mid-permission). After every kill:
- no process of a command is left (the watchdog's work);
- no line of the transcript is corrupt but possibly the last one, torn mid-write; a torn one
  is cut when the session is resumed (and logged). Every other kill also tears the last
  line on purpose: a record of a few kilobytes is written in one go, and is rarely cut;
- the resume succeeds, and every message the client saw completed, in any earlier run, is
  in the history it returns, unchanged;
- no request to the model holds a tool_use without its tool_result, or the reverse.
The last run resumes and completes a turn, then shuts down. The default run makes a few
kills at seeded moments; `--long` makes 50 at fresh random ones. The figures are printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import secrets
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig

from agent_client import AgentClient, Event, capabilities, read_requests
from orphans import wait_none_marked

SEED = 20261125
KILLS, LONG_KILLS = 4, 50
# The kill comes this long (uniform, in seconds) after the session is opened or resumed: a
# turn takes about 1.5 s, so most kills land in the first turns, some between them.
KILL_AFTER = (0.0, 4.0)
TURNS_PER_RUN = 12
# Every how-manieth kill also tears the transcript's last line, as a kill in the middle of
# writing a record would (a write of a few kilobytes is rarely cut in practice).
TEAR_EVERY = 2
PROSE = "The quick brown fox checks the notes, runs the tests and writes it down. " * 3


@dataclass
class Figures:
    kills: int = 0
    resumes_ok: int = 0
    lost_messages: int = 0
    messages_checked: int = 0
    unpaired_requests: int = 0
    requests_checked: int = 0
    corrupt_lines: int = 0
    torn_lines: int = 0
    torn_lines_made: int = 0
    torn_lines_reported: int = 0
    orphans: int = 0
    slowest_orphan_seconds: float = 0.0
    turns_completed: int = 0
    kill_phases: Counter[str] = field(default_factory=Counter)

    def line(self, seconds: float) -> str:
        return (
            f"crash run: {self.kills} kills, {self.resumes_ok} resumes ok, "
            f"{self.lost_messages} lost of {self.messages_checked} messages checked, "
            f"{self.unpaired_requests} unpaired tool_use "
            f"in {self.requests_checked} requests, {self.torn_lines} torn lines "
            f"({self.torn_lines_made} of them made by the test; {self.torn_lines_reported} cut "
            f"and logged), {self.corrupt_lines} corrupt lines, "
            f"{self.orphans} orphans (slowest gone {self.slowest_orphan_seconds:.3f} s after "
            f"its kill), {self.turns_completed} turns completed, kills landed "
            f"{dict(self.kill_phases)}, {seconds:.1f} s"
        )


def call(tool_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": tool_id, "name": name, "input": arguments}


def turn_script(tag: str, marker: str, background: bool) -> list[dict[str, Any]]:
    """One turn's five model calls: read, run (and maybe start a shell), edit, write, end."""
    run = [call(f"b_{tag}", "Bash", command=f"sleep 0.{marker}; echo {tag}")]
    if background:
        command = f"sleep 30.{marker}; echo bg"
        run.append(call(f"g_{tag}", "Bash", command=command, run_in_background=True))
    edit = {"file_path": "notes.txt", "old_string": "END", "new_string": f"{tag}\nEND"}
    slow = {"chunk": 12, "delay": 0.01}
    read = call(f"r_{tag}", "Read", file_path="notes.txt")
    return [
        {"text": f"{tag}: {PROSE}", **slow, "tool_calls": [read]},
        {"text": f"Running {tag}.", **slow, "tool_calls": run},
        {"tool_calls": [call(f"e_{tag}", "Edit", **edit)]},
        {"tool_calls": [call(f"w_{tag}", "Write", file_path=f"out/{tag}.txt", content=PROSE)]},
        {"text": f"Done with {tag}. {PROSE}", **slow},
    ]


def run_script(run: int, marker: str) -> list[dict[str, Any]]:
    """The script of one daemon run (a resumed session plays its script from the start)."""
    return [
        entry
        for turn in range(TURNS_PER_RUN)
        for entry in turn_script(f"r{run}t{turn}", marker, background=turn == 0)
    ]


def daemon_config(stderr: Path, home: Path) -> ClientServerConfig:
    # Through sh, so the daemon's stderr (its log) goes to a file; `exec` keeps the pid.
    command = ["/bin/sh", "-c", 'exec "$0" -m agentls --stdio 2>>"$1"', sys.executable]
    return ClientServerConfig(
        server_command=[*command, str(stderr)],
        client_factory=AgentClient,
        server_env={**os.environ, "AGENTLS_HOME": str(home)},
    )


async def start_daemon(stderr: Path, home: Path, root: Path) -> AgentClient:
    client = await daemon_config(stderr, home).start()
    assert isinstance(client, AgentClient)
    params = lsp.InitializeParams(capabilities=capabilities(False), root_uri=root.as_uri())
    await client.initialize_session(params)
    return client


async def sigkill(client: AgentClient) -> None:
    process = client._server
    assert process is not None
    os.kill(process.pid, signal.SIGKILL)
    await asyncio.wait_for(process.wait(), 10)
    client.capabilities = None  # the daemon is gone: nothing to shut down
    await client.stop()


async def drive(client: AgentClient, session: str) -> None:
    """Submit turn after turn, each once the previous one completed."""
    for step in range(TURNS_PER_RUN):
        result = await client.request(
            "agent/submitMessage", {"sessionId": session, "text": f"step {step}"}
        )
        await client.events.turn_completed(result["turnId"], timeout=60)


async def answer_permissions(client: AgentClient, session: str, rng: random.Random) -> None:
    """Allow every call asked about, after a pause of up to 50 ms."""
    answered: set[str] = set()
    while True:
        for event in list(client.events.items):
            if event["type"] != "permission_request" or event["requestId"] in answered:
                continue
            answered.add(event["requestId"])
            await asyncio.sleep(rng.uniform(0, 0.05))
            with contextlib.suppress(Exception):
                await client.request(
                    "agent/respondPermission",
                    {
                        "sessionId": session,
                        "requestId": event["requestId"],
                        "optionId": "allow_once",
                    },
                )
        await asyncio.sleep(0.005)


def kill_phase(events: list[Event]) -> str:
    """Where the kill landed, from what the client had seen."""
    asked = {e["requestId"] for e in events if e["type"] == "permission_request"}
    resolved = {e["requestId"] for e in events if e["type"] == "permission_resolved"}
    if asked - resolved:
        return "permission"
    running: set[str] = set()
    for event in events:
        if event["type"] == "tool_call_update":
            if event["status"] == "in_progress":
                running.add(event["toolCallId"])
            else:
                running.discard(event["toolCallId"])
    if running:
        return "tool"
    if events and events[-1]["type"] in ("text_delta", "thinking_delta"):
        return "stream"
    return "between"


def torn_last_line(path: Path) -> bool:
    """Whether the transcript's last line lacks its newline (a write the kill cut)."""
    return not path.read_bytes().endswith(b"\n")


def tear(path: Path, rng: random.Random) -> None:
    """Append the start of a record without its end, as a write cut by the kill leaves it."""
    last = path.read_bytes().splitlines()[-1]
    with path.open("ab") as handle:
        handle.write(last[: rng.randrange(1, len(last))])


def corrupt_lines(path: Path) -> int:
    """Lines of the transcript that are not JSON."""
    count = 0
    for line in path.read_bytes().splitlines():
        try:
            json.loads(line)
        except ValueError:
            count += 1
    return count


def unpaired(request: dict[str, Any]) -> bool:
    """Whether a request's history breaks the pairing of tool calls and results."""
    messages = request["messages"]
    for index, message in enumerate(messages):
        blocks = message["content"] if isinstance(message["content"], list) else []
        calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        before = messages[index - 1]["content"] if index else []
        asked = [b["id"] for b in before if isinstance(b, dict) and b["type"] == "tool_use"]
        if results and sorted(results) != sorted(asked):
            return True
        if calls:
            after = messages[index + 1]["content"] if index + 1 < len(messages) else []
            answered = [b.get("tool_use_id") for b in after if isinstance(b, dict)]
            if sorted(a for a in answered if a) != sorted(calls):
                return True
    return False


def check_requests(log: Path, figures: Figures) -> None:
    for request in read_requests(log):
        figures.requests_checked += 1
        figures.unpaired_requests += unpaired(request)


def check_resumed(resumed: dict[str, Any], completed: dict[str, Event], figures: Figures) -> None:
    """Every message the client saw completed is in the resumed history, unchanged."""
    shown = {m["messageId"]: m for m in resumed["messages"]}
    figures.messages_checked += len(completed)
    for message_id, event in completed.items():
        got = shown.get(message_id)
        if got is None or got["role"] != event["role"] or got["content"] != event["content"]:
            figures.lost_messages += 1


def remember_completed(events: list[Event], completed: dict[str, Event]) -> None:
    for event in events:
        if event["type"] == "message_completed" and "agentId" not in event:
            completed[event["messageId"]] = event


async def killed_run(
    client: AgentClient, session: str, rng: random.Random, figures: Figures
) -> None:
    """Run turns until the kill, at a random moment."""
    tasks = [
        asyncio.create_task(drive(client, session)),
        asyncio.create_task(answer_permissions(client, session, random.Random(rng.random()))),
    ]
    await asyncio.sleep(rng.uniform(*KILL_AFTER))
    figures.kill_phases[kill_phase(client.events.items)] += 1
    await sigkill(client)
    figures.kills += 1
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def finishing_run(client: AgentClient, session: str, rng: random.Random) -> None:
    """The last run: one whole turn after the resume, then a normal shutdown."""
    answers = asyncio.create_task(answer_permissions(client, session, rng))
    try:
        _turn, done = await client.run_turn(session, "finish")
    finally:
        answers.cancel()
    assert done["stopReason"] == "end_turn", done
    await client.shutdown_session()
    await client.stop()


class CrashRun:
    """One session, its daemon killed `kills` times, each time restarted and resumed."""

    def __init__(self, tmp_path: Path, seed: int) -> None:
        self.tmp_path = tmp_path
        self.rng = random.Random(seed)
        self.figures = Figures()
        # Digits no other process's command line holds: `sleep 0.6…` runs for 0.6 s.
        self.marker = f"6{secrets.randbelow(10**8):08d}"
        self.home, self.root = tmp_path / "home", tmp_path / "ws"
        self.stderr = tmp_path / "daemon.log"
        # Every message the client saw completed, in every run so far.
        self.completed: dict[str, Event] = {}
        self.session = ""

    @property
    def transcript(self) -> Path:
        return self.home / "sessions" / f"{self.session}.jsonl"

    async def run(self, kills: int) -> Figures:
        self.root.mkdir()
        (self.root / "notes.txt").write_text("Notes\nEND\n")
        for run in range(kills + 1):
            log = self.tmp_path / f"requests-{run}.jsonl"
            client = await self.open(run, log)
            if run < kills:
                await killed_run(client, self.session, self.rng, self.figures)
                await self.after_kill(run)
            else:
                await finishing_run(client, self.session, self.rng)
            remember_completed(client.events.items, self.completed)
            self.figures.turns_completed += len(client.events.of_type("turn_completed"))
            check_requests(log, self.figures)
        self.figures.corrupt_lines = corrupt_lines(self.transcript)
        # A normal shutdown ends the last run's commands itself.
        _took, left = await wait_none_marked(f".{self.marker}")
        self.figures.orphans += len(left)
        return self.figures

    async def open(self, run: int, log: Path) -> AgentClient:
        """A new daemon with the session: created in the first run, else resumed."""
        script = run_script(run, self.marker)
        logged_before = self.stderr.read_text() if self.stderr.exists() else ""
        client = await start_daemon(self.stderr, self.home, self.root)
        if run == 0:
            opened = await client.new_session(
                self.root, provider="scripted", script=script, requestLog=str(log)
            )
            self.session = opened["sessionId"]
            return client
        torn = torn_last_line(self.transcript)
        self.figures.torn_lines += torn
        resumed = await client.request(
            "agent/resumeSession",
            {"sessionId": self.session, "script": script, "requestLog": str(log)},
        )
        self.figures.resumes_ok += 1
        check_resumed(resumed, self.completed, self.figures)
        logged = self.stderr.read_text()[len(logged_before) :]
        self.figures.torn_lines_reported += torn and "was cut off" in logged
        return client

    async def after_kill(self, run: int) -> None:
        """Wait for the commands to go; tear the transcript's last line now and then."""
        took, left = await wait_none_marked(f".{self.marker}")
        self.figures.orphans += len(left)
        self.figures.slowest_orphan_seconds = max(self.figures.slowest_orphan_seconds, took)
        if run % TEAR_EVERY == TEAR_EVERY - 1 and not torn_last_line(self.transcript):
            tear(self.transcript, self.rng)
            self.figures.torn_lines_made += 1


async def test_the_daemon_survives_being_killed_at_random_moments(
    tmp_path: Path, long_run: bool
) -> None:
    seed = secrets.randbits(32) if long_run else SEED
    kills = LONG_KILLS if long_run else KILLS
    started = time.monotonic()
    figures = await CrashRun(tmp_path, seed).run(kills)
    print(f"\n{figures.line(time.monotonic() - started)} (seed {seed})")
    assert figures.kills == kills and figures.resumes_ok == kills
    assert figures.lost_messages == 0
    assert figures.unpaired_requests == 0 and figures.requests_checked > kills
    assert figures.corrupt_lines == 0
    assert figures.torn_lines_reported == figures.torn_lines
    assert figures.orphans == 0
