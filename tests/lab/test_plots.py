"""benchmarks.lab.plots: the curves and series the figures draw, and the refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.lab import plots
from neuralop_fem.errors import InputError
from neuralop_fem.training import training_preset

pytest.importorskip("matplotlib")


def _csv(path, rows):
    path.write_text("epoch,train_loss,val_rel_l2,lr,epoch_time_s\n"
                    + "".join(f"{e},1.0,{v},0.001,1.0\n" for e, v in rows))
    return path


def test_a_curve_is_read_and_drawn_with_its_references(tmp_path):
    path = _csv(tmp_path / "metrics.csv", [(1, 0.5), (2, 0.1), (3, 0.05)])
    epochs, val = plots.read_curve(path)
    assert epochs.tolist() == [1, 2, 3]
    np.testing.assert_allclose(val, [0.5, 0.1, 0.05])
    fig = plots.learning_curves_figure([("a", path), ("b", path)], [("paper", 0.01)], "T")
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b", "paper"]
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [0.5, 0.1, 0.05])
    assert ax.get_yscale() == "log"


@pytest.mark.parametrize("text", ["", "epoch,loss\n1,2\n", "epoch,val_rel_l2\n1,x\n"])
def test_a_file_that_is_no_metrics_csv_is_refused(tmp_path, text):
    (tmp_path / "m.csv").write_text(text)
    with pytest.raises(InputError, match="expected a training metrics.csv"):
        plots.read_curve(tmp_path / "m.csv")


def test_the_epoch_budget_series_of_a_results_file_and_its_figure(tmp_path):
    config = training_preset("burgers-galerkin").to_dict()
    runs = {str(i): {"task": "burgers", "mode": "paper", "preset": "burgers-galerkin",
                     "model_changes": {}, "data": {"path": "/x/burgers_d.nc"},
                     "train_config": {**config, "seed": seed},
                     "errors": {"512": {"rel_l2": {"mean": err}}}}
            for i, (seed, err) in enumerate([(1, 2e-3), (2, 1e-3)])}
    results = tmp_path / "reproduction.json"
    results.write_text(json.dumps({"runs": runs}))
    groups = plots.epoch_budget_series(results, "burgers_d", "512")
    ((model, _, _), by_epochs), = groups.items()
    assert model == "galerkin"
    assert [len(points) for points in by_epochs.values()] == [2]
    fig = plots.epoch_budget_figure(groups, data_name="burgers_d", resolution="512", goal=1e-3)
    means = fig.axes[0].get_lines()[0].get_ydata()
    np.testing.assert_allclose(means, [1.5e-3])
    with pytest.raises(InputError, match="no recorded Burgers run"):
        plots.epoch_budget_series(results, "other", "512")
    results.write_text("[]")
    with pytest.raises(InputError, match="'runs' mapping"):
        plots.epoch_budget_series(results, "burgers_d", "512")


def test_the_tensorboard_panels_and_a_folder_without_a_log(tmp_path):
    steps = np.arange(1, 7)
    scalars = {"train/lr_step": (steps, 1e-3 * steps), "train/loss_step": (steps, 1.0 / steps),
               "train/loss": (np.array([1, 2]), np.array([0.6, 0.2])),
               "val/rel_l2": (np.array([1, 2]), np.array([0.5, 0.3]))}
    fig = plots.tensorboard_figure(scalars, "log")
    assert len(fig.axes) == 3
    epoch_means = fig.axes[1].get_lines()[1]
    np.testing.assert_allclose(epoch_means.get_xdata(), [3, 6])  # each epoch's last step
    pytest.importorskip("tensorboard")
    with pytest.raises(InputError, match="TensorBoard event files"):
        plots.read_scalars(tmp_path)
