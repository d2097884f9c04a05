"""The lab: what the project measures about itself, kept out of the installed wheel.

It owns the benchmark drivers (``bench_*.py``, ``inverse_*.py``, ``plot_*.py`` and
``reproduce_paper.py``: thin command lines, each writing its results file under
``benchmarks/results/``), the measurements they call (:mod:`benchmarks.lab`: timing loops,
solver, model, inference, inversion and training benchmarks and the tables of their results),
and the GPU campaign (:mod:`benchmarks.gpu.campaign`: the stages that fit a borrowed GPU
machine, with the driver ``benchmarks/gpu/data_path.py`` and the wheel download
``benchmarks/gpu/fetch_wheels.sh``). The drivers run as modules from the repository root
(``python -m benchmarks.bench_inference ...``) and use the public modules of ``solvers`` and
``neuralop_fem``; nothing in those packages imports the lab. Importing this package imports
nothing else.
"""
