"""The package layout keeps its promises: imports as users write them, no shadowed names,
no private module reached across packages, a light ``--help``, focused modules."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solvers", "neuralop_fem")


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


def test_help_imports_neither_torch_nor_dask_nor_xarray():
    proc = _run(
        "import sys\n"
        "from neuralop_fem.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('torch', 'dask', 'xarray') if m in sys.modules))\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def _python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_no_private_module_is_imported_from_another_package(package):
    """A private module (``_name``) is imported only from its own package directory, e.g.
    ``neuralop_fem/training`` may not import ``neuralop_fem.models._grid``."""
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
                if part.startswith("_") and not part.startswith("__") and target[:i] != here:
                    bad.append(f"{rel}: from {'.' * node.level}{node.module or ''}")
                    break
    assert not bad, bad


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_stay_focused(package):
    too_long = {str(p.relative_to(ROOT)): n for p in _python_files(package)
                if (n := len(p.read_text().splitlines())) > 500}
    assert not too_long, f"split these by responsibility: {too_long}"


@pytest.mark.parametrize(("old", "new"), [("warmstart", "surrogate.warmstart"),
                                          ("fem", "surrogate.mesh")])
def test_moved_modules_keep_working_with_a_deprecation_warning(old, new):
    proc = _run(
        "import warnings\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        f"try:\n    import neuralop_fem.{old}\nexcept DeprecationWarning as w:\n    print(w)\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        f"import neuralop_fem.{old} as old, neuralop_fem.{new} as new\n"
        "assert all(getattr(old, n) is getattr(new, n) for n in new.__all__)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert f"neuralop_fem.{old} moved to neuralop_fem.{new}" in proc.stdout
