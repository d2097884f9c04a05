"""``neuralop-fem train``: train a preset on a dataset into a run directory.

The preset gives the model (:data:`neuralop_fem.models.PRESETS`) and the paper's training
settings (:data:`neuralop_fem.training.TRAIN_PRESETS`); a configuration file (``--config``,
YAML or JSON, a ``run.json`` included), the options and ``--set key=value`` override them, in
that order (:mod:`._config_file`). ``--print-config`` prints the resolved configuration and
exits. Running the same command again on an unfinished RUN_DIR resumes it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

import torch

from ..environment import threads_note
from ..errors import ConfigError, TrainingDivergedError, UsageError
from ..models.presets import ModelConfig, model_preset, preset_names
from ..models.size import check_model_size
from ..number_options import float_range, int_range
from ..path_options import check_input_file, check_output_dir, input_file, output_dir
from ..training import TrainConfig, Trainer, fit_to_data, training_preset
from ..training.loggers import LOGGERS, check_backend, make_logger
from ..training.optim import schedule_note
from ._config_file import FileConfig, dump_config, format_of, read_config
from ._options import device

__all__ = ["apply_overrides", "register", "resolve", "run"]

# option dest -> TrainConfig field
_OPTIONS = {
    "resolution": "resolution", "epochs": "epochs", "batch_size": "batch_size", "lr": "lr_max",
    "device": "device", "seed": "seed", "n_train": "n_train", "n_val": "n_val",
    "n_test": "n_test", "noise": "noise", "amp": "amp", "threads": "threads",
    "checkpoint_minutes": "checkpoint_minutes", "data_on_device": "data_on_device",
}

#: TrainConfig field -> the option that sets it (named in the notes and errors of fit_to_data)
_FLAGS = {field: "--" + dest.replace("_", "-") for dest, field in _OPTIONS.items()}


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``train`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "train", help="train a surrogate from a preset on a dataset",
        description="Train a preset (model + the paper's training settings) on a dataset "
        "written by `neuralop-fem generate`. Writes RUN_DIR/run.json, last.pt, best.pt, "
        "metrics.csv and loss_curve.png; rerunning an unfinished run resumes it. Launch with "
        "`torchrun --nproc-per-node K -m neuralop_fem.cli train ...` for several processes.",
    )
    p.add_argument("--config", type=input_file, metavar="FILE",
                   help="configuration file, YAML (.yaml, .yml) or JSON (.json; a run.json "
                        "written by a run works as it is): preset, data, out, log, train_config, "
                        "model_config. Precedence, lowest first: preset, file, options, --set")
    p.add_argument("--print-config", dest="print_config", nargs="?", const="same",
                   choices=("same", "yaml", "json"), metavar="FORMAT",
                   help="print the resolved configuration (the format of --config, else YAML; "
                        "or yaml / json) and exit without training")
    p.add_argument("--data", type=input_file, metavar="FILE.nc",
                   help="dataset file (required unless the config file names it)")
    p.add_argument("--preset", metavar="NAME",
                   help="training preset, e.g. burgers-galerkin, darcy-fourier, "
                        "darcy-inverse-galerkin (required unless the config file names it)")
    p.add_argument("--out", type=output_dir, metavar="RUN_DIR",
                   help="run directory (required unless the config file names it)")
    p.add_argument("--resolution", type=int_range(2), metavar="n",
                   help="training grid (default: the preset's, 512 Burgers / 141 Darcy, or the "
                        "largest grid below it that the file reaches by striding)")
    p.add_argument("--epochs", type=int_range(1), metavar="E", help="epochs (default 100)")
    p.add_argument("--batch-size", dest="batch_size", type=int_range(1), metavar="B",
                   help="global batch size (default 8 Burgers / 4 Darcy)")
    p.add_argument("--lr", type=float_range(0), metavar="LR",
                   help="peak learning rate lr_max > 0")
    p.add_argument("--device", type=device, metavar="D",
                   help="auto (default), cpu, cuda, cuda:K")
    p.add_argument("--seed", type=int_range(0), metavar="S",
                   help="seed in [0, 2**63 - 1] (default 1127802)")
    p.add_argument("--n-train", dest="n_train", type=int_range(1), metavar="N",
                   help="training samples: the first N (default 1024; a smaller file is split "
                        "about 80/10/10 %%)")
    p.add_argument("--n-val", dest="n_val", type=int_range(1), metavar="N",
                   help="validation samples: the N before the test set (default 100)")
    p.add_argument("--n-test", dest="n_test", type=int_range(1), metavar="N",
                   help="test samples: the last N (default 100)")
    p.add_argument("--noise", type=float_range(0, inclusive=True), metavar="EPS",
                   help="inverse problem: relative input noise level (default 0.01)")
    p.add_argument("--amp", choices=("auto", "none", "bf16"),
                   help="mixed precision: auto (default: bf16 where the device has native bf16 "
                        "- a GPU of compute capability >= 8.0, a CPU with avx512_bf16 or AMX - "
                        "else float32), none (float32) or bf16; the choice is printed and "
                        "recorded in run.json")
    p.add_argument("--threads", type=int_range(1), metavar="N",
                   help="CPU threads of the training (default: torch's, all cores unless "
                        "OMP_NUM_THREADS says otherwise); recorded in run.json")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override any model or training hyper-parameter by name (value parsed "
                        "as JSON, else a string); repeatable")
    p.add_argument("--checkpoint-minutes", dest="checkpoint_minutes",
                   type=float_range(0, inclusive=True), metavar="M",
                   help="also save the run within an epoch every M minutes (RUN_DIR/partial.pt), "
                        "so a killed run resumes from there (default 10; 0: only at the end of "
                        "each epoch)")
    p.add_argument("--data-on-device", dest="data_on_device", choices=("auto", "on", "off"),
                   help="keep the training and validation splits on the training device: auto "
                        "(default: on a GPU with room for them, never on the CPU), on or off; "
                        "the same batches either way")
    p.add_argument("--max-epochs-this-call", dest="max_epochs_this_call", type=int_range(1),
                   metavar="K", help="stop after K epochs (resume later with the same command)")
    p.add_argument("--log", choices=("tensorboard", "mlflow", "wandb"),
                   help="also write an experiment log in RUN_DIR: tensorboard (RUN_DIR/"
                        "tensorboard), mlflow (SQLite RUN_DIR/mlflow.db) or wandb (offline, "
                        "RUN_DIR/wandb); each needs its package (pip extra of the same name)")
    p.add_argument("--overwrite", action="store_true", help="discard what RUN_DIR holds")
    return p


def _parse_value(text: str) -> object:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # not JSON, or nested beyond parsing: text
        return text


def apply_overrides(model_config: ModelConfig, train_config: TrainConfig,
                    items: list[str]) -> tuple[ModelConfig, TrainConfig]:
    """Apply ``KEY=VALUE`` strings to the model config or the TrainConfig, by field name.

    Raises
    ------
    ConfigError
        For a malformed item or an unknown key (the message lists the valid names).
    """
    model_fields = {f.name for f in dataclasses.fields(model_config)}
    train_fields = {f.name for f in dataclasses.fields(train_config)}
    model_changes: dict[str, object] = {}
    train_changes: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            msg = f"`--set` must be KEY=VALUE; got {item!r}."
            raise ConfigError(msg)
        if key in model_fields:
            model_changes[key] = _parse_value(value)
        elif key in train_fields:
            train_changes[key] = _parse_value(value)
        else:
            msg = (
                f"`--set` key must be a model or training hyper-parameter; got {key!r}. "
                f"Model: {', '.join(sorted(model_fields))}. "
                f"Training: {', '.join(sorted(train_fields))}."
            )
            raise ConfigError(msg)
    try:
        if model_changes:
            model_config = model_config.replace(**model_changes)
        if train_changes:
            train_config = train_config.replace(**train_changes)
    except ValueError as exc:  # ConfigError, and the models' InputError
        # `epochs` must be ... -> argument --set: key `epochs` must be ... (not the option
        # --epochs, which was not given)
        msg = re.sub(r"^`(\w+)`", r"argument --set: key `\1`", str(exc))
        raise ConfigError(msg) from None
    return model_config, train_config


def _require(value: Any, option: str, key: str) -> Any:
    if value is None:
        msg = f"argument {option} is required (or `{key}` in the --config file)."
        raise UsageError(msg)
    return value


def _from_key(check: Any, path: Path, option: str, source: str | None) -> Path:
    """``check(path, option)``; a path from the configuration file ``source`` (None: from the
    option) is named in an error as the file's key."""
    try:
        return check(path, option)
    except UsageError as exc:
        if source is None:
            raise
        what = str(exc).removeprefix(f"argument {option}: ")
        msg = f"{source}: `{option.removeprefix('--')}` {what}"
        raise ConfigError(msg) from None


def _check_preset(name: str, source: str | None) -> None:
    """Refuse an unknown preset ``name``, naming ``--preset`` or the key of the configuration
    file ``source``, the presets and the name."""
    if name in preset_names():
        return
    where = "argument --preset:" if source is None else f"{source}: `preset`"
    msg = f"{where} must be one of {', '.join(preset_names())}; got {name!r}."
    raise ConfigError(msg)


def _from_file(file: FileConfig, model_config: ModelConfig, train_config: TrainConfig,
               source: str) -> tuple[ModelConfig, TrainConfig]:
    """The preset's configs with the file's ``model_config`` / ``train_config`` applied."""
    try:
        if file.model_config:
            model_config = model_config.replace(**file.model_config)
        if file.train_config:
            train_config = train_config.replace(**file.train_config)
    except ValueError as exc:  # ConfigError, and the models' InputError
        msg = f"{source}: {exc}"
        raise ConfigError(msg) from None
    return model_config, train_config


def resolve(args: argparse.Namespace) -> tuple[dict[str, Any], list[str], str]:
    """The resolved configuration of a ``train`` command line, its notes, its file format.

    Returns
    -------
    config : dict
        ``preset``, ``data``, ``out``, ``train_config`` (fitted to the data file) and
        ``model_config`` (dicts), as a configuration file holds them.
    notes : list of str
        The one-line notes of :func:`~neuralop_fem.training.fit_to_data`.
    fmt : str
        ``"yaml"`` or ``"json"``: the format of ``--config`` (YAML without one).
    """
    file = FileConfig() if args.config is None else read_config(args.config)
    fmt = "yaml" if args.config is None else format_of(args.config)
    source = None if args.config is None else os.fspath(args.config)
    preset = _require(args.preset or file.preset, "--preset", "preset")
    _check_preset(preset, None if args.preset else source)
    data = _require(args.data or file.data, "--data", "data")
    _from_key(check_input_file, data, "--data", None if args.data else source)
    out = args.out or file.out
    train_config = training_preset(preset)
    model_config, train_config = _from_file(file, model_preset(preset), train_config,
                                            str(args.config))
    changes = {
        field: getattr(args, dest) for dest, field in _OPTIONS.items()
        if getattr(args, dest) is not None
    }
    train_config = train_config.replace(**changes)
    model_config, train_config = apply_overrides(model_config, train_config, args.overrides)
    options = {field for dest, field in _OPTIONS.items() if getattr(args, dest) is not None}
    sets = {item.partition("=")[0].strip().replace("-", "_") for item in args.overrides}
    chosen = set(file.train_config) | options | sets
    names = dict(_FLAGS)  # how a message names a chosen field: where it was chosen, in order
    names.update({key: f"key `{key}` of {source}" for key in file.train_config})
    names.update({field: _FLAGS[field] for field in options})
    names.update({key: f"--set {key}" for key in sets})
    train_config, notes = fit_to_data(train_config, data, model_config=model_config,
                                      keep=chosen, names=names, preset=preset)
    # The size limits of model files (models.size), before anything is allocated.
    model_sources = [f"preset {preset}"] + (["model_config of " + str(source)]
                                            if file.model_config else [])
    model_sources += ["--set"] if sets & {f.name for f in dataclasses.fields(model_config)} else []
    check_model_size(model_config, source=f"the model ({', '.join(model_sources)})",
                     resolution=train_config.resolution, error=ConfigError,
                     hint="Choose a smaller width or fewer layers.")
    log = args.log or file.log
    if log is not None:
        if log not in LOGGERS:
            msg = f"{args.config}: `log` must be one of {', '.join(LOGGERS)}; got {log!r}."
            raise ConfigError(msg)
    config = {
        "preset": preset, "data": os.fspath(data),
        "out": None if out is None else os.fspath(out), "log": log,
        "train_config": train_config.to_dict(), "model_config": model_config.to_dict(),
    }
    return config, notes, fmt


def run(args: argparse.Namespace) -> int:
    """Execute ``neuralop-fem train``; return the exit status."""
    config, notes, fmt = resolve(args)
    if args.print_config is not None:
        if args.print_config != "same":
            fmt = args.print_config
        sys.stdout.write(dump_config(config, fmt))
        if config["out"] is None:  # printable (a run.json's settings), but not trainable as is
            logging.getLogger(__name__).warning(
                "the printed configuration has no `out` key (the run directory): add "
                "`out: DIR` to it, or pass --out DIR, to train it.")
        return 0
    out = _from_key(check_output_dir, Path(_require(config["out"], "--out", "out")), "--out",
                    None if args.out is not None else os.fspath(args.config))

    if config["log"] is not None:  # refused before the run directory exists
        check_backend(config["log"])
    preset = config["preset"]
    model_config = model_preset(preset).replace(**config["model_config"])
    train_config = TrainConfig.from_dict(config["train_config"])
    if notes and os.environ.get("RANK", "0") == "0":  # once in a distributed run
        sys.stdout.write("".join(f"{note}\n" for note in notes))
        sys.stdout.flush()
    with Trainer(out, config["data"], model_config=model_config, config=train_config,
                 preset=preset, overwrite=args.overwrite) as trainer:
        logger = None
        if config["log"] is not None and trainer.ctx.is_main:
            hparams = {"preset": preset, **train_config.to_dict(),
                       **{f"model.{k}": v for k, v in model_config.to_dict().items()}}
            logger = make_logger(config["log"], out, hparams=hparams)
        main = trainer.ctx.is_main
        if main:
            _say(trainer.amp_choice.note)
            busy = _threads_note()
            if busy is not None and trainer.device.type == "cpu":
                _say(busy)
            if trainer.device.type != "cpu" or train_config.data_on_device != "auto":
                _say(trainer.data_path)  # where the data lives (on a CPU: asked for)
        note = schedule_note(train_config, steps_per_epoch=trainer.steps_per_epoch,
                             lr_name=_FLAGS["lr_max"])
        if main and note is not None:
            _say(note)
        if main and trainer.resumed_from is not None:
            within = trainer.within and (trainer.within["batches_done"], len(trainer.sampler))
            _say(_resuming(trainer.resumed_from, train_config.epochs, out, within=within))
        # A terminal on both streams shows the bar (stderr); otherwise one line per epoch.
        lines = main and not (sys.stdout.isatty() and sys.stderr.isatty())
        try:
            result = trainer.fit(max_epochs_this_call=args.max_epochs_this_call, logger=logger,
                                 callback=_epoch_line if lines else None)
        except TrainingDivergedError:
            if not main:  # the main process decided and reports it, once
                return 1
            raise
        finally:
            if logger is not None:
                logger.close()
        if main:
            _report(result, out)
    return 0


def _report(result: dict[str, Any], out: Path) -> None:
    lines = [f"run directory: {out}",
             f"epochs completed: {result['epochs_completed']} (finished: {result['finished']})",
             f"best epoch: {result['best_epoch']}  validation rel. L2: "
             f"{result['best_val_rel_l2']:.4e}"]
    if result["finished"]:
        lines.append(f"test rel. L2: {result['test_rel_l2_best']:.4e} (selected model), "
                     f"{result['test_rel_l2_final']:.4e} (final epoch)")
    sys.stdout.write("\n".join(lines) + "\n")


def _threads_note() -> str | None:
    """The busy-cores warning for torch's current thread count (None where unknown)."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available on this platform
        return None
    return threads_note(torch.get_num_threads(), load=load, cores=os.cpu_count() or 1)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _resuming(done: int, epochs: int, out: Path, *, within: tuple[int, int] | None) -> str:
    """The line of a resumed run; ``within``: (batches done, batches) of a partial.pt."""
    if done >= epochs:
        return (f"resuming {out}: its {epochs} epochs are done; computing the test errors "
                "(--overwrite trains it again)")
    if within:
        return (f"resuming {out} within epoch {done + 1} of {epochs} ({done} done, and batch "
                f"{within[0]} of {within[1]} of epoch {done + 1}, restored from partial.pt; "
                "--overwrite starts again)")
    return (f"resuming {out} from epoch {done + 1} of {epochs} ({done} done, restored from "
            "last.pt; --overwrite starts again)")


def _epoch_line(trainer: Any, row: Any) -> None:
    """One line per epoch on stdout (a log file, a batch job, a pipe)."""
    val = row["val_rel_l2"]
    best = " (best)" if row["epoch"] == trainer.best_epoch else ""
    _say(f"epoch {row['epoch']}/{trainer.config.epochs}: loss {row['train_loss']:.4e}, "
         f"validation rel. L2 {val:.4e}{best}, lr {row['lr']:.2e}, {row['epoch_time_s']:.1f} s")

