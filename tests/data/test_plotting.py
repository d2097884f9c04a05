"""``neuralop-fem plot`` and the plotting attributes of the files (CF conventions, labels)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from neuralop_fem.data import load_dataset, save_dataset
from neuralop_fem.data.plotting import plot_samples
from neuralop_fem.problems import get_kit

from ..test_cli_errors import run_cli

COMPAT = Path(__file__).parents[1] / "resources" / "compat_3ded0bf"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def files(tmp_path, burgers_ds, darcy_ds):
    out = {}
    for name, ds in (("burgers", burgers_ds), ("darcy", darcy_ds)):
        out[name] = tmp_path / f"{name}.nc"
        save_dataset(ds, out[name])
    return out


def test_plot_command_writes_a_png_per_file(files, tmp_path):
    for name, path in files.items():
        out = tmp_path / f"fig-{name}"
        proc = run_cli(["plot", str(path), "--out", str(out), "--samples", "2"])
        assert proc.returncode == 0, proc.stderr
        png = out / "samples.png"
        assert proc.stdout == f"wrote {png}\n"
        assert png.read_bytes()[:8] == PNG
    bad = run_cli(["plot", str(files["darcy"]), "--out", str(tmp_path / "f"), "--samples", "0"])
    assert bad.returncode == 2
    assert "argument --samples: must be an integer in [1, 12]; got '0'" in bad.stderr


@pytest.mark.parametrize("opener", ["xarray", "load_dataset"])
def test_darcy_maps_put_x_horizontal_with_shared_colour_limits(files, tmp_path, monkeypatch,
                                                                opener):
    """The maps read the fields by dimension name: a file opened with plain xarray
    (``(sample, y, x)``, the order of files) and one from ``load_dataset`` (``(sample, x, y)``,
    the API's order) give the same picture."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to inspect it
    ds = xr.open_dataset(files["darcy"]) if opener == "xarray" else load_dataset(files["darcy"])
    plot_samples(ds, tmp_path, n_samples=3)
    (fig,) = figures
    maps = [ax for ax in fig.axes if ax.get_title()]  # not the colour bars
    assert len(maps) == 6
    for row, name in enumerate(("a", "u")):
        values = load_dataset(files["darcy"])[name].values[:3]  # (sample, x, y)
        for j in range(3):
            ax = maps[3 * row + j]
            mesh = ax.collections[0]
            shown = np.asarray(mesh.get_array()).reshape(values[j].T.shape)
            np.testing.assert_array_equal(shown, values[j].T)  # rows = y, columns = x
            assert mesh.get_clim() == (values.min(), values.max())  # one scale per field
            assert ax.get_xlabel() == "position x [1]"
        assert maps[3 * row].get_ylabel() == "position y [1]"
    plt.close(fig)
    ds.close()


#: CF 1.8, section 2.4: "the recommended ordering of dimensions is T, Z, Y, X" (others before).
_CF_AXIS_ORDER = "TZYX"


@pytest.mark.parametrize("path", [*sorted(COMPAT.glob("*.nc")), "burgers", "darcy"])
def test_cf_attributes(path, files):
    """The CF-1.8 attributes a CF reader needs, read back by cf_xarray: Conventions, units on
    every variable, long_name, the X / Y axes found from the coordinates' attributes, no invalid
    standard_name; the dims of files written now in CF's recommended order (x last); files of
    earlier releases (the backward-compatibility fixture, (sample, x, y)) still plot."""
    cf_xarray = pytest.importorskip("cf_xarray")  # the `test` extra
    assert cf_xarray  # registers the .cf accessor
    path = files.get(path, path)
    with xr.open_dataset(path) as ds:
        assert ds.attrs["Conventions"].startswith("CF-1.")
        problem = ds.attrs["problem"]
        for name in [*ds.data_vars, *ds.coords]:
            attrs = ds[name].attrs
            assert isinstance(attrs.get("units"), str), name
            assert attrs.get("long_name"), name
            assert "standard_name" not in attrs, name  # none applies to nondimensional fields
        spatial = ["x"] if problem == "burgers" else ["x", "y"]
        assert ds.cf.axes == {dim.upper(): [dim] for dim in spatial}
        for dim in spatial:
            assert ds.cf[dim.upper()].name == dim
            assert np.all(np.diff(ds[dim].values) > 0)  # CF: coordinate values monotonic
        if path in files.values():  # written now
            axis_of = {dims[0]: axis for axis, dims in ds.cf.axes.items()}
            for name in ds.data_vars:
                axes = "".join(axis_of.get(d, "") for d in ds[name].dims)
                assert axes == "".join(a for a in _CF_AXIS_ORDER if a in axes), (name, axes)
                assert ds[name].dims[-1] == "x" or "x" not in ds[name].dims, name
            for name in [*ds.data_vars, *ds.coords]:  # xarray's label fits one line
                attrs = ds[name].attrs
                assert len(f"{attrs['long_name']} [{attrs['units']}]") <= 30, name
            for name, attrs in get_kit(problem).variable_attrs.items():
                if name in ds.variables:
                    assert ds[name].attrs == {**attrs, **({"_FillValue": ds[name].attrs[
                        "_FillValue"]} if "_FillValue" in ds[name].attrs else {})}, name
        fig = plot_samples(ds, Path(files["burgers"]).parent, n_samples=1, name=problem)
        assert fig.read_bytes()[:8] == PNG


def test_plain_xarray_plot_puts_x_horizontal_with_one_line_labels(files):
    """``xr.open_dataset(FILE).u.isel(sample=0).plot()`` with no arguments (docs/data_format.md):
    x on the horizontal axis, every label one line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with xr.open_dataset(files["darcy"]) as ds:
        api = load_dataset(files["darcy"])
        for name, label in (("u", "solution u(x, y) [1]"), ("a", "coefficient a(x, y) [1]")):
            artist = ds[name].isel(sample=0).plot()
            assert artist.axes.get_xlabel() == "position x [1]"
            assert artist.axes.get_ylabel() == "position y [1]"
            assert artist.colorbar.ax.get_ylabel() == label
            shown = np.asarray(artist.get_array()).reshape(17, 17)
            np.testing.assert_array_equal(shown, api[name].values[0].T)  # rows y, columns x
            plt.close("all")
        for name in ("iterations", "residual", "solve_time", "seed"):
            (line,) = ds[name].plot()
            assert "\n" not in line.axes.get_ylabel(), name
            assert line.axes.get_xlabel() == "global sample index k [1]"
            plt.close("all")
        api.close()
    with xr.open_dataset(files["burgers"]) as ds:
        (line,) = ds["u"].isel(sample=0).plot()
        assert line.axes.get_xlabel() == "position x [1]"
        assert line.axes.get_ylabel() == "solution u(x, T) [1]"
        plt.close("all")


def test_plot_leaves_no_folder_on_error_and_replaces_only_with_overwrite(files, tmp_path):
    """A file that is not a dataset: one line, exit 2, and no ``--out`` folder left behind;
    an existing figure is kept unless ``--overwrite`` (as ``compare`` and ``export`` do)."""
    broken = tmp_path / "broken.nc"
    broken.write_bytes(b"CDF\x01 not really netCDF")
    out = tmp_path / "figs"
    proc = run_cli(["plot", str(broken), "--out", str(out)])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"neuralop-fem plot: error: {broken}: cannot be read")
    assert proc.stderr.count("\n") == 1
    assert not out.exists()
    assert run_cli(["plot", str(files["burgers"]), "--out", str(out)]).returncode == 0
    first = (out / "samples.png").read_bytes()
    again = run_cli(["plot", str(files["darcy"]), "--out", str(out)])
    assert again.returncode == 2
    assert again.stderr == (f"neuralop-fem plot: error: argument --out: "
                            f"'{out / 'samples.png'}' exists (pass --overwrite to replace it).\n")
    assert (out / "samples.png").read_bytes() == first
    replaced = run_cli(["plot", str(files["darcy"]), "--out", str(out), "--overwrite"])
    assert replaced.returncode == 0, replaced.stderr
    assert (out / "samples.png").read_bytes() != first
