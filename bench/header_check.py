"""Benchmark: a label table with a missing or renamed column is refused from its header, before any data is read.

On a large input (by default 50,000 studies x 5 findings x 8 models = 2 M prediction rows, 250,000 label rows)
each command runs as a real ``python -m cxreval`` process: with the ``state`` column missing, with ``source``
renamed ``reader``, and on the valid table. Reported: wall and CPU time of each refusal and of the run (the
refusal's time is Python's and the imports' start-up; no data block is read before the header check).
The header check is meant to answer in well under a second where the run takes many.

Run::

    .venv/bin/python bench/header_check.py [--studies 50000] [--n-resamples 200]

It prints a markdown section for ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

FINDINGS = ["Edema", "Effusion", "Atelectasis", "Cardiomegaly", "Pneumonia"]


def _inputs(d: Path, n_studies: int) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    models = [f"m{k}" for k in range(8)]
    studies = np.array([f"s{k}" for k in range(n_studies)])
    n = n_studies * len(FINDINGS)
    pd.DataFrame({"study_id": np.tile(np.repeat(studies, len(FINDINGS)), len(models)),
                  "model": np.repeat(models, n), "finding": np.tile(FINDINGS, n_studies * len(models)),
                  "score": rng.random(n * len(models)).round(4)}).to_csv(d / "preds.csv", index=False)
    labels = pd.DataFrame({"study_id": np.repeat(studies, len(FINDINGS)),
                           "patient_id": np.repeat([f"p{k // 2}" for k in range(n_studies)], len(FINDINGS)),
                           "finding": np.tile(FINDINGS, n_studies),
                           "source": rng.choice(["CR", "Rep1"], n),
                           "state": rng.choice(["positive", "negative", "uncertain"], n)})
    labels = pd.concat([labels.assign(source="CR"), labels.assign(source="Rep1")], ignore_index=True)
    labels.to_csv(d / "labels.csv", index=False)
    labels.drop(columns=["state"]).to_csv(d / "no_state.csv", index=False)
    labels.rename(columns={"source": "reader"}).to_csv(d / "reader.csv", index=False)
    return {"good": d / "labels.csv", "no state": d / "no_state.csv", "source renamed": d / "reader.csv"}


def _run(argv: list[str]) -> tuple[float, float, int, str]:
    """Wall and CPU seconds (user + system, of the child: what a loaded shared machine does not inflate)."""
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "cxreval", *argv], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    return wall, cpu, r.returncode, (r.stderr.strip().splitlines() or [""])[-1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--studies", type=int, default=50_000)
    ap.add_argument("--n-resamples", type=int, default=200)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        labels = _inputs(d, a.studies)
        startup = _run(["--version"])
        commands = {"classify": ["classify", "-p", str(d / "preds.csv"), "--n-resamples", str(a.n_resamples)],
                    "agree": ["agree", "--pairs", "CR:Rep1"]}
        rows = []
        for name, base in commands.items():
            for case, lab in labels.items():
                out = d / f"{name}-{case.replace(' ', '-')}"
                t, cpu, rc, last = _run([*base, "-l", str(lab), "-o", str(out)])
                rows.append((name, case, t, cpu, rc, last[:90]))
    print(f"## Header checks before data ({a.studies:,} studies; {a.studies * 40:,} prediction rows)\n")
    print(f"Python + cxreval start-up (`cxreval --version`): {startup[0]:.2f} s wall, {startup[1]:.2f} s CPU.\n")
    print("| command | labels | wall s | CPU s | exit | last line |\n|---|---|---:|---:|---:|---|")
    for name, case, t, cpu, rc, last in rows:
        print(f"| {name} | {case} | {t:.2f} | {cpu:.2f} | {rc} | {last} |")


if __name__ == "__main__":
    main()
