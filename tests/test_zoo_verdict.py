"""`neuralop-fem zoo verdict`: a card's fair verdict replaced by a new comparison of the model.

After a change of the timings (or of the machine), a zoo model's verdict is measured again with
``compare zoo:NAME`` and put into its card without packing the model again: the weights, run
record and test errors stay, the card's verdict is the report's.
"""

from __future__ import annotations

import json

import pytest
import xarray as xr

from neuralop_fem.cli import main
from neuralop_fem.models import PRESETS
from neuralop_fem.training import TrainConfig, Trainer
from neuralop_fem.zoo import CARD, CARD_MD, WEIGHTS
from neuralop_fem.zoo.pack import add_to_zoo

from .training.conftest import TINY_BURGERS

CFG = TrainConfig(task="burgers", epochs=1, batch_size=4, n_train=12, n_val=4, n_test=4,
                  resolution=64, threads=1, amp="none", checkpoint_minutes=0)


@pytest.fixture(scope="module")
def tiny_zoo(tmp_path_factory, burgers_file):
    """A zoo directory with two tiny packed Burgers models, 'tiny' and 'other'."""
    base = tmp_path_factory.mktemp("verdict")
    run = base / "run"
    model = PRESETS["burgers-galerkin"].replace(**TINY_BURGERS)
    with Trainer(run, burgers_file, model_config=model, config=CFG,
                 preset="burgers-galerkin") as trainer:
        trainer.fit()
    zoo = base / "zoo"
    for name in ("tiny", "other"):
        add_to_zoo(run, name=name, data=burgers_file, root=zoo)
    return zoo


def test_a_compare_report_of_a_zoo_model_becomes_its_cards_verdict(tiny_zoo, burgers_file,
                                                                    tmp_path, capsys):
    entry = tiny_zoo / "tiny"
    before = json.loads((entry / CARD).read_text())
    weights = (entry / WEIGHTS).read_bytes()
    assert before["fair_verdict"] is None
    report = tmp_path / "report"
    assert main(["compare", str(entry), "--data", str(burgers_file), "--out", str(report),
                 "--max-samples", "2"]) == 0
    capsys.readouterr()
    assert main(["zoo", "--zoo-dir", str(tiny_zoo), "verdict", "zoo:tiny", "--report",
                 str(report)]) == 0
    assert capsys.readouterr().out == f"replaced the fair verdict of tiny: {entry / CARD}\n"
    after = json.loads((entry / CARD).read_text())
    with xr.open_dataset(report / "comparison.nc") as ds:
        attrs = dict(ds.attrs)
    assert after["fair_verdict"]["verdict"] == attrs["verdict"]
    assert after["fair_verdict"]["n_samples"] == 2
    assert attrs["verdict"] in (entry / CARD_MD).read_text()
    # nothing else of the card or the entry changed
    assert {k: v for k, v in after.items() if k != "fair_verdict"} == \
        {k: v for k, v in before.items() if k != "fair_verdict"}
    assert (entry / WEIGHTS).read_bytes() == weights
    # a report of another model is refused in one line, and the card stays
    assert main(["zoo", "--zoo-dir", str(tiny_zoo), "verdict", "other", "--report",
                 str(report)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "--report must be a comparison of the run" in err
    assert json.loads((tiny_zoo / "other" / CARD).read_text())["fair_verdict"] is None
    assert main(["zoo", "--zoo-dir", str(tiny_zoo), "verdict", "nope", "--report",
                 str(report)]) == 2
    assert "unknown zoo model 'nope'" in capsys.readouterr().err
