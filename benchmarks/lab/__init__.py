"""What the benchmark drivers of ``benchmarks/`` measure, as functions a user can call.

timing.py          timing loops (per repeat, per sample, wall and CPU time), memory, the GEMM
                   calibration and the hardware block of a results file
models.py          the operator learners' speed and memory (one case per fresh process)
reference_order.py the reference code's order of computation of the attention layers
solvers.py         the Darcy and Burgers solvers' speed and accuracy
rungs.py           the cost of the ladder's cheap settings
warmstart.py       Darcy solves warm-started from predictions
inverse.py         the inverse problem: surrogate, inversion, warm starts
inverse_settings.py the inversion's defaults and its linear solves from a bad start
fair.py            the fair verdicts of trained runs
peers.py           our presets beside neuraloperator's example; its phase values
generation.py      dataset generation throughput
transfer.py        Darcy models evaluated across grids
plots.py           learning curves, the epoch budget, a TensorBoard log
bf16.py            bf16 autocast: trained models' output deviation and training speed
reference_training.py our trainer beside the paper's reference code, same data and device

Each module's markdown function writes the table its driver puts into the results file
(:func:`neuralop_fem.reproduce.results.write_results`). Importing this package imports
neither torch nor xarray.
"""

__all__: list[str] = []
