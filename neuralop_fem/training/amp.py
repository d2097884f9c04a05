"""Mixed precision of training: the choice (:func:`resolve_amp`) and the check of a bf16 model
against float32 (:func:`bf16_deviation`). The forward pass itself (:class:`AmpForward`,
:func:`keep_float32_parts`) is :mod:`neuralop_fem.models.precision`'s, imported here.

``amp="auto"`` (the default of :class:`~neuralop_fem.training.TrainConfig`) resolves to
``"bf16"`` where the device computes bfloat16 natively and to ``"none"`` (float32) elsewhere:

* CUDA: ``torch.cuda.is_bf16_supported(including_emulation=False)`` (compute capability 8.0
  and newer). Measured on an H100 at the presets' batch sizes, bf16 autocast trained 6-17 %
  slower than float32 there (launch-bound steps), which the choice's reason says;
* CPU: the ``avx512_bf16`` or ``amx_bf16`` instructions (:func:`cpu_bf16_features`). On such
  CPUs bf16 autocast trains about 2x faster; without them it emulates bf16 and is rarely faster
  than float32 (docs/training.md).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Collection
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils.data import Dataset

from ..errors import ConfigError
from ..models import NormalizedOperator
from ..models.precision import AmpForward, float32_parts, keep_float32_parts, output_layer
from ..runs.train_config import AMP_CHOICES
from .loaders import eval_loader

__all__ = ["AMP_CHOICES", "AmpChoice", "AmpForward", "bf16_deviation", "bf16_warnings",
           "cpu_bf16_features", "float32_parts", "keep_float32_parts", "output_layer",
           "resolve_amp", "resumed"]

_log = logging.getLogger(__name__)

#: CPU instruction-set flags (Linux ``/proc/cpuinfo`` names) that compute bf16 natively.
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_bf16_features(cpuinfo: str | os.PathLike[str] = "/proc/cpuinfo") -> tuple[str, ...]:
    """The native-bf16 flags of :data:`BF16_CPU_FLAGS` this CPU has, in that order.

    Read from ``cpuinfo`` (Linux); where that file does not exist, from torch's own CPU
    detection (``torch.cpu._is_avx512_bf16_supported`` / ``_is_amx_tile_supported`` where this
    torch has them).
    """
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as fh:
            flags = set()
            for line in fh:
                if line.startswith("flags"):
                    flags.update(line.partition(":")[2].split())
    except OSError:
        flags = set()
        probes = {"avx512_bf16": "_is_avx512_bf16_supported", "amx_bf16": "_is_amx_tile_supported"}
        for flag, name in probes.items():
            probe = getattr(torch.cpu, name, None)
            if probe is not None and probe():
                flags.add(flag)
    return tuple(f for f in BF16_CPU_FLAGS if f in flags)


@dataclass(frozen=True)
class AmpChoice:
    """The resolved precision of a run: ``amp`` (``"none"`` or ``"bf16"``), what was asked
    (``requested``) and why (``reason``, for the log line and ``run.json``)."""

    amp: str
    requested: str
    reason: str

    @property
    def note(self) -> str:
        """One line for the log: which precision and why."""
        name = "bf16 autocast" if self.amp == "bf16" else "float32"
        return f"precision: {name} (amp={self.requested}: {self.reason})"

    def to_dict(self) -> dict[str, str]:
        """The record of ``run.json`` (``precision``)."""
        return {"amp": self.amp, "requested": self.requested, "reason": self.reason}


def _native_bf16(device: torch.device, cpu_flags: Collection[str] | None,
                 cuda_native: bool | None) -> tuple[bool, str]:
    """Whether ``device`` computes bf16 natively, and the evidence in words."""
    if device.type == "cuda":
        if cuda_native is None:
            cuda_native = bool(torch.cuda.is_bf16_supported(including_emulation=False))
        name = f"GPU {device}"
        return cuda_native, (f"{name} has native bf16 (though on an H100 bf16 trained the "
                             "presets 6-17 % slower than float32: --amp none)" if cuda_native
                             else f"{name} has no native bf16 (compute capability < 8.0)")
    if device.type == "cpu":
        flags = cpu_bf16_features() if cpu_flags is None else tuple(
            f for f in BF16_CPU_FLAGS if f in cpu_flags)
        if flags:
            return True, f"the CPU has native bf16 ({', '.join(flags)})"
        return False, f"the CPU has no native bf16 (no {' or '.join(BF16_CPU_FLAGS)})"
    return False, f"no native bf16 known for device type {device.type!r}"


def resolve_amp(requested: str, device: torch.device, *,
                cpu_flags: Collection[str] | None = None,
                cuda_native: bool | None = None) -> AmpChoice:
    """The precision a run on ``device`` trains in for ``TrainConfig.amp = requested``.

    Parameters
    ----------
    requested : {"auto", "none", "bf16"}
        ``"auto"``: bf16 where ``device`` has native bf16, float32 (``"none"``) elsewhere;
        the other two are kept.
    device : torch.device
        The training device.
    cpu_flags, cuda_native : optional
        The capability to assume instead of detecting it (tests; None: detect):
        the CPU's flags (e.g. ``{"avx512_bf16"}``), whether the GPU has native bf16.

    Examples
    --------
    >>> resolve_amp("auto", torch.device("cpu"), cpu_flags={"avx2"}).amp
    'none'
    >>> resolve_amp("auto", torch.device("cpu"), cpu_flags={"avx512_bf16"}).note
    'precision: bf16 autocast (amp=auto: the CPU has native bf16 (avx512_bf16))'
    """
    if requested not in AMP_CHOICES:
        msg = f"`amp` must be one of {', '.join(map(repr, AMP_CHOICES))}; got {requested!r}."
        raise ConfigError(msg)
    native, why = _native_bf16(device, cpu_flags, cuda_native)
    if requested == "auto":
        return AmpChoice("bf16" if native else "none", requested, why)
    if requested == "bf16" and not native:
        return AmpChoice("bf16", requested, f"as requested; {why}, so bf16 is emulated and "
                         "likely slower than float32")
    return AmpChoice(requested, requested, "as requested")


def resumed(choice: AmpChoice, recorded: object) -> AmpChoice:
    """The choice of a resumed run that started in precision ``recorded``: ``amp="auto"``
    keeps the run's (on another machine auto may resolve otherwise); an explicit choice is
    compared with the record like any other setting, so ``choice`` itself.

    >>> here = resolve_amp("auto", torch.device("cpu"), cpu_flags=())
    >>> resumed(here, "bf16").amp
    'bf16'
    """
    if choice.requested != "auto" or recorded not in ("none", "bf16") or recorded == choice.amp:
        return choice
    return AmpChoice(str(recorded), "auto",
                     f"the precision this run started with (here auto gives {choice.amp})")


@torch.no_grad()
def bf16_deviation(operator: NormalizedOperator, dataset: Dataset, *, device: torch.device,
                   batch_size: int, forward: nn.Module | None = None) -> float:
    """How far bf16 autocast moves ``operator``'s output: the mean over the samples of
    ``||f_bf16(x) - f(x)|| / ||f(x)||``, with ``f`` the float32 forward pass and ``f_bf16``
    that of :class:`AmpForward` (``amp="bf16"``).

    A model trained in bf16 cannot be trusted to errors much below this figure: its training
    loss saw outputs rounded this much. ``dataset`` yields dicts with the model input under
    ``"input"`` (the training datasets), read in batches of ``batch_size``; ``operator`` is put
    in eval mode. ``forward``: the bf16 forward pass to measure instead of :class:`AmpForward`'s
    (e.g. another choice of float32 parts). Returns NaN for an empty dataset.
    """
    operator.eval()
    rounded = forward or AmpForward(operator, amp="bf16", device_type=device.type)
    total, count = 0.0, 0
    for batch in eval_loader(dataset, batch_size):
        x = batch["input"].to(device)
        ref = operator(x).double().flatten(1)
        diff = rounded(x).double().flatten(1) - ref
        total += float((diff.norm(dim=1) / ref.norm(dim=1)).sum())
        count += x.shape[0]
    return total / count if count else float("nan")


#: :func:`bf16_warnings` speaks when bf16 moves the output by more than this share of the error.
BF16_DEVIATION_SHARE = 0.2


def bf16_warnings(deviation: float | None, test_rel_l2: float, *,
                  log_as: str | None = None) -> list[str]:
    """One line when bf16 rounding is not small against a bf16 run's test error: the output
    deviation of :func:`bf16_deviation` above :data:`BF16_DEVIATION_SHARE` times
    ``test_rel_l2``; none otherwise (also for ``deviation=None``, a float32 run). With
    ``log_as`` (the run directory) the line is also logged at WARNING.

    >>> bf16_warnings(8e-5, 1.2e-3)
    []
    >>> print(bf16_warnings(1.3e-3, 1.2e-3)[0])  # doctest: +NORMALIZE_WHITESPACE
    bf16 autocast moves this model's output by 1.3e-03 (relative L2), 108 % of its test error
    (1.2e-03): at this accuracy bf16 rounding limits the model. Train it in float32 (--amp
    none) or compare with a float32 run.
    """
    if (deviation is None or not math.isfinite(deviation) or not math.isfinite(test_rel_l2)
            or deviation <= BF16_DEVIATION_SHARE * test_rel_l2):
        return []
    line = (f"bf16 autocast moves this model's output by {deviation:.1e} (relative L2), "
            f"{100 * deviation / test_rel_l2:.0f} % of its test error ({test_rel_l2:.1e}): "
            "at this accuracy bf16 rounding limits the model. Train it in float32 (--amp "
            "none) or compare with a float32 run.")
    if log_as is not None:
        _log.warning("%s: %s", log_as, line)
    return [line]
