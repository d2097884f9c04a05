"""Reproduce the relative L2 errors of Cao 2021 (Tables 2a/2b/3), traceably, step by step.

Each step is skipped when its output exists, so separate calls add up:

1. generate the data with :func:`neuralop_fem.generate` (Burgers: 1224 samples at n = 8192 for
   the chosen viscosity; Darcy: 1224 samples at 421 x 421) from the dataset seed;
2. train the preset once per seed (1024 train / 100 validation / 100 test); an unfinished run
   resumes, and ``max_epochs_this_call`` stops each training after that many epochs;
3. evaluate the selected model on the test split (:func:`~.record.build_row`);
4. merge one row per seed into the results file and rewrite its markdown.
"""

from __future__ import annotations

import json
import logging
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solvers.problems import get_problem

from ..data.generation import config_class, generate
from ..errors import ConfigError
from ..models import PRESETS
from ..runs.train_config import training_preset
from ..training import Trainer
from .entries import named_values, spec_of
from .record import QUICK, REDUCED, build_row, merge_rows, mode_of, noise_of
from .rows import run_tag

__all__ = ["ReproduceSettings", "reproduce", "reproduce_command", "train_seed"]

_log = logging.getLogger(__name__)
#: Training seed of the reference implementation, the default of a row.
REFERENCE_SEED = 1127802


@dataclass(frozen=True, kw_only=True)
class ReproduceSettings:
    """What one reproduction call trains and where it keeps its files.

    ``viscosity``: Burgers data, ``gt`` (0.1/(2 pi), the paper's), ``fno`` (0.1) or a number;
    ``noise``, ``epochs``, ``batch_size``, ``target_normalizer``: overrides of the training
    preset (None keeps it); ``overrides``: more ``KEY=VALUE`` overrides of any model or training
    setting (JSON values); ``label``: the recipe's name in the results; ``quick``: tiny
    sizes (a smoke run of every step); ``reduced``: the CPU-sized Darcy scale
    (:data:`~.record.REDUCED`); ``data_dir``, ``runs_dir``: where datasets and run
    directories live; ``results``: the results file (JSON; the markdown beside it).
    """

    viscosity: str = "gt"
    noise: float | None = None
    epochs: int | None = None
    batch_size: int | None = None
    target_normalizer: str | None = None
    overrides: tuple[str, ...] = ()
    label: str = ""
    max_epochs_this_call: int | None = None
    quick: bool = False
    reduced: bool = False
    device: str = "auto"
    eval_device: str | None = None
    workers: int | None = None
    data_seed: int = 0
    data_dir: Path = Path("data/reproduction")
    runs_dir: Path = Path("runs/reproduction")
    results: Path = Path("benchmarks/results/reproduction.json")

    def __post_init__(self) -> None:
        problems = []
        named = named_values("viscosity")
        if self.viscosity not in named:
            try:
                ok = float(self.viscosity) > 0
            except ValueError:
                ok = False
            if not ok:
                problems.append(f"`viscosity` must be one of {sorted(named)} or a positive "
                                f"number; got {self.viscosity!r}")
        for name in ("epochs", "batch_size", "max_epochs_this_call"):
            value = getattr(self, name)
            if value is not None and value < 1:
                problems.append(f"`{name}` must be None or an integer >= 1; got {value!r}")
        if self.data_seed < 0:
            problems.append(f"`data_seed` must be an integer >= 0; got {self.data_seed!r}")
        bad = [item for item in self.overrides if "=" not in item]
        if bad:
            problems.append(f"`overrides` must be KEY=VALUE items; got {bad!r}")
        if self.quick and self.reduced:
            problems.append("`quick` and `reduced` are two scales; give one")
        if problems:
            raise ConfigError("; ".join(problems))


def data_file(settings: ReproduceSettings, task: str) -> Path:
    """The dataset of ``task`` (generated from the dataset seed unless already there).

    Its size and grid are those of its data problem's reproduction entry (the quick ones with
    ``quick``, else ``samples`` at the benchmark grid); its name is
    ``<problem>[_<tag><variant>]_n<grid>_N<samples>[_seed<S>].nc``, the variant being the
    entry's named data parameter (``burgers_nugt_n8192_N1224.nc``).
    """
    problem = get_problem(task).data_problem
    spec = spec_of(problem)
    n, samples = ((spec.quick.data_n, spec.quick.samples) if settings.quick
                  else (None, spec.samples))
    if samples is None:
        msg = (f"problem {problem!r}: its reproduction entry gives no dataset size "
               f"({'quick.' if settings.quick else ''}samples)")
        raise ConfigError(msg)
    n = n or get_problem(problem).benchmark_resolution
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    variant = spec.data_variant
    if variant is None:
        name, config = f"{problem}_n{n}_N{samples}", None
    else:
        choice = getattr(settings, variant.parameter, None)
        if choice is None:
            msg = (f"problem {problem!r}: its data variant {variant.parameter!r} is no setting "
                   "of `neuralop-fem reproduce run`")
            raise ConfigError(msg)
        name = f"{problem}_{variant.tag}{choice}_n{n}_N{samples}"
        config = config_class(problem)(**{variant.parameter: variant.value(choice)})
    seed_tag = "" if settings.data_seed == 0 else f"_seed{settings.data_seed}"
    path = settings.data_dir / f"{name}{seed_tag}.nc"
    if not path.is_file():
        _log.info("generating %s", path)
        generate(problem, n_samples=samples, resolution=n, seed=settings.data_seed, out=path,
                 config=config, workers=settings.workers)
    return path


def _parse_set(items: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def configs(settings: ReproduceSettings, preset: str, seed: int) -> tuple[Any, Any]:
    """The model and training configs of one seed of ``preset``."""
    cfg = training_preset(preset)
    spec = spec_of(cfg.task, where=f"--preset {preset}")
    model = PRESETS[preset]
    train: dict[str, Any] = {"device": settings.device, "seed": seed}
    if settings.quick:
        train.update(QUICK["split"], epochs=QUICK["epochs"], resolution=spec.quick.train_n,
                     batch_size=min(cfg.batch_size, 4))
        model = model.replace(**QUICK["model"][model.family])
    elif settings.reduced and spec.reduced:
        train.update(REDUCED)
    for key in ("epochs", "batch_size", "noise", "target_normalizer"):
        if getattr(settings, key) is not None:
            train[key] = getattr(settings, key)
    overrides = _parse_set(settings.overrides)
    fields = set(cfg.to_dict())
    train.update({k: v for k, v in overrides.items() if k in fields})
    model = model.replace(**{k: v for k, v in overrides.items() if k not in fields})
    return model, cfg.replace(**train)


def train_seed(settings: ReproduceSettings, preset: str, seed: int) -> tuple[Path, Path] | None:
    """Train (or resume) one seed; ``(run directory, dataset)`` once finished, else None."""
    model, cfg = configs(settings, preset, seed)
    data = data_file(settings, cfg.task)
    mode = mode_of(cfg.task, quick=settings.quick, reduced=settings.reduced)
    run_dir = settings.runs_dir / run_tag(preset, data.stem, mode, seed, label=settings.label,
                                          noise=noise_of(cfg.task, cfg.noise))
    try:
        with Trainer(run_dir, data, model_config=model, config=cfg, preset=preset) as trainer:
            result = trainer.fit(max_epochs_this_call=settings.max_epochs_this_call)
    except ConfigError as exc:
        if "finished run" not in str(exc):
            raise
        return run_dir, data
    if not result["finished"]:
        _log.info("%s: %d/%d epochs; run the same command again to continue", run_dir,
                  result["epochs_completed"], cfg.epochs)
        return None
    return run_dir, data


def reproduce_command(settings: ReproduceSettings, preset: str, seed: int) -> str:
    """The ``neuralop-fem reproduce run`` command that reruns one seed from scratch."""
    parts = ["neuralop-fem", "reproduce", "run", "--preset", preset, "--seed", str(seed),
             "--viscosity", settings.viscosity, "--data-seed", str(settings.data_seed)]
    for key in ("epochs", "batch_size", "noise", "target_normalizer"):
        if getattr(settings, key) is not None:
            parts += [f"--{key.replace('_', '-')}", str(getattr(settings, key))]
    for item in settings.overrides:
        parts += ["--set", item]
    parts += [f"--{flag}" for flag in ("quick", "reduced") if getattr(settings, flag)]
    if settings.label:
        parts += ["--label", settings.label]
    return shlex.join(parts)


def reproduce(settings: ReproduceSettings, presets: list[str],
              seeds: list[int]) -> Iterator[dict[str, Any]]:
    """Generate, train, evaluate and record every (preset, seed); yield each row recorded
    (a seed whose training stopped at ``max_epochs_this_call`` yields nothing yet).

    Raises
    ------
    ConfigError
        Before anything runs, for a preset whose problem has no reproduction entry (or
        whose data problem has none).
    """
    for preset in presets:
        task = training_preset(preset).task
        spec_of(task, where=f"--preset {preset}")
        spec_of(get_problem(task).data_problem, where=f"--preset {preset}")
    for preset in presets:
        for seed in seeds:
            done = train_seed(settings, preset, seed)
            if done is None:
                continue
            run_dir, data = done
            row = build_row(run_dir, data, label=settings.label, quick=settings.quick,
                            reduced=settings.reduced, eval_device=settings.eval_device,
                            reproduce=reproduce_command(settings, preset, seed))
            for note in merge_rows([row], settings.results, quick=settings.quick,
                                   data_dir=settings.data_dir):
                _log.info("%s", note)
            yield row
