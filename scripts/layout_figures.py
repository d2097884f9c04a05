"""The figures of docs/layout.md: how the code's parts stand on each other.

Reads the Python sources of ``solvers/``, ``neuralop_fem/`` and ``benchmarks/`` (of the working
tree, or of a git revision with ``--rev``) and prints:

* **floors**: the parts are ``solvers``, ``benchmarks``, each subpackage of ``neuralop_fem``
  and each of its top-level modules; a part stands one floor above the highest part it
  imports (imports inside functions count), so the floors are the longest chain of imports;
* **imports back up**: imports of a part from one on its own or a higher floor (there are
  none unless the parts import each other in a loop);
* **loops**: groups of parts that import each other;
* **internal imports inside functions** in ``solvers`` and ``neuralop_fem``, of all their
  internal imports;
* **modules outside neuralop_fem/runs that name run.json in code**: joins, opens or reads
  (``tests/runs/test_one_reader.py`` is the check).

Usage::

    python scripts/layout_figures.py              # the working tree
    python scripts/layout_figures.py --rev 261eff0
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("solvers", "neuralop_fem", "benchmarks")
INTERNAL = ("solvers", "neuralop_fem")


def _sources(rev: str | None) -> dict[str, str]:
    """Module name -> source, for every ``.py`` file under :data:`TOPS`."""
    if rev is None:
        files = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
                 for top in TOPS for p in sorted((ROOT / top).rglob("*.py"))}
    else:
        listing = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "--", *TOPS],
                                 cwd=ROOT, check=True, capture_output=True, text=True).stdout
        files = {path: subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True,
                                      capture_output=True, text=True).stdout
                 for path in listing.split() if path.endswith(".py")}
    out = {}
    for path, text in files.items():
        parts = path[:-3].split("/")
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = text
    return out


def node_targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom,
                 known: set[str]) -> set[str]:
    """The modules of ``known`` that one import statement of ``module`` imports.

    ``from package import name`` counts as importing ``package.name`` when that is a module,
    else ``package``; a dotted name that is not a module counts as its longest known prefix.
    """
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = module.split(".") if is_package else module.split(".")[:-1]
        if node.level:
            base = base[:len(base) - (node.level - 1)]
            stem = ".".join(base + ([node.module] if node.module else []))
        else:
            stem = node.module or ""
        targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem
                   for alias in node.names]
    found = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != module:
            found.add(target)
    return found


def imported_modules(module: str, is_package: bool, source: str, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports anywhere in ``source``: inside
    functions and ``if TYPE_CHECKING:`` blocks too (a type named in an annotation is a
    dependency as much as a call)."""
    return {target for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for target in node_targets(module, is_package, node, known)}


def part(module: str) -> str:
    """The part a module belongs to (see the module docstring)."""
    pieces = module.split(".")
    if pieces[0] != "neuralop_fem":
        return pieces[0]
    return "neuralop_fem" if len(pieces) == 1 else f"neuralop_fem.{pieces[1]}"


def figures(sources: dict[str, str], is_package: dict[str, bool]) -> dict[str, object]:
    """The figures of the module docstring for ``sources`` (module name -> source)."""
    known = set(sources)
    arrows: dict[str, set[str]] = defaultdict(set)
    inside = total = 0
    run_json: list[str] = []
    for module, text in sources.items():
        tree = ast.parse(text)
        nested = {id(n) for f in ast.walk(tree)
                  if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = node_targets(module, is_package[module], node, known)
                for target in targets:
                    if part(target) != part(module):
                        arrows[part(module)].add(part(target))
                if module.split(".")[0] in INTERNAL and any(
                        t.split(".")[0] in INTERNAL for t in targets):
                    total += 1
                    inside += id(node) in nested
            elif (isinstance(node, ast.BinOp) and isinstance(node.right, ast.Constant)
                  and node.right.value == "run.json"
                  and not module.startswith("neuralop_fem.runs")):
                run_json.append(module)
    parts = {part(m) for m in sources}
    floor: dict[str, int] = {}

    def stand(p: str, path: tuple[str, ...]) -> int:
        if p in floor:
            return floor[p]
        if p in path:  # a loop: counted below, not followed round
            return 0
        floor[p] = 1 + max((stand(q, (*path, p)) for q in arrows[p]), default=0)
        return floor[p]

    for p in sorted(parts):
        stand(p, ())
    back = sorted(f"{a} -> {b}" for a in arrows for b in arrows[a] if floor[b] >= floor[a])
    loops = cycles(arrows)
    return {"floors": max(floor.values()), "floor": floor, "back": back, "loops": loops,
            "inside": inside, "total": total, "run_json": sorted(set(run_json))}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one node, each sorted
    (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", help="a git revision instead of the working tree")
    args = parser.parse_args(argv)
    sources = _sources(args.rev)
    if args.rev is None:
        is_package = {m: (ROOT / m.replace(".", "/") / "__init__.py").is_file() for m in sources}
    else:
        is_package = {m: any(o.startswith(m + ".") for o in sources) for m in sources}
    f = figures(sources, is_package)
    print(f"floors: {f['floors']}")
    for p, k in sorted(f["floor"].items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {k:2d}  {p}")
    print(f"imports back up: {len(f['back'])}", *f["back"], sep="\n  ")
    print(f"loops: {len(f['loops'])}", *f["loops"], sep="\n  ")
    print(f"internal imports inside functions: {f['inside']} of {f['total']}")
    print(f"modules outside neuralop_fem/runs joining run.json: {len(f['run_json'])}",
          *f["run_json"], sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
