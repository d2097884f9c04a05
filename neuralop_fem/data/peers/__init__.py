"""The data formats of other operator-learning tools, both ways.

* :mod:`~neuralop_fem.data.peers.neuralop`: neuraloperator's ``.pt`` dictionaries
  (:func:`read_neuralop`, :func:`import_neuralop`, :func:`export_neuralop`), read without
  running code from the file (:mod:`~neuralop_fem.data.peers.safe_torch`);
* :mod:`~neuralop_fem.data.peers.pdebench`: PDEBench's HDF5 files, 1D Burgers and 2D Darcy
  (:func:`read_pdebench`, :func:`import_pdebench`, :func:`export_pdebench`), read lazily.

Imports give datasets of the schema (``docs/data_format.md``) with the peer's grid convention,
keys and physical parameters recorded in the attributes; ``docs/data_from_other_tools.md``
lists each layout and what is assumed or lost.
"""

from __future__ import annotations

from .neuralop import export_neuralop, import_neuralop, read_neuralop
from .pdebench import export_pdebench, import_pdebench, read_pdebench

__all__ = [
    "export_neuralop",
    "export_pdebench",
    "import_neuralop",
    "import_pdebench",
    "read_neuralop",
    "read_pdebench",
]
