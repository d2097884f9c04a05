"""Reproduction of the paper's tables, traceable row by row (``neuralop-fem reproduce``).

entries.py       the problems' reproduction entries (quick sizes, grids, the paper's numbers)
rows.py          what a row records: dataset identity, commands, scale; legacy rows completed
identity.py      is a (regenerated) file the data of some rows: bit for bit, or to rounding
tables.py        rows that differ only in the seed as one line (mean, spread): reproduction.md
record.py        a finished run evaluated into a row; results files merged and checked
driver.py        generate + train + evaluate + record, resumable (``reproduce run``)
epoch_budget.py  the Burgers rows as series of the epoch budget
results.py       results files (``<stem>.json`` and ``.md``) of the benchmarks and rows
script_runner.py a script run like a command (one-line errors, the options' rules)

The environment beside every row (CPU, BLAS, threads, versions, commit) comes from
:mod:`neuralop_fem.environment`. Importing this package imports neither torch nor xarray.
"""

__all__: list[str] = []
