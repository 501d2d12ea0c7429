"""The packages' floors stay: which package may import which, and no import cycle.

    rewards/   pure verifiers            imports none of the others
    critic/    the critic's pure logic   imports none of the others
    envs/      the gym                   may import rewards/, never the engine (k2rl/)
    k2rl/      the engine and the app    may import all of them

Imports are read from the source (ast), both at module level and inside functions (a
function-level import still ties the modules together; it only hides the cycle until the
function runs), leaving out those under `if TYPE_CHECKING:`. Before this test, model -> sft ->
self_critique -> model was a cycle through function-level imports, and envs.dataset imported
k2rl.bootstrap.model and k2rl.lm.chat.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("k2rl", "envs", "rewards", "critic")
MAY_IMPORT = {"rewards": set(), "critic": set(), "envs": {"rewards"},
              "k2rl": {"envs", "rewards", "critic"}}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def owner(name: str) -> str | None:
    """The longest of our modules that `name` (a dotted import) is or is inside."""
    return next((m for m in sorted(MODULES, key=len, reverse=True)
                 if name == m or name.startswith(m + ".")), None)


def imports_of(path: Path) -> set[str]:
    """Our modules that the module at `path` imports, anywhere in it but TYPE_CHECKING blocks."""
    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if "TYPE_CHECKING" not in ast.dump(node.test):
                self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(filter(None, (owner(a.name) for a in node.names)))

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level or not node.module:
                return
            for alias in node.names:  # `from k2rl import engine` imports the module k2rl.device.engine
                found.update(filter(None, [owner(f"{node.module}.{alias.name}")]))

    Visitor().visit(ast.parse(path.read_text()))
    return found - {module_name(path)}


GRAPH = {m: imports_of(p) for m, p in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read() -> None:
    assert {"k2rl.lm.chat", "k2rl.device.engine"} <= GRAPH["k2rl.step.self_critique"]
    assert "rewards.instructions" in GRAPH["envs.instructions"]


def test_no_package_imports_a_floor_above_it() -> None:
    wrong = sorted(f"{m} imports {i}" for m, deps in GRAPH.items() for i in deps
                   if i.split(".")[0] != m.split(".")[0]
                   and i.split(".")[0] not in MAY_IMPORT[m.split(".")[0]])
    assert not wrong, wrong


def test_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


def test_a_cycle_is_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
