"""neuralop_fem.training.augment: a moved training pair is a pair of the solver, its gradient
moves as a vector, the draws are reproducible, and ``augment`` trains and resumes end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from neuralop_fem.data.subsample import node_gradient, periodic_derivative
from neuralop_fem.errors import ConfigError
from neuralop_fem.runs import TrainConfig
from neuralop_fem.training.augment import BatchAugmenter, grid_symmetries, training_augmenter
from solvers import BurgersSpectralSolver, DarcyFDSolver, NeumannGRF, PeriodicGRF
from solvers.grf import threshold

from .conftest import TINY_BURGERS, set_args


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


def _burgers_batch(n: int = 64, samples: int = 6) -> dict[str, torch.Tensor]:
    u0 = PeriodicGRF(n, sigma=25.0, tau=5.0).sample(samples, rng=np.random.default_rng(3))
    u = BurgersSpectralSolver().solve(u0)
    du = np.stack([periodic_derivative(v, h=1.0 / n) for v in u])
    return {"input": _t(u0[..., None]), "target": _t(u[..., None]),
            "target_grad": _t(du[..., None]), "grid": _t(np.arange(n)[:, None] / n)}


def _darcy_batch(n: int = 17, samples: int = 8) -> dict[str, torch.Tensor]:
    a = threshold(NeumannGRF(n).sample(samples, rng=np.random.default_rng(4)))
    u = DarcyFDSolver(tol=1e-12).solve(a)
    grad = np.stack([node_gradient(v, h=1.0 / (n - 1)) for v in u])
    return {"input": _t(a[..., None]), "target": _t(u[..., None]), "target_grad": _t(grad),
            "coefficient": _t(a[..., None])}


def test_a_moved_burgers_pair_is_a_pair_of_the_solver() -> None:
    """u0 shifted and reflected with negation, solved, is the moved solution; the moved gradient
    is the derivative of the moved solution (a naive reference: the solver and the FD rule)."""
    batch = _burgers_batch()
    aug = BatchAugmenter(("shift", "reflect-negate"), ndim=1, seed=0)
    moved = aug(batch, epoch=0, index=0)
    u = BurgersSpectralSolver().solve(moved["input"][..., 0].numpy())
    assert np.abs(u - moved["target"][..., 0].numpy()).max() < 1e-9 * np.abs(u).max()
    du = np.stack([periodic_derivative(v, h=1.0 / 64) for v in moved["target"][..., 0].numpy()])
    np.testing.assert_allclose(moved["target_grad"][..., 0].numpy(), du, atol=1e-12)
    assert torch.equal(moved["grid"], batch["grid"])
    assert not torch.equal(moved["input"], batch["input"])


def test_a_plain_reflection_is_no_burgers_symmetry() -> None:
    """Without the negation the reflected pair is no pair of the solver: the rule matters."""
    batch = _burgers_batch(samples=2)
    flip = {k: _t(np.roll(v.numpy()[:, ::-1], 1, axis=1)) for k, v in batch.items()
            if k in ("input", "target")}
    u = BurgersSpectralSolver().solve(flip["input"][..., 0].numpy())
    assert np.abs(u - flip["target"][..., 0].numpy()).max() > 1e-2 * np.abs(u).max()


def test_every_element_of_d4_moves_a_darcy_pair_to_a_pair_of_the_solver() -> None:
    batch = _darcy_batch()
    aug = BatchAugmenter(("d4",), ndim=2, seed=1)
    seen = set()
    for index in range(6):
        moved = aug(batch, epoch=2, index=index)
        a = moved["input"][..., 0].numpy()
        u = DarcyFDSolver(tol=1e-12).solve(a)
        assert np.abs(u - moved["target"][..., 0].numpy()).max() < 1e-8 * np.abs(u).max()
        grad = np.stack([node_gradient(v, h=1.0 / 16) for v in moved["target"][..., 0].numpy()])
        np.testing.assert_allclose(moved["target_grad"].numpy(), grad, atol=1e-12)
        assert torch.equal(moved["coefficient"], moved["input"])
        seen |= {m.numpy().tobytes() for m in moved["input"]}
    # 48 draws of 8 elements on 8 samples: all images of the first sample are distinct fields
    assert len(seen) > 8


def test_the_draws_repeat_for_the_same_batch_and_change_with_it() -> None:
    batch = _darcy_batch(samples=4)
    aug = BatchAugmenter(("d4",), ndim=2, seed=5)
    first = aug(batch, epoch=3, index=7)["input"]
    assert torch.equal(first, aug(batch, epoch=3, index=7)["input"])
    others = [aug(batch, epoch=e, index=i)["input"] for e, i in ((3, 8), (4, 7))]
    assert not any(torch.equal(first, o) for o in others)
    assert torch.equal(BatchAugmenter(("d4",), ndim=2, seed=5, rank=0)(batch, epoch=3,
                                                                         index=7)["input"], first)


def test_transpose_alone_swaps_the_axes_and_the_gradient_components() -> None:
    batch = _darcy_batch(samples=8)
    moved = BatchAugmenter(("transpose",), ndim=2, seed=0)(batch, epoch=0, index=0)
    for b in range(8):
        same = torch.equal(moved["input"][b], batch["input"][b])
        turned = torch.equal(moved["input"][b], batch["input"][b].transpose(0, 1))
        assert same or turned
        if turned:
            assert torch.equal(moved["target_grad"][b, ..., 0],
                               batch["target_grad"][b, ..., 1].T)


@pytest.mark.parametrize(("symmetries", "grid", "kept"), [
    (("shift", "reflect-negate"), "periodic", ("shift", "reflect-negate")),
    (("d4",), "nodes", ("d4",)), (("d4",), "cell-centred", ("d4",)),
    (("d4",), "half-open", ("transpose",)), (("shift",), "nodes", ()), (("d4",), "periodic", ()),
])
def test_a_grid_keeps_the_symmetries_that_map_its_points_onto_themselves(symmetries, grid,
                                                                          kept) -> None:
    assert grid_symmetries(symmetries, grid) == kept


@pytest.mark.parametrize(("args", "match"), [
    ((("d4",),), r"some of \['shift'"), ((("shift", "reflect", "reflect-negate"),), "both"),
    (((),), "symmetries"),
])
def test_bad_symmetries_are_refused(args, match) -> None:
    with pytest.raises(ConfigError, match=match):
        BatchAugmenter(*args, ndim=1, seed=0)


def test_an_entry_without_a_rule_is_refused() -> None:
    batch = _darcy_batch(samples=1) | {"mask": torch.ones(1, 17, 17, 1)}
    with pytest.raises(ConfigError, match=r"\['mask'\] have no rule"):
        BatchAugmenter(("d4",), ndim=2, seed=0)(batch, epoch=0, index=0)


def test_a_problem_whose_grid_keeps_no_symmetry_cannot_augment() -> None:
    assert training_augmenter("burgers", "none", "periodic", seed=0) is None
    assert training_augmenter("darcy-inverse", "symmetries", "nodes", seed=0).symmetries == (
        "d4",)
    with pytest.raises(ConfigError, match="augment.*burgers.*nodes grid"):
        training_augmenter("burgers", "symmetries", "nodes", seed=0)
    with pytest.raises(ConfigError, match="augment"):
        TrainConfig(augment="rotate")


def _train(tmp_path, burgers_file, name: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "neuralop_fem.cli", "train", "--data", str(burgers_file),
           "--preset", "burgers-galerkin", "--out", str(tmp_path / name), "--resolution", "64",
           "--n-train", "8", "--n-val", "4", "--n-test", "4", "--batch-size", "4",
           "--threads", "1", "--epochs", "2", *set_args(TINY_BURGERS), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_augmented_training_differs_records_and_resumes_bit_for_bit(tmp_path,
                                                                     burgers_file) -> None:
    runs = {
        "plain": [],
        "aug": ["--set", "augment=symmetries"],
        "aug-resumed": ["--set", "augment=symmetries", "--max-epochs-this-call", "1"],
    }
    for name, extra in runs.items():
        proc = _train(tmp_path, burgers_file, name, *extra)
        assert proc.returncode == 0, proc.stderr
    proc = _train(tmp_path, burgers_file, "aug-resumed", *runs["aug"])
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "aug" / "run.json").read_text())
    assert record["train_config"]["augment"] == "symmetries"
    metrics = {n: (tmp_path / n / "metrics.csv").read_text().splitlines() for n in runs}
    loss = {n: [line.split(",")[1] for line in m[1:]] for n, m in metrics.items()}
    assert loss["aug"] != loss["plain"]
    assert loss["aug-resumed"] == loss["aug"]


def test_a_bad_augment_on_the_command_line_is_one_line(tmp_path, burgers_file) -> None:
    proc = _train(tmp_path, burgers_file, "bad", "--set", "augment=rotate")
    assert proc.returncode != 0
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "augment" in proc.stderr
