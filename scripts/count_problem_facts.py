"""Count where per-problem facts live in the library (issue 27's measures).

Reads the Python sources of ``solvers/`` and ``neuralop_fem/`` (of the working tree, or of a
git revision with ``--rev``) and prints, with the place of each finding:

* **name-keyed tables**: dict literals with a problem name as a key, and set / tuple literals
  of two or more problem names (a table that a new problem would have to extend);
* **name comparisons**: ``x == "darcy"``, ``x != "burgers"``, ``x in ("burgers", ...)``,
  ``preset.startswith("burgers")`` (a problem read off a name's prefix or suffix);
* **guesses**: a problem name picked by a condition or a lookup, such as a guess from an
  array's shape (``"darcy" if two_d else "burgers"``, ``{2: "burgers", 3: "darcy"}.get(ndim)``)
  or a name lookup with a fallback;
* **files a new problem touches** (working tree only): the files that define what the
  toy problem of ``tests/heat_problem.py`` registers (its solver, data config, dataset,
  presets and its two entries) plus its test, and the library files that name it.

The problem entries themselves (``solvers/problems.py``, ``neuralop_fem/problems/builtin.py``)
are where the facts belong and are not counted. Usage::

    python scripts/count_problem_facts.py            # the working tree
    python scripts/count_problem_facts.py --rev fafed10
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solvers", "neuralop_fem")
NAMES = {"burgers", "darcy", "darcy-inverse"}
#: Where the entries live: the facts belong there.
ENTRIES = {"solvers/problems.py", "neuralop_fem/problems/builtin.py"}


def _sources(rev: str | None) -> dict[str, str]:
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text() for top in PACKAGES
                for p in sorted((ROOT / top).rglob("*.py"))}
    listing = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev,
                              *PACKAGES], capture_output=True, text=True, check=True).stdout
    return {path: subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"],
                                 capture_output=True, text=True, check=True).stdout
            for path in listing.split() if path.endswith(".py")}


def _is_name(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def _is_prefix(node: ast.AST) -> bool:
    """A problem name, also with a dash (``"darcy-"``), or a tuple of them."""
    if isinstance(node, ast.Tuple):
        return any(_is_prefix(e) for e in node.elts)
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.strip("-") in NAMES)


def _findings(tree: ast.AST) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {"tables": [], "comparisons": [], "guesses": []}
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            if any(_is_name(k) for k in node.keys):
                found["tables"].append(node.lineno)
            elif sum(_is_name(v) for v in node.values) >= 2:
                found["guesses"].append(node.lineno)  # e.g. {2: "burgers", 3: "darcy"}
        elif isinstance(node, ast.Set | ast.Tuple | ast.List):
            if sum(_is_name(e) for e in node.elts) >= 2:
                found["tables"].append(node.lineno)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_name(s) for s in sides):
                found["comparisons"].append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith", "removeprefix", "removesuffix")
              and any(_is_prefix(a) for a in node.args)):
            found["comparisons"].append(node.lineno)
        elif isinstance(node, ast.IfExp) and (_is_name(node.body) or _is_name(node.orelse)):
            found["guesses"].append(node.lineno)
    return found


def count(rev: str | None) -> dict[str, list[str]]:
    """Each measure -> the places (``path:line``) where it was found."""
    out: dict[str, list[str]] = {"tables": [], "comparisons": [], "guesses": []}
    for path, text in _sources(rev).items():
        if path in ENTRIES:
            continue
        for kind, lines in _findings(ast.parse(text)).items():
            out[kind] += [f"{path}:{line}" for line in sorted(set(lines))]
    return out


def toy_files() -> tuple[list[str], list[str]]:
    """The files that define the toy problem's parts, and the library files naming it."""
    sys.path.insert(0, str(ROOT))
    import inspect

    from tests import heat_problem

    kit, problem = heat_problem.KIT, heat_problem.PROBLEM
    parts = [*problem.solvers.values(), kit.data_config, kit.dataset, heat_problem.PRESETS,
             heat_problem]
    files = {inspect.getsourcefile(p if inspect.isclass(p) or inspect.ismodule(p)
                                   else heat_problem) for p in parts}
    files.add(str(ROOT / "tests" / "test_third_problem.py"))
    defined = sorted(str(Path(f).relative_to(ROOT)) for f in files if f)
    naming = sorted(path for path, text in _sources(None).items()
                    if f'"{problem.name}"' in text or f"'{problem.name}'" in text)
    return defined, naming


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", help="a git revision to measure instead of the working tree")
    parser.add_argument("--list", action="store_true", help="print every place found")
    args = parser.parse_args(argv)
    found = count(args.rev)
    where = args.rev or "working tree"
    print(f"per-problem facts outside the problem entries ({where}):")
    labels = {"tables": "name-keyed per-problem tables", "comparisons": "problem-name comparisons",
              "guesses": "problem names picked by a condition or a lookup (shape-based "
                         "guesses, name lookups)"}
    for kind, label in labels.items():
        print(f"  {label}: {len(found[kind])}")
        if args.list:
            print("".join(f"    {place}\n" for place in found[kind]), end="")
    if args.rev is None:
        defined, naming = toy_files()
        print(f"  files a new problem touches (the toy heat problem): {len(defined)}")
        print("".join(f"    {f}\n" for f in defined), end="")
        print(f"  library files that name the toy problem: {len(naming)}")
        print("".join(f"    {f}\n" for f in naming), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
