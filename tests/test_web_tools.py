"""WebFetch and WebSearch against a real HTTP server on loopback: HTML to markdown, text and
JSON as they are, binaries refused, redirects (same host followed, another host handed
back), time and size limits, HTTP errors; the permission per domain over stdio; WebSearch
against SearXNG- and Brave-shaped APIs, and not offered without a backend."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_client import read_requests, running_daemon
from agentls.config import Settings, apply_layer
from agentls.permissions.gate import PermissionGate, rule_for_always
from agentls.permissions.rules import parse_rule
from agentls.tools.base import ToolContext, ToolError, ToolOutput
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry, default_tools, validate_input
from agentls.tools.web_fetch import (
    MAX_CONTENT_CHARS,
    MAX_REDIRECTS,
    WebFetchInput,
    WebFetchTool,
    parse_url,
)
from agentls.tools.web_search import WebSearchInput, WebSearchTool
from agentls.web_config import SearchBackend, WebOptions
from agentls.workspace.view import WorkspaceView
from web_server import HUGE_BYTES, WebServer


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer().running() as server:
        yield server


def context(root: Path) -> ToolContext:
    return ToolContext(WorkspaceView([root]), FileReadCache(), root)


async def fetch(tmp_path: Path, url: str, **options: Any) -> ToolOutput:
    tool = WebFetchTool(**{"allow_private": True, **options})
    return await tool.run(WebFetchInput(url=url), context(tmp_path))


# --- WebFetch against the local server --------------------------------------------------------


async def test_html_becomes_markdown_without_scripts_styles_nav_or_footer(
    web: WebServer, tmp_path: Path
) -> None:
    out = await fetch(tmp_path, web.base + "/page")
    assert not out.is_error
    assert out.content.startswith(f"URL: {web.base}/page\nContent-Type: text/html (")
    assert "Title: Release notes" in out.content
    assert "# Version 2.0" in out.content
    assert "Adds **streaming** and [a FAQ](/faq)." in out.content
    assert "- Faster start\n- Fewer bugs" in out.content
    assert "```\npip install thing==2.0\n```" in out.content
    for noise in ("script-text", "color: red", "Home", "footer-text"):
        assert noise not in out.content


async def test_json_is_returned_as_it_is(web: WebServer, tmp_path: Path) -> None:
    out = await fetch(tmp_path, web.base + "/data.json")
    assert out.content.endswith('\n\n{"answer": 42}')
    assert "Content-Type: application/json (14 bytes)" in out.content


async def test_a_binary_is_refused_by_its_content_type(web: WebServer, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"/image\.png is image/png, 72 bytes: binary content"):
        await fetch(tmp_path, web.base + "/image.png")


async def test_a_redirect_chain_on_the_same_host_is_followed(
    web: WebServer, tmp_path: Path
) -> None:
    out = await fetch(tmp_path, web.base + "/r1")
    assert out.content.startswith(f"URL: {web.base}/page\n")
    assert [path for path, _headers in web.requests] == ["/r1", "/r2", "/page"]


async def test_a_redirect_to_another_host_is_handed_back_not_followed(
    web: WebServer, tmp_path: Path
) -> None:
    out = await fetch(tmp_path, web.base + "/away")
    assert not out.is_error
    assert out.content.startswith(
        f"{web.base}/away redirects to another host: http://localhost:{web.port}/page\n"
    )
    assert [path for path, _headers in web.requests] == ["/away"]


async def test_a_redirect_loop_ends_with_a_clear_error(web: WebServer, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=f"redirected more than {MAX_REDIRECTS} times"):
        await fetch(tmp_path, web.base + "/loop")
    assert len(web.requests) == MAX_REDIRECTS + 1


async def test_a_slow_server_times_out(web: WebServer, tmp_path: Path) -> None:
    started = asyncio.get_running_loop().time()
    with pytest.raises(ToolError, match=r"timed out after 0\.5 s"):
        await fetch(tmp_path, web.base + "/slow", timeout=0.5)
    assert asyncio.get_running_loop().time() - started < 3


async def test_a_huge_body_is_read_up_to_the_limit_and_cut_to_the_result_budget(
    web: WebServer, tmp_path: Path
) -> None:
    out = await fetch(tmp_path, web.base + "/huge")
    assert out.truncated and not out.is_error
    assert "Content-Type: text/plain (5,242,880 bytes)" in out.content
    assert out.content.endswith(
        f"[Cut: only its first 5 MB were read; the first {MAX_CONTENT_CHARS:,} of "
        "5,242,880 characters are shown.]"
    )
    assert len(out.content) < MAX_CONTENT_CHARS + 500 < HUGE_BYTES


async def test_a_huge_html_page_is_converted_from_its_first_2_mb(
    web: WebServer, tmp_path: Path
) -> None:
    out = await fetch(tmp_path, web.base + "/huge.html")
    assert out.truncated
    assert "Content-Type: text/html (2,097,152 bytes)" in out.content
    assert f"[Cut: only its first 2 MB were read; the first {MAX_CONTENT_CHARS:,} of " in (
        out.content
    )
    assert "\n\nyyyy" in out.content and "<p>" not in out.content


async def test_an_http_error_names_the_status_and_shows_the_body(
    web: WebServer, tmp_path: Path
) -> None:
    with pytest.raises(ToolError) as error:
        await fetch(tmp_path, web.base + "/missing")
    assert str(error.value) == f"HTTP 404 Not Found from {web.base}/missing:\n# No such page here"


async def test_loopback_is_refused_unless_the_setting_allows_it(
    web: WebServer, tmp_path: Path
) -> None:
    with pytest.raises(ToolError, match=r"127\.0\.0\.1 resolves to a non-public address"):
        await fetch(tmp_path, web.base + "/page", allow_private=False)
    with pytest.raises(ToolError, match="webFetchAllowPrivate"):
        await fetch(tmp_path, f"http://localhost:{web.port}/page", allow_private=False)
    assert web.requests == []


async def test_a_host_that_does_not_resolve_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"Cannot resolve the host no-such-host\.invalid"):
        await fetch(tmp_path, "https://no-such-host.invalid/x")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/file", "reads http and https URLs, not ftp"),
        ("file:///etc/passwd", "reads http and https URLs, not file"),
        ("https://", "names no host|Not a valid URL"),
        ("https://example.com/" + "a" * 2_000, "longer than 2000 characters"),
    ],
)
async def test_urls_it_does_not_fetch(tmp_path: Path, url: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        await fetch(tmp_path, url)


def test_a_blank_url_is_bad_input_not_a_question_about_every_host() -> None:
    # Its rule content would be empty, and an "always" answer would allow every host.
    message = validate_input(WebFetchTool(), {"url": "  "})
    assert isinstance(message, str) and message.startswith("Invalid input for WebFetch: url:")


async def test_http_is_upgraded_to_https_for_public_hosts_on_the_default_port() -> None:
    tool = WebFetchTool(allow_private=True)
    public = await tool._admit(parse_url("http://93.184.216.34/docs"))
    assert str(public) == "https://93.184.216.34/docs"
    own_port = await tool._admit(parse_url("http://93.184.216.34:8080/docs"))
    assert str(own_port) == "http://93.184.216.34:8080/docs"
    local = await tool._admit(parse_url("http://127.0.0.1:8080/docs"))
    assert str(local) == "http://127.0.0.1:8080/docs"
    assert str(parse_url("example.com/a")) == "https://example.com/a"


# --- permissions ---------------------------------------------------------------------------


def test_rules_match_the_host_and_always_remembers_the_domain() -> None:
    tool = WebFetchTool()
    args = WebFetchInput(url="https://Docs.Python.org/3/library/asyncio.html")
    content = tool.rule_content(args, Path("/"))
    assert content == "domain:docs.python.org"
    assert str(rule_for_always("WebFetch", "fetch", content, "allow")) == (
        "WebFetch(domain:docs.python.org)"
    )
    gate = PermissionGate(rules=[parse_rule("WebFetch(domain:*.python.org)", "allow")])
    assert gate.decide("WebFetch", "fetch", True, content).behavior == "allow"
    assert gate.decide("WebFetch", "fetch", True, "domain:python.org.evil").behavior == "ask"


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan"])
def test_fetching_asks_in_every_mode_but_bypass(mode: Any) -> None:
    decision = PermissionGate(mode).decide("WebFetch", "fetch", True, "domain:example.com")
    assert decision.behavior == "ask"
    bypass = PermissionGate("bypassPermissions").decide("WebFetch", "fetch", True, None)
    assert bypass.behavior == "allow"


# --- WebSearch -----------------------------------------------------------------------------


async def test_searxng_results_are_titles_urls_and_snippets(web: WebServer, tmp_path: Path) -> None:
    tool = WebSearchTool(SearchBackend("searxng", web.base), None)
    out = await tool.run(WebSearchInput(query="python asyncio"), context(tmp_path))
    assert out.content == (
        'Web results for "python asyncio" (searxng, 2):\n\n'
        "1. asyncio — Asynchronous I/O\n"
        "   https://docs.python.org/3/library/asyncio.html\n"
        "   asyncio is a library to write concurrent code using async/await.\n\n"
        "2. Async IO in Python: A Complete Walkthrough\n"
        "   https://realpython.com/async-io-python/\n"
        "   A hands-on guide & walkthrough."
    )
    assert web.requests[0][0] == "/search?q=python+asyncio&format=json"


async def test_search_domain_filters(web: WebServer, tmp_path: Path) -> None:
    tool = WebSearchTool(SearchBackend("searxng", web.base + "/search"), None)
    allowed = WebSearchInput(query="asyncio", allowed_domains=["python.org"])
    out = await tool.run(allowed, context(tmp_path))
    assert "docs.python.org" in out.content and "realpython" not in out.content
    blocked = WebSearchInput(query="asyncio", blocked_domains=["www.realpython.com"])
    out = await tool.run(blocked, context(tmp_path))
    assert "realpython" not in out.content and "(searxng, 1)" in out.content
    none = WebSearchInput(query="asyncio", allowed_domains=["example.org"])
    assert (await tool.run(none, context(tmp_path))).content == (
        'No web results for "asyncio" (searxng).'
    )


async def test_brave_search_sends_the_key_and_reads_web_results(
    web: WebServer, tmp_path: Path
) -> None:
    backend = SearchBackend("brave", web.base + "/res/v1/web/search", "BRAVE_KEY_FOR_TEST")
    out = await WebSearchTool(backend, "k-123").run(
        WebSearchInput(query="bubblewrap"), context(tmp_path)
    )
    assert "1. Bubblewrap - ArchWiki\n   https://wiki.archlinux.org/title/Bubblewrap\n" in (
        out.content
    )
    assert "   Bubblewrap is a lightweight sandbox." in out.content
    path, headers = web.requests[0]
    assert path == "/res/v1/web/search?q=bubblewrap&count=20"
    assert headers["X-Subscription-Token"] == "k-123"
    with pytest.raises(ToolError, match=r"needs its API key in \$BRAVE_KEY_FOR_TEST"):
        await WebSearchTool(backend, None).run(WebSearchInput(query="x y"), context(tmp_path))


async def test_a_search_backend_that_fails_is_a_clear_error(web: WebServer, tmp_path: Path) -> None:
    broken = WebSearchTool(SearchBackend("searxng", web.base + "/missing"), None)
    with pytest.raises(ToolError, match="answered HTTP 404"):
        await broken.run(WebSearchInput(query="anything"), context(tmp_path))
    wrong = WebSearchTool(SearchBackend("searxng", web.base + "/html"), None)
    with pytest.raises(ToolError, match="did not answer JSON"):
        await wrong.run(WebSearchInput(query="anything"), context(tmp_path))


def test_web_search_is_registered_only_with_a_backend() -> None:
    plain = ToolRegistry(default_tools()).names()
    assert plain.index("WebFetch") == plain.index("KillShell") + 1
    assert "WebSearch" not in plain
    backend = SearchBackend("searxng", "http://127.0.0.1:1")
    names = ToolRegistry(default_tools(web=WebOptions(search=backend))).names()
    assert names[names.index("WebFetch") + 1] == "WebSearch"


def test_web_settings_are_checked() -> None:
    problems: list[str] = []
    layer = {
        "webSearch": {"provider": "brave"},
        "webFetchAllowPrivate": "yes",
    }
    settings = apply_layer(Settings(), layer, "test", problems)
    assert settings.web_search is None and settings.web_fetch_allow_private is False
    assert problems == [
        "test: webSearch brave needs apiKeyEnv, the variable that holds its API key; "
        "the default is used",
        "test: webFetchAllowPrivate must be true or false; the default is used",
    ]
    good = apply_layer(Settings(), {"webSearch": {"provider": "brave", "apiKeyEnv": "K"}}, "t", [])
    assert good.web_search == SearchBackend(
        "brave", "https://api.search.brave.com/res/v1/web/search", "K"
    )
    assert WebOptions.from_settings(False, good.web_search, {"K": "v"}).search_key == "v"


# --- over stdio ----------------------------------------------------------------------------


def settings_file(tmp_path: Path, settings: dict[str, Any]) -> None:
    folder = tmp_path / "ws" / ".agentls"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def fetch_call(url: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "WebFetch", "input": {"url": url}}]}


def tool_results(log: Path) -> list[Any]:
    requests = read_requests(log)
    return [
        block
        for message in requests[-1]["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


async def test_fetch_asks_per_domain_and_always_remembers_the_domain(
    web: WebServer, tmp_path: Path
) -> None:
    settings_file(tmp_path, {"webFetchAllowPrivate": True})
    async with running_daemon(tmp_path) as client:
        first, log = await client.scripted_session(
            tmp_path, [fetch_call(web.base + "/page"), {"text": "read it"}]
        )
        answering = asyncio.create_task(client.answer_permission(first, "allow_always"))
        _turn, done = await client.run_turn(first, "what is new?")
        request = await answering
        assert done["stopReason"] == "end_turn"
        assert request["title"] == f"Fetch {web.base}/page"
        always = next(o for o in request["options"] if o["optionId"] == "allow_always")
        assert always["rule"] == "WebFetch(domain:127.0.0.1)"
        [result] = tool_results(log)
        assert "# Version 2.0" in json.dumps(result)
        saved = json.loads((tmp_path / "ws" / ".agentls" / "settings.local.json").read_text())
        assert saved["permissions"] == {"allow": ["WebFetch(domain:127.0.0.1)"]}

        # The same host again: no question. Another host (localhost): asked again.
        script = [fetch_call(web.base + "/data.json"), fetch_call(f"http://localhost:{web.port}/")]
        second, _log = await client.scripted_session(tmp_path, [*script, {"text": "done"}])
        answering = asyncio.create_task(client.answer_permission(second, "reject_once"))
        turn, done = await client.run_turn(second, "again")
        request = await answering
        assert done["stopReason"] == "end_turn"
        asked = [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
        assert [e["title"] for e in asked] == [f"Fetch http://localhost:{web.port}/"]
        assert [path for path, _headers in web.requests] == ["/page", "/data.json"]


async def test_web_search_is_offered_only_when_configured(web: WebServer, tmp_path: Path) -> None:
    async with running_daemon(tmp_path) as client:
        plain = await client.new_session(tmp_path, provider="scripted", script=[])
        assert "WebFetch" in plain["tools"] and "WebSearch" not in plain["tools"]

        settings_file(
            tmp_path,
            {
                "webSearch": {"provider": "searxng", "url": web.base},
                "permissions": {"allow": ["WebSearch"]},
            },
        )
        call = {"name": "WebSearch", "input": {"query": "asyncio", "blocked_domains": ["x.y"]}}
        session, log = await client.scripted_session(
            tmp_path, [{"tool_calls": [call]}, {"text": "found"}]
        )
        turn, done = await client.run_turn(session, "search")
        assert done["stopReason"] == "end_turn"
        assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
        [result] = tool_results(log)
        assert "1. asyncio — Asynchronous I/O" in json.dumps(result, ensure_ascii=False)
        specs = set(read_requests(log)[0]["tools"])
        assert {"WebFetch", "WebSearch"} <= specs
