"""The rounding-tolerant fingerprint of a dataset (neuralop_fem.data.fingerprint)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neuralop_fem.data.fingerprint import (
    SKETCH_SEED,
    SKETCH_SIZE,
    sketch_difference,
    values_difference,
    values_sketch,
)
from neuralop_fem.data.provenance import field_names, variables_checksum

from .conftest import make_burgers


def _scaled(ds, name, factor):
    out = ds.copy(deep=True)
    out[name] = out[name] * factor
    return out


def test_the_sketch_is_the_naive_projection_whatever_the_chunking(darcy_ds):
    sketch = values_sketch(darcy_ds, chunk=3)
    n = darcy_ds.sizes["sample"]
    w = np.random.default_rng([SKETCH_SEED, 0, n]).standard_normal(n)
    for name in ("a", "u"):
        x = darcy_ds[name].values.reshape(n, -1)
        r = np.random.default_rng([SKETCH_SEED, 1, x.shape[1]]).standard_normal(
            (x.shape[1], SKETCH_SIZE))
        norm = np.linalg.norm(x)
        entry = sketch["variables"][name]
        assert entry["norm"] == pytest.approx(norm, rel=1e-14)
        np.testing.assert_allclose(entry["projections"], w @ x @ r / norm, rtol=1e-12,
                                   atol=1e-14)
        assert entry["shape"] == [17, 17]
    assert sketch["n_samples"] == n
    assert sorted(sketch["variables"]) == sorted(field_names(darcy_ds))
    assert sketch_difference(sketch, values_sketch(darcy_ds, chunk=64)) <= 1e-14


def test_the_sketch_survives_json_and_names_nothing_different(burgers_ds):
    sketch = values_sketch(burgers_ds)
    again = json.loads(json.dumps(sketch))
    assert sketch_difference(sketch, again) == 0.0


@pytest.mark.parametrize("rel", [1e-15, 1e-9, 1e-4])
def test_the_difference_estimates_the_relative_change_of_the_values(rng, rel):
    ds = make_burgers(rng, n_samples=40, n=64)
    noisy = ds.copy(deep=True)
    for name in ("u0", "u"):
        noisy[name] = ds[name] * (1 + rel * rng.standard_normal(ds[name].shape))
    exact = values_difference(ds, noisy)
    assert 0.5 * rel < exact < 2 * rel
    estimate = sketch_difference(values_sketch(ds), values_sketch(noisy))
    assert exact / 10 < estimate < 10 * exact


def test_other_data_is_far_even_with_the_same_norms(rng):
    ds = make_burgers(rng, n_samples=20, n=32)
    reordered = ds.isel(sample=np.roll(np.arange(20), 1))
    assert values_sketch(reordered)["variables"]["u"]["norm"] == pytest.approx(
        values_sketch(ds)["variables"]["u"]["norm"], rel=1e-14)
    assert sketch_difference(values_sketch(ds), values_sketch(reordered)) > 1e-2
    other = make_burgers(np.random.default_rng(99), n_samples=20, n=32)
    assert sketch_difference(values_sketch(ds), values_sketch(other)) > 1e-2
    assert sketch_difference(values_sketch(ds), values_sketch(_scaled(ds, "u", 1.001))) > 5e-4


def test_a_zero_field_is_sketched_and_compared(darcy_ds):
    zero = _scaled(darcy_ds, "u", 0.0)
    sketch = values_sketch(zero)
    assert sketch["variables"]["u"]["norm"] == 0.0
    assert sketch["variables"]["u"]["projections"] == [0.0] * SKETCH_SIZE
    assert sketch_difference(sketch, values_sketch(zero)) == 0.0
    assert values_difference(zero, zero) == 0.0
    assert values_difference(zero, darcy_ds) == float("inf")


def test_incomparable_sketches_and_datasets_are_refused_by_name(rng):
    burgers_ds = make_burgers(rng, n_samples=6, n=32)
    small = make_burgers(rng, n_samples=3, n=32)
    with pytest.raises(ValueError, match="n_samples: 6 and 3"):
        sketch_difference(values_sketch(burgers_ds), values_sketch(small))
    with pytest.raises(ValueError, match="other variables"):
        sketch_difference(values_sketch(burgers_ds), values_sketch(burgers_ds, ["u"]))
    coarse = make_burgers(rng, n_samples=6, n=16)
    with pytest.raises(ValueError, match="per-sample shape"):
        sketch_difference(values_sketch(burgers_ds), values_sketch(coarse))
    other = values_sketch(burgers_ds) | {"seed": 1}
    with pytest.raises(ValueError, match="seed"):
        sketch_difference(values_sketch(burgers_ds), other)
    with pytest.raises(ValueError, match="6 and 3 samples"):
        values_difference(burgers_ds, small)
    with pytest.raises(ValueError, match="variable 'u0' has shape"):
        values_difference(burgers_ds, coarse)
    with pytest.raises(ValueError, match="`chunk` must be a positive"):
        values_sketch(burgers_ds, chunk=0)


def test_field_names_are_the_checksummed_fields(darcy_ds, rng):
    assert field_names(darcy_ds) == ["a", "u"]
    with_traj = make_burgers(rng, times=3)
    assert field_names(with_traj) == ["u0", "u", "u_t"]
    assert variables_checksum(with_traj) == variables_checksum(with_traj, ["u0", "u", "u_t"])


@pytest.mark.parametrize("damage", [
    lambda s: s.pop("variables"),
    lambda s: s["variables"]["u"].pop("norm"),
    lambda s: s["variables"]["u"].update(projections=[1.0, "x"]),
    lambda s: s["variables"]["u"].update(projections=[1.0]),
    lambda s: s["variables"].update(u="garbage"),
])
def test_a_damaged_sketch_is_refused_by_name(rng, damage):
    ds = make_burgers(rng, n_samples=4, n=16)
    good = values_sketch(ds)
    bad = json.loads(json.dumps(good))
    damage(bad)
    with pytest.raises(ValueError, match="sketch"):
        sketch_difference(good, bad)
    with pytest.raises(ValueError, match="sketch"):
        sketch_difference(bad, good)


def test_the_streamed_digest_is_the_checksum_whatever_the_blocks(rng):
    from neuralop_fem.data.provenance import ValuesDigest

    ds = make_burgers(rng, n_samples=7, n=16)
    digest = ValuesDigest(["u0", "u"])
    for name in ("u0", "u"):
        for start in (0, 3, 4):  # uneven blocks
            stop = {0: 3, 3: 4, 4: 7}[start]
            digest.add(name, ds[name].values[start:stop])
        digest.add("seed", ds["seed"].values)  # another variable: ignored
    assert digest.checksum() == variables_checksum(ds, ["u0", "u"])
    wrong = ValuesDigest(["u0", "u"])
    with pytest.raises(ValueError, match="variable by variable in the order"):
        wrong.add("u", ds["u"].values)
    partial = ValuesDigest(["u0", "u"])
    partial.add("u0", ds["u0"].values)
    with pytest.raises(ValueError, match=r"\['u'\] were not fed"):
        partial.checksum()


def test_the_sketch_pass_feeds_the_checksum(darcy_ds):
    from neuralop_fem.data.provenance import ValuesDigest

    digest = ValuesDigest(["a", "u"])
    sketch = values_sketch(darcy_ds, ["a", "u"], chunk=3, on_block=digest.add)
    assert digest.checksum() == variables_checksum(darcy_ds, ["a", "u"])
    assert sketch == values_sketch(darcy_ds, ["a", "u"], chunk=3)
