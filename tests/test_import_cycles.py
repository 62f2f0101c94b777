"""No import cycle in omcm_core (issue 37 item 7): module-level imports form a graph without loops.

An import inside a function runs when called, after both modules are loaded, so only module-level
imports count (``if TYPE_CHECKING:`` blocks run never). The graph is read from the source with
``ast``; every module is then imported alone in a fresh interpreter, where a cycle would show as an
ImportError of a partly initialised module.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "omcm_core"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if "plugin_template" not in p.parts}


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements run at import: the module body, into ``if``/``try`` blocks but not ``if TYPE_CHECKING``."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
            ):
                out += _top_level(node.orelse)
                continue
            out += _top_level(node.body) + _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            out += _top_level(node.body) + _top_level(node.orelse) + _top_level(node.finalbody)
            for handler in node.handlers:
                out += _top_level(handler.body)
        else:
            out.append(node)
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The omcm_core modules ``name`` imports at module level."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _top_level(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            # "from omcm_core import log" imports the submodule; "import omcm_core.x.y" runs omcm_core.x too
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, set(known)) for name, path in known.items()}


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"a": {"b"}, "b": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_cycles_finds_loops(edges, expected):
    assert cycles(edges) == expected


def test_the_graph_sees_module_level_imports_only(tmp_path):
    pkg = tmp_path / "omcm_core"
    pkg.mkdir()
    source = (
        "from typing import TYPE_CHECKING\nfrom omcm_core import b\nimport omcm_core.c\n"
        "if TYPE_CHECKING:\n    from omcm_core import d\n"
        "def f():\n    from omcm_core import e\n"
    )
    (pkg / "a.py").write_text(source)
    known = {"omcm_core", "omcm_core.a", "omcm_core.b", "omcm_core.c", "omcm_core.d", "omcm_core.e"}
    assert imports_of("omcm_core.a", pkg / "a.py", known) == {"omcm_core", "omcm_core.b", "omcm_core.c"}


def test_omcm_core_has_no_import_cycle():
    assert cycles(graph()) == []


def test_every_module_imports_alone():
    """Each module first in a fresh interpreter: a cycle the graph missed fails here (one process for all)."""
    names = sorted(n for n in modules() if not n.endswith("__main__"))
    code = (
        "import importlib, subprocess, sys\n"
        "bad = []\n"
        "for name in sys.argv[1:]:\n"
        "    proc = subprocess.run([sys.executable, '-c', f'import {name}'], capture_output=True, text=True)\n"
        "    if proc.returncode:\n"
        "        bad.append((name, proc.stderr.strip().splitlines()[-1:]))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
