"""The README's raw JSON-RPC client, run as printed against the daemon."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_client_prints_the_streamed_answer(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- raw-client -->\n```python\n(.*?)```", text, re.S)
    assert found, "the README has the raw client between its markers"
    client = tmp_path / "client.py"
    client.write_text(found.group(1), encoding="utf-8")
    script = tmp_path / "script.jsonl"
    script.write_text('{"text": "The answer is 42."}\n', encoding="utf-8")
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))},
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "AGENTLS_SCRIPT": str(script),
        "AGENTLS_HOME": str(tmp_path / "home"),
    }
    done = subprocess.run(
        [sys.executable, str(client), "what is it?"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The answer is 42.\n"
