"""Faults around generate: concurrent writers, killed runs, unguarded scripts, orphan workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import xarray as xr

import solvers.grf
from neuralop_fem.data.generation import generate
from neuralop_fem.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


def test_a_second_writer_of_the_same_file_fails_at_once(tmp_path):
    out = tmp_path / "d.nc"
    lock = tmp_path / ".d.nc.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import fcntl, os, time
            fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)
            fcntl.flock(fd, fcntl.LOCK_EX)
            print("locked", flush=True)
            time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        t0 = time.perf_counter()
        with pytest.raises(ConfigError, match="is being written by another process"):
            generate("darcy", n_samples=2, resolution=9, out=out, workers=0, progress=False)
        assert time.perf_counter() - t0 < 5
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    # the lock dies with its holder: the next run works and leaves no lock behind
    generate("darcy", n_samples=2, resolution=9, out=out, workers=0, progress=False)
    assert out.is_file()
    assert not lock.exists()


def test_a_killed_final_assembly_leaves_no_temporary_behind(tmp_path):
    out = tmp_path / "d.nc"
    stale = tmp_path / ".d.nc.abc123.tmp"  # what a kill inside the final rename leaves
    stale.write_bytes(b"\0" * 1000)
    generate("darcy", n_samples=2, resolution=9, out=out, workers=0, progress=False)
    assert out.is_file()
    assert not stale.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.nc"]


def test_a_seed_that_cannot_be_stored_fails_before_any_solve(tmp_path):
    out = tmp_path / "d.nc"
    with pytest.raises(ConfigError, match="`seed` must be an integer in"):
        generate("darcy", n_samples=2, resolution=9, seed=2**64, out=out, workers=0)
    assert list(tmp_path.iterdir()) == []  # no .partial that would block the next run


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "make_data.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_an_unguarded_script_fails_in_the_first_second_with_one_line(tmp_path):
    script = _script(tmp_path, f"""
        from neuralop_fem import generate
        generate("darcy", n_samples=4, resolution=9, out={str(tmp_path / 'd.nc')!r}, workers=2)
    """)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=_env(), timeout=120, cwd=tmp_path)
    assert proc.returncode != 0
    assert time.perf_counter() - t0 < 30  # no worker was started
    assert 'if __name__ == "__main__":' in proc.stderr
    assert "make_data.py (line 3)" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["make_data.py"]


def test_a_guarded_script_generates_with_workers(tmp_path):
    script = _script(tmp_path, f"""
        from neuralop_fem import generate

        if __name__ == "__main__":
            generate("darcy", n_samples=4, resolution=9, out={str(tmp_path / 'd.nc')!r},
                     workers=2, chunk_size=2, progress=False)
    """)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=_env(), timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "d.nc").is_file()


def test_the_python_example_of_the_docs_runs_as_a_script(tmp_path):
    """docs/generating_data.md, section Python: the block saved as a file and run as it is
    (it starts worker processes, so it must carry the ``__main__`` guard)."""
    import re

    text = (ROOT / "docs" / "generating_data.md").read_text()
    section = text.split("## Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert 'if __name__ == "__main__":' in block
    script = tmp_path / "make_data.py"
    script.write_text(block)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=_env(), timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "darcy33.nc").is_file()
    assert (tmp_path / "burgers256.nc").is_file()
    # Section Reproducibility: its block regenerates sample 3 of that file alone and says so.
    section = text.split("## Reproducibility", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "regenerate.py").write_text(block)
    proc = subprocess.run([sys.executable, "regenerate.py"], capture_output=True, text=True,
                          env=_env(), timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True"], proc.stdout
    # ... and the call it names gives the seed the file stores for sample k (the block's k = 3).
    call = re.search(r"`(solvers\.grf\.sample_seeds\(seed, [^`]*)`", section).group(1)
    with xr.open_dataset(tmp_path / "darcy33.nc") as ds:
        stored, seed = ds.seed.values[3], int(ds.attrs["dataset_seed"])
    assert eval(call, {"solvers": solvers, "seed": seed, "k": 3}) == stored  # noqa: S307


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                         text=True).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_killing_only_the_main_process_ends_its_workers(tmp_path):
    out = tmp_path / "b.nc"
    proc = subprocess.Popen(
        [sys.executable, "-m", "neuralop_fem.cli", "generate", "burgers", "--samples", "400",
         "--resolution", "2048", "--workers", "2", "--chunk-size", "8", "--out", str(out),
         "--no-progress"], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    deadline = time.time() + 60
    while time.time() < deadline and len(workers) < 2:
        time.sleep(0.5)
        workers = [p for p in _children(proc.pid)
                   if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text(errors="replace")]
    assert len(workers) == 2, "the workers did not start"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 20
    while time.time() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.2)
    assert not any(_alive(w) for w in workers)
