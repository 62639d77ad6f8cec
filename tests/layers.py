"""Reads a Python package's structure from its source, for the layer test.

Nothing is imported or run: each module is parsed with `ast`, and the facts the layer
rules need are collected from the trees: which modules each one imports (type-only and
function-level imports included: a cycle through them is still a cycle for a reader),
which `x._name` attributes it reads on objects other than `self` and `cls`, and the
length of every module and function.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Module:
    name: str  # dotted, e.g. "agentls.loop.run"
    path: Path
    tree: ast.Module
    lines: int
    is_package: bool  # an __init__.py


@dataclass(slots=True)
class Package:
    """Every module of one package, by dotted name."""

    root: Path  # the folder of the top package, e.g. server/agentls
    modules: dict[str, Module] = field(default_factory=dict)

    @classmethod
    def read(cls, root: Path) -> Package:
        package = cls(root)
        top = root.name
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            dotted = ".".join((top, *(parts[:-1] if is_package else parts)))
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text, filename=str(path))
            package.modules[dotted] = Module(dotted, path, tree, len(text.splitlines()), is_package)
        return package

    def imports(self, module: Module) -> set[str]:
        """The modules of this package that `module` imports, anywhere in its body."""
        found: set[str] = set()
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found |= self._known(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(module, node)
                if base is None:
                    continue
                for alias in node.names:
                    # `from pkg import sub` names a module when `pkg.sub` is one.
                    submodule = f"{base}.{alias.name}"
                    found |= self._known(submodule) if submodule in self.modules else set()
                found |= self._known(base) if base in self.modules else set()
        found.discard(module.name)
        return found

    def graph(self) -> dict[str, set[str]]:
        return {name: self.imports(module) for name, module in self.modules.items()}

    def _known(self, dotted: str) -> set[str]:
        return {dotted} if dotted in self.modules else set()

    def _absolute(self, module: Module, node: ast.ImportFrom) -> str | None:
        if node.level == 0:
            return node.module
        # A package's own level-1 import is relative to itself, a module's to its parent.
        parts = module.name.split(".")
        keep = len(parts) - node.level + (1 if module.is_package else 0)
        if keep <= 0:
            return None
        base = ".".join(parts[:keep])
        return f"{base}.{node.module}" if node.module else base


def third_party_imports(module: Module) -> set[str]:
    """The top-level names of every absolute import in `module` (`pygls`, `acp`, ...)."""
    found: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected parts with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in graph:
                    continue
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                part: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.add(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(frozenset(part))
    return found


# `os._exit` and `sys._getframe` are documented public functions despite their names.
_OWN_OR_STDLIB = frozenset({"self", "cls", "os", "sys"})


def private_reach_ins(module: Module) -> list[str]:
    """`x._name` reads where `x` is not `self`, `cls` or `super()` (nor `os`, `sys`);
    dunders are public protocol."""
    found: list[str] = []
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in _OWN_OR_STDLIB:
            continue
        # A subclass calling its base class's protected method is what the name allows.
        if isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
            continue
        found.append(f"{ast.unparse(owner)}.{name}")
    return found


def long_functions(module: Module, limit: int) -> dict[str, int]:
    """Functions (methods and nested ones included) longer than `limit` lines."""
    found: dict[str, int] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            # The decorators and docstring count: they are part of what a reader reads.
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > limit:
                found[node.name] = max(length, found.get(node.name, 0))
    return found
