"""The floors stay: which package and which floor of k2rl may import which, and no import cycle.

    rewards/   pure verifiers            imports none of the others
    critic/    the critic's pure logic   imports none of the others
    envs/      the gym                   may import rewards/, never the engine (k2rl/)
    k2rl/      the engine and the app    may import all of them

Inside k2rl, each floor (a subpackage; k2rl.config and the app modules at k2rl/'s top are
floors of their own) imports only its own floor and those below it (k2rl/__init__.py lists
them): `FLOORS` maps each to the floors it may import.

Imports are read from the source (ast), both at module level and inside functions (a
function-level import still ties the modules together; it only hides the cycle until the
function runs), leaving out those under `if TYPE_CHECKING:`. A function-level import of one of
our modules must say on its line why it is deferred (`# deferred: ...`, e.g. the module loads
torch or vLLM and the caller must start without them). Before this test, model -> sft ->
self_critique -> model was a cycle through function-level imports, and envs.dataset imported
k2rl.model and k2rl.chat.

`make lint` runs this file.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("k2rl", "envs", "rewards", "critic")
MAY_IMPORT = {"rewards": set(), "critic": set(), "envs": {"rewards"},
              "k2rl": {"envs", "rewards", "critic"}}

# k2rl's floors, bottom up, each with the floors it may import (besides itself).
FLOORS: dict[str, set[str]] = {"config": set(), "lm": {"config"}, "tasks": {"config"}}
FLOORS["device"] = {"config", "lm"}
FLOORS["step"] = FLOORS["device"] | {"device", "tasks"}
FLOORS["bootstrap"] = FLOORS["step"] | {"step"}
FLOORS["runtime"] = FLOORS["bootstrap"] | {"bootstrap"}
FLOORS["app"] = FLOORS["runtime"] | {"runtime"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def owner(name: str) -> str | None:
    """The longest of our modules that `name` (a dotted import) is or is inside."""
    return next((m for m in sorted(MODULES, key=len, reverse=True)
                 if name == m or name.startswith(m + ".")), None)


def floor(module: str) -> str:
    """The floor of one of k2rl's modules: its subpackage, `config`, or `app` (k2rl's top)."""
    parts = module.split(".")
    if len(parts) > 2 or parts[1:] == ["config"] or (len(parts) == 2 and parts[1] in FLOORS):
        return parts[1]
    return "app"


def read_imports(path: Path) -> list[tuple[str, int, bool]]:
    """Our modules that the module at `path` imports, anywhere in it but TYPE_CHECKING blocks:
    (module, line, inside a function)."""
    found: list[tuple[str, int, bool]] = []
    depth = 0

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if "TYPE_CHECKING" not in ast.dump(node.test):
                self.generic_visit(node)

        def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
            nonlocal depth
            depth += 1
            self.generic_visit(node)
            depth -= 1

        visit_AsyncFunctionDef = visit_FunctionDef

        def add(self, node: ast.AST, names: list[str]) -> None:
            for m in filter(None, map(owner, names)):
                found.append((m, node.lineno, depth > 0))

        def visit_Import(self, node: ast.Import) -> None:
            self.add(node, [a.name for a in node.names])

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level or not node.module:
                return
            # `from k2rl.device import engine` imports the module k2rl.device.engine
            self.add(node, [f"{node.module}.{alias.name}" for alias in node.names])

    Visitor().visit(ast.parse(path.read_text()))
    return [f for f in found if f[0] != module_name(path)]


IMPORTS = {m: read_imports(p) for m, p in MODULES.items()}
GRAPH = {m: {i for i, _, _ in found} for m, found in IMPORTS.items()}


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
    assert {"k2rl.lm.chat", "k2rl.device.engine"} <= GRAPH["k2rl.step.critic_engine"]
    assert "rewards.instructions" in GRAPH["envs.instructions"]
    assert {floor(m) for m in MODULES if m.startswith("k2rl.")} == set(FLOORS)
    assert (floor("k2rl.cli"), floor("k2rl.config"), floor("k2rl.step.group")) == ("app", "config", "step")


def test_no_package_imports_a_floor_above_it() -> None:
    wrong = sorted(f"{m} imports {i}" for m, deps in GRAPH.items() for i in deps
                   if i.split(".")[0] != m.split(".")[0]
                   and i.split(".")[0] not in MAY_IMPORT[m.split(".")[0]])
    assert not wrong, wrong


def test_no_k2rl_floor_imports_one_above_it() -> None:
    wrong = sorted(f"{m} ({floor(m)}) imports {i} ({floor(i)})" for m, deps in GRAPH.items()
                   for i in deps if m.startswith("k2rl.") and i.startswith("k2rl.")
                   and floor(i) != floor(m) and floor(i) not in FLOORS[floor(m)])
    assert not wrong, wrong


def test_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


def test_a_function_level_import_of_ours_says_why() -> None:
    silent = sorted(f"{m}:{line} imports {i}" for m, found in IMPORTS.items()
                    for i, line, in_function in found if in_function
                    and "# deferred" not in MODULES[m].read_text().splitlines()[line - 1])
    assert not silent, silent


def test_a_cycle_is_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
