"""AFNO mixer against a naive per-frequency numpy computation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuralop_fem.models import AFNOMixer, build_model


def _complex(t: torch.Tensor) -> np.ndarray:
    a = t.detach().double().numpy()
    return a[..., 0] + 1j * a[..., 1]


def _soft(u: np.ndarray, lam: float) -> np.ndarray:
    return np.sign(u) * np.maximum(np.abs(u) - lam, 0.0)


@pytest.mark.parametrize("shape", [(2, 12, 8), (2, 6, 5, 8)])
def test_afno_matches_naive_loop(rng: np.random.Generator, shape: tuple) -> None:
    torch.manual_seed(0)
    mixer = AFNOMixer(8, num_blocks=2, hidden_factor=2, sparsity=0.01).double()
    with torch.no_grad():
        for p in mixer.parameters():
            p.mul_(20.0)  # make the ReLU and the soft threshold both active
    x = rng.standard_normal(shape)
    got = mixer(torch.from_numpy(x)).detach().numpy()
    w1, b1, w2, b2 = (_complex(t) for t in (mixer.w1, mixer.b1, mixer.w2, mixer.b2))
    axes = tuple(range(1, x.ndim - 1))
    ref = np.zeros_like(x)
    for s in range(shape[0]):
        z = np.fft.rfftn(x[s], axes=tuple(a - 1 for a in axes), norm="ortho")
        out = np.zeros_like(z)
        for idx in np.ndindex(*z.shape[:-1]):
            for blk in range(2):
                zb = z[idx][blk * 4 : (blk + 1) * 4]
                h = zb @ w1[blk] + b1[blk]
                h = np.maximum(h.real, 0) + 1j * np.maximum(h.imag, 0)
                o = h @ w2[blk] + b2[blk]
                out[idx][blk * 4 : (blk + 1) * 4] = _soft(o.real, 0.01) + 1j * _soft(o.imag, 0.01)
        ref[s] = np.fft.irfftn(out, s=shape[1:-1], axes=tuple(a - 1 for a in axes), norm="ortho")
    # float64 on both sides; only FFT rounding differs.
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-11)


def test_afno_encoder_in_2d_model() -> None:
    model = build_model("darcy-galerkin", attention="afno", num_layers=1)
    assert model(torch.randn(1, 29, 29, 1)).shape == (1, 29, 29, 1)
