"""MCP server settings: what to start (stdio) or reach (HTTP), parsed from the shapes users
already write.

Three shapes arrive: the `mcpServers` object of settings files and `.mcp.json`
(`{name: {command, args, env} | {type: "http", url, headers}}`, as Claude Code writes it),
and the list of `agent/newSession {mcpServers}` (`[{name, command, args, env}]`, where
`env` and `headers` may also be ACP's `[{name, value}]` lists). All become one frozen
`McpServerConfig`. `${VAR}` and `${VAR:-default}` in strings are read from the daemon's
environment, so a checked-in `.mcp.json` need not hold secrets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

McpTransport = Literal["stdio", "http"]
_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    name: str
    transport: McpTransport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    # Where it was configured: "user", a settings file's path, ".mcp.json", "session".
    source: str = "session"


def parse_servers(
    value: Any, source: str, environ: Mapping[str, str]
) -> tuple[McpServerConfig, ...]:
    """The servers of one settings layer (an object by name, or a list with names);
    ValueError names the first bad entry."""
    if isinstance(value, Mapping):
        entries = [(str(name), entry) for name, entry in value.items()]
    elif isinstance(value, list):
        entries = []
        for index, entry in enumerate(value):
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                raise ValueError(f"[{index}] needs a string name")
            entries.append((entry["name"], entry))
    else:
        raise ValueError("must be an object of servers by name, or a list of named servers")
    return tuple(_server(name, entry, source, environ) for name, entry in entries)


def merge_servers(
    base: tuple[McpServerConfig, ...], layer: tuple[McpServerConfig, ...]
) -> tuple[McpServerConfig, ...]:
    """`base` with `layer`'s servers added; a server of the same name is replaced."""
    names = {server.name for server in layer}
    return tuple(s for s in base if s.name not in names) + layer


def _server(name: str, entry: Any, source: str, environ: Mapping[str, str]) -> McpServerConfig:
    if not _NAME.fullmatch(name):
        raise ValueError(f"{name!r}: a server name is 1-40 letters, digits, '_' or '-'")
    if not isinstance(entry, Mapping):
        raise ValueError(f"{name}: must be an object")
    kind = entry.get("type", "http" if "url" in entry else "stdio")
    if kind in ("http", "streamable-http", "streamableHttp", "sse"):
        url = _expand(entry.get("url"), environ)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"{name}: an http server needs a url starting http:// or https://")
        headers = _pairs(entry.get("headers"), f"{name}.headers", environ)
        return McpServerConfig(name, "http", url=url, headers=headers, source=source)
    if kind != "stdio":
        raise ValueError(f"{name}: type must be stdio or http, not {kind!r}")
    command = _expand(entry.get("command"), environ)
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"{name}: a stdio server needs a command")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"{name}.args: must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError(f"{name}.cwd: must be a string")
    return McpServerConfig(
        name,
        "stdio",
        command=command,
        args=tuple(_expand(a, environ) for a in args),
        env=_pairs(entry.get("env"), f"{name}.env", environ),
        cwd=_expand(cwd, environ) if cwd else None,
        source=source,
    )


def _pairs(value: Any, where: str, environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """`{k: v}` or ACP's `[{name, value}]` as (name, value) pairs of strings."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, list) and all(
        isinstance(v, Mapping) and "name" in v and "value" in v for v in value
    ):
        items = [(v["name"], v["value"]) for v in value]
    else:
        raise ValueError(f"{where}: must be an object of strings or a list of {{name, value}}")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in items):
        raise ValueError(f"{where}: names and values must be strings")
    return tuple((k, _expand(v, environ)) for k, v in items)


def _expand(text: Any, environ: Mapping[str, str]) -> Any:
    """`${VAR}` / `${VAR:-default}` replaced from `environ` (unset and no default: empty)."""
    if not isinstance(text, str) or "${" not in text:
        return text
    return _VARIABLE.sub(lambda m: environ.get(m[1]) or (m[2] or ""), text)
