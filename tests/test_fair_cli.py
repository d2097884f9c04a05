"""`neuralop-fem compare` gives the fair verdict by default, as a user meets it (subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import xarray as xr

from neuralop_fem.errors import InputError
from neuralop_fem.evaluation import compare_run
from neuralop_fem.evaluation.run_comparison import MIN_LADDER_BUDGET_S
from solvers import DarcyFDSolver, get_problem
from tests._surrogate_fixtures import burgers_run

ROOT = Path(__file__).resolve().parents[1]


def _compare(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "neuralop_fem.cli", "compare", *args],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return burgers_run(tmp_path_factory.mktemp("fair"), n=128, n_samples=6)


def test_compare_gives_the_verdict_and_every_part_prints_the_same_one(run_dir, tmp_path):
    proc = _compare(str(run_dir), "--data", str(run_dir.parent / "b.nc"), "--out",
                    str(tmp_path / "rep"), "--indices", "all")
    assert proc.returncode == 0, proc.stderr[-2000:]
    ds = xr.open_dataset(tmp_path / "rep" / "comparison.nc")
    verdict = ds.attrs["verdict"]
    # the untrained model is worse than the cheapest rung: a bound, named as such
    assert verdict.startswith("At equal accuracy")
    assert "the cheapest rung" in verdict
    # each verdict says how many samples a call took: 6 at once, and one at a time
    assert verdict.endswith(", 6 samples per call.")
    assert ds.attrs["verdict_batch1"].endswith(", one sample per call.")
    summary = (tmp_path / "rep" / "summary.md").read_text().splitlines()
    assert summary[2] == verdict  # the summary opens with it
    assert verdict in proc.stdout  # the console prints the report's sentence
    assert "Verdict on accuracy: unusable" in summary[4]  # rel. L2 ~ 1
    labels = [r.label for r in get_problem("burgers").ladder() if r.resolution <= 128]
    run = list(ds["rung"].values)  # the rungs reachable from the 128 file, up to the bracket
    skipped = [x for x in ds.attrs["fair_skipped_rungs"].split(" | ") if x]
    assert run + skipped == labels
    assert ds["ladder_rel_l2"].dims == ("rung", "sample")
    assert ds["ladder_time"].shape == (len(run), 6)
    assert (ds["ladder_time_batch1"] > 0).all()
    assert ds["on_front"].sum() >= 1
    ds.close()


def test_no_ladder_gives_the_old_comparison(run_dir, tmp_path):
    proc = _compare(str(run_dir), "--data", str(run_dir.parent / "b.nc"), "--out",
                    str(tmp_path / "rep"), "--indices", "0:3", "--no-ladder")
    assert proc.returncode == 0, proc.stderr[-2000:]
    ds = xr.open_dataset(tmp_path / "rep" / "comparison.nc")
    assert "ladder_rel_l2" not in ds
    assert "verdict" not in ds.attrs
    ds.close()
    assert "At equal accuracy" not in proc.stdout


def test_the_ladder_budget_is_recorded_and_a_bad_one_is_one_line(run_dir, tmp_path):
    proc = _compare(str(run_dir), "--data", str(run_dir.parent / "b.nc"), "--out",
                    str(tmp_path / "rep"), "--indices", "0:3", "--ladder-budget", "3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    ds = xr.open_dataset(tmp_path / "rep" / "comparison.nc")
    ref = float(ds["reference_time"].sum())
    # three times the reference solves, but never below the floor (this tiny run's are ms)
    assert ds.attrs["fair_ladder_budget_s"] == pytest.approx(max(3 * ref, MIN_LADDER_BUDGET_S))
    assert ds.attrs["fair_ladder_budget_s"] == MIN_LADDER_BUDGET_S
    assert ds.attrs["fair_ladder_seconds"] > 0
    ds.close()
    bad = _compare(str(run_dir), "--data", str(run_dir.parent / "b.nc"), "--out",
                   str(tmp_path / "rep2"), "--ladder-budget", "-1")
    assert bad.returncode == 2
    assert "--ladder-budget" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


# the fixture's run trained on every sample of its file
@pytest.mark.filterwarnings("ignore::neuralop_fem.evaluation.training_overlap.SeenInTrainingWarning")
def test_compare_run_keeps_an_earlier_report_unless_overwrite(run_dir, tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "summary.md").write_text("an earlier report\n")
    with pytest.raises(InputError, match="`out` must be a new or empty directory"):
        compare_run(run_dir, data=run_dir.parent / "b.nc", out=out, indices="0:2", ladder=False)
    assert (out / "summary.md").read_text() == "an earlier report\n"
    report = compare_run(run_dir, data=run_dir.parent / "b.nc", out=out, indices="0:2",
                         ladder=False, overwrite=True)
    report["dataset"].close()
    assert (out / "summary.md").read_text().startswith("# burgers")


def test_a_users_ladder_of_another_problem_is_refused(run_dir, tmp_path):
    with pytest.raises(InputError, match="solves 'darcy'; the comparison is of 'burgers'"):
        compare_run(run_dir, data=run_dir.parent / "b.nc", out=tmp_path / "rep",
                    indices="0:2", ladder=[DarcyFDSolver()])


# the fixture's run trained on every sample of its file
@pytest.mark.filterwarnings("ignore::neuralop_fem.evaluation.training_overlap.SeenInTrainingWarning")
def test_the_reports_own_timings_run_the_surrogate_on_one_thread(run_dir, tmp_path,
                                                                   monkeypatch):
    """Like the solver's one process and the verdict's one-thread figures; the user's thread
    setting is restored afterwards."""
    import torch

    from neuralop_fem import Surrogate

    seen = []
    original = Surrogate.solve_with_report

    def spy(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Surrogate, "solve_with_report", spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        report = compare_run(run_dir, data=run_dir.parent / "b.nc", out=tmp_path / "rep",
                             indices="0:2", ladder=False)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert seen
    assert set(seen) == {1}
    assert "cpu, 1 thread (surrogate)" in (tmp_path / "rep" / "summary.md").read_text()
    report["dataset"].close()


# the fixture's run trained on every sample of its file
@pytest.mark.filterwarnings("ignore::neuralop_fem.evaluation.training_overlap.SeenInTrainingWarning")
@pytest.mark.parametrize(("load", "busy"), [(3.0, True), (1.2, False)])
def test_a_busy_cpu_is_named_in_the_report(run_dir, tmp_path, monkeypatch, load, busy):
    """Other work on the CPU inflates every time: the report says so (the load average is
    read before the timings; the comparison's own process counts for one)."""
    monkeypatch.setattr("os.getloadavg", lambda: (load, load, load))
    report = compare_run(run_dir, data=run_dir.parent / "b.nc", out=tmp_path / "rep",
                         indices="0:2", workers=1)
    ds = report["dataset"]
    assert ds.attrs["cpu_load_1min"] == load
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert ("The CPU was busy while timing" in summary) is busy
    if busy:
        assert f"load average was {load:.2g} on {os.cpu_count()} core" in summary
    ds.close()


def test_the_docs_snippet_runs_as_written(tmp_path):
    import json
    import re

    from tests._surrogate_fixtures import darcy_run

    run = darcy_run(tmp_path, n=43, n_samples=6)
    (tmp_path / "runs").mkdir()
    run.rename(tmp_path / "runs" / "darcy-gt")  # the README tour's Darcy run
    (tmp_path / "d.nc").rename(tmp_path / "darcy.nc")
    info_path = tmp_path / "runs" / "darcy-gt" / "run.json"
    info = json.loads(info_path.read_text())
    info["splits"]["test"] = [3, 4, 5]
    info_path.write_text(json.dumps(info))
    page = (ROOT / "docs" / "when_does_a_surrogate_pay.md").read_text()
    (tmp_path / "snippet.py").write_text(re.search(r"```python\n(.*?)```", page, re.S)[1])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("At equal accuracy")
    ds = xr.open_dataset(tmp_path / "report-ladder" / "comparison.nc")
    skipped = [x for x in ds.attrs["fair_skipped_rungs"].split(" | ") if x]
    assert list(ds["rung"].values) + skipped == ["FD 15", "FD 22", "FD 43"]
    ds.close()
