"""Model cards of the zoo: what a model is, how its data and weights were made, how good it is.

A card (``card.json``, rendered to ``card.md`` by :func:`render_markdown`) holds:

* ``name``, ``problem``, ``preset``, ``model_family``, ``n_parameters``, ``weights`` (file,
  bytes, SHA-256);
* ``data``: the ``neuralop-fem generate`` command that regenerates the training file, its
  dataset seed, sample count, grid, generation settings and the SHA-256 of its field values
  (:func:`~neuralop_fem.data.provenance.variables_checksum`);
* ``train_command`` and ``code`` (the commit the model was trained with);
* ``training``: resolution, epochs, best epoch and validation error, wall time, device,
  precision and hardware;
* ``test``: the test sample indices and, per evaluated resolution, the mean and per-sample
  relative L2 and H1-seminorm errors (so a few regenerated samples check the card tightly);
* ``fair_verdict`` (optional): the sentences and figures of ``neuralop-fem compare``'s fair
  verdict (the surrogate on the solver's accuracy-cost front).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..runs import RunRecord, rerun_commands
from ..runs.train_config import recorded_float32_parts
from . import output_resolution

__all__ = ["CARD_FORMAT", "generate_command", "render_markdown", "train_command"]

CARD_FORMAT = "neuralop_fem.zoo.card/1"


def generate_command(settings: Mapping[str, Any], n_samples: int, out: str) -> str:
    """The ``neuralop-fem generate`` command that regenerates a file of ``n_samples`` samples
    with these generation ``settings`` (a dataset's recorded ``settings``; the command of the
    reproduction rows, :func:`~neuralop_fem.runs.rerun_commands.generate_command`)."""
    return str(rerun_commands.generate_command(str(settings["problem"]), n_samples,
                                               dict(settings), Path(out)))


def train_command(record: RunRecord, data: str, out: str) -> str:
    """The ``neuralop-fem train`` command with a run's settings (``record``: its run.json):
    every model and training setting that differs from its preset, as an option or ``--set``
    (the command of the reproduction rows,
    :func:`~neuralop_fem.runs.rerun_commands.train_command`)."""
    preset = str(record.preset)
    model_changes, train_changes = rerun_commands.changes(preset, record.model_config or {},
                                                          record.train_setting)
    return rerun_commands.train_command(preset, Path(data), Path(out), model_changes,
                                        train_changes)


def _e(value: object) -> str:
    return f"{value:.3e}" if isinstance(value, int | float) else "-"


def _precision(training: Mapping[str, Any]) -> str:
    """The card's precision line: float32, or bf16 autocast and what stayed in float32.

    >>> _precision({"amp": "bf16", "precision": {"float32_parts": ["input_proj", "decoder"]}})
    'bfloat16 autocast; input_proj, decoder in float32'
    >>> _precision({"amp": "bf16", "precision": {"amp": "bf16"}})
    'bfloat16 autocast; output layer in float32'
    """
    parts = recorded_float32_parts(training.get("amp"), training.get("precision"))
    return "float32" if parts is None else f"bfloat16 autocast; {', '.join(parts)} in float32"


def _lines_rollbacks(rollbacks: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """The card's row on the epochs the divergence guard undid (none: no row).

    >>> print(*_lines_rollbacks([{"epoch": 24, "train_loss": 1359.2, "lr_scale": 0.5}]))
    | divergence guard | epoch 24 undone (mean training loss 1.36e+03), then 0.5 x the lr |
    """
    if not rollbacks:
        return []
    text = "; ".join(
        f"epoch {r['epoch']} undone (mean training loss "
        f"{'not finite' if r['train_loss'] is None else format(r['train_loss'], '.3g')}), "
        f"then {r['lr_scale']:g} x the lr" for r in rollbacks)
    return [f"| divergence guard | {text} |"]


def _hardware(training: Mapping[str, Any]) -> str:
    hw = training.get("hardware") or {}
    parts = [str(hw.get("cpu_model") or "unknown CPU")]
    if hw.get("gpu"):
        parts.append(str(hw["gpu"]))
    threads = hw.get("torch_threads")
    if threads is not None:
        parts.append(f"{threads} torch thread{'s' if threads != 1 else ''}")
    return ", ".join(parts) + f" (device {training.get('device')})"


def _lines_errors(errors: Sequence[Mapping[str, Any]], train_n: int, out_n: int) -> list[str]:
    """The test-error table; a model whose output grid is coarser than its input grid (the
    inverse problem: u at 141 -> a at 36) is measured on that output grid, and says so."""
    lines = ["| resolution | relative L2 (mean) | relative H1 seminorm (mean) | samples |",
             "|---|---|---|---|"]
    trained = (" (training)" if out_n == train_n
               else f" -> {out_n} (training; errors on the output grid)")
    for e in errors:
        where = trained if e["resolution"] == train_n else f" ({e['transfer']})"
        lines.append(f"| {e['resolution']}{where} | {_e(e['rel_l2_mean'])} | "
                     f"{_e(e['rel_h1_mean'])} | {len(e['rel_l2'])} |")
    return lines


def render_markdown(card: Mapping[str, Any], *, zoo_dir: str | None = None) -> str:
    """The model card as markdown (``card.md``).

    ``zoo_dir``: the zoo directory of an entry outside the package's zoo (``zoo add
    --zoo-dir DIR``); the card's examples then name it (``Surrogate.pretrained(NAME,
    zoo_dir=DIR)``, ``neuralop-fem compare DIR/NAME``), since ``zoo:NAME`` names the
    package's models only.
    """
    t, d = card["training"], card["data"]
    name = card["name"]
    if zoo_dir is None:
        load, run_dir = f'Surrogate.pretrained("{name}")', f"zoo:{name}"
    else:
        load = f"Surrogate.pretrained({json.dumps(name)}, zoo_dir={json.dumps(zoo_dir)})"
        run_dir = shlex.quote(f"{zoo_dir}/{name}")
    mb = card["weights"]["bytes"] / 2**20
    minutes = t["wall_time_s"] / 60 if isinstance(t.get("wall_time_s"), int | float) else None
    time_text = f"{minutes:.1f} min" if minutes is not None else "unknown"
    history = card.get("code_history") or []
    if len(history) > 1:  # resumed under other code: every commit with its epochs
        ends = [entry["from_epoch"] - 1 for entry in history[1:]] + [t.get("epochs_completed")]
        commit = "; ".join(
            f"`{(entry['commit'] or 'unknown')[:12]}`"
            f"{' (with uncommitted changes)' if entry['dirty'] else ''} epochs "
            f"{entry['from_epoch']}-{end}" for entry, end in zip(history, ends, strict=True))
    else:
        code = card.get("code") or {}
        dirty = " (with uncommitted changes)" if code.get("dirty") else ""
        commit = f"`{code.get('commit') or 'unknown'}{dirty}`"
    lines = [
        f"# {card['name']}", "",
        f"{card['summary']}", "",
        "```python",
        "from neuralop_fem import Surrogate",
        f"surrogate = {load}",
        "```", "",
        "| | |", "|---|---|",
        f"| problem | {card['problem']} |",
        f"| preset | `{card['preset']}` ({card['model_family']}) |",
        f"| parameters | {card['n_parameters']:,} |",
        f"| weights | `{card['weights']['file']}`, {mb:.2f} MiB, sha256 "
        f"`{card['weights']['sha256'][:16]}...` |",
        f"| training grid | {t['resolution']} (output {t['output_resolution']}) |",
        f"| epochs | {t['epochs_completed']} of {t['epochs']}, best epoch {t['best_epoch']} "
        f"(validation rel. L2 {_e(t['best_val_rel_l2'])}) |",
        f"| precision | {_precision(t)} |",
        *_lines_rollbacks(t.get("rollbacks")),
        f"| training time | {time_text} on {_hardware(t)} |",
        f"| code commit | {commit} |",
        "", "## Test errors", "",
        f"{len(card['test']['indices'])} test samples (indices "
        f"{card['test']['indices'][0]}..{card['test']['indices'][-1]} of the dataset), the "
        "model selected on the validation split:", "",
        *_lines_errors(card["test"]["errors"], t["resolution"], output_resolution(t)),
        "", "## Data", "",
        f"{d['n_samples']} samples at {d['resolution']}, dataset seed {d['dataset_seed']}, "
        f"checksum of {', '.join(d['checksum_variables'])}: `{d['checksum']}`. Regenerate:", "",
        "```", d["generate_command"], "```", "",
        "## Training", "", "```", card["train_command"], "```",
    ]
    verdict = card.get("fair_verdict")
    lines += ["", "## Fair verdict", ""]
    if verdict:
        lines += [f"From `neuralop-fem compare` on {verdict['n_samples']} test samples against "
                  f"`{verdict['reference']}`:", ""]
        lines += [f"- {verdict[k]}" for k in ("verdict", "verdict_break_even", "verdict_batch1",
                                               "verdict_batch1_break_even", "verdict_all_cores",
                                               "verdict_all_cores_break_even",
                                               "fair_all_cores_left_out") if verdict.get(k)]
    else:
        lines.append(f"Not measured for this entry (`neuralop-fem compare {run_dir} --data "
                     "FILE.nc --out REPORT`).")
    lines += ["", f"Packed with neuralop_fem {card['packed']['neuralop_fem_version']} "
              f"(`neuralop-fem zoo add`)."]
    return "\n".join(lines) + "\n"
