"""Tiny generated datasets and tiny model settings shared by the training tests."""

from __future__ import annotations

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
