"""Training configuration (:class:`TrainConfig`) and the paper's training presets.

A training preset names a model preset of :data:`neuralop_fem.models.PRESETS` and the
training settings of Cao 2021 (docs/training.md, Presets) for it: resolution, batch size,
learning rate, H1 weight ``gamma``. Every model preset has a training preset of the same name.

Choices that differ from the reference code (documented in ``docs/training.md``):

* ``pct_start = 0.3`` (the paper and ex2/ex3; the reference HEAD uses 0.2 for Burgers).
* ``grad_clip = 1.0`` (the paper; the reference clips at 0.999 - a 0.1 % difference in the
  clipping threshold that only matters on the few steps where it is active).
* Model selection on a validation split carved from the training samples; the reference
  selected on the test set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from solvers.checks import is_int
from solvers.problems import PROBLEMS

from ..config_base import (
    FrozenConfig,
    choice,
    finite_float,
    flag,
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
)
from ..errors import ConfigError
from ..models import PRESETS
from ..models.presets import model_preset, preset_names
from ..problems import get_kit

__all__ = [
    "AMP_CHOICES",
    "AUGMENT_CHOICES",
    "DATA_ON_DEVICE_CHOICES",
    "OPTIMIZERS",
    "SCHEDULERS",
    "TASKS",
    "TRAIN_PRESETS",
    "TrainConfig",
    "recorded_float32_parts",
    "task_of_preset",
    "training_preset",
]

#: Learning problems (the names of :data:`solvers.problems.PROBLEMS`, a live view: a problem
#: registered later is a task too): which dataset class, normalisers and loss weighting are used.
TASKS: Mapping[str, Any] = PROBLEMS
#: Values of ``TrainConfig.amp``: ``"auto"`` resolves to one of the other two
#: (:func:`~neuralop_fem.training.amp.resolve_amp`).
AMP_CHOICES = ("auto", "none", "bf16")
#: Values of ``TrainConfig.data_on_device`` (:mod:`~neuralop_fem.training.loaders`).
DATA_ON_DEVICE_CHOICES = ("auto", "on", "off")
#: Optimisers and learning-rate schedules (:mod:`neuralop_fem.training.optim`).
OPTIMIZERS = ("adam", "adamw")
SCHEDULERS = ("onecycle", "cosine", "step", "plateau", "constant")
#: Fields that may differ between an interrupted run and its resumption.
RESUME_FREE_FIELDS = ("device", "num_workers", "threads", "checkpoint_minutes",
                      "data_on_device", "divergence_factor", "max_rollbacks")
#: Settings whose default changed after runs were recorded: a record without the field trained
#: with this value, not the current default (``amp`` existed as "none" before "auto").
_RECORDED_BEFORE = {"amp": "none"}


_TARGET_NORMALIZERS = ("reference", "global")
#: ``TrainConfig.augment``: the samples as stored, or moved by the problem's symmetries.
AUGMENT_CHOICES = ("none", "symmetries")


@dataclass(frozen=True, kw_only=True)
class TrainConfig(FrozenConfig):
    """Every setting of a training run (the model's settings live in its own config).

    Parameters
    ----------
    task : {"burgers", "darcy", "darcy-inverse"}
        Burgers u0 -> u(1); Darcy a -> u; inverse u (+ noise) -> a on the coarse grid.
    epochs : int
        Passes over the training split (100 in the paper).
    batch_size : int
        Global batch size (split evenly over the processes of a distributed run).
    eval_batch_size : int
        Batch size of validation / test evaluation.
    lr_max : float
        Peak learning rate of the schedule (1e-3; 5e-4 for 2D Fourier/softmax).
    optimizer : {"adam", "adamw"}
        Adam (the paper) or AdamW (decoupled weight decay).
    weight_decay : float
        Weight decay (Adam: an L2 term added to the gradient; AdamW: decoupled); 0 in the paper.
    scheduler : {"onecycle", "cosine", "step", "plateau", "constant"}
        Learning-rate schedule (:mod:`~neuralop_fem.training.optim`); ``"onecycle"`` is the
        paper's.
    pct_start : float
        ``onecycle``: fraction of the steps spent increasing the lr (0.3: peak after epoch 30).
    div_factor, final_div_factor : float
        ``onecycle`` and ``cosine``: start lr ``lr_max / div_factor``, final lr
        ``lr_max / div_factor / final_div_factor``.
    warmup_epochs : int
        ``cosine``: epochs of linear warm-up from ``lr_max / div_factor`` to ``lr_max``, fewer
        than ``epochs``.
    step_epochs : int
        ``step``: the lr is multiplied by ``lr_decay`` every ``step_epochs`` epochs.
    lr_decay : float
        ``step`` and ``plateau``: the factor in (0, 1) applied to the lr at each decrease.
    plateau_patience : int
        ``plateau``: epochs without a lower validation error before the lr decreases.
    early_stopping : int
        Stop when this many epochs have passed without a lower validation error (the run is
        then finished, with the best model selected as usual); 0 never stops early.
    grad_accumulation : int
        Batches whose gradients are summed (each loss divided by the group's size) before one
        optimizer step; the effective batch is ``grad_accumulation * batch_size``.
    grad_clip : float
        Total-norm gradient clipping threshold; 0 disables clipping.
    min_warmup_steps : int
        Fewest warm-up steps over which the learning rate may rise to ``lr_max``: a run whose
        warm-up (``pct_start * epochs * batches per epoch``) is shorter peaks at
        ``lr_max * warmup / min_warmup_steps`` (small files: a faster rise diverges;
        :func:`~neuralop_fem.training.optim.peak_lr`). 0: always ``lr_max``, as the paper.
    gamma : float
        Weight of the H1 term of :func:`~neuralop_fem.training.losses.operator_loss`
        (0.1 Burgers, 0.5 Darcy, 0 inverse).
    seed : int
        Seeds model initialisation, dropout, data order and the inverse problem's noise.
    deterministic : bool
        ``torch.use_deterministic_algorithms(True)`` during training (bitwise reproducible
        on CPU; on CUDA also sets ``CUBLAS_WORKSPACE_CONFIG`` if unset, and a kernel with no
        deterministic CUDA implementation - the backward of the bilinear interpolation in the
        Darcy models' samplers - warns instead of stopping the run).
    device : str
        ``"auto"`` (CUDA if available, else CPU), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...
    amp : {"auto", "none", "bf16"}
        ``"bf16"`` runs the model body under ``torch.autocast(bfloat16)``; normalisers,
        losses and FFTs stay in float32. ``"none"``: float32. ``"auto"``: bf16 where the
        device has native bf16 (a GPU of compute capability >= 8.0; a CPU with avx512_bf16 or
        AMX), float32 elsewhere (:func:`~neuralop_fem.training.amp.resolve_amp`); the trainer
        records the resolved choice in ``run.json`` (``train_config.amp`` and ``precision``).
    threads : int, optional
        CPU threads of torch's intra-op pool during training (``torch.set_num_threads``);
        None: torch's default (all cores, or ``OMP_NUM_THREADS``). Recorded in ``run.json``
        (``hardware.torch_threads``); may differ when a run is resumed.
    n_train, n_val, n_test : int
        Default split of a dataset of N samples: test = the last ``n_test``, validation = the
        ``n_val`` before them, train = the first ``n_train``.
    train_indices, val_indices, test_indices : tuple of int, optional
        Explicit sample positions instead (all three or none; disjoint).
    resolution : int, optional
        Training grid (Burgers n, Darcy n x n, inverse n_f); reachable from the file's grid by
        striding. None: the file's grid.
    noise : float
        Inverse problem: the noise factor epsilon in [0, 1) of the paper's convention, the input
        getting ``epsilon * (sigma(x) + 1e-5) * N(0, 1)`` (``epsilon * N(0, 1)`` on the
        normalised input; :mod:`neuralop_fem.surrogate.observations`). Not the relative level
        ``noise_level`` of the classical inversion.
    num_workers : int
        DataLoader worker processes.
    checkpoint_minutes : float
        Also save the run within an epoch (``partial.pt``) every this many minutes, so a killed
        run resumes from there, not from the epoch's start (:mod:`.within_epoch`); 0: only at
        the end of each epoch. Single-process runs; may differ when a run is resumed.
    data_on_device : {"auto", "on", "off"}
        Where the training and validation splits live: ``"auto"`` (default) stacked on a GPU
        when they take at most a quarter of its free memory, read item by item elsewhere;
        ``"on"``/``"off"``: always/never (:mod:`~neuralop_fem.training.loaders`). The batches
        are the same either way; may change between calls.
    target_normalizer : {"reference", "global"}
        ``"reference"``: as the reference code (Darcy, inverse: pointwise unit-Gaussian target
        normaliser; Burgers: none). ``"global"``: one mean and standard deviation over all
        training targets and grid points, so the network's output is O(1) whatever the target's
        scale (Burgers at viscosity 0.1, whose u(1) is about 60 times smaller than u0, trains
        stably only with it; docs/training.md). The relative losses are unchanged by it.
    augment : {"none", "symmetries"}
        ``"symmetries"``: each training sample is moved by a random element of the problem's
        symmetry group as its grid keeps it (Burgers: periodic shifts and ``u(x) -> -u(-x)``;
        Darcy, forward and inverse: the 8 rotations and reflections of the square;
        :mod:`~neuralop_fem.training.augment`), so the model sees more distinct pairs; the
        validation and test samples are not moved. ``"none"`` (default): the samples as stored.
    divergence_factor : float
        The divergence guard (:mod:`.divergence`): an epoch whose mean training loss exceeds
        this many times the lowest epoch mean before it (or is not finite) is undone and
        trained again at half the learning rate. 0 turns the guard off; else > 1. May differ
        when a run is resumed.
    max_rollbacks : int
        Epochs the guard may undo in a run before it stops the run with
        :class:`~neuralop_fem.training.divergence.TrainingDivergedError`. May differ when a
        run is resumed.
    """

    task: str = "burgers"
    epochs: int = 100
    batch_size: int = 8
    eval_batch_size: int = 4
    lr_max: float = 1e-3
    optimizer: str = "adam"
    weight_decay: float = 0.0
    scheduler: str = "onecycle"
    pct_start: float = 0.3
    div_factor: float = 1e4
    final_div_factor: float = 1e4
    warmup_epochs: int = 0
    step_epochs: int = 30
    lr_decay: float = 0.5
    plateau_patience: int = 5
    early_stopping: int = 0
    grad_accumulation: int = 1
    grad_clip: float = 1.0
    min_warmup_steps: int = 100
    gamma: float = 0.1
    seed: int = 1127802
    deterministic: bool = True
    device: str = "auto"
    amp: str = "auto"
    threads: int | None = None
    n_train: int = 1024
    n_val: int = 100
    n_test: int = 100
    train_indices: tuple[int, ...] | None = None
    val_indices: tuple[int, ...] | None = None
    test_indices: tuple[int, ...] | None = None
    resolution: int | None = None
    noise: float = 0.0
    num_workers: int = 0
    target_normalizer: str = "reference"
    augment: str = "none"
    checkpoint_minutes: float = 10.0
    data_on_device: str = "auto"
    divergence_factor: float = 10.0
    max_rollbacks: int = 3

    def __post_init__(self) -> None:
        self._set("task", choice(self.task, "task", TASKS))
        self._set("amp", choice(self.amp, "amp", AMP_CHOICES))
        self._set("data_on_device",
                  choice(self.data_on_device, "data_on_device", DATA_ON_DEVICE_CHOICES))
        if self.threads is not None:
            self._set("threads", positive_int(self.threads, "threads"))
        self._set("optimizer", choice(self.optimizer, "optimizer", OPTIMIZERS))
        self._set("scheduler", choice(self.scheduler, "scheduler", SCHEDULERS))
        for name in ("epochs", "batch_size", "eval_batch_size", "n_train", "n_val", "n_test",
                     "step_epochs", "grad_accumulation"):
            self._set(name, positive_int(getattr(self, name), name))
        for name in ("seed", "num_workers", "warmup_epochs", "plateau_patience",
                     "early_stopping", "min_warmup_steps", "max_rollbacks"):
            self._set(name, nonnegative_int(getattr(self, name), name))
        for name in ("lr_max", "div_factor", "final_div_factor"):
            self._set(name, positive_float(getattr(self, name), name))
        decay = finite_float(self.lr_decay, "lr_decay")
        if not 0 < decay < 1:
            msg = f"`lr_decay` must be a number in (0, 1); got {self.lr_decay!r}."
            raise ConfigError(msg)
        self._set("lr_decay", decay)
        for name in ("grad_clip", "gamma", "noise", "weight_decay", "checkpoint_minutes"):
            self._set(name, nonnegative_float(getattr(self, name), name))
        if self.noise >= 1:
            msg = (f"`noise` (--noise) must be a noise factor in [0, 1), a fraction (0.01 for "
                   f"the paper's 1 %); got {self.noise!r}.")
            raise ConfigError(msg)
        self._set("target_normalizer",
                  choice(self.target_normalizer, "target_normalizer", _TARGET_NORMALIZERS))
        self._set("augment", choice(self.augment, "augment", AUGMENT_CHOICES))
        factor = finite_float(self.divergence_factor, "divergence_factor")
        if factor != 0 and not factor > 1:
            msg = ("`divergence_factor` must be 0 (no divergence guard) or a number > 1; got "
                   f"{self.divergence_factor!r}.")
            raise ConfigError(msg)
        self._set("divergence_factor", factor)
        pct = finite_float(self.pct_start, "pct_start")
        if not 0 < pct < 1:
            msg = f"`pct_start` must be a number in (0, 1); got {self.pct_start!r}."
            raise ConfigError(msg)
        self._set("pct_start", pct)
        if self.scheduler == "cosine" and self.warmup_epochs >= self.epochs:
            msg = (f"`warmup_epochs` must be fewer than `epochs` with the cosine scheduler (the "
                   f"warm-up would take the whole run, which would then never decay); got "
                   f"warmup_epochs={self.warmup_epochs} and epochs={self.epochs}.")
            raise ConfigError(msg)
        self._set("deterministic", flag(self.deterministic, "deterministic"))
        if not isinstance(self.device, str) or not self.device:
            msg = f"`device` must be 'auto', 'cpu', 'cuda' or 'cuda:K'; got {self.device!r}."
            raise ConfigError(msg)
        if self.resolution is not None:
            n = positive_int(self.resolution, "resolution")
            if n < 2:
                msg = f"`resolution` must be an integer >= 2 or None; got {self.resolution!r}."
                raise ConfigError(msg)
            self._set("resolution", n)
        self._check_indices()

    def _check_indices(self) -> None:
        names = ("train_indices", "val_indices", "test_indices")
        given = [getattr(self, n) is not None for n in names]
        if any(given) and not all(given):
            msg = (
                "`train_indices`, `val_indices` and `test_indices` must be given together; "
                f"got only {', '.join(n for n, g in zip(names, given, strict=True) if g)}."
            )
            raise ConfigError(msg)
        if not all(given):
            return
        seen: dict[int, str] = {}
        for name in names:
            value = getattr(self, name)
            if not isinstance(value, list | tuple) or not value or not all(
                is_int(i) and i >= 0 for i in value
            ):
                msg = f"`{name}` must be a non-empty sequence of integers >= 0; got {value!r}."
                raise ConfigError(msg)
            self._set(name, tuple(int(i) for i in value))
            for i in value:
                if i in seen:
                    msg = (
                        f"`{name}` must not share samples with `{seen[i]}`; got index {i} in both."
                    )
                    raise ConfigError(msg)
                seen[i] = name


# The paper's settings per task (docs/training.md) are each problem kit's ``train_defaults``;
# the model kinds trained at half the peak lr, its ``half_lr_attentions``.
#: Recipes beyond the paper (docs/training.md, "The long recipe", has the measured errors):
#: the paper's architecture with other training settings. ``*-long``: more epochs at half the
#: peak lr (lr 1e-3 over 200+ epochs diverged) and H1 weight 0.5, each at the best epoch budget
#: measured so far for that model (FNO: 300 epochs were worse than 200 on both seeds).
_LONG = {"lr_max": 5e-4, "gamma": 0.5}
_NEURALOP = {"resolution": None, "batch_size": 32, "eval_batch_size": 64, "n_train": 950,
             "n_val": 49, "n_test": 1, "amp": "none"}
_RECIPES: dict[str, dict[str, Any]] = {
    "burgers-galerkin-long": {**_LONG, "epochs": 400},
    "burgers-fourier-long": {**_LONG, "epochs": 300},
    "burgers-fno-long": {**_LONG, "epochs": 200},
    # neuraloperator's small Darcy set (models/presets.py, ``*-neuralop``): the file's 16 x 16
    # grid, 950 training and 49 validation samples of their 1000 (their test files are
    # separate: one sample stays as the in-file test), batches of 32, float32 on any CPU (bf16
    # was no faster for models this small), each at the epoch count after which its
    # validation curve stopped improving (benchmarks/results/peers.md).
    "darcy-fno-neuralop": {**_NEURALOP, "lr_max": 5e-3, "epochs": 15},
    "darcy-galerkin-neuralop": {**_NEURALOP, "lr_max": 2e-3, "epochs": 40},
}


def added_defaults(recorded: dict[str, Any]) -> dict[str, Any]:
    """The :class:`TrainConfig` fields a record written before they existed lacks, at their
    defaults (the settings such a run trained with); the resume-free fields are left out."""
    defaults = {**TrainConfig().to_dict(), **_RECORDED_BEFORE}
    return {k: v for k, v in defaults.items()
            if k not in recorded and k not in RESUME_FREE_FIELDS}


def recorded_float32_parts(amp: object, precision: Mapping[str, Any] | None) -> list[str] | None:
    """What a recorded run computed in float32 under bf16 autocast: the parts its ``run.json``
    names (``precision.float32_parts``), or for a bf16 record without them (trained before the
    float32 parts) the output layer alone; None for a float32 run (``amp`` not ``"bf16"``).

    >>> recorded_float32_parts("bf16", None)
    ['output layer']
    >>> recorded_float32_parts("bf16", {"float32_parts": ["input_proj", "decoder"]})
    ['input_proj', 'decoder']
    """
    if amp != "bf16":
        return None
    return list((precision or {}).get("float32_parts") or ["output layer"])


def task_of_preset(preset: str) -> str:
    """The task of a preset name: the longest registry problem name it starts with."""
    matches = [p for p in TASKS if preset == p or preset.startswith(f"{p}-")]
    if not matches:
        msg = f"preset {preset!r} must start with a task name, one of {', '.join(TASKS)}."
        raise ConfigError(msg)
    return max(matches, key=len)


def _preset_config(preset: str) -> TrainConfig:
    task = task_of_preset(preset)
    kit = get_kit(task)
    lr = 5e-4 if preset.split("-")[-1] in kit.half_lr_attentions else 1e-3
    settings: dict[str, Any] = {"lr_max": lr, **kit.train_defaults, **_RECIPES.get(preset, {})}
    return TrainConfig(task=task, **settings)


def _all_presets() -> dict[str, TrainConfig]:
    return {name: _preset_config(name) for name in PRESETS}


#: Training preset name (= model preset name) -> the paper's TrainConfig.
TRAIN_PRESETS: dict[str, TrainConfig] = _all_presets()


def training_preset(name: str) -> TrainConfig:
    """The :class:`TrainConfig` of a training preset.

    Raises
    ------
    ConfigError
        For an unknown name; the message lists the presets.
    """
    if name in TRAIN_PRESETS:
        return TRAIN_PRESETS[name]
    if name not in preset_names():
        msg = f"Unknown preset {name!r}. Available: {', '.join(map(repr, preset_names()))}."
        raise ConfigError(msg)
    model_preset(name)  # a registered problem's preset: the kit's defaults
    return _preset_config(name)
