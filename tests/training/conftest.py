"""Tiny generated datasets and tiny model settings shared by the training tests."""

from __future__ import annotations

import pytest

from neuralop_fem.data import generate

#: Tiny model overrides (keep every training test to a few seconds on a shared 2-core box).
TINY_BURGERS = {"d_model": 16, "num_layers": 2, "d_ff": 32, "freq_dim": 8, "modes": 4,
                "decoder_ff": 8}
TINY_DARCY = {"d_model": 12, "num_layers": 1, "d_ff": 16, "freq_dim": 8, "modes": 4,
              "decoder_ff": 8}
TINY_INVERSE = {"d_model": 12, "num_layers": 1, "d_ff": 16}


def set_args(overrides: dict) -> list[str]:
    """``--set key=value`` arguments for the command line."""
    out: list[str] = []
    for key, value in overrides.items():
        out += ["--set", f"{key}={value}"]
    return out


@pytest.fixture(scope="session")
def burgers_file(tmp_path_factory):
    """24 Burgers samples at n = 128 (spectral solver), dataset seed 1."""
    path = tmp_path_factory.mktemp("data") / "burgers.nc"
    return generate("burgers", n_samples=24, resolution=128, seed=1, out=path, workers=0,
                    progress=False)


@pytest.fixture(scope="session")
def darcy_file(tmp_path_factory):
    """14 Darcy samples on the 29 x 29 node grid (FD), dataset seed 1."""
    path = tmp_path_factory.mktemp("data") / "darcy.nc"
    return generate("darcy", n_samples=14, resolution=29, seed=1, out=path, workers=0,
                    progress=False)
