"""The like-for-like verdict: the surrogate against the solver's torch twins on one device.

On a CPU the twins run here (``--solver-device cpu``), through the same code a GPU runs; the
test marked ``cuda`` runs the default of a GPU surrogate (twins on its GPU, that verdict first).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.evaluation import compare_run
from neuralop_fem.evaluation.fair_device import twin_device, twin_rungs
from neuralop_fem.evaluation.report import summary_markdown
from solvers import BurgersSpectralSolver, DarcyFEMSolver
from solvers.ladder import Rung
from tests._surrogate_fixtures import burgers_run

#: The fixture's run trained on every sample of its file (what is measured here is timing and
#: agreement, not generalisation).
SEEN = pytest.mark.filterwarnings(
    "ignore::neuralop_fem.evaluation.training_overlap.SeenInTrainingWarning")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return burgers_run(tmp_path_factory.mktemp("fair_device"), n=128, n_samples=6)


def test_where_the_twins_run():
    assert twin_device("cpu", None) is None  # a CPU surrogate: the CPU verdicts are like for like
    assert twin_device("cuda:1", None) == "cuda:1"
    assert twin_device("cuda:0", "cpu") == "cpu"
    assert twin_device("cuda:0", "none") is None
    rungs = [Rung(solver=BurgersSpectralSolver(), resolution=32),
             Rung(solver=DarcyFEMSolver(), label="fem")]
    twins, missing = twin_rungs(rungs, "cpu")
    assert [r.label for r in twins] == [rungs[0].label]
    assert type(twins[0].solver).__name__ == "TorchBurgersSpectralSolver"
    assert missing == ["fem"]


@SEEN
def test_the_twins_ladder_gives_the_numpy_ladders_errors_and_its_own_verdict(run_dir, tmp_path):
    data = run_dir.parent / "b.nc"
    report = compare_run(run_dir, data=data, out=tmp_path / "rep", indices="all",
                         solver_device="cpu", ladder_budget=None, workers=1)
    ds = report["dataset"]
    assert ds.attrs["fair_device"] == "cpu"
    labels = list(ds["device_rung"].values)
    assert labels, "no twin rung was measured"
    # the twins are the same discretisations: the same errors, to round-off (float64 FFTs in
    # another order; the ladder's errors are ~1e-3 and more, 1e-9 relative is far below)
    numpy_err = ds["ladder_rel_l2"].sel(rung=labels).values
    np.testing.assert_allclose(ds["device_ladder_rel_l2"].values, numpy_err, rtol=1e-9)
    assert (ds["device_ladder_time"].values > 0).all()
    assert "torch twin on this CPU" in ds.attrs["verdict_device"]
    assert ds.attrs["fair_device_status"] in (
        "interpolated", "a rung", "at most the cheapest rung", "more accurate than every rung",
        "at least the finest rung measured")
    text = (tmp_path / "rep" / "summary.md").read_text()
    assert "### The solver's torch twins on the same device" in text
    # on a CPU the numpy solver's one-thread verdict leads; the twin's is in its section
    assert text.index(ds.attrs["verdict"]) < text.index(ds.attrs["verdict_device"])
    # a GPU's twin verdict (here the stored one, relabelled) leads the summary
    gpu = ds.copy()
    gpu.attrs["fair_device"] = "cuda:0"
    lines = summary_markdown(gpu).splitlines()
    assert lines[2] == ds.attrs["verdict_device"]
    assert lines[4] == ds.attrs["verdict"]


@SEEN
def test_without_a_twin_device_there_is_no_twin_verdict(run_dir, tmp_path):
    report = compare_run(run_dir, data=run_dir.parent / "b.nc", out=tmp_path / "rep",
                         indices="all", workers=1)
    assert "verdict_device" not in report["dataset"].attrs
    assert "device_rung" not in report["dataset"].coords


def test_the_option_is_checked_before_any_work(run_dir, tmp_path, capsys):
    args = ["compare", str(run_dir), "--data", str(run_dir.parent / "b.nc"), "--out",
            str(tmp_path / "rep")]
    assert main([*args, "--solver-device", "gpu"]) == 2
    assert "argument --solver-device: must be cpu, cuda, cuda:K or none; got 'gpu'" in \
        capsys.readouterr().err
    if not torch.cuda.is_available():
        assert main([*args, "--solver-device", "cuda"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1
        assert "argument --solver-device: must be an available device" in err
    assert not (tmp_path / "rep").exists()


@pytest.mark.cuda
@SEEN
def test_a_gpu_surrogate_meets_the_twins_on_its_gpu_first(run_dir, tmp_path):
    device = "cuda" if torch.cuda.is_available() else "cpu"  # the rehearsal: the same code
    report = compare_run(run_dir, data=run_dir.parent / "b.nc", out=tmp_path / "rep",
                         indices="all", device=device, workers=1,
                         solver_device=None if device == "cuda" else "cpu")
    ds = report["dataset"]
    assert ds.attrs["fair_device"].startswith(device)
    assert np.isfinite(ds["device_ladder_time"].values).all()
    labels = list(ds["device_rung"].values)
    np.testing.assert_allclose(ds["device_ladder_rel_l2"].values,
                               ds["ladder_rel_l2"].sel(rung=labels).values, rtol=1e-9)
    if device == "cuda":
        text = (tmp_path / "rep" / "summary.md").read_text().splitlines()
        assert text[2] == ds.attrs["verdict_device"]
