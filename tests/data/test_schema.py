"""Schema builders: attribute conversion and bad input."""

from __future__ import annotations

import json
import re

import netCDF4
import numpy as np
import pytest

from neuralop_fem.data import schema
from neuralop_fem.errors import DatasetError

from .conftest import make_burgers


def test_netcdf_attrs_conversion():
    out = schema.netcdf_attrs(
        {"flag": True, "none": None, "nested": {"tol": 1e-8}, "ts": [0.5, 1.0], "names": ["a", "b"]}
    )
    assert out["flag"] == 1
    assert out["none"] == "none"
    assert out["nested_tol"] == 1e-8
    np.testing.assert_array_equal(out["ts"], [0.5, 1.0])
    assert out["names"] == "a,b"


def test_netcdf_attrs_rejects_objects():
    with pytest.raises(DatasetError, match="attribute `bad` must be a str, number"):
        schema.netcdf_attrs({"bad": object()})


def test_builder_records_every_attribute(rng):
    ds = make_burgers(rng)
    assert ds.attrs["Conventions"] == "CF-1.8"
    assert ds.attrs["neuralop_fem_schema_version"] == 1
    assert json.loads(ds.attrs["config_json"])["viscosity"] == ds.attrs["viscosity"]
    assert ds["seed"].dtype == np.uint64
    assert ds["sample"].dtype == np.int64


def test_builder_rejects_shape_mismatch(rng):
    match = r"`u` must have the shape of `u0` \(2, 8\); got \(2, 9\)"
    with pytest.raises(DatasetError, match=match):
        schema.burgers_dataset(
            rng.random((2, 8)), rng.random((2, 9)), seed=[0, 1], iterations=[1, 1],
            residual=[0.0, 0.0], solve_time=[0.0, 0.0], attrs={"dataset_seed": 0, "source": "t"},
        )


def test_builder_rejects_integer_fields(rng):
    match = "`a` must be a float32 or float64 array; got dtype int64"
    with pytest.raises(DatasetError, match=match):
        schema.darcy_dataset(
            np.ones((1, 3, 3), dtype=np.int64), rng.random((1, 3, 3)), seed=[0], iterations=[1],
            residual=[0.0], solve_time=[0.0], attrs={"dataset_seed": 0, "source": "t"},
        )


def test_builder_rejects_wrong_diagnostics_length(rng):
    match = r"`residual` must have shape \(2,\), one entry per sample"
    with pytest.raises(DatasetError, match=match):
        schema.burgers_dataset(
            rng.random((2, 8)), rng.random((2, 8)), seed=[0, 1], iterations=[1, 1],
            residual=[0.0], solve_time=[0.0, 0.0], attrs={"dataset_seed": 0, "source": "t"},
        )


def test_builder_requires_dataset_seed_and_source(rng):
    match = r"misses global attribute\(s\) \['dataset_seed', 'source'\]"
    with pytest.raises(DatasetError, match=match):
        schema.burgers_dataset(
            rng.random((1, 8)), rng.random((1, 8)), seed=[0], iterations=[1],
            residual=[0.0], solve_time=[0.0], attrs={},
        )


_TIME_UNIT = re.compile(r"^\s*(s|sec|second|seconds|min|minutes|h|hours|d|days)\s+since\s+\S+")


def test_trajectory_time_passes_the_cf_rules_for_time(tmp_path, rng):
    # CF 1.8 §4.4: a coordinate marked axis="T" (or standard_name="time") is a time
    # coordinate and needs units "<time unit> since <reference date>"; a nondimensional time
    # (units "1") must not claim it. Checked on the file as written, for every coordinate.
    from neuralop_fem.data import save_dataset

    path = save_dataset(make_burgers(rng, n_samples=2, n=16, times=3), tmp_path / "t.nc")
    with netCDF4.Dataset(path) as nc:
        for name, var in nc.variables.items():
            attrs = {k: var.getncattr(k) for k in var.ncattrs()}
            if attrs.get("axis") == "T" or attrs.get("standard_name") == "time":
                assert _TIME_UNIT.match(attrs.get("units", "")), (name, attrs)
        time = nc.variables["time"]
        assert time.units == "1"
        assert "nondimensional" in time.long_name
