"""Counts of the code's layout, read from the source (ast): what issue 30's closing note compares.

    python bench/archive/layout.py [--root DIR] [--label before|after] [--out bench/archive/results/layout.json]

For the packages k2rl, envs, rewards and critic under DIR (default: this checkout): modules per
folder, import arrows among them (an arrow is "module A imports module B", at module level or
inside a function, leaving out `if TYPE_CHECKING:` blocks), the import cycles (strongly
connected components of more than one module), the imports inside functions (all of them, and
those of the packages' own modules), the longest function and the biggest module. The result is
merged into --out under --label, so one file holds the counts before and after a change.
"""
from __future__ import annotations

import argparse
import ast
import json
from collections import Counter
from pathlib import Path

PACKAGES = ("k2rl", "envs", "rewards", "critic")


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolve(modules: set[str], name: str) -> str | None:
    """The longest of `modules` that the dotted name is or lies inside."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imported_names(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names an import statement names (`from a import b`: a.b, the module a.b or
    a name in the module a)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:  # relative: from the module's package, one level up per extra dot
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[:len(package) - node.level + 1]
        base = ".".join(package + ([base] if base else []))
    return [f"{base}.{a.name}" for a in node.names]  # resolved to the longest module it lies in


class Reader(ast.NodeVisitor):
    """One module's imports (split by where they stand) and its functions' lengths."""

    def __init__(self) -> None:
        self.imports: list[tuple[ast.Import | ast.ImportFrom, bool]] = []  # (node, in a function)
        self.functions: list[tuple[str, int]] = []
        self.scope: list[str] = []
        self.depth = 0

    def visit_If(self, node: ast.If) -> None:
        if "TYPE_CHECKING" in ast.dump(node.test):
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append((".".join(self.scope + [node.name]), node.end_lineno - node.lineno + 1))
        self.scope.append(node.name)
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_Import(self, node: ast.Import) -> None:
        self.imports.append((node, self.depth > 0))

    visit_ImportFrom = visit_Import


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def measure(root: Path) -> dict:
    paths = {module_name(root, p): p for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py"))}
    modules = set(paths)
    graph: dict[str, set[str]] = {}
    in_functions = in_functions_own = 0
    own_in_functions: Counter[str] = Counter()
    longest = ("", 0)
    for name, path in paths.items():
        reader = Reader()
        reader.visit(ast.parse(path.read_text()))
        graph[name] = set()
        for node, in_function in reader.imports:
            targets = {resolve(modules, n) for n in imported_names(name, path.name == "__init__.py", node)}
            targets -= {None, name}
            graph[name] |= targets
            if in_function:
                in_functions += 1
                if targets:
                    in_functions_own += 1
                    own_in_functions[name] += 1
        for function, lines in reader.functions:
            if lines > longest[1]:
                longest = (f"{name}.{function}", lines)
    folders = Counter(str(paths[m].parent.relative_to(root)) for m in modules)
    sizes = {m: len(p.read_text().splitlines()) for m, p in paths.items()}
    biggest = max(sizes, key=sizes.get)
    arrows = [(a, b) for a, deps in graph.items() for b in deps]
    return {
        "modules_per_folder": dict(sorted(folders.items())),
        "modules": len(modules),
        "import_arrows": len(arrows),
        "import_arrows_within_k2rl": sum(a.startswith("k2rl") and b.startswith("k2rl") for a, b in arrows),
        "cycles": cycles(graph),
        "imports_inside_functions": in_functions,
        "imports_inside_functions_of_own_modules": in_functions_own,
        "own_imports_inside_functions_by_module": dict(own_in_functions.most_common()),
        "envs_imports_of_k2rl": sorted(f"{a} -> {b}" for a, b in arrows
                                       if a.startswith("envs") and b.startswith("k2rl")),
        "longest_function": {"name": longest[0], "lines": longest[1]},
        "biggest_module": {"name": biggest, "lines": sizes[biggest]},
        "lines_in_k2rl": sum(n for m, n in sizes.items() if m.split(".")[0] == "k2rl"),
    }


def main() -> None:
    here = Path(__file__).resolve().parents[2]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=here)
    p.add_argument("--label", default="after")
    p.add_argument("--out", type=Path, default=here / "bench/archive/results/layout.json")
    args = p.parse_args()
    result = measure(args.root.resolve())
    saved = json.loads(args.out.read_text()) if args.out.exists() else {}
    saved[args.label] = result
    args.out.write_text(json.dumps(saved, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
