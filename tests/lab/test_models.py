"""benchmarks.lab.models and .reference_order on tiny cases."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from benchmarks.lab import models as bm  # noqa: E402
from benchmarks.lab.reference_order import (  # noqa: E402
    reference_order_forward,
    use_reference_order,
)
from neuralop_fem.models import build_model  # noqa: E402
from neuralop_fem.models.attention import SimpleAttention  # noqa: E402


def _naive_galerkin(attn, x, pos):
    """Per sample and head, written out with explicit loops over the heads: Q, K, V
    projected, K and V layer-normed per head, coordinates in front, Q (K^T V) / n."""
    b, n, _ = x.shape
    h, dk = attn.num_heads, attn.d_k
    out = []
    for s in range(b):
        heads = []
        for j in range(h):
            cols = slice(j * dk, (j + 1) * dk)
            q = attn.q_proj(x[s])[:, cols]
            k = attn.norms["k"][j](attn.k_proj(x[s])[:, cols])
            v = attn.norms["v"][j](attn.v_proj(x[s])[:, cols])
            q, k, v = (torch.cat((pos, t), dim=-1) for t in (q, k, v))
            heads.append(q @ (k.T @ v) / n)
        out.append(attn.out_proj(torch.cat(heads, dim=-1)))
    return torch.stack(out)


def test_reference_order_without_dropout_is_the_naive_computation():
    torch.manual_seed(0)
    attn = SimpleAttention(8, 2, kind="galerkin", pos_dim=1, xavier_gain=1.0).eval()
    assert attn.normed == ("k", "v")
    x, pos = torch.randn(2, 5, 8), torch.linspace(0, 1, 5)[:, None]
    got = reference_order_forward(attn, x, pos, reference_dropout=False)
    torch.testing.assert_close(got, _naive_galerkin(attn, x, pos), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got, attn(x, pos), rtol=1e-5, atol=1e-6)  # ours: same function


def test_use_reference_order_switches_every_attention_layer_only_there():
    model = build_model("burgers-galerkin", d_model=16, num_layers=2, d_ff=16, modes=4,
                        freq_dim=8, decoder_ff=8)
    other = build_model("burgers-galerkin", d_model=16, num_layers=2, d_ff=16, modes=4,
                        freq_dim=8, decoder_ff=8)
    other.load_state_dict(model.state_dict())
    assert use_reference_order(model, reference_dropout=True) == 2
    x = torch.randn(1, 32, 1)
    model.eval(), other.eval()
    with torch.no_grad():
        assert not torch.allclose(model(x), other(x))  # the reference's always-on dropout
    assert use_reference_order(model, reference_dropout=False) == 2
    with torch.no_grad():
        torch.testing.assert_close(model(x), other(x), rtol=1e-5, atol=1e-6)


def test_a_cpu_case_reports_speed_memory_and_parameters():
    r = bm.run_case({"part": "cpu", "preset": "burgers-galerkin", "n": 32, "batch": 1,
                     "iters": 2, "threads": 1})
    assert r["params"] == sum(p.numel() for p in build_model("burgers-galerkin").parameters())
    assert r["train_it_s_best"] >= r["train_it_s_median"] > 0
    assert r["eval_it_s_best"] > 0
    assert r["peak_rss_mib"] > 0
    assert r["calib_gflops"] > 0


def test_a_scaling_case_reports_time_and_saved_memory():
    r = bm.run_case({"part": "scaling", "attention": "galerkin", "n": 32,
                     "attention_dropout": 0.0, "label": "galerkin", "batch": 1, "iters": 2,
                     "threads": 1})
    assert 0 < r["best_s"] <= r["median_s"]
    assert r["saved_for_backward_mib"] > 0
    assert r["label"] == "galerkin"


def test_versus_reference_and_fourier_scale_cases():
    r = bm.run_case({"part": "vs-reference", "preset": "burgers-galerkin", "n": 32, "batch": 1,
                     "iters": 2, "threads": 1})
    assert r["max_rel_diff_eval"] < 1e-5
    assert r["speedup_median"] == pytest.approx(
        r["ours"]["it_s_median"] / r["reference_order"]["it_s_median"])
    f = bm.run_case({"part": "fourier-scale", "fourier_scale": "none", "seed": 0, "steps": 2,
                     "threads": 1})
    assert math.isfinite(f["first"])
    assert f["final_rel_l2"] > 0


@pytest.mark.slow
def test_a_case_in_a_subprocess():
    row = bm.run_in_subprocess({"part": "fourier-scale", "fourier_scale": "sqrt", "seed": 0,
                                "steps": 1, "threads": 1})
    assert row["steps"] == 1
    assert row["first"] == row["final_rel_l2"]


def test_the_results_files():
    row = {"fourier_scale": "sqrt", "seed": 0, "steps": 1, "first": 0.5, "final_rel_l2": 0.25}
    text = bm.markdown_fourier_scale({"rows": [row]}, {})
    assert text.splitlines()[-1].startswith("| sqrt | 0 | 1 |")
    hw = bm.hardware_block()
    assert hw["torch_threads"] == 1
    assert hw["torch"] == torch.__version__
    cpu_row = {"preset": "p", "n": 4, "batch": 1, "params": 1000, "train_it_s_best": 2.0,
               "train_it_s_median": 1.0, "eval_it_s_best": 3.0, "peak_rss_mib": 9.0,
               "calib_gflops": 50.0, "reference": None}
    assert "| p n=4 (1) | 1,000 | 2 / 1 | - | 3 |" in bm.markdown_cpu({"rows": [cpu_row]}, hw)
