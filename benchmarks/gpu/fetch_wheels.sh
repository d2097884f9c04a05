#!/usr/bin/env bash
# Download the wheels of the packages the GPU machine's image lacks (scikit-fem, pyamg, dask with
# partd and locket, netCDF4 with cftime, meshio) for its Python 3.12 on x86-64 Linux, into an
# ignored folder (default .whl/ at the repository root). The campaign's stages install them
# offline from there (python -m benchmarks.gpu.campaign --wheels; pip --no-index --no-deps).
#
#   benchmarks/gpu/fetch_wheels.sh [FOLDER]
#
# The versions are the ones the project is tested with; the device image already holds numpy,
# scipy, xarray, h5py, torch, matplotlib, tqdm, threadpoolctl, toolz, cloudpickle, fsspec,
# pyyaml, click, certifi, rich and packaging.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="${1:-$root/.whl}"
mkdir -p "$dest"
packages=(
    scikit-fem==12.0.2
    pyamg==5.4.1
    dask==2026.8.0
    partd==1.4.2
    locket==1.0.0
    netCDF4==1.7.5.1.post1
    cftime==1.6.6.1
    meshio==5.3.5
    # what the paper's reference code imports beyond the image (bench_reference_training.py)
    torchinfo==1.8.0
    psutil==7.2.2
)
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 \
         manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
    platforms+=(--platform "$p")
done
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp "${platforms[@]}" -d "$dest" "${packages[@]}"
ls -l "$dest"
du -sh "$dest"
