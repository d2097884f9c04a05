"""The package layout keeps its promises: imports as users write them, no shadowed names,
no private module reached across packages, a light ``--help``, focused modules."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solvers", "neuralop_fem")


def _load_script(name: str):  # noqa: ANN202 - a module
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: ``scripts/layout_figures.py``: how the imports are read, for the checks below too.
FIGURES = _load_script("layout_figures")


def _packages() -> list[str]:
    out = []
    for top in PACKAGES:
        pkg = importlib.import_module(top)
        out.append(top)
        out += [m.name for m in pkgutil.walk_packages(pkg.__path__, f"{top}.") if m.ispkg]
    return out


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.mark.parametrize("package", _packages())
def test_no_public_name_is_also_a_submodule(package):
    module = importlib.import_module(package)
    submodules = {m.name for m in pkgutil.iter_modules(module.__path__)}
    clash = sorted(set(getattr(module, "__all__", ())) & submodules)
    assert not clash, f"{package} exports {clash}, which are also submodule names"


def test_documented_imports_give_the_documented_objects_in_a_fresh_interpreter():
    proc = _run(
        "import neuralop_fem as nf\n"
        "from neuralop_fem import Surrogate, compare, generate, SurrogatePolicy\n"
        "import neuralop_fem.evaluation.comparison, neuralop_fem.surrogate.surrogate\n"
        "from neuralop_fem import compare as again\n"
        "assert callable(compare) and compare is again is nf.compare, nf.compare\n"
        "assert nf.compare is nf.compare  # a second access gives the same function\n"
        "assert isinstance(Surrogate, type) and callable(generate)\n"
        "from solvers import DarcyFDSolver, NeumannGRF, threshold, Solver, get_problem\n"
        "from solvers import DarcyInverseSolver\n"
        "assert isinstance(DarcyFDSolver(), Solver)\n"
        "print('ok')\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok", proc.stderr


def _heavy_modules_after(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` after importing the command line, then print which of torch, dask and
    xarray it loaded (the last line of stdout)."""
    return _run("import sys\nfrom neuralop_fem.cli import main\n" + code
                + "print(sorted(m for m in ('torch', 'dask', 'xarray') if m in sys.modules))\n")


def test_help_imports_neither_torch_nor_dask_nor_xarray():
    proc = _heavy_modules_after("try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_zoo_list_and_show_load_no_model():
    """Listing the zoo and printing a card read the cards only: neither torch nor xarray."""
    proc = _heavy_modules_after(
        "from neuralop_fem.zoo import available\n"
        "assert main(['zoo', 'list']) == 0\n"
        "assert main(['zoo', 'show', available()[0]]) == 0\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def _python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_no_private_module_is_imported_from_another_package(package):
    """A private module (``_name``) is imported only from its own package directory, e.g.
    ``neuralop_fem/training`` may not import ``neuralop_fem.models._grid``. The one exception
    is ``neuralop_fem._version`` (the version file the build reads, pyproject.toml): every
    module takes ``__version__`` from it rather than from the package face."""
    bad = []
    for path in _python_files(package):
        rel = path.relative_to(ROOT).with_suffix("")
        here = list(rel.parts[:-1])  # the importing module's package
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                target = base + (node.module.split(".") if node.module else [])
            else:
                target = node.module.split(".") if node.module else []
            if not target or target[0] not in PACKAGES:
                continue
            for i, part in enumerate(target):
                if target == ["neuralop_fem", "_version"]:
                    break
                if part.startswith("_") and not part.startswith("__") and target[:i] != here:
                    bad.append(f"{rel}: from {'.' * node.level}{node.module or ''}")
                    break
    assert not bad, bad


@pytest.mark.parametrize("folder", ["benchmarks", "docs/examples"])
def test_scripts_import_no_private_solver_module(folder):
    """Benchmarks and examples use the public modules of ``solvers`` (the kernels they time
    are named by :mod:`solvers.kernels`), never ``solvers._name``."""
    bad = []
    for path in sorted((ROOT / folder).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "solvers" and any(p.startswith("_") and not p.startswith("__")
                                                 for p in parts[1:]):
                    bad.append(f"{path.relative_to(ROOT)}: {name}")
    assert not bad, bad


#: The lab's packages inside ``benchmarks`` (the measurements and the GPU campaign): what the
#: drivers call and the tests import.
LAB_PACKAGES = ("benchmarks.lab", "benchmarks.gpu.campaign")


def _benchmark_files() -> list[Path]:
    """Every module of the ``benchmarks`` tree: the drivers and the lab's packages."""
    return sorted((ROOT / "benchmarks").rglob("*.py"))


def _driver_files() -> list[Path]:
    """The drivers, each run as ``python -m benchmarks.NAME`` from the repository root: the
    modules of ``benchmarks/`` and ``benchmarks/gpu/`` and the campaign's ``__main__``."""
    folders = [ROOT / "benchmarks", ROOT / "benchmarks" / "gpu"]
    files = [p for folder in folders for p in folder.glob("*.py") if p.name != "__init__.py"]
    return sorted([*files, ROOT / "benchmarks" / "gpu" / "campaign" / "__main__.py"])


def _imported_names(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every absolute import, a ``from`` import's names included."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out += [(node.lineno, node.module)]
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def _is_driver_import(name: str) -> bool:
    """Whether an imported name of the ``benchmarks`` tree is something other than the lab (or
    the folders above it): a driver."""
    lab = any(name == p or name.startswith(f"{p}.") for p in LAB_PACKAGES)
    above = name in ("benchmarks", "benchmarks.gpu")
    return name.split(".")[0] == "benchmarks" and not above \
        and (not lab or name.endswith(".__main__"))


def _sys_path_uses(tree: ast.AST) -> list[int]:
    """Lines that touch ``sys.path`` (an insertion, an append, an assignment)."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "path"
            and isinstance(node.value, ast.Name) and node.value.id == "sys"]


def _private_imports(tree: ast.AST) -> list[str]:
    """Imports of a private module or name (``_name``) of ``solvers`` or ``neuralop_fem``."""
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] in PACKAGES and any(p.startswith("_") and not p.startswith("__")
                                            for p in parts[1:]):
                bad.append(f"line {node.lineno}: {name}")
    return bad


def test_benchmarks_are_drivers_of_public_code():
    """The ``benchmarks`` tree (drivers and lab) reaches the packages as users do: no
    ``sys.path`` insertions, no private module or name of ``solvers`` or ``neuralop_fem``.
    What it imports of itself is the lab (:data:`LAB_PACKAGES`), never a driver; and the
    packages of the wheel never import the lab."""
    bad = []
    for path in _benchmark_files():
        tree = ast.parse(path.read_text())
        rel = path.relative_to(ROOT)
        bad += [f"{rel}:{line}: sys.path" for line in _sys_path_uses(tree)]
        bad += [f"{rel}: {imp}" for imp in _private_imports(tree)]
        bad += [f"{rel}:{line}: {name}" for line, name in _imported_names(tree)
                if _is_driver_import(name)]
    for package in PACKAGES:
        for path in _python_files(package):
            bad += [f"{path.relative_to(ROOT)}:{line}: {name}"
                    for line, name in _imported_names(ast.parse(path.read_text()))
                    if name.split(".")[0] == "benchmarks"]
    assert not bad, bad


def test_benchmarks_stay_thin_drivers():
    """The drivers are thin: options, a call of the lab (``benchmarks.lab``,
    ``benchmarks.gpu.campaign``) or another package function and the results file, the
    measurement itself in the lab. Each holds at most 110 lines, and the CPU drivers
    ``benchmarks/*.py`` together at most 1500 (1324 in 24 drivers before the inference,
    GPU-solver and reference-training benchmarks, 42 to 52 lines each)."""
    lines = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines())
             for p in _driver_files()}
    assert not {k: n for k, n in lines.items() if n > 110}, lines
    assert "benchmarks/gpu/campaign/__main__.py" in lines
    cpu = {k: n for k, n in lines.items() if k.count("/") == 1}
    assert len(cpu) >= 20, cpu
    assert sum(cpu.values()) <= 1500, cpu


def test_no_test_imports_a_benchmark():
    """Tests test the packages and the lab (``from benchmarks.lab import ...``); a driver is
    run as a command (``python -m benchmarks.NAME`` in a subprocess), never imported (and no
    test puts a folder on ``sys.path`` to do so)."""
    scripts = {p.stem for p in _driver_files()} - {"__main__"}
    bad = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        tree = ast.parse(path.read_text())
        rel = path.relative_to(ROOT)
        bad += [f"{rel}:{line}: sys.path" for line in _sys_path_uses(tree)]
        bad += [f"{rel}:{line}: {name}" for line, name in _imported_names(tree)
                if name.split(".")[0] in scripts or _is_driver_import(name)]
    assert not bad, bad


def test_the_driver_checks_find_what_they_look_for():
    assert [_is_driver_import(name) for name in (
        "benchmarks.lab.inference", "benchmarks.gpu.campaign.machine", "benchmarks.gpu",
        "benchmarks.bench_fair", "benchmarks.gpu.data_path", "benchmarks.gpu.campaign.__main__",
        "neuralop_fem.cli")] == [False, False, False, True, True, True, False]
    tree = ast.parse("import sys\nsys.path.insert(0, 'x')\n"
                     "from neuralop_fem.commands._options import int_range\n"
                     "from solvers.darcy import _assemble\nfrom neuralop_fem.data import io\n")
    assert _sys_path_uses(tree) == [2]
    assert _private_imports(tree) == ["line 3: neuralop_fem.commands._options.int_range",
                                      "line 4: solvers.darcy._assemble"]


def test_the_errors_have_one_root_imported_from_one_place():
    """``neuralop_fem`` takes its exceptions from ``neuralop_fem.errors`` (which re-exports the
    solvers' root, ``NeuralopFemError``, and its subclasses), never from ``solvers.errors``
    directly: one place to import them from."""
    bad = []
    for path in _python_files("neuralop_fem"):
        if path.name == "errors.py" and path.parent.name == "neuralop_fem":
            continue  # the one place
        tree = ast.parse(path.read_text())
        bad += [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module == "solvers.errors"]
    assert not bad, bad


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_stay_focused(package):
    too_long = {str(p.relative_to(ROOT)): n for p in _python_files(package)
                if (n := len(p.read_text().splitlines())) > 500}
    assert not too_long, f"split these by responsibility: {too_long}"


@pytest.mark.parametrize("old", ["warmstart", "fem"])
def test_retired_alias_modules_are_gone(old):
    """``neuralop_fem.warmstart`` and ``neuralop_fem.fem`` moved to ``neuralop_fem.surrogate``
    (``warmstart``, ``mesh``); the aliases that imported back up the layers are retired."""
    assert not (ROOT / "neuralop_fem" / f"{old}.py").exists()
    assert importlib.util.find_spec(f"neuralop_fem.{old}") is None


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports, anywhere in its file (``scripts/layout_figures.py``'s
    reading of imports, the one that docs/layout.md's figures come from)."""
    files = {_module_name(p): p for top in PACKAGES for p in _python_files(top)}
    known = set(files)
    return {name: FIGURES.imported_modules(name, path.name == "__init__.py", path.read_text(),
                                           known)
            for name, path in files.items()}


_cycles = FIGURES.cycles


def _package_of(module: str) -> str:
    return module.rpartition(".")[0] or module


def test_no_import_cycle_between_modules():
    """No module imports (at any depth, deferred imports included) a module that imports it
    back: a circle means a shared piece belongs one layer down. A package's ``__init__``
    re-exporting its submodules is not a circle with them."""
    graph = _import_graph()
    # A package's __init__ imports its own submodules to re-export them; a submodule that
    # imports a name of its parent package (``from .. import __version__``) reaches that
    # __init__. Leave both edge kinds out: they are the package boundary, not a circle.
    pruned = {m: {t for t in ts if not (m == _package_of(t) or t == _package_of(m)
                                        or m.startswith(t + "."))}
              for m, ts in graph.items()}
    assert not _cycles(pruned), _cycles(pruned)


def test_the_cycle_check_finds_a_cycle():
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert _cycles(graph) == [["p.a", "p.b", "p.c"]]
    assert _cycles({"p.a": {"p.b"}, "p.b": set()}) == []
