"""neuralop_fem.environment: the code record (the commit, and whether code, not benchmark
results, was edited) and the one CPU / thread / version record every caller uses."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from neuralop_fem.environment import code_version

_needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "pkg.py").write_text("x = 1\n")
    (tmp_path / "benchmarks" / "results" / "rows.json").write_text("{}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    return tmp_path


@_needs_git
def test_results_written_by_the_benchmarks_leave_the_code_clean(tree: Path) -> None:
    head = _git(tree, "rev-parse", "HEAD")
    assert code_version(tree) == {"commit": head, "dirty": False}
    (tree / "benchmarks" / "results" / "rows.json").write_text('{"runs": {}}\n')
    assert code_version(tree) == {"commit": head, "dirty": False}
    (tree / "pkg.py").write_text("x = 2\n")
    assert code_version(tree) == {"commit": head, "dirty": True}


@_needs_git
def test_outside_a_checkout_nothing_is_claimed(tmp_path: Path) -> None:
    assert code_version(tmp_path) == {"commit": None, "dirty": None}


def test_every_record_names_the_same_cpu() -> None:
    from neuralop_fem.data.float_paths import float_paths
    from neuralop_fem.environment import cpu_model, environment_record
    from neuralop_fem.evaluation.fair import where_label

    cpu = cpu_model()
    assert cpu
    assert float_paths()["cpu"] == cpu
    assert environment_record()["hardware"]["cpu"] == cpu
    assert cpu in where_label("cpu", threads=1)


def test_the_command_line_names_a_script_of_the_checkout_relative_to_it(monkeypatch) -> None:
    from neuralop_fem.environment import SOURCE_ROOT, command_line

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    text = command_line([str(SOURCE_ROOT / "benchmarks" / "x.py"), "--n", "a b"])
    assert text.startswith("OMP_NUM_THREADS=1 ")
    assert text.endswith("python benchmarks/x.py --n 'a b'")


def test_the_torch_record_names_the_gpu_or_none(monkeypatch) -> None:
    import torch

    from neuralop_fem.environment import cpu_model, describe_torch_environment, torch_environment

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    env = torch_environment()
    assert (env["gpu"], env["cudnn"], env["cpu"]) == (None, None, cpu_model())
    assert env["torch"] == torch.__version__
    lines = describe_torch_environment(env | {"code": {"commit": None, "given": "abc"}})
    assert lines[0].startswith("- GPU: none (")
    assert lines[-1] == "- code: commit abc (dirty: None)"
