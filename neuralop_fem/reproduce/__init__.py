"""Reproduction of the paper's tables, traceable row by row (``neuralop-fem reproduce``).

This package owns the reproduction of Cao 2021's tables: the problems' reproduction entries as
it reads them (:mod:`.entries`: quick sizes, grids, the paper's numbers), what a row of
``reproduction.json`` records (:mod:`.rows`: the dataset's identity, the commands, the run's
scale; rows of the older format completed), whether a regenerated file holds the data of some
rows (:mod:`.identity`), a finished run evaluated into a row and the results file merged and
checked (:mod:`.record`), the rows as tables beside the paper's numbers (:mod:`.tables`), the
resumable generate + train + evaluate + record loop (:mod:`.driver`, ``reproduce run``), the
goals beyond the paper and whether the rows meet them (:mod:`.goals`), the Burgers rows as
series of the epoch budget (:mod:`.epoch_budget`), the inverse benchmark's observations
(:mod:`.inverse`), the results files of the benchmarks and the rows (:mod:`.results`) and
scripts run like a command (:mod:`.script_runner`: one-line errors, the options' rules). It
reads runs through the run record (:mod:`neuralop_fem.runs`, whose
:mod:`~neuralop_fem.runs.rerun_commands` it shares with the zoo's cards) and imports neither
the zoo nor the command line. The environment beside every row (CPU, BLAS, threads, versions,
commit) comes from :mod:`neuralop_fem.environment`. Importing this package imports neither
torch nor xarray (its modules do).
"""

__all__: list[str] = []
