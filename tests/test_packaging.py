"""The distribution: the wheel's contents and metadata; the portable exclusive lock."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from neuralop_fem.files import ExclusiveLock

ROOT = Path(__file__).resolve().parents[1]


class Busy(RuntimeError):
    pass


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("hatchling")  # the build backend (the test extra installs it)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    (path,) = out.glob("neuralop_fem-*.whl")
    return path


def test_wheel_holds_the_two_packages_only(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert top - dist_info == {"solvers", "neuralop_fem"}, sorted(top)
    assert "solvers/py.typed" in names
    assert "neuralop_fem/py.typed" in names
    for name in names:
        assert not re.search(r"(^|/)(tests|benchmarks|docs|scripts)/", name), name
        assert not name.endswith((".nc", ".mat", ".pt", ".npy", ".csv", ".png")), name
    # every module of both packages is in it
    sources = {p.relative_to(ROOT).as_posix() for pkg in ("solvers", "neuralop_fem")
               for p in (ROOT / pkg).rglob("*.py")}
    assert sources <= set(names), sorted(sources - set(names))


def test_wheel_holds_no_lab(wheel):
    """The lab (the ``benchmarks`` tree: drivers, ``benchmarks.lab``, the GPU campaign) stays
    in the repository: no file of it in the wheel, and no module of the wheel imports it."""
    names = zipfile.ZipFile(wheel).namelist()
    lab = [n for n in names if re.search(r"(^|/)(benchmarks|benchmarking|gpu_campaign)(/|\.py$)",
                                         n)]
    assert not lab, lab
    assert any(n.startswith("neuralop_fem/") and n.endswith(".py") for n in names), names
    assert any(n.startswith("solvers/") and n.endswith(".py") for n in names), names
    with zipfile.ZipFile(wheel) as zf:
        importing = [n for n in names if n.endswith(".py") and re.search(
            r"^\s*(from|import)\s+benchmarks\b", zf.read(n).decode(), re.M)]
    assert not importing, importing


def test_wheel_metadata(wheel):
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        text = zf.read(meta).decode()
        (entry,) = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        entry_points = zf.read(entry).decode()
    assert "neuralop-fem = neuralop_fem.cli:main" in entry_points
    assert re.search(r"^Author: .+", text, re.M)
    assert re.search(r"^Keywords: .*operator learning", text, re.M)
    assert "Classifier: Typing :: Typed" in text
    assert "Classifier: Operating System :: OS Independent" in text
    for requirement in ("pyyaml", "filelock"):
        assert re.search(rf"^Requires-Dist: {requirement}\b", text, re.M), requirement
    for extra in ("tensorboard", "mlflow", "wandb", "mesh", "distributed", "test", "docs"):
        assert f"Provides-Extra: {extra}" in text, extra


def test_no_posix_only_locking_in_the_packages():
    for pkg in ("solvers", "neuralop_fem"):
        for path in (ROOT / pkg).rglob("*.py"):
            text = path.read_text()
            assert "import fcntl" not in text, path
            assert "O_NOFOLLOW" not in text.replace("``O_NOFOLLOW``", ""), path


def test_exclusive_lock_is_exclusive_and_released(tmp_path):
    path = tmp_path / ".lock"
    first = ExclusiveLock(path, busy=Busy("busy"))
    with pytest.raises(Busy, match="busy"):
        ExclusiveLock(path, busy=Busy("busy"))
    # another process is refused too
    code = ("import sys; from neuralop_fem.files import ExclusiveLock\n"
            "try:\n    ExclusiveLock(sys.argv[1], busy=RuntimeError('x'))\n"
            "except RuntimeError:\n    sys.exit(3)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                         os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code, str(path)], env=env, timeout=120,
                          check=False)
    assert proc.returncode == 3
    first.release()
    assert not path.exists()
    first.release()  # idempotent
    with ExclusiveLock(path, busy=Busy("busy")):
        assert path.exists()


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32",
                    reason="symbolic links need privileges on Windows")
def test_exclusive_lock_refuses_a_symbolic_link(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    (tmp_path / ".lock").symlink_to(target)
    with pytest.raises(OSError, match="must not be a symbolic link"):
        ExclusiveLock(tmp_path / ".lock", busy=Busy("busy"))
    assert target.read_text() == "keep me"


def test_wheel_holds_the_model_zoo(wheel):
    from neuralop_fem.zoo import CARD, CARD_MD, ENTRIES, WEIGHTS, available

    names = set(zipfile.ZipFile(wheel).namelist())
    for name in available():
        for file in (CARD, CARD_MD, "run.json", WEIGHTS):
            path = (ENTRIES / name / file).relative_to(ROOT).as_posix()
            assert path in names, path
