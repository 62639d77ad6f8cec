"""The offline demo: a scripted agent turn in a temporary workspace."""

from __future__ import annotations

from pathlib import Path

SCRIPT = Path(__file__).with_name("script.jsonl")

FILES = {
    "server.py": (
        "import http.server\n\n"
        "PORT = 8000\n\n\n"
        "def main() -> None:\n"
        "    handler = http.server.SimpleHTTPRequestHandler\n"
        '    http.server.ThreadingHTTPServer(("", PORT), handler).serve_forever()\n'
    ),
    "README.md": "# demo\n\nRun `python server.py`. Set PORT to choose the port (default 8000).\n",
}


def make_workspace(root: Path) -> None:
    """Write the demo project into `root`."""
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
