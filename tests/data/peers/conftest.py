"""Files in the peers' layouts, written the way the peers write them."""

from __future__ import annotations

import h5py
import numpy as np
import torch


def write_neuralop_darcy(path, rng, *, n_samples=5, n=8):
    """A dict like neuraloperator's darcy_train_16.pt: x bool phases, y float32."""
    x = torch.from_numpy(rng.random((n_samples, n, n)) > 0.5)
    y = torch.from_numpy(rng.standard_normal((n_samples, n, n)).astype(np.float32))
    torch.save({"x": x, "y": y}, path)
    return x.numpy(), y.numpy()


def write_neuralop_burgers(path, rng, *, n_samples=4, n=16, n_times=5, keys=("x", "y")):
    """A dict like burgers_train_16.pt (keys x, y) or burgers_lowres.pt (input, output)."""
    x = rng.standard_normal((n_samples, n))
    y = rng.standard_normal((n_samples, n_times, n))
    y[:, 0] = x
    torch.save({keys[0]: torch.from_numpy(x), keys[1]: torch.from_numpy(y),
                "visc": torch.tensor([[0.01]], dtype=torch.float64)}, path)
    return x, y


def write_pdebench_burgers(path, rng, *, n_samples=5, n=16, n_times=6):
    """Like PDEBench's 1D_Burgers_Sols_Nu*.hdf5: float32, cell centres, T + 1 times."""
    tensor = rng.standard_normal((n_samples, n_times, n)).astype(np.float32)
    xc = ((np.arange(n) + 0.5) / n).astype(np.float32)
    tc = (np.arange(n_times + 1) * 0.01).astype(np.float32)
    with h5py.File(path, "w") as f:
        f.create_dataset("tensor", data=tensor)
        f.create_dataset("x-coordinate", data=xc)
        f.create_dataset("t-coordinate", data=tc)
    return tensor, xc, tc


def write_pdebench_darcy(path, rng, *, n_samples=4, n=8, beta=1.0):
    """Like PDEBench's 2D_DarcyFlow_beta*_Train.hdf5: nu in {1, 0.1}, tensor (N, 1, n, n)."""
    nu = np.where(rng.random((n_samples, n, n)) > 0.5, 1.0, 0.1).astype(np.float32)
    tensor = rng.random((n_samples, 1, n, n)).astype(np.float32)
    xc = ((np.arange(n) + 0.5) / n).astype(np.float32)
    with h5py.File(path, "w") as f:
        f.create_dataset("tensor", data=tensor)
        f.create_dataset("nu", data=nu)
        f.create_dataset("x-coordinate", data=xc)
        f.create_dataset("y-coordinate", data=xc)
        f.attrs["beta"] = beta
    return nu, tensor, xc
