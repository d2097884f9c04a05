"""How ``neuralop_fem.cli.main`` ends a command: disk full, permissions, internal errors,
Ctrl-C, ``-v``/``--debug`` after the command, and ``--help`` text without markup."""

from __future__ import annotations

import errno
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from neuralop_fem import files
from neuralop_fem.cli import COMMANDS, error_message, main
from neuralop_fem.data import generate
from neuralop_fem.errors import DatasetError

ROOT = Path(__file__).resolve().parents[1]
DARCY = ["--samples", "2", "--resolution", "9", "--workers", "0", "--chunk-size", "1"]


@pytest.fixture(scope="module")
def darcy_file(tmp_path_factory):
    return generate("darcy", n_samples=3, resolution=9, seed=2,
                    out=tmp_path_factory.mktemp("exit") / "d.nc", workers=0, progress=False)


@pytest.fixture(autouse=True)
def _restore_logging():
    """``main`` configures the package logger; leave it as the other tests expect."""
    log = logging.getLogger("neuralop_fem")
    state = (log.level, list(log.handlers), log.propagate)
    yield
    log.setLevel(state[0])
    log.handlers[:], log.propagate = state[1], state[2]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err, err
    return err


@pytest.fixture
def disk_full(monkeypatch):
    """Every atomic write fails as on a full disk (``os.replace`` raises ENOSPC, no file name)."""

    def replace(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "replace", replace)


def test_generate_on_a_full_disk(tmp_path, capsys, disk_full):
    out = tmp_path / "d.nc"
    assert main(["generate", "darcy", *DARCY, "--out", str(out)]) == 2
    err = _one_line(capsys)
    assert err.startswith("neuralop-fem generate darcy: error: No space left on device (")
    assert str(out) in err  # the chunk file of FILE.nc.partial/ that could not be written


def test_import_mat_on_a_full_disk(tmp_path, capsys, disk_full):
    src = tmp_path / "b.mat"
    rng = np.random.default_rng(0)
    scipy.io.savemat(src, {"a": rng.standard_normal((2, 8)), "u": rng.standard_normal((2, 8))})
    out = tmp_path / "b.nc"
    assert main(["import-mat", str(src), "--problem", "burgers", "--out", str(out)]) == 2
    err = _one_line(capsys)
    assert f"error: No space left on device ({out})" in err
    assert not out.exists()
    assert not list(tmp_path.glob(".b.nc.*"))  # no temporary left


def test_a_writer_that_hides_a_full_disk_is_reported_as_one(tmp_path, monkeypatch):
    # torch.save reports a full disk as RuntimeError("... unexpected pos ...").
    monkeypatch.setattr(files, "_disk_full", lambda directory: True)
    target = tmp_path / "best.pt"
    msg = "[enforce fail at inline_container.cc] unexpected pos 10752"
    with pytest.raises(OSError, match="No space left") as info, files.atomic_path(target):
        raise RuntimeError(msg)
    assert info.value.errno == errno.ENOSPC
    assert info.value.filename == str(target)
    monkeypatch.setattr(files, "_disk_full", lambda directory: False)
    msg = "unexpected pos"  # not a full disk: a bug, reported as such
    with pytest.raises(RuntimeError, match="unexpected pos"), files.atomic_path(target):
        raise RuntimeError(msg)


def _mount_tmpfs(path: Path) -> bool:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    path.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(path)],
                          capture_output=True)
    return proc.returncode == 0


def test_generate_into_a_really_full_file_system(tmp_path):
    full = tmp_path / "full"
    if not _mount_tmpfs(full):
        pytest.skip("needs root and `mount -t tmpfs` (a 64 KiB file system)")
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        proc = subprocess.run(
            [sys.executable, "-m", "neuralop_fem.cli", "generate", "darcy", "--samples", "16",
             "--resolution", "33", "--workers", "0", "--out", str(full / "d.nc")],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    finally:
        subprocess.run(["umount", str(full)], check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "No space left on device" in proc.stderr
    assert str(full / "d.nc") in proc.stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into read-only directories")
def test_unwritable_output_directory(tmp_path, capsys, darcy_file):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert main(["generate", "darcy", *DARCY, "--out", str(locked / "d.nc")]) == 2
        assert "argument --out: must be in a writable directory" in _one_line(capsys)
        assert main(["train", "--data", str(darcy_file), "--preset", "darcy-fno",
                     "--out", str(locked / "run")]) == 2
        assert "argument --out: must be in a writable directory" in _one_line(capsys)
    finally:
        locked.chmod(0o755)


def test_os_errors_name_what_and_where():
    assert error_message(PermissionError(errno.EACCES, "Permission denied", "/x/run.json")) \
        == ("error: Permission denied (/x/run.json)", 2)
    assert error_message(IsADirectoryError(errno.EISDIR, "Is a directory", "/x")) \
        == ("error: Is a directory (/x)", 2)
    message, status = error_message(DatasetError("f.nc: two\nlines"))
    assert (message, status) == ("error: f.nc: two lines", 2)


def test_an_unexpected_exception_is_an_internal_error(monkeypatch, capsys, darcy_file):
    from neuralop_fem.commands import info

    def broken(args):
        msg = "unsupported operand"
        raise TypeError(msg)

    monkeypatch.setattr(info, "run", broken)
    assert main(["info", str(darcy_file)]) == 1
    err = _one_line(capsys)
    assert err.startswith("neuralop-fem info: internal error: TypeError: unsupported operand")
    assert "--debug" in err
    with pytest.raises(TypeError):
        main(["info", str(darcy_file), "--debug"])


def test_out_of_memory_is_reported_not_a_bug(monkeypatch, capsys, darcy_file):
    from neuralop_fem.commands import info

    def huge(args):
        msg = "Unable to allocate 8.00 TiB"
        raise MemoryError(msg)

    monkeypatch.setattr(info, "run", huge)
    assert main(["info", str(darcy_file)]) == 2
    assert "error: out of memory (MemoryError: Unable to allocate 8.00 TiB)" in _one_line(capsys)


def test_ctrl_c(monkeypatch, capsys, darcy_file):
    from neuralop_fem.commands import info

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(info, "run", interrupted)
    assert main(["info", str(darcy_file)]) == 130
    assert _one_line(capsys) == "neuralop-fem info: interrupted\n"


@pytest.mark.parametrize(("argv", "level"), [
    (["info", "{f}", "-v"], logging.INFO),
    (["info", "{f}", "-vv"], logging.DEBUG),
    (["-v", "info", "{f}", "-v"], logging.DEBUG),
    (["info", "-v", "{f}"], logging.INFO),
    (["info", "{f}"], logging.WARNING),
])
def test_verbosity_before_or_after_the_command(argv, level, darcy_file, capsys):
    assert main([a.format(f=darcy_file) for a in argv]) == 0
    assert logging.getLogger("neuralop_fem").level == level


def test_verbosity_after_a_nested_command(tmp_path, capsys):
    assert main(["generate", "darcy", *DARCY, "--out", str(tmp_path / "d.nc"), "-vv"]) == 0
    assert logging.getLogger("neuralop_fem").level == logging.DEBUG


def test_debug_after_a_nested_command_shows_the_error(darcy_file):
    from neuralop_fem.errors import ConfigError

    with pytest.raises(ConfigError, match="must not be an existing file"):
        main(["generate", "darcy", *DARCY, "--out", str(darcy_file), "--debug"])


@pytest.mark.parametrize("command", [c.replace("_", "-") for c in COMMANDS])
def test_help_is_plain_text(command, capsys):
    argv = [command, "darcy", "--help"] if command == "generate" else [command, "--help"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    for markup in (":class:", ":func:", ":mod:", ":data:", "``"):
        assert markup not in text, (command, markup)
