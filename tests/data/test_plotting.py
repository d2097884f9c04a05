"""``neuralop-fem plot`` and the plotting attributes of the files (CF conventions, labels)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from neuralop_fem.data import save_dataset
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


def test_darcy_maps_put_x_horizontal_with_shared_colour_limits(files, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to inspect it
    ds = xr.open_dataset(files["darcy"])
    plot_samples(ds, tmp_path, n_samples=3)
    (fig,) = figures
    maps = [ax for ax in fig.axes if ax.get_title()]  # not the colour bars
    assert len(maps) == 6
    for row, name in enumerate(("a", "u")):
        values = ds[name].values[:3]  # (sample, x, y)
        for j in range(3):
            ax = maps[3 * row + j]
            mesh = ax.collections[0]
            shown = np.asarray(mesh.get_array()).reshape(values[j].T.shape)
            np.testing.assert_array_equal(shown, values[j].T)  # rows = y, columns = x
            assert mesh.get_clim() == (values.min(), values.max())  # one scale per field
            assert ax.get_xlabel() == "position x [1]"
        assert maps[3 * row].get_ylabel() == "position y [1]"
    plt.close(fig)


@pytest.mark.parametrize("path", [*sorted(COMPAT.glob("*.nc")), "burgers", "darcy"])
def test_cf_attributes(path, files):
    """The CF-1.8 attributes a CF reader needs: Conventions, units on every variable,
    long_name, axis on the spatial coordinates, no invalid standard_name; files of earlier
    releases (the backward-compatibility fixture) still plot."""
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
        for dim in spatial:
            assert ds[dim].attrs["axis"] == dim.upper()
            assert np.all(np.diff(ds[dim].values) > 0)  # CF: coordinate values monotonic
        if path in files.values():  # written now: short labels, full text in `comment`
            for name in [*ds.data_vars, *ds.coords]:
                assert len(ds[name].attrs["long_name"]) <= 32 or name in (
                    "seed", "iterations", "residual", "solve_time", "sample", "time"), name
            for name, attrs in get_kit(problem).variable_attrs.items():
                if name in ds.variables:
                    assert ds[name].attrs == {**attrs, **({"_FillValue": ds[name].attrs[
                        "_FillValue"]} if "_FillValue" in ds[name].attrs else {})}, name
        fig = plot_samples(ds, Path(files["burgers"]).parent, n_samples=1, name=problem)
        assert fig.read_bytes()[:8] == PNG


def test_documented_xarray_plot_puts_x_horizontal(files):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = xr.open_dataset(files["darcy"])
    artist = ds["u"].isel(sample=0).plot(x="x", y="y")  # as docs/data_format.md shows
    assert artist.axes.get_xlabel() == "position x [1]"
    assert artist.axes.get_ylabel() == "position y [1]"
    np.testing.assert_array_equal(np.asarray(artist.get_array()).reshape(17, 17),
                                  ds["u"].values[0].T)
    plt.close("all")
