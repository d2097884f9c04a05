"""
Identify a Darcy coefficient from the solution
==============================================

The classical inverse problem: given u on the grid, recover the coefficient a of
-div(a grad u) = 1 with :class:`solvers.DarcyInverseSolver` (adjoint gradient, regularised
least squares, L-BFGS-B).
"""

import matplotlib.pyplot as plt
import numpy as np

from solvers import DarcyFDSolver, DarcyInverseSolver, NeumannGRF, threshold

a_true = threshold(NeumannGRF(17).sample(1, rng=np.random.default_rng(3)))[0]
u = DarcyFDSolver().solve(a_true)
a, report = DarcyInverseSolver().solve_with_report(u)
print("PDE solves:", report.iterations.tolist(), "stop:", report.stop_reason.tolist())
print("relative L2 error of a:", float(np.linalg.norm(a - a_true) / np.linalg.norm(a_true)))

# %%
# The arrays are indexed ``[x, y]`` on the node grid of [0, 1]^2: transposed for display, so
# that x is horizontal. The largest differences sit where u carries little information about a
# (near the boundary, where u = 0, and at the corners).
x = np.linspace(0.0, 1.0, a_true.shape[0])
fig, axes = plt.subplots(1, 2, figsize=(7, 3.2), layout="constrained")
for ax, field, title in zip(axes, (a_true, a), ("true a", "identified a"), strict=True):
    mesh = ax.pcolormesh(x, x, field.T, vmin=a_true.min(), vmax=a_true.max(),
                         shading="nearest")
    ax.set_title(title)
    ax.set_xlabel("position x [1]")
    ax.set_aspect("equal")
axes[0].set_ylabel("position y [1]")
fig.colorbar(mesh, ax=axes.tolist(), label="coefficient a [1]")
plt.show()
