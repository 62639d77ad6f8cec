"""WebSearch: ask the configured search backend (SearXNG or the Brave Search API) and give
the model titles, URLs and snippets to follow up with WebFetch.

Offered only when the `webSearch` setting names a backend: a model never sees a search
tool that cannot search. Domain filters are applied to the results here, so they work the
same with every backend.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from agentls.tool_values import ToolKind
from agentls.tools.base import ReadOnlyTool, ToolContext, ToolError, ToolOutput
from agentls.web_config import SearchBackend

TIMEOUT_SECONDS = 20.0
MAX_RESULTS = 10
# Asked for more than shown, so domain filters still leave some.
REQUESTED_RESULTS = 20
SNIPPET_CHARS = 300
_TAG = re.compile(r"<[^>]+>")


class WebSearchInput(BaseModel):
    query: str = Field(min_length=2, description="The search query")
    allowed_domains: list[str] | None = Field(
        default=None, description="Only include results from these domains"
    )
    blocked_domains: list[str] | None = Field(
        default=None, description="Never include results from these domains"
    )


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class WebSearchTool(ReadOnlyTool[WebSearchInput]):
    """Searches the web through the configured backend."""

    name: str = "WebSearch"
    description: str = (
        "Searches the web and returns up to 10 results, each a title, a URL and a snippet. "
        "Use it for information newer than your training or outside this project, then "
        "read the pages that matter with WebFetch. allowed_domains keeps only results from "
        "those domains (and their subdomains); blocked_domains drops them. Cite the URLs "
        "you rely on when you answer."
    )
    input_model: type[BaseModel] = WebSearchInput
    # Read-only, but it sends the query out: the gate asks, like WebFetch.
    kind: ToolKind = "fetch"

    def __init__(self, backend: SearchBackend, api_key: str | None) -> None:
        self.backend = backend
        self.api_key = api_key

    def title(self, args: WebSearchInput) -> str:
        return f"Search the web: {args.query}"

    async def run(self, args: WebSearchInput, ctx: ToolContext) -> ToolOutput:
        found = await self._search(args.query)
        kept = [
            r for r in found if _kept(r.url, args.allowed_domains or (), args.blocked_domains or ())
        ]
        return ToolOutput(_render(args.query, self.backend.provider, kept[:MAX_RESULTS]))

    async def _search(self, query: str) -> list[SearchResult]:
        import httpx2

        url, params, headers = self._request(query)
        try:
            async with httpx2.AsyncClient(timeout=TIMEOUT_SECONDS) as client:
                response = await client.get(url, params=params, headers=headers)
        except httpx2.TimeoutException:
            raise ToolError(
                f"The {self.backend.provider} search timed out after {TIMEOUT_SECONDS:g} s."
            ) from None
        except httpx2.HTTPError as exc:
            raise ToolError(f"Cannot reach the {self.backend.provider} search: {exc}") from None
        if response.status_code >= 400:
            excerpt = response.text[:300].strip()
            raise ToolError(
                f"The {self.backend.provider} search answered HTTP {response.status_code}"
                + (f": {excerpt}" if excerpt else ".")
            )
        try:
            data = response.json()
        except ValueError:
            raise ToolError(
                f"The {self.backend.provider} search did not answer JSON (is {url} its API?)."
            ) from None
        return _results(self.backend.provider, data)

    def _request(self, query: str) -> tuple[str, dict[str, str], dict[str, str]]:
        backend = self.backend
        headers = {"Accept": "application/json"}
        if backend.api_key_env is not None and not self.api_key:
            raise ToolError(
                f"The {backend.provider} search needs its API key in ${backend.api_key_env} "
                "(the webSearch.apiKeyEnv setting), which is not set in the daemon's environment."
            )
        if backend.provider == "brave":
            headers["X-Subscription-Token"] = self.api_key or ""
            return backend.url, {"q": query, "count": str(REQUESTED_RESULTS)}, headers
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        base = backend.url.rstrip("/")
        url = base if base.endswith("/search") else base + "/search"
        return url, {"q": query, "format": "json"}, headers


def _results(provider: str, data: Any) -> list[SearchResult]:
    """Results from SearXNG's `results` or Brave's `web.results`; odd entries skipped."""
    if provider == "brave":
        web = data.get("web") if isinstance(data, dict) else None
        items = web.get("results") if isinstance(web, dict) else None
        snippet_key = "description"
    else:
        items = data.get("results") if isinstance(data, dict) else None
        snippet_key = "content"
    if not isinstance(items, list):
        raise ToolError(f"The {provider} search answered JSON without a list of results.")
    return [
        SearchResult(_plain(item.get("title")), str(item["url"]), _plain(item.get(snippet_key)))
        for item in items
        if isinstance(item, dict) and isinstance(item.get("url"), str)
    ]


def _plain(value: Any) -> str:
    """Snippet text without the markup (Brave marks matches with <strong>) and entities."""
    text = " ".join(html.unescape(_TAG.sub("", str(value or ""))).split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


def _kept(url: str, allowed: Sequence[str], blocked: Sequence[str]) -> bool:
    host = _host(url)
    if any(_within(host, domain) for domain in blocked):
        return False
    return not allowed or any(_within(host, domain) for domain in allowed)


def _host(url: str) -> str:
    try:
        return (urlsplit(url if "://" in url else "//" + url).hostname or "").lower()
    except ValueError:
        return ""


def _within(host: str, domain: str) -> bool:
    domain = _host(domain.strip()).removeprefix("www.")
    return bool(domain) and (host == domain or host.endswith("." + domain))


def _render(query: str, provider: str, results: Sequence[SearchResult]) -> str:
    if not results:
        return f'No web results for "{query}" ({provider}).'
    lines = [f'Web results for "{query}" ({provider}, {len(results)}):']
    for number, result in enumerate(results, 1):
        lines += ["", f"{number}. {result.title or '(untitled)'}", f"   {result.url}"]
        if result.snippet:
            lines.append(f"   {result.snippet}")
    return "\n".join(lines)
