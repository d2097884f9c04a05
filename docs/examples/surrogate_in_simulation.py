"""Use a trained surrogate inside a simulation script: replace, warm-start, compare, meshes.

Runs end to end on a CPU in well under a minute: it generates a small Darcy dataset, trains a
tiny FNO surrogate for a few epochs (poor on purpose: the point is the workflow), then

1. loads it with ``Surrogate.load`` and calls it like the classical solver (numpy, xarray);
2. resamples a finer input, and shows the out-of-distribution score;
3. warm-starts ``DarcyFDSolver`` from the prediction and runs ``SurrogatePolicy``;
4. compares surrogate vs solver with ``compare``;
5. evaluates the surrogate on a perturbed scikit-fem mesh and exports VTU / XDMF for ParaView.

Usage: ``python docs/examples/surrogate_in_simulation.py [OUT_DIR]``
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import skfem

from neuralop_fem import compare
from neuralop_fem.data import generate, load_dataset
from neuralop_fem.models import PRESETS
from neuralop_fem.surrogate import OODWarning, Surrogate, SurrogatePolicy
from neuralop_fem.surrogate.mesh import compare_on_mesh, export_fields
from neuralop_fem.training.config import TrainConfig
from neuralop_fem.training.trainer import Trainer
from solvers.darcy import DarcyFDSolver

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
out.mkdir(parents=True, exist_ok=True)

# -- a tiny trained surrogate (stand-in for `neuralop-fem train ...`) ----------------------------
data = generate("darcy", n_samples=28, resolution=29, seed=7, out=out / "darcy.nc", workers=0,
                overwrite=True)
model_config = PRESETS["darcy-fno"].replace(width=8, modes=6, num_layers=2, projection=16)
config = TrainConfig(task="darcy", epochs=5, batch_size=4, n_train=20, n_val=4, n_test=4,
                     device="cpu", gamma=0.5)
with Trainer(out / "run", data, model_config=model_config, config=config, preset="darcy-fno",
             overwrite=True) as trainer:
    trainer.fit()

# -- 1. the solver contract ---------------------------------------------------------------------
surrogate = Surrogate.load(out / "run")
ds = load_dataset(data)
test = ds["a"].isel(sample=slice(24, 28)).load()  # the run's test split: the last 4 samples
u_pred = surrogate.solve(test)  # DataArray in -> DataArray out, dims (sample, x, y)
u_np = surrogate.solve(test.values[0])  # one numpy sample -> one numpy sample
print(f"surrogate: {surrogate.problem} on {surrogate.resolution}^2 nodes, validation rel. L2 "
      f"{surrogate.validation_error:.3f}; prediction dims {u_pred.dims}, single {u_np.shape}")

# -- 2. other grids and the out-of-distribution score --------------------------------------------
a_fine = np.kron(test.values[:1], np.ones((1, 2, 2)))[:, :57, :57]  # same field on 57^2 nodes
print("resampled prediction:", surrogate.solve(a_fine, resample=True).shape)
print("OOD score d^2 of test inputs:", np.round(surrogate.ood_score(test), 2),
      f"(threshold {surrogate.ood_reference.threshold:.1f})")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    surrogate.solve(np.where(test.values > 5, 100.0, 1.0))  # contrast 100 instead of 4
print("unlike the training data ->", [w.category.__name__ for w in caught])

# -- 3. warm start and the policy ----------------------------------------------------------------
# Jacobi CG from zero and from the prediction. This surrogate is poor on purpose, so the warm
# start can cost iterations instead of saving them: a prediction only helps when it is closer to
# the solution than zero is. The policy below checks that per sample before warm-starting.
solver = DarcyFDSolver(linear_solver="cg")
_, zero = solver.solve_with_report(test)
_, warm = solver.solve_with_report(test, initial_guess=u_pred)
change = int(warm.iterations.sum() - zero.iterations.sum())
print(f"CG iterations from zero {zero.iterations.tolist()}, warm {warm.iterations.tolist()}: "
      f"the warm start {'costs' if change > 0 else 'saves'} {abs(change)} in total")
u, records = SurrogatePolicy(surrogate, solver, accept_residual=1e-6).solve(test)
print("policy decisions:", records["decision"].values.tolist())

# -- 4. compare ----------------------------------------------------------------------------------
cmp = compare(DarcyFDSolver(), surrogate, test)
print(f"compare: rel. L2 mean {cmp.attrs['rel_l2_mean']:.3f}, "
      f"energy {cmp.attrs['rel_energy_mean']:.3f}, "
      f"speedup {cmp.attrs['speedup']:.2g}x")

# -- 5. a scikit-fem mesh and ParaView export ----------------------------------------------------
rng = np.random.default_rng(0)
mesh = skfem.MeshTri.init_sqsymmetric().refined(4)
p = mesh.p.copy()
inner = (p > 0).all(axis=0) & (p < 1).all(axis=0)
p[:, inner] += 0.01 * rng.uniform(-1, 1, size=(2, int(inner.sum())))
mesh = skfem.MeshTri(p, mesh.t)
mid = mesh.p[:, mesh.t].mean(axis=1)
coefficient = np.where(np.sin(6 * mid[0]) * np.cos(5 * mid[1]) > 0, 12.0, 3.0)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", OODWarning)  # a hand-made coefficient, not a GRF sample
    res = compare_on_mesh(surrogate, mesh, coefficient)
fields = {"solution": res.solution, "prediction": res.prediction, "error": res.error}
export_fields(out / "mesh_fields.vtu", mesh, point_data=fields, cell_data={"a": coefficient})
export_fields(out / "mesh_fields.xdmf", mesh, point_data=fields, cell_data={"a": coefficient})
print(f"mesh: rel. L2 {res.rel_l2:.3f} vs P1 FEM; wrote {out / 'mesh_fields.vtu'} and .xdmf")
