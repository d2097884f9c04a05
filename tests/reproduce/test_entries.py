"""The reproduction reads each problem's reproduction entry (``ProblemKit.reproduction``): the
paper's numbers and sizes come from there, and a problem without one (the toy heat problem of
``tests/heat_problem.py``) is refused in one line by ``neuralop-fem reproduce``."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neuralop_fem.errors import ConfigError
from neuralop_fem.problems import (
    DataVariant,
    ProblemKit,
    QuickScale,
    ReproductionSpec,
    get_kit,
    unregister_problem,
)
from neuralop_fem.reproduce.entries import (
    named_values,
    problem_of_file,
    spec_of,
    spec_or_none,
)
from neuralop_fem.reproduce.rows import model_suffix, paper_value
from solvers.errors import InputError
from solvers.problems import PROBLEMS

ROOT = Path(__file__).resolve().parents[2]
SPEC = ReproductionSpec(quick=QuickScale(train_n=8, data_n=16, samples=12), samples=100)


@pytest.fixture
def heat():
    """The toy problem, registered for one test (it has no reproduction entry)."""
    import importlib

    module = importlib.import_module("tests.heat_problem")
    module.register()
    yield module
    unregister_problem("heat1d")
    assert "heat1d" not in PROBLEMS


def test_the_paper_line_of_a_row_is_formed_by_its_problem_entry():
    # Cao 2021, Tables 2a, 2b, 3: one line per grid (Burgers), one (Darcy), one per noise
    # level (inverse); the model column is the preset's name after the problem's.
    assert paper_value("burgers", "burgers-galerkin-long", "2048", None) == 1.150e-3
    assert paper_value("burgers", "burgers-fno", "4096", None) is None  # no such line
    assert paper_value("darcy", "darcy-fourier", "85", None) == 0.873e-2
    assert paper_value("darcy-inverse", "darcy-inverse-galerkin", "141", 0.1) == 6.689e-2
    assert paper_value("darcy-inverse", "darcy-inverse-fno", "141", 0.1) is None
    assert model_suffix("darcy-inverse-galerkin-long") == "galerkin"
    assert model_suffix("darcy-softmax") == "softmax"
    assert model_suffix("unknown-galerkin") == "unknown-galerkin"


def test_the_named_viscosities_are_the_burgers_entrys():
    assert named_values("viscosity") == {"gt": 0.1 / (2 * math.pi), "fno": 0.1}
    assert named_values("forcing") == {}
    variant = get_kit("burgers").reproduction_spec().data_variant
    assert variant.value("fno") == 0.1
    assert variant.value("0.25") == 0.25


def test_a_dataset_name_tells_its_problem():
    assert problem_of_file("burgers_nugt_n8192_N1224") == "burgers"
    assert problem_of_file("darcy_n421_N1224_seed2") == "darcy"
    with pytest.raises(ConfigError, match="starts with its problem and '_'"):
        problem_of_file("navier_stokes_n64_N10")


def test_a_problem_without_an_entry_is_named_in_the_error(heat):
    assert spec_or_none("heat1d") is None
    assert spec_or_none("no-such-problem") is None
    assert spec_or_none(["burgers"]) is None  # a malformed record's task
    assert spec_or_none("darcy").reduced
    assert model_suffix("heat1d-fno") == "fno"
    with pytest.raises(ConfigError, match=r"^--preset heat1d-fno: problem 'heat1d' has no "
                                          r"reproduction entry .* of 'burgers', 'darcy', "
                                          r"'darcy-inverse'$"):
        spec_of("heat1d", where="--preset heat1d-fno")
    with pytest.raises(InputError, match="`problem` must be one of"):
        spec_of("no-such-problem")


def test_the_entry_may_be_a_reference_and_is_checked():
    kit = ProblemKit(name="burgers", reproduction="tests.reproduce.test_entries:SPEC")
    assert kit.reproduction_spec() is SPEC
    wrong = ProblemKit(name="burgers", reproduction="tests.reproduce.test_entries:ROOT")
    with pytest.raises(InputError, match="`reproduction` of 'burgers' must be a "
                                         "ReproductionSpec; got PosixPath"):
        wrong.reproduction_spec()
    assert ProblemKit(name="burgers").reproduction_spec() is None


@pytest.mark.parametrize(("build", "message"), [
    (lambda: ReproductionSpec(quick={"train_n": 8}), "`quick` must be a QuickScale; got dict"),
    (lambda: QuickScale(train_n=0), "`train_n` must be an integer >= 1; got 0"),
    (lambda: QuickScale(train_n=8, samples=True), "`samples` must be an integer >= 1 or None"),
    (lambda: QuickScale(train_n=8, eval_n=(16, -1)), "`eval_n` must be a tuple of integers"),
    (lambda: ReproductionSpec(quick=QuickScale(train_n=8), eval_grids=512),
     "`eval_grids` must be a tuple of integers >= 1; got 512"),
    (lambda: ReproductionSpec(quick=QuickScale(train_n=8), data_variant={"gt": 0.1}),
     "`data_variant` must be a DataVariant or None; got dict"),
])
def test_an_entry_is_checked_when_written(build, message):
    with pytest.raises(InputError, match=message):
        build()


def test_an_entry_is_frozen():
    variant = DataVariant(parameter="viscosity", values={"a": 1.0}, tag="nu")
    spec = ReproductionSpec(quick=QuickScale(train_n=8), data_variant=variant,
                            paper_row="t n={n}", paper={"t n=8": {"fno": 0.5}})
    with pytest.raises(TypeError):
        spec.paper["t n=8"]["fno"] = 1.0  # type: ignore[index]
    with pytest.raises(TypeError):
        variant.values["b"] = 2.0  # type: ignore[index]
    assert spec.paper_value("fno", "8", None) == 0.5


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "--plugin",
                           "tests.heat_problem", "reproduce", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


def test_reproduce_run_refuses_a_problem_without_an_entry_in_one_line(tmp_path):
    proc = _cli("run", "--preset", "heat1d-fno", "--quick", "--results",
                str(tmp_path / "rows.json"), "--data-dir", str(tmp_path / "data"),
                "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "--preset heat1d-fno: problem 'heat1d' has no reproduction entry" in proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing generated or trained


def test_recording_a_run_of_a_problem_without_an_entry_is_refused(tmp_path, heat):
    from neuralop_fem import generate
    from neuralop_fem.models.presets import model_preset
    from neuralop_fem.reproduce.record import build_row
    from neuralop_fem.training import TrainConfig
    from neuralop_fem.training.trainer import Trainer

    data = generate("heat1d", n_samples=8, resolution=16, seed=0, out=tmp_path / "heat.nc",
                    workers=0, progress=False)
    config = TrainConfig(task="heat1d", epochs=1, batch_size=4, eval_batch_size=4, n_train=4,
                         n_val=2, n_test=2, device="cpu", resolution=16)
    run = tmp_path / "run"
    with Trainer(run, data, model_config=model_preset("heat1d-fno"), config=config,
                 preset="heat1d-fno") as trainer:
        trainer.fit()
    with pytest.raises(ConfigError, match=f"^RUN_DIR {run}: problem 'heat1d' has no "
                                          "reproduction entry"):
        build_row(run, data, label="", quick=True, reduced=False, eval_device=None,
                  reproduce=None)
