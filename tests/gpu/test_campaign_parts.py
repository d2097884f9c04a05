"""The parts of the GPU campaign (:mod:`benchmarks.gpu.campaign`) that need no stage run:
what it imports before the offline install, the state archive, the output limits, the install
command and the driver's one-line errors."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from benchmarks.gpu.campaign import machine, outputs

ROOT = Path(__file__).resolve().parents[2]
#: The driver, run from the repository root as the device machine runs it.
DRIVER = ["-m", "benchmarks.gpu.campaign"]


def test_the_command_line_imports_nothing_the_device_installs_first():
    """Before the wheels are installed only the standard library may be imported: not the
    solvers (scikit-fem, pyamg), not dask, not netCDF4, and not torch or numpy either."""
    code = ("import sys\nimport benchmarks.gpu.campaign.runner\n"
            "print(sorted(m for m in ('solvers', 'torch', 'numpy', 'dask', 'netCDF4', 'skfem')"
            " if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_state_round_trips_through_parts(tmp_path, monkeypatch):
    root, out = tmp_path / "runs", tmp_path / "out"
    (root / "run_a").mkdir(parents=True)
    out.mkdir()
    payload = random.Random(0).randbytes(10240)  # incompressible: several parts of 4000
    (root / "run_a" / "last.pt").write_bytes(payload)
    (root / "run_a" / "run.json").write_text('{"status": "interrupted"}')
    monkeypatch.setattr(outputs, "PART_BYTES", 4000)
    parts = outputs.pack_state(out, root, sorted((root / "run_a").iterdir()))
    assert parts == [f"state.tar.{i:02d}" for i in range(len(parts))]
    assert len(parts) >= 3
    assert all((out / p).stat().st_size <= 4000 for p in parts)
    (out / "run_b.best.pt").write_bytes(b"weights")
    names = outputs.unpack_runs(out, tmp_path / "back")
    assert sorted(names) == ["run_a/last.pt", "run_a/run.json", "run_b/best.pt"]
    assert (tmp_path / "back" / "run_a" / "last.pt").read_bytes() == payload
    assert (tmp_path / "back" / "run_b" / "best.pt").read_bytes() == b"weights"


def test_unpack_refuses_a_state_that_names_paths_outside(tmp_path):
    evil = tmp_path / "evil.txt"
    evil.write_text("x")
    with tarfile.open(tmp_path / "state.tar.00", "w") as tar:
        tar.add(evil, arcname="../evil.txt")
    with pytest.raises(machine.CampaignError, match="outside its folder"):
        outputs.unpack_state(tmp_path, tmp_path / "dest")


def test_outputs_over_the_device_limits_are_refused(tmp_path):
    for i in range(machine.MAX_FILES):
        (tmp_path / f"f{i}.json").write_text("{}")
    assert len(outputs.check_outputs(tmp_path)) == machine.MAX_FILES
    (tmp_path / "one too many.md").write_text("")
    with pytest.raises(machine.CampaignError) as info:
        outputs.check_outputs(tmp_path)
    assert "one too many.md: name" in str(info.value)
    assert "9 files (at most 8)" in str(info.value)


def test_install_command_is_offline_and_targets_the_device_python(tmp_path):
    cmd = machine.pip_install_command(tmp_path / "w", tmp_path / "site", python_version="3.12")
    assert {"--no-index", "--no-deps", "--only-binary=:all:"} <= set(cmd)
    assert cmd[cmd.index("--python-version") + 1] == "3.12"
    assert cmd[cmd.index("--find-links") + 1] == str(tmp_path / "w")
    assert cmd[-len(machine.NEEDED):] == sorted(machine.NEEDED.values())
    local = machine.pip_install_command(tmp_path / "w", tmp_path / "site", python_version=None)
    assert "--python-version" not in local
    assert "--platform" not in local


def test_driver_reports_a_missing_wheel_folder_in_one_line(tmp_path):
    proc = subprocess.run([sys.executable, *DRIVER, "wheels", "--out", str(tmp_path / "s"),
                           "--wheels", str(tmp_path / "none")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("campaign: --wheels ")
    assert "fetch_wheels.sh" in proc.stderr
    assert "run the prepare stage with it first on the same warm machine" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_after_the_install_the_command_starts_again_as_it_was_run(tmp_path, monkeypatch):
    """The command starts again with the installed packages and the checkout on the path, with
    the interpreter's own arguments: ``python -m benchmarks.gpu.campaign`` stays a module run
    (its file run as a script would not find the lab)."""
    started = []
    monkeypatch.delenv("NEURALOP_FEM_CAMPAIGN_SITE", raising=False)
    monkeypatch.setattr(machine, "missing_modules", lambda: ["skfem"])
    monkeypatch.setattr(machine, "install_wheels", lambda wheels, site: "pip install ...")
    monkeypatch.setattr(machine.os, "execve", lambda *call: started.append(call))
    monkeypatch.setattr(machine.sys, "orig_argv",
                        ["python3", "-m", "benchmarks.gpu.campaign", "darcy", "--out", "o"])
    machine.ensure_packages(tmp_path / "wheels", tmp_path / "work")
    ((executable, argv, env),) = started
    assert argv == [sys.executable, "-m", "benchmarks.gpu.campaign", "darcy", "--out", "o"]
    assert env["PYTHONPATH"].split(os.pathsep)[:2] == [str(tmp_path / "work" / "site"),
                                                       str(ROOT)]
    assert env["NEURALOP_FEM_CAMPAIGN_SITE"] == "pip install ..."


def test_a_stage_clears_only_its_own_outputs(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    own = ["darcy.json", "darcy.md", "darcy.log", "state.tar.00", "state.tar.01",
           "darcy-galerkin_x.best.pt"]
    for name in own:
        (out / name).write_text("earlier run")
    (out / "notes").mkdir()  # folders are not the stage's business
    outputs.clear_outputs(out, "darcy")
    assert sorted(p.name for p in out.iterdir()) == ["notes"]
    for name in ("correctness.json", "state.tar.00"):  # the second is darcy's, not correctness's
        (out / name).write_text("another stage")
    with pytest.raises(machine.CampaignError, match=r"not outputs of the correctness stage "
                       r"\(state.tar.00\); give each stage a folder of its own"):
        outputs.clear_outputs(out, "correctness")
    assert (out / "state.tar.00").is_file()
    assert (out / "correctness.json").is_file()  # nothing removed on refusal


def test_driver_refuses_an_output_folder_of_another_stage_in_one_line(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "correctness.json").write_text("{}")
    proc = subprocess.run([sys.executable, *DRIVER, "throughput", "--rehearse", "--out",
                           str(out), "--work", str(tmp_path / "work")],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "correctness.json" in lines[0]
    assert "--out $OUT/throughput" in lines[0]
    assert (out / "correctness.json").read_text() == "{}"


def test_state_parts_are_compressed_and_plain_archives_still_unpack(tmp_path):
    root, out = tmp_path / "runs", tmp_path / "out"
    (root / "run_a").mkdir(parents=True)
    out.mkdir()
    (root / "run_a" / "last.pt").write_bytes(b"\0" * 100_000)  # compresses well
    parts = outputs.pack_state(out, root, [root / "run_a" / "last.pt"])
    assert parts == ["state.tar.00"]
    packed = (out / "state.tar.00").read_bytes()
    assert packed[:2] == b"\x1f\x8b"  # gzip
    assert len(packed) < 10_000
    # the uncompressed archive of an earlier version of the campaign
    old = tmp_path / "old"
    old.mkdir()
    with tarfile.open(old / "state.tar.00", "w") as tar:
        tar.add(root / "run_a" / "last.pt", arcname="run_a/last.pt")
    assert outputs.unpack_state(old, tmp_path / "back") == ["run_a/last.pt"]
    assert (tmp_path / "back" / "run_a" / "last.pt").read_bytes() == b"\0" * 100_000
