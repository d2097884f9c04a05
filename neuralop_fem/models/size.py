"""Size limits for operator learners built from files: parameters, depth and activations.

A model config read from a file (``best.pt``, ``last.pt``, a :func:`~neuralop_fem.models.save_model`
file, ``run.json``) is checked here *before* the model is built, so a damaged or tampered
config cannot ask for tens of GiB of weights or activations before anything looks at it.

Limits (far above every preset: 0.4-2.4 M parameters, at most 10 layers, at most
8 GiB of activations per sample at the benchmark resolutions):

* :data:`MAX_PARAMETERS` = 200 M parameters (800 MB of float32 weights);
* :data:`MAX_LAYERS` = 256 layers (encoder, Fourier and regressor layers together);
* :data:`MAX_RESOLUTION` = 65536 grid points per axis;
* :data:`MAX_ACTIVATION_BYTES` = 32 GiB of float32 activations per sample in an inference
  pass at the recorded resolution (:func:`activation_bytes`, an estimate of one layer's
  working set; darcy-fourier at 421, the largest preset case, needs about 8 GiB).

The parameter count is exact: the model is built on PyTorch's ``meta`` device, which allocates
nothing, after a cheap lower bound (:func:`parameter_lower_bound`) has refused absurd widths.
Models built in code (:func:`~neuralop_fem.models.build_model`) are not limited.
"""

from __future__ import annotations

import torch

from solvers.checks import is_int

from ..errors import ConfigError
from ._grid import coarse_size, middle_size
from .presets import MODEL_FAMILIES, ModelConfig

__all__ = [
    "MAX_ACTIVATION_BYTES",
    "MAX_LAYERS",
    "MAX_PARAMETERS",
    "MAX_RESOLUTION",
    "activation_bytes",
    "check_model_size",
    "check_resolution",
    "count_parameters",
    "parameter_lower_bound",
]

MAX_PARAMETERS = 200_000_000
MAX_LAYERS = 256
MAX_RESOLUTION = 65536
MAX_ACTIVATION_BYTES = 32 * 2**30

_FLOAT_BYTES = 4
_QUADRATIC = ("softmax",)  # kernels with an n x n matrix at inference (fourier reassociates)


#: The families whose sizes this module estimates from their fields; a family registered
#: later (:func:`~neuralop_fem.models.register_model`) is counted exactly (on the ``meta``
#: device) and its activations estimated only when its config has ``activation_bytes(n)``.
_ESTIMATED = ("transformer1d", "transformer2d", "fno1d", "fno2d")


def _spatial_dims(config: ModelConfig) -> int:
    return int(config.spatial_dims)


def _depth(config: ModelConfig) -> int:
    return int(getattr(config, "num_layers", 1)) + int(getattr(config, "num_regressor_layers", 0))


def parameter_lower_bound(config: ModelConfig) -> int:
    """A cheap lower bound of the parameter count of ``config``'s model (integer arithmetic).

    Counts only the largest weight matrices: per encoder layer the four attention projections
    (``4 d^2``, none for AFNO) and the FFN (``2 d d_ff``); per spectral layer the real weights
    ``2 c^2 m^k`` (twice in 2D: positive and negative frequencies).
    """
    if config.family not in _ESTIMATED:
        return 0  # no formula: the exact count (on the meta device) decides
    dims = _spatial_dims(config)
    if config.family.startswith("fno"):
        w, m = int(config.width), int(config.modes)
        return int(config.num_layers) * 2 * w * w * m**dims * dims
    d, d_ff = int(config.d_model), int(config.d_ff)
    attention = 0 if config.attention == "afno" else 4 * d * d
    total = int(config.num_layers) * (attention + 2 * d * d_ff)
    if getattr(config, "decoder", "spectral") == "spectral":
        c, m = int(config.freq_dim), int(config.modes)
        total += int(config.num_regressor_layers) * 2 * c * c * m**dims * dims
    return total


def count_parameters(config: ModelConfig) -> int:
    """Exact parameter count of ``config``'s model, built on the ``meta`` device (no memory)."""
    with torch.device("meta"):
        model = MODEL_FAMILIES[config.family][1](config)
    return sum(p.numel() for p in model.parameters())


def activation_bytes(config: ModelConfig, resolution: int) -> int:
    """Estimated float32 working set of one sample in an inference pass at ``resolution`` (bytes).

    The tensors alive in one layer: about ``8 d + 2 d_ff`` values per token in an encoder layer
    (plus ``2 H n_c^2`` for the n x n matrix of softmax attention; the Fourier kernel is
    evaluated as ``Q (K^T V)`` at inference and builds none), ``4 d`` per fine
    and intermediate grid point in the CiNN samplers of the 2D transformer, and ``4 c + 2
    c_ff`` per grid point in a spectral or Fourier layer and the output MLP. Training keeps
    every layer's tensors: multiply by the depth for a training estimate.
    """
    n = int(resolution)
    if config.family not in _ESTIMATED:  # a registered family's own estimate, if it has one
        estimate = getattr(config, "activation_bytes", None)
        return int(estimate(n)) if callable(estimate) else 0
    dims = _spatial_dims(config)
    fine = n**dims
    if config.family.startswith("fno"):
        return _FLOAT_BYTES * fine * (4 * int(config.width) + 2 * int(config.projection))
    d, d_ff, heads = int(config.d_model), int(config.d_ff), int(config.num_heads)
    tokens, decoded, samplers = fine, fine, 0
    if dims == 2:
        n_c = coarse_size(n, float(config.coarse_ratio))
        tokens = n_c * n_c
        samplers = 4 * d * (fine + middle_size(n, n_c) ** 2)
        decoded = fine if config.output_grid == "fine" else tokens
    encoder = tokens * (8 * d + 2 * d_ff)
    if config.attention in _QUADRATIC:
        encoder += 2 * heads * tokens * tokens
    decoder = decoded * (4 * int(config.freq_dim) + 2 * int(config.decoder_ff))
    return _FLOAT_BYTES * (encoder + samplers + decoder)


def check_resolution(value: object, *, source: str, error: type[Exception] = ConfigError) -> int:
    """``value`` as a grid resolution: an integer in ``[1, MAX_RESOLUTION]``.

    ``source`` names the file and field in the message (e.g. ``"run/run.json, field
    `resolution`"``).
    """
    if not is_int(value) or not 1 <= value <= MAX_RESOLUTION:  # type: ignore[operator]
        msg = f"{source} must be an integer in [1, {MAX_RESOLUTION}]; got {value!r}."
        raise error(msg)
    return int(value)  # type: ignore[call-overload]


def check_model_size(
    config: ModelConfig, *, source: str, resolution: int | None = None,
    error: type[Exception] = ConfigError,
    hint: str = "The file is damaged or was not written by neuralop_fem.",
) -> int:
    """Refuse a model config beyond the documented limits; return its parameter count.

    Parameters
    ----------
    config : model config
        A validated config of :data:`~neuralop_fem.models.MODEL_FAMILIES`.
    source : str
        The file and field the config came from, for the message.
    resolution : int, optional
        Also check the activation estimate at this grid resolution.
    error : exception class
        Raised on refusal (default :class:`~neuralop_fem.errors.ConfigError`).
    hint : str
        The last sentence of the message: what to do (a file's config: it is damaged).

    Raises
    ------
    error
        Depth above :data:`MAX_LAYERS`, parameters above :data:`MAX_PARAMETERS` or activations
        above :data:`MAX_ACTIVATION_BYTES`.
    """
    depth = _depth(config)
    if depth > MAX_LAYERS:
        msg = (f"{source} describes a model with {depth} layers; the limit is {MAX_LAYERS} "
               f"(neuralop_fem.models.size.MAX_LAYERS). {hint}")
        raise error(msg)
    bound = parameter_lower_bound(config)
    count = bound if bound > MAX_PARAMETERS else count_parameters(config)
    if count > MAX_PARAMETERS:
        at_least = "at least " if count == bound else ""
        msg = (f"{source} describes a model with {at_least}{count:,} parameters; the limit is "
               f"{MAX_PARAMETERS:,} (neuralop_fem.models.size.MAX_PARAMETERS). {hint}")
        raise error(msg)
    if resolution is not None:
        need = activation_bytes(config, resolution)
        if need > MAX_ACTIVATION_BYTES:
            msg = (f"{source} at resolution {resolution} needs about {need / 2**30:,.0f} GiB of "
                   f"activations per sample; the limit is {MAX_ACTIVATION_BYTES / 2**30:.0f} GiB "
                   f"(neuralop_fem.models.size.MAX_ACTIVATION_BYTES). {hint}")
            raise error(msg)
    return count
