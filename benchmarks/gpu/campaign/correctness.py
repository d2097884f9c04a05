"""Stage ``correctness``: the tests marked ``cuda`` (tests/gpu, tests/torch_solvers) on the GPU,
with a report.

pytest runs in a subprocess with the project's settings (warnings are errors) and a timeout
inside the stage's budget; its JUnit XML gives one row per test. With ``--rehearse`` the same
tests run on the CPU (``NEURALOP_FEM_CUDA_TESTS_ON_CPU=1``).
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from .machine import ROOT, CampaignError, Deadline

__all__ = ["parse_junit", "pytest_command", "run"]

log = logging.getLogger("campaign.correctness")

#: Tail of pytest's output kept in the log file (the device returns 16 MiB per file).
LOG_TAIL = 200_000


def pytest_command(args: argparse.Namespace, junit: Path, timeout_s: float) -> list[str]:
    cmd = [sys.executable, "-m", "pytest", "tests/gpu", "tests/torch_solvers", "-m", "cuda",
           "-p", "no:cacheprovider", "-q", "-rA", f"--junitxml={junit}",
           f"--timeout={max(int(timeout_s), 30)}"]
    if args.select:
        cmd += ["-k", args.select]
    return cmd


def parse_junit(path: Path) -> list[dict[str, Any]]:
    """One row per test case: name, outcome (passed/failed/error/skipped), seconds, message."""
    if not path.is_file():
        return []
    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = "failed" if tag == "failure" else tag
                message = (node.get("message") or "")[:500]
                break
        rows.append({"test": f"{case.get('classname')}::{case.get('name')}",
                     "outcome": outcome, "seconds": float(case.get("time") or 0.0),
                     "message": message})
    return rows


def run(args: argparse.Namespace, deadline: Deadline, out: Path) -> tuple[dict, list[str], int]:
    if not (ROOT / "tests" / "gpu").is_dir():
        msg = (f"the correctness stage runs the tests of a checkout; {ROOT / 'tests' / 'gpu'} "
               "does not exist")
        raise CampaignError(msg)
    junit = args.work / "junit.xml"
    junit.unlink(missing_ok=True)
    timeout = deadline.left() - 20
    cmd = pytest_command(args, junit, timeout)
    env = dict(os.environ)
    if args.rehearse:
        env["NEURALOP_FEM_CUDA_TESTS_ON_CPU"] = "1"
    log.info("running %s", shlex.join(cmd))
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=max(timeout, 30))
        code, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, text = -1, f"pytest stopped at the stage's deadline ({timeout:.0f} s)\n{exc}"
    with (out / "correctness.log").open("a") as fh:
        fh.write(text[-LOG_TAIL:])
    rows = parse_junit(junit)
    counts = {k: sum(r["outcome"] == k for r in rows)
              for k in ("passed", "failed", "error", "skipped")}
    ok = code == 0 and counts["passed"] > 0 and not counts["failed"] and not counts["error"]
    result = {"pytest_exit_code": code, "counts": counts, "tests": rows, "ok": ok,
              "pytest_command": shlex.join(cmd)}
    title = "# GPU campaign: correctness" + (" (rehearsal on the CPU)" if args.rehearse else "")
    lines = [title, "", f"{'PASSED' if ok else 'FAILED'}: {counts} (pytest exit {code})", "",
             "| test | outcome | s | message |", "|---|---|---|---|"]
    lines += [f"| {r['test']} | {r['outcome']} | {r['seconds']:.1f} | "
              f"{r['message'].splitlines()[0] if r['message'] else ''} |" for r in rows]
    return result, lines, 0 if ok else 1
