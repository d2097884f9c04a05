"""Files that do harm without running code, met through ``neuralop-fem import / info / check``.

Each is refused with exit status 2 and one line on stderr that names the file, and nothing is
written: HDF5 datasets whose values live outside the file (external storage, external or soft
links, virtual datasets), sizes the stored bytes cannot hold (chunks or blocks never written,
compression beyond zlib's ratio), compressed ``.pt`` entries, and output times out of order.
"""

from __future__ import annotations

import zipfile
import zlib

import h5py
import netCDF4
import numpy as np
import pytest
import torch

from neuralop_fem.cli import main
from neuralop_fem.data import BurgersDataConfig, generate

from .conftest import write_neuralop_burgers, write_neuralop_darcy, write_pdebench_burgers

SECRET = "TOP-SECRET-" * 40


def _refused(capsys, args: list[str], *parts: str) -> str:
    """Run the command line; it must exit 2 with one line on stderr holding ``parts``."""
    assert main(args) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    assert "internal error" not in captured.err
    for part in parts:
        assert part in lines[0], lines[0]
    assert SECRET[:10] not in captured.err + captured.out
    return lines[0]


def _import(capsys, fmt: str, src, out, *parts: str) -> str:
    line = _refused(capsys, ["import", fmt, str(src), "--out", str(out)], str(src), *parts)
    assert not out.exists()
    assert [p.name for p in out.parent.iterdir() if p.suffix == ".nc"] == []
    return line


def _burgers(path, rng, **datasets):
    """A PDEBench Burgers file whose ``tensor`` is made by ``datasets["tensor"](f)``."""
    write_pdebench_burgers(path, rng)
    with h5py.File(path, "r+") as f:
        shape, dtype = f["tensor"].shape, f["tensor"].dtype
        del f["tensor"]
        datasets["tensor"](f, shape, dtype)
    return path


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "secret.key"
    path.write_text(SECRET)
    return path


def test_external_storage_would_copy_a_local_file(tmp_path, rng, secret):
    """The file as h5py reads it: its `tensor` is the bytes of the secret (what is refused)."""
    src = _burgers(tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5", rng, tensor=lambda f, s, d: (
        f.create_dataset("tensor", shape=s, dtype=d, external=[(str(secret), 0, 4 * np.prod(s))])))
    with h5py.File(src, "r") as f:
        assert f["tensor"][()].tobytes()[:11] == b"TOP-SECRET-"


def test_external_storage_is_refused(tmp_path, rng, secret, capsys):
    src = _burgers(tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5", rng, tensor=lambda f, s, d: (
        f.create_dataset("tensor", shape=s, dtype=d, external=[(str(secret), 0, 4 * np.prod(s))])))
    _import(capsys, "pdebench", src, tmp_path / "out.nc", "dataset `tensor`",
            "HDF5 external storage", "refused")


def _linked(tmp_path, rng, link):
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as g:
        g.create_dataset("stolen", data=rng.standard_normal((5, 6, 16)).astype(np.float32))
    return _burgers(tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5", rng,
                    tensor=lambda f, s, d: link(f, other))


@pytest.mark.parametrize(("name", "link"), [
    ("external link", lambda f, other: f.__setitem__("tensor",
                                                     h5py.ExternalLink(str(other), "/stolen"))),
    ("soft link to an external link", lambda f, other: (
        f.__setitem__("hidden/away", h5py.ExternalLink(str(other), "/stolen")),
        f.__setitem__("tensor", h5py.SoftLink("/hidden/away")))),
])
def test_links_out_of_the_file_are_refused(tmp_path, rng, capsys, name, link):
    src = _linked(tmp_path, rng, link)
    _import(capsys, "pdebench", src, tmp_path / "out.nc", "is an external link to",
            "other.h5", "refused")


def test_a_virtual_dataset_is_refused(tmp_path, rng, capsys):
    other = tmp_path / "parts.h5"
    with h5py.File(other, "w") as g:
        g.create_dataset("part", data=rng.standard_normal((5, 6, 16)).astype(np.float32))

    def virtual(f, shape, dtype):
        layout = h5py.VirtualLayout(shape=shape, dtype=dtype)
        layout[:] = h5py.VirtualSource(str(other), "part", shape=shape)
        f.create_virtual_dataset("tensor", layout)

    src = _burgers(tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5", rng, tensor=virtual)
    _import(capsys, "pdebench", src, tmp_path / "out.nc", "dataset `tensor` is a virtual dataset")


@pytest.mark.parametrize(("name", "make", "message"), [
    # 10**6 samples declared, chunks for 3 of them written: the rest would read as zeros.
    ("chunks never written", lambda f, s, d: f.create_dataset(
        "tensor", shape=(10**6, *s[1:]), dtype=d, chunks=(1, *s[1:]))
        .__setitem__(slice(0, 3), np.ones((3, *s[1:]), dtype=d)),
     "only 3 of its 1000000 chunks were written (the first missing one starts at index "
     "(3, 0, 0))"),
    ("contiguous block never written", lambda f, s, d: f.create_dataset(
        "tensor", shape=(4000, *s[1:]), dtype=d),
     "declares shape (4000, 6, 16) (1,536,000 bytes) but stores 0 bytes"),
    # 7.7 MB declared in a 12-byte deflated chunk: zlib cannot exceed 1032:1.
    ("inflation beyond zlib", lambda f, s, d: f.create_dataset(
        "tensor", shape=(20000, *s[1:]), dtype=d, chunks=(20000, *s[1:]), compression="gzip")
        .id.write_direct_chunk((0, 0, 0), zlib.compress(bytes(12))),
     "more than 1100 times"),
])
def test_sizes_the_stored_bytes_cannot_hold_are_refused(tmp_path, rng, capsys, name, make,
                                                        message):
    src = _burgers(tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5", rng, tensor=make)
    _import(capsys, "pdebench", src, tmp_path / "out.nc", "dataset `tensor`", message)


def test_compressed_pt_entries_are_refused_unread(tmp_path, rng, capsys):
    """A .pt whose zip entries are deflated (torch.save never writes them) would inflate on
    torch.load; the peer reader refuses it as checkpoints are refused (one shared check)."""
    src = tmp_path / "darcy_train_8.pt"
    write_neuralop_darcy(src, rng, n_samples=64, n=16)
    with zipfile.ZipFile(src) as z:
        entries = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(src, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
    _import(capsys, "neuralop", src, tmp_path / "out.nc",
            "refused: it holds compressed entries, which torch.save never writes")


def test_pt_entries_larger_than_the_file_are_refused_unread(tmp_path, rng, capsys):
    """An entry whose size in the zip directory exceeds the whole file (a forged directory)."""
    src = tmp_path / "darcy_train_8.pt"
    write_neuralop_darcy(src, rng)
    data = bytearray(src.read_bytes())
    at = data.index(b"PK\x01\x02")  # the first central-directory header
    data[at + 24:at + 28] = (2**31 - 1).to_bytes(4, "little")  # its uncompressed size
    src.write_bytes(bytes(data))
    _import(capsys, "neuralop", src, tmp_path / "out.nc", "refused: its entries declare",
            "more than the file's")


def test_a_legacy_pt_file_is_refused(tmp_path, capsys):
    src = tmp_path / "old.pt"
    torch.save({"x": torch.zeros(2, 4, 4), "y": torch.ones(2, 4, 4)}, src,
               _use_new_zipfile_serialization=False)
    _import(capsys, "neuralop", src, tmp_path / "out.nc", "legacy format from before 1.6")


# -- output times out of order ------------------------------------------------------------


def test_times_out_of_order_are_refused_on_import(tmp_path, rng, capsys):
    pt = tmp_path / "burgers.pt"
    x, y = write_neuralop_burgers(pt, rng, n_times=3)
    torch.save({"x": torch.from_numpy(x), "y": torch.from_numpy(y),
                "t": torch.tensor([0.0, 2.0, 1.0], dtype=torch.float64)}, pt)
    _import(capsys, "neuralop", pt, tmp_path / "out.nc",
            "`t` must be strictly increasing; got 2.0 then 1.0 at index 2")
    h5 = tmp_path / "1D_Burgers_Sols_Nu0.01.hdf5"
    write_pdebench_burgers(h5, rng, n_times=3)
    with h5py.File(h5, "r+") as f:
        f["t-coordinate"][...] = [0.0, 0.5, 0.25, 1.0]
    _import(capsys, "pdebench", h5, tmp_path / "out.nc",
            "`t-coordinate` must be strictly increasing; got 0.5 then 0.25 at index 2")


@pytest.fixture(scope="module")
def trajectory_file(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("times")
    config = BurgersDataConfig(output_times=(0.25, 0.5, 0.75, 1.0))
    return generate("burgers", n_samples=4, resolution=16, seed=3, out=tmp / "b.nc", workers=0,
                    progress=False, config=config)


@pytest.mark.parametrize("command", [["info"], ["check", "--samples", "1", "--refine", "1"]])
def test_times_out_of_order_are_refused_by_info_and_check(tmp_path, trajectory_file, capsys,
                                                          command):
    path = tmp_path / "swapped.nc"
    path.write_bytes(trajectory_file.read_bytes())
    with netCDF4.Dataset(path, "a") as ds:
        t = ds["time"][:]
        ds["time"][:] = [t[0], t[2], t[1], *t[3:]]
    _refused(capsys, [*command, str(path)], str(path),
             "coordinate `time` must be strictly increasing")


# -- netCDF: samples declared, never written ----------------------------------------------


def _declared_only(src, dst, n_declared):
    """A copy of the netCDF file ``src`` declaring ``n_declared`` samples, the fields written
    for the first ``src``'s samples only (the per-sample vectors and coordinates in full)."""
    with netCDF4.Dataset(src) as a, netCDF4.Dataset(dst, "w") as b:
        b.setncatts({k: a.getncattr(k) for k in a.ncattrs()})
        for name, dim in a.dimensions.items():
            b.createDimension(name, n_declared if name == "sample" else len(dim))
        n = len(a.dimensions["sample"])
        for name, var in a.variables.items():
            chunks = var.chunking()
            chunks = None if chunks == "contiguous" else [1 if d == "sample" else c for d, c in
                                                          zip(var.dimensions, chunks, strict=True)]
            fill = var.getncattr("_FillValue") if "_FillValue" in var.ncattrs() else False
            new = b.createVariable(name, var.dtype, var.dimensions, chunksizes=chunks,
                                   fill_value=fill, zlib=True)
            new.setncatts({k: var.getncattr(k) for k in var.ncattrs() if k != "_FillValue"})
            values = var[:]
            if var.dimensions[:1] != ("sample",):
                new[:] = values
            elif var.ndim == 1:
                new[:] = np.resize(values, n_declared) if name != "sample" else \
                    np.arange(n_declared)
            else:
                new[:n] = values
    return dst


@pytest.mark.parametrize("command", [["info"], ["info", "--no-check"],
                                     ["check", "--samples", "1", "--refine", "1"]])
def test_samples_declared_but_never_written_are_not_verified(tmp_path, trajectory_file, capsys,
                                                             command):
    path = _declared_only(trajectory_file, tmp_path / "hollow.nc", 10_000)
    _refused(capsys, [*command, str(path)], str(path), "dataset `u0` declares shape",
             "chunks were written")


# -- text of the file on the terminal -----------------------------------------------------


def test_info_escapes_the_text_of_the_file(tmp_path, trajectory_file, capsys):
    """Attributes with terminal escapes (title, colour) and a newline that would forge a
    `samples:` line are shown escaped, one line each."""
    path = tmp_path / "painted.nc"
    path.write_bytes(trajectory_file.read_bytes())
    with netCDF4.Dataset(path, "a") as ds:
        ds.setncattr("title", "\x1b]0;pwned\x07\x1b[2J")
        ds.setncattr("note", "fine\nsamples:     999 (indices 0..998)\r")
        ds["u"].setncattr("long_name", "\x9b31msolution")
    assert main(["info", "--no-check", str(path)]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\x07\r\x9b")
    assert [line for line in out.splitlines() if line.startswith("samples:")] == \
        ["samples:     4 (indices 0..3)"]
    assert "title:       \\x1b]0;pwned\\x07\\x1b[2J" in out
    assert "  note = fine\\nsamples:     999 (indices 0..998)\\r" in out
    assert "\\x9b31msolution" in out


def test_a_matlab_v73_file_with_external_storage_is_refused(tmp_path, rng, secret, capsys):
    """MATLAB v7.3 files are HDF5: read through the same checks (import-mat)."""
    src = tmp_path / "burgers_data_R10.mat"
    with h5py.File(src, "w", userblock_size=512) as f:
        f.create_dataset("a", data=rng.standard_normal((16, 4)))  # MATLAB (4, 16), stored (16, 4)
        f.create_dataset("u", shape=(16, 4), dtype="f8", external=[(str(secret), 0, 16 * 4 * 8)])
    out = tmp_path / "out.nc"
    _refused(capsys, ["import-mat", str(src), "--problem", "burgers", "--out", str(out)],
             str(src), "dataset `u` keeps its values in another file", "refused")
    assert not out.exists()
