"""WebFetch: read a web page (or a text or JSON document) and hand it to the model as
markdown, within limits on size, time and where it may go.

Claude Code's WebFetch takes a `prompt` and has a small model answer it from the page;
agentls has no cheap side model, so this one returns the page itself (as markdown, cut to
fit the tool-result budget) and offers no `prompt`: the model that asked reads it.

What keeps a fetch in bounds: http(s) only; http upgraded to https for public hosts on
the default port; the host's addresses checked before each request (loopback, private,
link-local and other non-public addresses refused unless the `webFetchAllowPrivate`
setting allows them); a redirect to the same host followed (and checked again), one to
another host handed back to the model, because the user's permission is per host
(`WebFetch(domain:example.com)`); at most MAX_DOWNLOAD_BYTES read (MAX_HTML_BYTES of
HTML); one deadline for the whole fetch.
The address check is made on what the host resolves to just before the request; a DNS
answer that changes between the check and the connection (rebinding) is not caught.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from agentls.context.results import ResultBudget
from agentls.tool_values import ToolKind
from agentls.tools.base import ReadOnlyTool, ToolContext, ToolError, ToolOutput

if TYPE_CHECKING:
    import httpx2

MAX_DOWNLOAD_BYTES = 5 * 1024 * 1024
# HTML takes about 4 s a megabyte to convert on a busy machine, and the markdown of the
# first 2 MB of a page is nearly always longer than what the result can hold anyway.
MAX_HTML_BYTES = 2 * 1024 * 1024
# Room for the header lines and notes within one tool result, so the page is not spilled.
MAX_CONTENT_CHARS = ResultBudget().max_result_chars - 2_000
TIMEOUT_SECONDS = 30.0
CONNECT_TIMEOUT_SECONDS = 10.0
MAX_REDIRECTS = 10
MAX_URL_CHARS = 2_000
ERROR_BODY_BYTES = 64 * 1024
ERROR_EXCERPT_CHARS = 500
USER_AGENT = "agentls-webfetch/1 (+https://github.com/agentls)"
ACCEPT = "text/html, text/markdown;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.1"
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
    }
)


class WebFetchInput(BaseModel):
    url: str = Field(
        pattern=r"\S", description="The URL to fetch: http or https (http is upgraded)"
    )


@dataclass(frozen=True, slots=True)
class _Body:
    data: bytes
    content_type: str
    charset: str | None
    # Whether the download stopped at its limit with more to come.
    cut: bool


class WebFetchTool(ReadOnlyTool[WebFetchInput]):
    """Fetches a URL and returns it as markdown (HTML) or as text (text, JSON, XML)."""

    name: str = "WebFetch"
    description: str = (
        "Fetches a URL and returns its content: an HTML page converted to markdown (without "
        "scripts, styles and navigation), text, JSON and XML as they are. Binary content "
        "(images, PDFs, archives) is refused. The URL must be fully formed; http is upgraded "
        f"to https. Content over {MAX_CONTENT_CHARS:,} characters is cut, and at most "
        f"{MAX_DOWNLOAD_BYTES // (1024 * 1024)} MB is read "
        f"({MAX_HTML_BYTES // (1024 * 1024)} MB of HTML). "
        "When the URL redirects to another host, the result says where: fetch that URL with "
        "another WebFetch call. Each host needs the user's permission. Read-only: it changes "
        "nothing. Prefer a more specific URL (a docs page, a raw file) over a site's home."
    )
    input_model: type[BaseModel] = WebFetchInput
    # "fetch": read-only (concurrent, allowed in plan mode), yet the gate asks before it runs.
    kind: ToolKind = "fetch"

    def __init__(self, allow_private: bool = False, timeout: float = TIMEOUT_SECONDS) -> None:
        self.allow_private = allow_private
        self.timeout = timeout

    def title(self, args: WebFetchInput) -> str:
        return f"Fetch {args.url}"

    def rule_content(self, args: WebFetchInput, cwd: Path) -> str | None:
        """Rules match the host: `WebFetch(domain:example.com)`."""
        host = _host_of(args.url)
        return f"domain:{host}" if host else args.url.strip()

    async def run(self, args: WebFetchInput, ctx: ToolContext) -> ToolOutput:
        url = parse_url(args.url)
        try:
            async with asyncio.timeout(self.timeout):
                return await self._fetch(url)
        except TimeoutError:
            raise ToolError(
                f"Fetching {url} timed out after {self.timeout:g} s (the whole fetch, "
                "redirects included)."
            ) from None

    async def _fetch(self, url: httpx2.URL) -> ToolOutput:
        import httpx2

        start = url
        async with _client() as client:
            for _ in range(MAX_REDIRECTS + 1):
                url = await self._admit(url)
                try:
                    async with client.stream("GET", url) as response:
                        if not response.is_redirect:
                            return await _answer(response, url)
                        target = _redirect_target(response, url)
                except httpx2.TimeoutException as exc:
                    raise TimeoutError from exc
                except httpx2.HTTPError as exc:
                    raise ToolError(f"Cannot fetch {url}: {_network_error(exc)}") from None
                if not _same_host(target, start):
                    return _other_host(start, target)
                url = target
        raise ToolError(f"{start} redirected more than {MAX_REDIRECTS} times; giving up.")

    async def _admit(self, url: httpx2.URL) -> httpx2.URL:
        """The URL to request: its host's addresses checked, http upgraded where public and on
        the default port."""
        addresses = await _resolve(url)
        inner = [a for a in addresses if not _is_public(a)]
        if inner and not self.allow_private:
            raise ToolError(
                f"Refused: {url.host} resolves to a non-public address ({inner[0]}: loopback, "
                "private or link-local). WebFetch reads the public web; the "
                "webFetchAllowPrivate setting lets it reach such addresses."
            )
        # A port of its own is not upgraded: TLS spoken to a plain HTTP port only fails.
        if url.scheme == "http" and not inner and url.port in (None, 80):
            return url.copy_with(scheme="https", port=None)
        return url


def parse_url(raw: str) -> httpx2.URL:
    """`raw` as an http(s) URL (https assumed when it names no scheme), or ToolError."""
    import httpx2

    text = raw.strip()
    if len(text) > MAX_URL_CHARS:
        raise ToolError(f"The URL is longer than {MAX_URL_CHARS} characters.")
    if "://" not in text:
        text = "https://" + text
    try:
        url = httpx2.URL(text)
    except httpx2.InvalidURL as exc:
        raise ToolError(f"Not a valid URL: {raw!r} ({exc}).") from None
    if url.scheme not in ("http", "https"):
        raise ToolError(f"WebFetch reads http and https URLs, not {url.scheme}: ({raw}).")
    if not url.host:
        raise ToolError(f"The URL {raw!r} names no host.")
    return url


def _host_of(raw: str) -> str | None:
    try:
        return parse_url(raw).host.lower()
    except ToolError:
        return None


def _client() -> httpx2.AsyncClient:
    import httpx2

    timeout = httpx2.Timeout(TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS)
    headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT}
    return httpx2.AsyncClient(timeout=timeout, headers=headers, follow_redirects=False)


async def _resolve(url: httpx2.URL) -> list[str]:
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            url.host, port, type=socket.SOCK_STREAM
        )
    except socket.gaierror as exc:
        raise ToolError(f"Cannot resolve the host {url.host}: {exc.strerror}.") from None
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _redirect_target(response: httpx2.Response, url: httpx2.URL) -> httpx2.URL:
    location = response.headers.get("location", "")
    if not location:
        raise ToolError(f"{url} answered {response.status_code} without a Location to go to.")
    return parse_url(str(url.join(location)))


def _same_host(a: httpx2.URL, b: httpx2.URL) -> bool:
    """The same host, `www.` or not (a site's move to or from www is not another site)."""
    return a.host.lower().removeprefix("www.") == b.host.lower().removeprefix("www.")


def _other_host(start: httpx2.URL, target: httpx2.URL) -> ToolOutput:
    return ToolOutput(
        f"{start} redirects to another host: {target}\n"
        "To read it, call WebFetch with that URL (the user may be asked about the new host)."
    )


def _network_error(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _answer(response: httpx2.Response, url: httpx2.URL) -> ToolOutput:
    content_type, charset = _media_type(response)
    if response.status_code >= 400:
        body = await _read(response, ERROR_BODY_BYTES, content_type, charset)
        excerpt = (await _as_text(body))[0][:ERROR_EXCERPT_CHARS].strip()
        reason = f"HTTP {response.status_code} {response.reason_phrase}".strip()
        raise ToolError(f"{reason} from {url}" + (f":\n{excerpt}" if excerpt else "."))
    if not _is_readable(content_type):
        size = response.headers.get("content-length")
        sized = f", {int(size):,} bytes" if size and size.isdigit() else ""
        raise ToolError(
            f"{url} is {content_type}{sized}: binary content, which WebFetch does not read."
        )
    limit = MAX_HTML_BYTES if content_type in _HTML_TYPES else MAX_DOWNLOAD_BYTES
    body = await _read(response, limit, content_type, charset)
    if not content_type and b"\0" in body.data[:8192]:
        raise ToolError(f"{url} has no content type and looks binary; WebFetch does not read it.")
    text, title = await _as_text(body)
    return _render(url, body, text, title)


def _media_type(response: httpx2.Response) -> tuple[str, str | None]:
    header = response.headers.get("content-type", "")
    media = header.split(";", 1)[0].strip().lower()
    return media, response.charset_encoding


def _is_readable(media: str) -> bool:
    if not media or media.startswith("text/") or media in _HTML_TYPES or media in _TEXT_TYPES:
        return True
    return media.endswith(("+json", "+xml"))


async def _read(
    response: httpx2.Response, limit: int, content_type: str, charset: str | None
) -> _Body:
    chunks: list[bytes] = []
    size = 0
    cut = False
    async for chunk in response.aiter_bytes():
        room = limit - size
        chunks.append(chunk[:room])
        size += min(len(chunk), room)
        if len(chunk) > room:
            cut = True
            break
    return _Body(b"".join(chunks), content_type, charset, cut)


async def _as_text(body: _Body) -> tuple[str, str | None]:
    """The body as the model reads it, and the page's title when it has one."""
    if body.content_type in _HTML_TYPES or (not body.content_type and _looks_like_html(body)):
        from agentls.tools.html_markdown import html_to_markdown

        # Parsing megabytes of HTML takes seconds: not on the event loop.
        page = await asyncio.to_thread(html_to_markdown, body.data, body.charset)
        return page.markdown, page.title
    return _decode(body.data, body.charset), None


def _looks_like_html(body: _Body) -> bool:
    head = body.data[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


def _decode(data: bytes, charset: str | None) -> str:
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return data.decode(codec, errors="replace")


def _render(url: httpx2.URL, body: _Body, text: str, title: str | None) -> ToolOutput:
    kind = body.content_type or "unknown type"
    lines = [f"URL: {url}", f"Content-Type: {kind} ({len(body.data):,} bytes)"]
    if title:
        lines.append(f"Title: {title}")
    notes = []
    if body.cut:
        notes.append(f"only its first {len(body.data) // (1024 * 1024)} MB were read")
    truncated = len(text) > MAX_CONTENT_CHARS
    if truncated:
        notes.append(f"the first {MAX_CONTENT_CHARS:,} of {len(text):,} characters are shown")
        text = text[:MAX_CONTENT_CHARS]
    content = "\n".join(lines) + "\n\n" + (text.strip() or "(the page has no text)")
    if notes:
        content += f"\n\n[Cut: {'; '.join(notes)}.]"
    return ToolOutput(content, truncated=body.cut or truncated)
