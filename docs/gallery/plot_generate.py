"""
Generate a Darcy dataset and look at it
=======================================

Ten samples of the Darcy benchmark (piecewise-constant coefficient 3 / 12 from a thresholded
Gaussian random field, f = 1, u = 0 on the boundary) on a 29 x 29 node grid, stored as a
self-describing netCDF file, then plotted: with :func:`neuralop_fem.data.plotting.plot_samples`
(what ``neuralop-fem plot`` writes) and with plain xarray.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import xarray as xr

from neuralop_fem.data import generate, load_dataset
from neuralop_fem.data.plotting import plot_samples

out = Path(tempfile.mkdtemp())
path = generate("darcy", n_samples=10, resolution=29, seed=0, out=out / "darcy.nc", workers=0,
                progress=False)
ds = load_dataset(path)
print(ds)

# %%
# The file needs no neuralop_fem to read. xarray puts the *last* dimension on the horizontal
# axis, and the fields are stored ``(sample, y, x)`` (CF's order), so the default plot has x
# horizontal, with one-line labels from each variable's ``long_name`` and ``units``.
# (``load_dataset`` above hands the fields out as ``(sample, x, y)``, the package's order.)
plain = xr.open_dataset(path)
print(plain["u"].dims)
plain["u"].isel(sample=slice(0, 3)).plot(col="sample")
plt.show()

# %%
# The figure ``neuralop-fem plot`` writes: the first samples' coefficient and solution, as a PNG.
print("wrote", plot_samples(ds, out))

# %%
# Per-sample solver diagnostics are variables of the file too.
print("iterations:", ds["iterations"].values, "residuals <", float(ds["residual"].max()))
