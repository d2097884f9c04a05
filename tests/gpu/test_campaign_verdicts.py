"""The GPU campaign's ``verdicts`` stage rehearsed on the CPU: one command, the device's limits on
its outputs, a zoo model compared on regenerated test samples with the twins' verdict."""

from __future__ import annotations

import pytest

from neuralop_fem.zoo import available

from .test_campaign_rehearsal import campaign, outputs


@pytest.mark.skipif("burgers-fno" not in available(), reason="the zoo has no burgers-fno")
def test_verdicts_stage_rehearsal(tmp_path):
    out = tmp_path / "verdicts"
    campaign("verdicts", "--out", str(out), "--rehearse", "--work", str(tmp_path / "work"),
             "--budget-s", "500")
    result = outputs(out, "verdicts")
    assert result["device"] == "cpu"
    assert result["finished"] is True
    (row,) = result["rows"]
    assert row["model"] == "burgers-fno"
    assert row["status"] == "ok"
    assert row["samples"] == 2
    # the like-for-like line (twins on the CPU in the rehearsal) and the CPU's own
    assert "torch twin on this CPU" in row["verdict_device"]
    assert "on this CPU" in row["verdict"]
    assert row["fair_device_speedup"] > 0
    md = (out / "verdicts.md").read_text()
    assert "## burgers-fno" in md
    assert row["verdict_device"] in md
