"""Per-call cost of the real provider SDK paths, and how it grows with history.

Also where one Anthropic call's CPU goes (thread CPU, so the replay server's thread and
waits on a loaded machine do not count): the whole provider call, the SDK's `post` and
its event stream alone on the same pre-encoded body (what is left when none of ours
runs), and the SDK's own HTTP client alone posting those bytes and reading the stream
(the transport floor under the SDK). Taken round-robin, so a busy spell hits all three.
Then each extra model call of a whole `agentls run` turn in process (loop_call.py), with
the scripted model and with the Anthropic SDK, and the Anthropic one less the SDK alone:
the part of a call that is ours (loop, tools, events, transcript, request and fold).

In process: `AnthropicProvider` / `OpenAIProvider` (Chat Completions) /
`OpenAIResponsesProvider` (the Responses API) stream one short text answer from the
ReplayServer (`tests/replay_server.py`, TCP_NODELAY set as in bench_rss) for a request
with the real system prompt and tool specs, at 10 and 1,000 messages of Read-call history.
The request's conversion and the SDK's own request building run on the event loop, so
time that grows with history here is time the daemon cannot deliver events in.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any

import bench_rss  # noqa: F401  (sets TCP_NODELAY on the replay handler)
from agentls.context.prompt import system_prompt
from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from agentls.providers.base import ModelRequest
from agentls.tools.registry import ToolRegistry, default_tools
from harness import TESTS_DIR, Row, summarize
from loop_call import extra_call_cpu, median_ms

sys.path.insert(0, TESTS_DIR)

from replay_server import (  # type: ignore[import-not-found, unused-ignore]
    ReplayServer,
    ScriptedResponse,
    anthropic_text_turn,
    openai_text_turn,
)
from responses_replay import responses_turn  # type: ignore[import-not-found, unused-ignore]

SECTION = "6 provider SDK call vs history (in process, replay server)"
SIZES = (10, 1000)


def tool_history(size: int) -> list[Message]:
    """About `size` messages of question, Read call, result, answer; ends with a question."""
    messages: list[Message] = []
    for n in range(max(0, size - 1) // 4):
        call = ToolUseBlock(f"toolu_{n:05d}", "Read", {"file_path": "app.py"})
        messages += [
            user_text(f"Where is the port set? ({n})"),
            Message("assistant", (TextBlock("Reading it."), call)),
            Message("user", (ToolResultBlock(call.id, "     1\tPORT = 8000\n"),)),
            Message("assistant", (TextBlock("PORT is 8000, set in app.py."),)),
        ]
    return [*messages, user_text("And the host?")]


def request_for(messages: list[Message]) -> ModelRequest:
    system = system_prompt()
    return ModelRequest(
        model="replay-model",
        system_static=system.static,
        system_dynamic=system.dynamic,
        messages=messages,
        tools=ToolRegistry(default_tools()).specs(),
        max_tokens=1024,
        thinking_budget=None,
    )


def make_provider(name: str, server: ReplayServer) -> Any:
    """The provider under test, pointed at the replay server (its SDK imported now)."""
    if name == "anthropic":
        from agentls.providers.anthropic import AnthropicProvider

        return AnthropicProvider("test", server.base_url)
    from agentls.providers.openai_compat import OpenAIProvider

    chat = OpenAIProvider("test", server.openai_base_url)
    if name == "openai-responses":
        from agentls.providers.openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(chat)
    return chat


TURNS: dict[str, Callable[[str], ScriptedResponse]] = {
    "anthropic": anthropic_text_turn,
    "openai": openai_text_turn,
    "openai-responses": lambda text: responses_turn(text=text),
}


async def time_calls(name: str, size: int, reps: int) -> list[float]:
    """Seconds per streamed call (one warm-up call first, which opens the connection)."""
    turn = TURNS[name]
    request = request_for(tool_history(size))
    with ReplayServer([turn("The host is localhost.") for _ in range(reps + 1)]) as server:
        provider = make_provider(name, server)
        samples = []
        try:
            for _ in range(reps + 1):
                start = time.perf_counter()
                async for _event in provider.stream(request):
                    pass
                samples.append(time.perf_counter() - start)
        finally:
            await provider.aclose()
    return samples[1:]


async def _measure(reps: int) -> list[Row]:
    rows: list[Row] = []
    for name in TURNS:
        medians: dict[int, float] = {}
        for size in SIZES:
            samples = await time_calls(name, size, reps)
            stats = summarize(samples)
            medians[size] = stats.median
            note = f"p90 {stats.p90 * 1000:.1f} ms, n={stats.n}"
            label = f"{name}: one call, history {size}"
            rows.append(Row(SECTION, label, stats.median * 1000, "ms", note))
        small, large = medians[SIZES[0]], medians[SIZES[-1]]
        per_message = (large - small) / (SIZES[-1] - SIZES[0]) * 1e6
        note = f"≈{per_message:.0f} µs per history message per call"
        rows.append(Row(SECTION, f"{name}: history 1000 vs 10", large / small, "x", note))
    return rows


async def _thread_cpu_per_call(name: str, size: int, reps: int) -> float:
    """Median CPU of this thread per streamed call (the replay server's thread left out),
    which a loaded machine disturbs far less than wall time."""
    request = request_for(tool_history(size))
    turns = [TURNS[name]("The host is localhost.") for _ in range(reps + 1)]
    with ReplayServer(turns) as server:
        provider = make_provider(name, server)
        samples = []
        try:
            for _ in range(reps + 1):
                start = time.thread_time()
                await _provider_call(provider, request)
                samples.append(time.thread_time() - start)
        finally:
            await provider.aclose()
    return summarize(samples[1:]).median


async def _cpu_rows(reps: int) -> list[Row]:
    section = f"{SECTION}: one call's CPU (this thread)"
    return [
        Row(section, f"{name}: history {size}", cpu * 1000, "ms CPU")
        for name in TURNS
        for size in SIZES
        for cpu in [await _thread_cpu_per_call(name, size, reps)]
    ]


SPLIT_HISTORY = 40


async def _provider_call(provider: Any, request: ModelRequest) -> None:
    async for _event in provider.stream(request):
        pass


async def _sdk_call(client: Any, body: bytes) -> None:
    import anthropic

    events = await client.post(
        "/v1/messages",
        cast_to=anthropic.types.Message,
        content=body,
        stream=True,
        stream_cls=anthropic.AsyncStream[object],
    )
    async with events:
        async for _event in events:
            pass


async def _http_call(http: Any, url: str, body: bytes, headers: dict[str, str]) -> None:
    async with http.stream("POST", url, content=body, headers=headers) as response:
        async for _chunk in response.aiter_bytes():
            pass


async def _anthropic_split(reps: int) -> list[Row]:
    """Thread CPU per call: the provider, the SDK alone, the SDK's HTTP client alone."""
    import anthropic

    from agentls.providers.anthropic import AnthropicProvider
    from agentls.providers.anthropic_body import RequestBody

    request = request_for(tool_history(SPLIT_HISTORY))
    body = RequestBody().encode(request)
    rounds = reps + 2
    with ReplayServer(
        [anthropic_text_turn("The host is localhost.") for _ in range(3 * rounds)]
    ) as server:
        provider = AnthropicProvider("test", server.base_url)
        sdk = anthropic.AsyncAnthropic(api_key="test", base_url=server.base_url, max_retries=0)
        http = anthropic.DefaultAsyncHttpxClient()
        url = f"{server.base_url}/v1/messages"
        headers = {"x-api-key": "test", "anthropic-version": "2023-06-01"}
        headers["content-type"] = "application/json"
        calls: dict[str, Callable[[], Any]] = {
            "provider (ours + SDK)": lambda: _provider_call(provider, request),
            "SDK post + event stream alone": lambda: _sdk_call(sdk, body),
            "the SDK's HTTP client alone": lambda: _http_call(http, url, body, headers),
        }
        cpu: dict[str, list[float]] = {name: [] for name in calls}
        try:
            for n in range(rounds):
                for name, call in calls.items():
                    start = time.thread_time()
                    await call()
                    if n >= 2:  # the first rounds open connections and warm caches
                        cpu[name].append(time.thread_time() - start)
        finally:
            await provider.aclose()
            await sdk.close()
            await http.aclose()
    section = f"{SECTION}: one anthropic call's CPU, history {SPLIT_HISTORY}"
    medians = {name: summarize(values).median for name, values in cpu.items()}
    rows = [Row(section, name, value * 1000, "ms CPU") for name, value in medians.items()]
    whole, sdk_alone, floor = medians.values()
    rows.append(Row(section, "SDK alone / provider", sdk_alone / whole, "x"))
    rows.append(Row(section, "HTTP client alone / provider", floor / whole, "x"))
    return rows


def _loop_rows(rounds: int, split: list[Row]) -> list[Row]:
    """Each extra model call of a whole turn in process (loop_call.py), and what of an
    Anthropic one is not the SDK's: the whole call less the SDK alone (from `split`)."""
    section = f"{SECTION}: each extra model call, the whole loop in process (CPU)"
    whole = {name: median_ms(extra_call_cpu(name, rounds)) for name in ("scripted", "anthropic")}
    rows = [Row(section, f"{name}: whole call", value, "ms CPU") for name, value in whole.items()]
    sdk = next(row.value for row in split if row.name == "SDK post + event stream alone")
    note = "the anthropic whole call less the SDK's post + stream alone (history 40)"
    rows.append(
        Row(section, "anthropic: ours outside the SDK", whole["anthropic"] - sdk, "ms CPU", note)
    )
    return rows


def run(quick: bool) -> list[Row]:
    """Per-call times and CPU of the SDK providers at two history sizes, one call's split,
    and each extra call of a whole turn in process."""
    rows = asyncio.run(_measure(3 if quick else 8))
    rows += asyncio.run(_cpu_rows(10 if quick else 30))
    split = asyncio.run(_anthropic_split(30 if quick else 100))
    return rows + split + _loop_rows(5 if quick else 15, split)
