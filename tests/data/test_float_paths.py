"""Generated files record the kernel choices that decide their last bits
(neuralop_fem.data.float_paths), and ``info`` shows them with the values' checksum."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from neuralop_fem import generate, load_dataset
from neuralop_fem.commands.info import describe
from neuralop_fem.data.float_paths import describe_float_paths, float_paths
from neuralop_fem.data.provenance import read_record, variables_checksum

FIXTURE = Path(__file__).resolve().parents[1] / "resources" / "compat_3ded0bf" / "darcy_n17.nc"


def _recorded(path: Path) -> list:
    with load_dataset(path) as ds:
        return read_record(ds.attrs)["float_paths"]


def test_this_process_choices_name_numpy_and_the_blas_kernels():
    paths = float_paths()
    assert paths["numpy"] == np.__version__
    assert paths["cpu"]
    assert paths["blas"]
    assert all(len(entry.split()) == 2 for entry in paths["blas"])  # "prefix architecture"
    if hasattr(np.lib, "introspect"):
        assert paths["numpy_simd"]
    assert json.loads(json.dumps(paths)) == paths


def test_a_generated_file_records_the_choices_of_its_workers(tmp_path):
    out = generate("burgers", n_samples=6, resolution=32, seed=3, out=tmp_path / "b.nc",
                   workers=2, chunk_size=2, progress=False)
    assert _recorded(out) == [float_paths()]  # the workers run on this machine, alike


def test_an_override_is_recorded_and_takes_effect(tmp_path):
    script = ("import json, sys; from neuralop_fem.data.float_paths import float_paths; "
              "print(json.dumps(float_paths()))")
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    paths = json.loads(proc.stdout)
    assert paths["overrides"] == {"OPENBLAS_CORETYPE": "Haswell"}
    openblas = [b for b in paths["blas"] if "openblas" in b]
    assert openblas
    assert all(b.endswith(" Haswell") for b in openblas)
    assert "OPENBLAS_CORETYPE=Haswell" in describe_float_paths([paths])


def test_appending_to_a_file_of_an_earlier_release_keeps_its_unknown(tmp_path):
    copy = tmp_path / "old.nc"
    shutil.copy(FIXTURE, copy)
    generate("darcy", n_samples=2, out=copy, append=True, workers=0, progress=False)
    assert _recorded(copy) == [None, float_paths()]
    text = describe_float_paths(_recorded(copy))
    assert text.splitlines()[0] == "unknown (not recorded)"
    assert len(text.splitlines()) == 2


def test_info_shows_the_values_checksum_and_where_the_file_was_written(tmp_path):
    out = generate("darcy", n_samples=3, resolution=9, seed=1, out=tmp_path / "d.nc",
                   workers=0, progress=False)
    text = describe(out, check=True)
    with load_dataset(out) as ds:
        assert f"values:      {variables_checksum(ds)} (of a, u)" in text
    assert f"written on:  {float_paths()['cpu']}: numpy {np.__version__}" in text
    quick = describe(out, check=False)
    assert "values:" not in quick
    assert "written on:" in quick
    assert "written on:  unknown (not recorded)" in describe(FIXTURE, check=False)


def test_a_tampered_record_reads_as_unknown_not_a_crash():
    assert describe_float_paths("garbage") == "unknown (not recorded)"
    assert describe_float_paths([None, 3, {"cpu": "X", "overrides": "bad"}]).splitlines() == [
        "unknown (not recorded)", "unknown (not recorded)", "X: numpy ? loops ?, BLAS ?"]
