"""The GPU campaign (benchmarks.gpu.campaign, run as ``python -m benchmarks.gpu.campaign``)
rehearsed on the CPU with tiny sizes.

Each stage runs as the device machine runs it, a command in a subprocess, and must leave at most
8 files of under 16 MiB in its output folder (what the device returns). The Darcy stage is
stopped after one epoch per call and continued from its previous output on a fresh scratch
folder (a fresh machine), and the throughput stage takes the trained weights from it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ["-m", "benchmarks.gpu.campaign"]
WHEELS = ROOT / ".whl"
MAX_FILES, MAX_BYTES = 8, 16 * 2**20


def campaign(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, *CAMPAIGN, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def outputs(folder: Path, stage: str) -> dict:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    assert len(files) <= MAX_FILES, files
    assert all(p.stat().st_size < MAX_BYTES for p in files)
    names = {p.name for p in files}
    assert {f"{stage}.json", f"{stage}.md", f"{stage}.log"} <= names
    result = json.loads((folder / f"{stage}.json").read_text())
    assert result["stage"] == stage
    assert result["rehearse"] is True
    assert result["environment"]["torch"]
    command = result["commands"][-1 if stage != "correctness" else 0]
    assert command.count("-m benchmarks.gpu.campaign") == 1
    md = (folder / f"{stage}.md").read_text()
    assert "## Environment" in md
    assert "## Commands" in md
    return result


def state_members(folder: Path) -> list[str]:
    parts = sorted(folder.glob("state.tar.*"))
    joined = folder / "joined.tar"
    joined.write_bytes(b"".join(p.read_bytes() for p in parts))
    with tarfile.open(joined) as tar:
        names = tar.getnames()
    joined.unlink()
    return names


@pytest.fixture(scope="module")
def darcy_outputs(tmp_path_factory):
    """Two calls of the darcy stage, one epoch of one run each, each on a fresh work folder."""
    root = tmp_path_factory.mktemp("campaign")
    work = root / "work"
    first, second = root / "darcy1", root / "darcy2"
    common = ["--rehearse", "--work", str(work), "--max-epochs-this-call", "1", "--budget-s", "500"]
    campaign("darcy", "--out", str(first), *common)
    shutil.rmtree(work)  # the next call starts on a fresh machine
    campaign("darcy", "--out", str(second), "--from", str(first), *common)
    return root, first, second


def test_darcy_stage_resumes_from_its_previous_output(darcy_outputs):
    _, first, second = darcy_outputs
    one = outputs(first, "darcy")
    assert [r["status"] for r in one["runs"]] == ["interrupted"]
    assert one["runs"][0]["epochs_completed"] == 1
    names = state_members(first)
    assert any(n.endswith("darcy-galerkin_darcy_n29_N30_quick_seed1127802/last.pt")
               for n in names)

    two = outputs(second, "darcy")
    assert sorted(two["restored"]) == sorted(names)
    forward, inverse = two["runs"]
    assert forward["status"] == "finished"
    assert forward["epochs_completed"] == forward["epochs"] == 2
    assert inverse["status"] == "interrupted"
    assert inverse["epochs_completed"] == 1
    assert two["previous"]["darcy"]["summary"] == {"finished": False}
    kept = state_members(second)
    # The finished run's weights come back beside the state, in the call that finished it;
    # the state keeps its record but neither of its checkpoints.
    assert (second / "darcy-galerkin_darcy_n29_N30_quick_seed1127802.best.pt").is_file()
    assert not any(n.startswith("darcy-galerkin_") and n.endswith(".pt") for n in kept)
    assert any(n.startswith("darcy-galerkin_") and n.endswith("run.json") for n in kept)
    assert any(n.startswith("darcy-inverse-galerkin_") and n.endswith("last.pt") for n in kept)


def test_prepare_then_darcy_on_the_same_machine_does_not_generate_again(darcy_outputs,
                                                                        tmp_path):
    """The two-call continuation: ``prepare`` (wheels carried) generates the data into the
    scratch folder; ``darcy --from`` (state carried) on the same machine uses it."""
    _, first, _ = darcy_outputs
    work, prep, cont = tmp_path / "work", tmp_path / "prep", tmp_path / "cont"
    campaign("prepare", "--out", str(prep), "--rehearse", "--work", str(work), "--budget-s", "300")
    result = outputs(prep, "prepare")
    data = Path(result["data"])
    assert data.parent.parent == work
    assert data.is_file()
    assert result["data_bytes"] == data.stat().st_size
    assert "generating" in (prep / "prepare.log").read_text()
    stamp = data.stat().st_mtime_ns
    campaign("darcy", "--out", str(cont), "--from", str(first), "--rehearse", "--work", str(work),
             "--max-epochs-this-call", "1", "--budget-s", "500")
    assert data.stat().st_mtime_ns == stamp
    assert "generating" not in (cont / "darcy.log").read_text()
    forward = outputs(cont, "darcy")["runs"][0]
    assert forward["epochs_completed"] == 2  # resumed after the first call's epoch
    # A later call on the same warm machine given the older state again keeps the machine's
    # further trained copy instead of taking the run back to its first epoch.
    again = tmp_path / "again"
    campaign("darcy", "--out", str(again), "--from", str(first), "--rehearse", "--work",
             str(work), "--max-epochs-this-call", "1", "--budget-s", "500")
    assert "keeping this machine's copy (epoch 2); --from holds epoch 1" in (
        again / "darcy.log").read_text()
    rows = outputs(again, "darcy")["runs"]
    assert (rows[0]["status"], rows[0]["epochs_completed"]) == ("finished", 2)


def test_unpack_gives_run_directories_that_load(darcy_outputs, tmp_path):
    _, _, second = darcy_outputs
    campaign("unpack", "--from", str(second), "--out", str(tmp_path / "runs"))
    run = tmp_path / "runs" / "darcy-galerkin_darcy_n29_N30_quick_seed1127802"
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "finished"
    from neuralop_fem.training import load_trained

    operator, _ = load_trained(run)
    assert sum(p.numel() for p in operator.parameters()) > 0


def test_throughput_stage_uses_the_darcy_weights(darcy_outputs):
    root, _, second = darcy_outputs
    out = root / "throughput"
    campaign("throughput", "--out", str(out), "--from", str(second), "--rehearse", "--work",
             str(root / "work_t"), "--budget-s", "500")
    result = outputs(out, "throughput")
    assert len(result["training"]) == 9
    assert all(r["it_per_s"] > 0 for r in result["training"])
    assert {(r["amp"], r["data_on_device"]) for r in result["training"]} == {
        ("none", "auto"), ("bf16", "auto"), ("none", "off")}
    assert {r["data_path"] for r in result["training"]} == {"per sample"}  # auto: not on a CPU
    fp32 = [r for r in result["training"] if (r["amp"], r["data_on_device"]) == ("none", "auto")]
    assert len(fp32) == 3
    assert all(r["steps_per_s_read_each_step"] > 0 and r["steps_per_s_read_once"] > 0
               for r in fp32)
    darcy = [r for r in result["inference"] if r["problem"] == "darcy"]
    assert all(r["weights"] == "trained (darcy stage)" for r in darcy)
    assert all(r["surrogate_samples_per_s"] > 0 and r["solver_samples_per_s"] > 0
               for r in result["inference"])
    assert 0 < darcy[0]["solver_rel_l2"] < darcy[0]["surrogate_rel_l2"]  # 2 tiny epochs


def test_correctness_stage_runs_the_cuda_tests(tmp_path):
    out = tmp_path / "correctness"
    campaign("correctness", "--out", str(out), "--rehearse", "--work", str(tmp_path / "work"),
             "--select", "bf16_forward", "--budget-s", "500")
    result = outputs(out, "correctness")
    assert result["ok"] is True
    assert result["counts"]["passed"] == 1
    assert result["tests"][0]["test"].endswith("test_bf16_forward_agrees_with_fp32")
    assert "-m cuda" in result["pytest_command"]


@pytest.mark.skipif(not WHEELS.is_dir(), reason="no wheel folder: benchmarks/gpu/fetch_wheels.sh")
def test_wheel_folder_installs_offline_for_the_device_python(tmp_path):
    proc = campaign("wheels", "--out", str(tmp_path / "site"), "--python-version", "3.12")
    assert "--no-index" in proc.stdout
    for module in ("skfem", "pyamg", "dask", "partd", "locket", "netCDF4", "cftime", "meshio"):
        assert (tmp_path / "site" / module).is_dir(), module
