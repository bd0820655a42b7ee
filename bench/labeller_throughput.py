"""Report labeller throughput and peak memory on one core, beside the medspacy/negspacy ConText peer.

The corpus: ``--n-reports`` reports (default 40,000) made by cycling the whole OpenI reports (all four
sections, ``cxreval data fetch``) and the six-style hand-written reports of ``tests/reports/style_cases.yaml``
(long ICU reports, numbered upper-case impressions, ...), each with its own study id. cxreval labels all of
them with :func:`cxreval.labeller.label_reports` (``sections=("whole",)``, ChestX-ray14 rules, serial, default
chunks): time (best of ``--repeats``) and the process's peak resident memory (``ru_maxrss``, which includes
reading OpenI). The peer (medspacy's ConText pipeline, one ``nlp(text)`` per report, the same ChestX-ray8
phrases; ``bench/_medspacy_peer.py`` in its own venv, ``bench/requirements-medspacy.txt``) labels the first
``--peer-reports`` of the same texts; both rates are printed side by side.

Run (one core)::

    OMP_NUM_THREADS=1 taskset -c 0 .venv/bin/python bench/labeller_throughput.py \\
        --peer-python /work/venvs/medspacy/bin/python
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from cxreval.datasets.openi import read_openi_reports
from cxreval.findings import CHESTXRAY8
from cxreval.labeller import label_reports, load_rules

HERE = Path(__file__).resolve().parent
CASES = HERE.parent / "tests" / "reports" / "style_cases.yaml"


def corpus(n: int) -> pd.DataFrame:
    rep = read_openi_reports().table
    texts = ["\n\n".join(x for x in row if isinstance(x, str) and x)
             for row in rep[["comparison", "indication", "findings", "impression"]].itertuples(index=False)]
    texts += [c["text"] for c in yaml.safe_load(CASES.read_text(encoding="utf-8"))]
    return pd.DataFrame({"study_id": [f"r{i:06d}" for i in range(n)],
                         "text": list(itertools.islice(itertools.cycle(texts), n))})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-reports", type=int, default=40_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-python", default=None, help="Python of the medspacy venv.")
    ap.add_argument("--peer-reports", type=int, default=2_000)
    args = ap.parse_args(argv)
    table = corpus(args.n_reports)
    chars = int(table["text"].str.len().sum())
    rules = load_rules(vocabulary="chestxray14")
    best, n_mentions = float("inf"), 0
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        res = label_reports(table, sections=("whole",), rules=rules)
        best = min(best, time.perf_counter() - t0)
        n_mentions = len(res.mentions)
        del res
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ours = len(table) / best
    print(f"corpus: {len(table):,} reports, {chars / len(table):,.0f} characters per report on average; "
          f"cores allowed: {sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'}; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    print(f"cxreval label-reports (whole report, ChestX-ray14 rules, serial): {best:.2f} s (best of {args.repeats}) "
          f"= {ours:,.0f} reports/s; {n_mentions:,} mentions; peak RSS {rss_mb:,.0f} MB")
    if args.peer_python:
        phrases: dict[str, list[str]] = {}
        for r in rules.mentions:
            if r.kind == "phrase" and r.finding in CHESTXRAY8:
                phrases.setdefault(r.finding, []).append(r.text)
        texts = table["text"].tolist()[:args.peer_reports]
        with tempfile.TemporaryDirectory() as d:
            inp, out = Path(d) / "in.json", Path(d) / "out.json"
            inp.write_text(json.dumps({"texts": texts, "phrases": phrases}))
            subprocess.run([args.peer_python, str(HERE / "_medspacy_peer.py"), str(inp), str(out)], check=True,
                           env={**os.environ, "OMP_NUM_THREADS": "1"})
            peer = json.loads(out.read_text())
        rate = len(texts) / float(peer["seconds"])
        print(f"medspacy {peer['version']} ConText (per report, nlp(text), same ChestX-ray8 phrases): "
              f"{len(texts):,} reports in {peer['seconds']:.1f} s = {rate:,.1f} reports/s; "
              f"cxreval/medspacy = {ours / rate:,.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
