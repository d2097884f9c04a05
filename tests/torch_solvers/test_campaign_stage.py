"""The GPU campaign's ``solvers`` stage rehearsed on the CPU: one command, the device's limits on
its outputs, a row per measurement and the summary the goals are read from."""

from __future__ import annotations

from tests.gpu.test_campaign_rehearsal import campaign, outputs


def test_solvers_stage_rehearsal(tmp_path):
    out = tmp_path / "solvers"
    campaign("solvers", "--out", str(out), "--rehearse", "--work", str(tmp_path / "work"),
             "--budget-s", "500")
    result = outputs(out, "solvers")
    assert result["device"] == "cpu"
    assert result["finished"] is True
    numpy_rows = [r for r in result["rows"] if r["solver"] == "numpy"]
    twin_rows = [r for r in result["rows"] if r["solver"] == "torch"]
    assert {(r["problem"], r["n"]) for r in numpy_rows} == {("burgers", 64), ("darcy", 17)}
    assert [r["batch"] for r in twin_rows] == [1, 4, 1, 4]
    assert all(r["status"] == "ok" and r["samples_per_s"] > 0 for r in twin_rows)
    by_problem = {s["problem"]: s for s in result["summary"]}
    assert by_problem["burgers"]["max_rel_diff"] <= 1e-10  # the twin's agreement
    assert by_problem["darcy"]["max_rel_diff"] <= 1e-6  # both solves to tol 1e-10, cond < 1e3
    md = (out / "solvers.md").read_text()
    assert "| burgers | 64 |" in md
    assert "Goal:" in md
