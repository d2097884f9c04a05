"""Code paths behind the optional extras, met without the extra installed.

``distributed`` (``generate --scheduler``) and ``meshio`` (``export_fields`` /
``read_fields`` / ``mesh_from_meshio``) are optional (``pip install neuralop-fem[distributed]``,
``[mesh]``). Without them the user reads which extra to install, as one line on stderr with
exit status 2 on the command line, never an internal ``ModuleNotFoundError``. The packages
are hidden the way Python sees a missing package: ``sys.modules[name] = None``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import skfem

from neuralop_fem.errors import MissingExtraError
from neuralop_fem.extras import EXTRAS, require

ROOT = Path(__file__).resolve().parents[1]

_HIDE = "import sys\nfor name in {names!r}:\n    sys.modules[name] = None\n"


def _cli_without(names: list[str], args: list[str]) -> subprocess.CompletedProcess[str]:
    code = _HIDE.format(names=names) + (
        "from neuralop_fem.cli import main\n"
        f"sys.exit(main({args!r}))\n")
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300, check=False)


def test_generate_with_a_scheduler_without_distributed_names_the_extra(tmp_path):
    proc = _cli_without(["distributed"], ["generate", "darcy", "--samples", "2",
                                          "--resolution", "9", "--out", str(tmp_path / "d.nc"),
                                          "--scheduler", "tcp://127.0.0.1:1"])
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("neuralop-fem generate darcy: error: --scheduler needs "
                               "the optional package `distributed`"), lines[0]
    assert "pip install neuralop-fem[distributed]" in lines[0]
    assert not (tmp_path / "d.nc").exists()


def _mesh() -> skfem.Mesh:
    return skfem.MeshTri.init_symmetric().refined(1)


@pytest.mark.parametrize("call", ["export_fields", "read_fields", "mesh_from_meshio"])
def test_mesh_io_without_meshio_names_the_extra(monkeypatch, tmp_path, call):
    from neuralop_fem.surrogate import mesh as mesh_module

    mesh = _mesh()
    path = tmp_path / "f.vtu"  # never written: the check comes first
    for name in ("meshio", "skfem.io.meshio"):
        monkeypatch.setitem(sys.modules, name, None)
    run = {
        "export_fields": lambda: mesh_module.export_fields(
            path, mesh, point_data={"u": np.zeros(mesh.nvertices)}),
        "read_fields": lambda: mesh_module.read_fields(path),
        "mesh_from_meshio": lambda: mesh_module.mesh_from_meshio(object()),
    }[call]
    with pytest.raises(MissingExtraError, match=rf"{call} needs the optional package `meshio`, "
                                                r".*pip install neuralop-fem\[mesh\]"):
        run()
    assert not path.exists()


def test_every_extra_is_declared_in_pyproject():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for module, extra in EXTRAS.items():
        assert extra in extras, extra
        assert any(dep.startswith(module) for dep in extras[extra]), (module, extras[extra])


def test_a_missing_extra_is_also_an_import_error():
    with pytest.raises(ImportError, match="needs the optional package `nomod`"):
        require("nomod", needed_for="this test")
