"""The package's layout stays readable: the layer rules, checked on every run.

Rules (see `layers.py` for how the source is read; nothing is imported):
- no import cycle between modules, type-only and function-level imports included, nor
  between packages (each a box: no arrow runs back up);
- the core (everything but the front ends: `lsp/`, `acp/`, `conformance/`, `cli.py`,
  `__main__.py`) never imports pygls, lsprotocol or the ACP SDK, nor a front end;
- no `x._name` read of another object's private member;
- no function over 80 lines, no module over 500.

The one list of exceptions is KNOWN_REACH_INS: private members of the libraries under
the LSP adapter and the OpenAI provider (pygls's stop event and send path, the SDK's SSE
decoder) that have no public way in. It may only shrink: a new reach-in fails, and so
does an entry that no longer holds (delete it, so it cannot come back unnoticed).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import layers

PACKAGE = Path(__file__).resolve().parent.parent / "server" / "agentls"
FRONT_ENDS = (
    "agentls.lsp",
    "agentls.acp",
    "agentls.conformance",
    "agentls.cli",
    "agentls.__main__",
)
EDITOR_SDKS = frozenset({"pygls", "lsprotocol", "acp"})
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 500

KNOWN_REACH_INS: dict[str, dict[str, int]] = {
    "agentls.lsp.gate": {"protocol._send_data": 1},
    "agentls.lsp.jsonrpc": {"protocol._send_data": 1},
    "agentls.lsp.server": {"server._stop_event": 2},
    "agentls.lsp.stdio": {"server._stop_event": 1},
    "agentls.lsp.tcp": {"server._stop_event": 1},
    "agentls.providers.openai_stream": {"chunks._decoder": 2},
}


@pytest.fixture(scope="module")
def package() -> layers.Package:
    return layers.Package.read(PACKAGE)


def is_core(module: str) -> bool:
    return not any(module == f or module.startswith(f + ".") for f in FRONT_ENDS)


def test_no_import_cycles(package: layers.Package) -> None:
    found = [sorted(c) for c in layers.cycles(package.graph())]
    assert not found, f"import cycles: {found}"


def test_no_cycles_between_packages(package: layers.Package) -> None:
    """Drawn a folder to a box (`agentls.tools`, `agentls.config`, ...), the arrows still
    run one way: no package imports one that imports it back, by any path."""
    between: dict[str, set[str]] = {}
    for source, targets in package.graph().items():
        home = _top(source)
        between.setdefault(home, set())
        between[home] |= {_top(t) for t in targets if _top(t) != home}
    found = [sorted(c) for c in layers.cycles(between)]
    assert not found, f"packages importing each other: {found}"


def _top(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_the_core_imports_no_editor_sdk_and_no_front_end(package: layers.Package) -> None:
    graph = package.graph()
    wrong: dict[str, list[str]] = {}
    for name, module in package.modules.items():
        if not is_core(name):
            continue
        sdks = layers.third_party_imports(module) & EDITOR_SDKS
        fronts = {target for target in graph[name] if not is_core(target)}
        if sdks or fronts:
            wrong[name] = sorted(sdks | fronts)
    assert not wrong, f"core modules importing an editor SDK or a front end: {wrong}"


def test_no_new_private_reach_ins(package: layers.Package) -> None:
    new: dict[str, list[str]] = {}
    stale: dict[str, list[str]] = {}
    for name, module in package.modules.items():
        found = Counter(layers.private_reach_ins(module))
        known = Counter(KNOWN_REACH_INS.get(name, {}))
        if extra := found - known:
            new[name] = sorted(extra)
        if fixed := known - found:
            stale[name] = sorted(fixed)
    assert not new, f"reads of another object's private members: {new}"
    assert not stale, f"fixed: lower these in KNOWN_REACH_INS: {stale}"


def test_no_long_modules(package: layers.Package) -> None:
    over = {n: m.lines for n, m in package.modules.items() if m.lines > MAX_MODULE_LINES}
    assert not over, f"modules over {MAX_MODULE_LINES} lines: {over}"


def test_no_long_functions(package: layers.Package) -> None:
    over = {
        name: found
        for name, module in package.modules.items()
        if (found := layers.long_functions(module, MAX_FUNCTION_LINES))
    }
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines: {over}"


def test_the_reader_sees_what_the_rules_forbid(tmp_path: Path) -> None:
    """A deliberately broken package: a cycle through a type-only relative import, a
    reach-in, a long function. Each rule must see its own breach."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "a.py").write_text("from .sub import b\n\ndef f(x):\n    return x._hidden\n")
    (root / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import f\n"
    )
    long_body = "".join(f"    y = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (root / "c.py").write_text(f"import pkg.a\n\ndef g(self):\n{long_body}    return self._ok\n")
    package = layers.Package.read(root)
    assert package.graph() == {
        "pkg": set(),
        "pkg.a": {"pkg.sub", "pkg.sub.b"},
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.a"},
        "pkg.c": {"pkg.a"},
    }
    assert layers.cycles(package.graph()) == [frozenset({"pkg.a", "pkg.sub.b"})]
    assert layers.private_reach_ins(package.modules["pkg.a"]) == ["x._hidden"]
    assert layers.private_reach_ins(package.modules["pkg.c"]) == []
    assert layers.long_functions(package.modules["pkg.c"], MAX_FUNCTION_LINES) == {
        "g": MAX_FUNCTION_LINES + 2
    }
