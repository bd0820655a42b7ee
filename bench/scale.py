"""Benchmark: ``classify`` at MIMIC-CXR size -- growth of time and memory with studies, executors, and
the ratio to a scikit-learn loop.

Usage::

    python bench/scale.py [--sizes 10000,50000,100000,228000] [--executors serial,process:2,dask:local:2]
                          [--n-resamples 1000] [--parts engine,cli] [--fmt parquet] [--data-dir DIR]
                          [--sklearn-replicates 1] [--sklearn-models 4]
    python bench/scale.py --part fuse ...       # bench/scale_fuse.py (fusion at 10^5, 10^6 items)
    python bench/scale.py --part localize ...   # bench/scale_localize.py (10^4, 10^5 maps)

Inputs: 20 models x 14 findings x 2 references (report labelers) over ``n`` studies clustered in patients like
MIMIC-CXR (3.5 studies per patient, geometric), prevalence 3-35 %, ~10 % uncertain labels excluded, 1 % missing,
scores a logistic of a noisy truth rounded to 5 decimals (ties) -- the model of ``bench/_scale_data.py``.

Two parts, each size and executor in a fresh subprocess (so that peak RSS is that run's alone):

* ``engine``: the bootstrap itself, ``evaluate_auc_prepared`` on ``PreparedInputs`` generated in memory (plan, every
  block, CIs, the table), timed with ``time.perf_counter``; for ``dask:local:N`` the cluster is started
  (and warmed with one trivial map) before the clock starts. The scikit-learn loop does the same work per
  replicate -- for every reference x finding, ``roc_auc_score`` of every model on the plan's resampled study
  indices (uncertain/missing excluded), and for every model x reference the micro average (``roc_auc_score`` of
  the pooled (finding, study) pairs) -- timed on ``--sklearn-replicates`` replicates for ``--sklearn-models``
  models and scaled linearly to every model and replicate (each does the same work). Its AUCs are checked
  against cxreval's to 1e-12 on those replicates. ``ratio`` compares wall times, ``ratio_cpu`` the CPU times of
  both (``time.process_time``; fairer on a shared, loaded machine, serial only).
* ``cli``: the whole ``cxreval classify`` command (read the files, validate, evaluate, write) on files written
  by ``bench/_scale_data.py``; wall time, and peak RSS from ``resource.getrusage(RUSAGE_CHILDREN)`` (the largest
  process of the run: with ``process:N`` or ``dask:local:N`` each worker counts separately) and the sampled sum
  over the process tree (psutil, every 0.2 s).

Growth exponents are ``log(t2 / t1) / log(n2 / n1)`` between consecutive sizes. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODELS, FINDINGS, REFS = 20, 14, 2


# ------------------------------------------------------------------------------------------- inputs
def prepared_arrays(n_studies: int, *, n_models: int = MODELS, n_findings: int = FINDINGS, seed: int = 0):
    """A ``classification.PreparedInputs`` of ``n_studies`` drawn like ``bench/_scale_data.py`` (in memory)."""
    import pandas as pd

    sys.path.insert(0, str(HERE))
    from _scale_data import patient_sizes

    from cxreval.stats import PreparedInputs

    rng = np.random.default_rng(seed)
    sizes = patient_sizes(n_studies, rng=rng)
    pat = np.repeat(np.arange(len(sizes)), sizes)
    prevalence = np.linspace(0.03, 0.35, n_findings)[rng.permutation(n_findings)]
    truth = rng.random((n_findings, n_studies)) < prevalence[:, None]
    Y = np.empty((n_findings, REFS, n_studies))
    for k in range(REFS):  # 2 positive, 1 uncertain (excluded), 0/3 negative (not mentioned -> negative)
        u = rng.random((n_findings, n_studies))
        st = np.where(
            truth,
            np.select([u < 0.78 - 0.05 * k, u < 0.90], [1.0, np.nan], 0.0),
            np.select(
                [u < 0.30 + 0.05 * k, u < 0.33 + 0.05 * k, u < 0.35 + 0.05 * k], [0.0, np.nan, 1.0], 0.0
            ),
        )
        st[rng.random(st.shape) < 0.01] = np.nan
        Y[:, k] = st
    S = np.empty((n_models, n_findings, n_studies))
    for m in range(n_models):
        z = (0.6 + 1.6 * rng.random()) * truth + rng.standard_normal(truth.shape)
        S[m] = np.round(1.0 / (1.0 + np.exp(-(z - 1.0))), 5)
    models = [f"model_{m:02d}" for m in range(n_models)]
    studies = np.char.add("s", (50_000_000 + np.arange(n_studies)).astype(str)).astype(object)
    patient_of = pd.Series(np.char.add("p", (10_000_000 + pat).astype(str)).astype(object))
    return PreparedInputs(
        models,
        [f"F{j}" for j in range(n_findings)],
        ["chexpert", "negbio"],
        {m: "default" for m in models},
        pd.DataFrame(columns=["study_id", "reason"]),
        studies,
        S,
        Y,
        patient_of,
        "exclude",
        "negative",
    )


def sklearn_loop(prep, plan, n_rep: int, n_models: int) -> tuple[float, float, np.ndarray, np.ndarray]:
    """roc_auc_score over ``n_rep`` replicates of ``plan`` for the first ``n_models`` models: per finding and
    reference, and the micro average. Returns (wall s, CPU s, per-finding AUCs (m, f, r, b), micro AUCs (m, r,
    b))."""
    from sklearn.metrics import roc_auc_score

    S, Y = prep.S, prep.Y
    n_f, n_r, n = Y.shape
    per = np.full((n_models, n_f, n_r, n_rep), np.nan)
    mic = np.full((n_models, n_r, n_rep), np.nan)
    t0, c0 = time.perf_counter(), time.process_time()
    for b in range(n_rep):
        idx = plan.study_indices(b)
        for k in range(n_r):
            ys, iis = [], []
            for j in range(n_f):
                y = Y[j, k][idx]
                ok = np.isfinite(y)
                ys.append(y[ok])
                iis.append(idx[ok])
                for i in range(n_models):
                    per[i, j, k, b] = roc_auc_score(ys[-1], S[i, j][iis[-1]])
            yy = np.concatenate(ys)
            for i in range(n_models):
                mic[i, k, b] = roc_auc_score(yy, np.concatenate([S[i, j][iis[j]] for j in range(n_f)]))
    return time.perf_counter() - t0, time.process_time() - c0, per, mic


# ---------------------------------------------------------------------------------- engine (child)
def engine_child(n: int, executor: str, n_resamples: int, sk_rep: int, sk_models: int) -> dict:
    from cxreval.classification import evaluate_auc_prepared
    from cxreval.executor import open_executor

    prep = prepared_arrays(n)
    with open_executor(executor) as ex:
        if executor.startswith("dask"):
            ex.map(abs, [-1, 1])  # start the cluster before the clock
        t0 = time.perf_counter()
        c0 = time.process_time()
        res = evaluate_auc_prepared(prep, n_resamples=n_resamples, rng=0, executor=ex)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    row = {
        "studies": n,
        "patients": res.plan.n_patients,
        "executor": executor,
        "engine_s": wall,
        "engine_cpu_s": cpu,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "load": os.getloadavg()[0],
    }
    if sk_rep:
        t_loop, c_loop, per, mic = sklearn_loop(prep, res.plan, sk_rep, sk_models)
        mine = res.distribution[:sk_models, :FINDINGS, :, :sk_rep]
        mine_micro = res.distribution[:sk_models, res.findings.index("micro"), :, :sk_rep]
        diff = max(float(np.nanmax(np.abs(mine - per))), float(np.nanmax(np.abs(mine_micro - mic))))
        if not diff < 1e-12:
            raise SystemExit(f"cxreval and the scikit-learn loop disagree at {n} studies: {diff}")
        scale = (MODELS / sk_models) * (n_resamples / sk_rep)
        row.update(
            sklearn_timed_s=t_loop,
            sklearn_full_s=t_loop * scale,
            ratio=t_loop * scale / wall,
            sklearn_full_cpu_s=c_loop * scale,
            ratio_cpu=c_loop * scale / cpu,
            max_abs_diff=diff,
        )
    return row


# ------------------------------------------------------------------------------------- cli (parent)
def _tree_rss(pid: int) -> int:
    try:
        import psutil
    except ImportError:
        return 0
    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for q in procs:
        try:
            total += q.memory_info().rss
        except psutil.Error:
            pass
    return total


def run_measured(cmd: list[str]) -> tuple[float, float, float, str]:
    """Run ``cmd`` in a fresh process: wall s, peak RSS GiB of its largest process, sampled tree RSS GiB, output."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak_tree = 0
    while proc.poll() is None:
        peak_tree = max(peak_tree, _tree_rss(proc.pid))
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    out = proc.stdout.read() if proc.stdout else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out[-3000:]}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    return wall, rss, peak_tree / 2**30, out


def cli_rows(n: int, executors: list[str], n_resamples: int, fmt: str, data_dir: Path) -> list[dict]:
    sys.path.insert(0, str(HERE))
    from _scale_data import write_scale_inputs

    folder = data_dir / f"scale-{n}-{fmt}"
    if not (folder / f"labels.{fmt}").exists():
        write_scale_inputs(folder, n, fmt=fmt)
    rows = []
    for ex in executors:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [
                sys.executable,
                "-m",
                "cxreval",
                "classify",
                "-p",
                str(folder / f"predictions.{fmt}"),
                "-l",
                str(folder / f"labels.{fmt}"),
                "--blank-state",
                "missing",
                "--n-resamples",
                str(n_resamples),
                "--seed",
                "0",
                "--executor",
                ex,
                "-o",
                str(Path(tmp) / "out"),
            ]
            # each run in its own measuring process, so that RUSAGE_CHILDREN is that run's alone
            code = (
                f"import json,sys; sys.path.insert(0, {str(HERE)!r}); from scale import run_measured; "
                f"w, r, t, _ = run_measured({cmd!r}); print(json.dumps([w, r, t]))"
            )
            res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            if res.returncode != 0:
                raise SystemExit(res.stdout + res.stderr)
            wall, rss, tree = json.loads(res.stdout.strip().splitlines()[-1])
        rows.append(
            {
                "studies": n,
                "executor": ex,
                "classify_wall_s": wall,
                "peak_rss_gib": rss,
                "tree_rss_gib": tree,
                "load": os.getloadavg()[0],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


# ------------------------------------------------------------------------------------------- report
def exponents(rows: list[dict], key: str) -> list[str]:
    out = []
    pts = sorted((r["studies"], r[key]) for r in rows if r.get(key))
    for (n1, t1), (n2, t2) in zip(pts, pts[1:]):
        out.append(f"{n1:,} -> {n2:,}: {np.log(t2 / t1) / np.log(n2 / n1):.2f}")
    if len(pts) > 2:
        (n1, t1), (n2, t2) = pts[1], pts[-1]
        out.append(f"{n1:,} -> {n2:,}: {np.log(t2 / t1) / np.log(n2 / n1):.2f}")
    return out


def table(rows: list[dict], cols: list[str]) -> str:
    def fmt(v: object) -> str:
        return f"{v:,.2f}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else str(v)

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", default="classify", choices=["classify", "fuse", "localize"])
    ap.add_argument("--sizes", default="10000,50000,100000,228000")
    ap.add_argument("--executors", default="serial,process:2,dask:local:2")
    ap.add_argument(
        "--parts", default="engine,cli", help="engine (bootstrap + sklearn ratio), cli (whole command)"
    )
    ap.add_argument("--n-resamples", type=int, default=1000)
    ap.add_argument(
        "--sklearn-replicates",
        type=int,
        default=1,
        help="replicates the sklearn loop is timed on (0: no loop)",
    )
    ap.add_argument("--sklearn-models", type=int, default=4, help="models the sklearn loop is timed on")
    ap.add_argument("--fmt", default="parquet", choices=["parquet", "csv"])
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="where the cli part's input files are written (kept for reuse; default a temporary folder)",
    )
    ap.add_argument("--engine-child", nargs=2, metavar=("N", "EXECUTOR"), help=argparse.SUPPRESS)
    a, rest = ap.parse_known_args(argv)
    if a.part != "classify":  # the other helpers' benchmarks, by their main(argv)
        import importlib

        sys.path.insert(0, str(HERE))
        importlib.import_module(f"scale_{a.part}").main(rest)
        return
    if rest:
        ap.error(f"unrecognised arguments: {' '.join(rest)}")
    if a.engine_child:
        n, ex = int(a.engine_child[0]), a.engine_child[1]
        sk = a.sklearn_replicates if ex == "serial" else 0
        print(json.dumps(engine_child(n, ex, a.n_resamples, sk, a.sklearn_models)))
        return
    sizes = [int(s) for s in a.sizes.split(",")]
    executors = [e.strip() for e in a.executors.split(",") if e.strip()]
    parts = {p.strip() for p in a.parts.split(",")}
    eng, cli = [], []
    for n in sizes:
        if "engine" in parts:
            for ex in executors:
                res = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--engine-child",
                        str(n),
                        ex,
                        "--n-resamples",
                        str(a.n_resamples),
                        "--sklearn-replicates",
                        str(a.sklearn_replicates),
                        "--sklearn-models",
                        str(a.sklearn_models),
                    ],
                    capture_output=True,
                    text=True,
                )
                if res.returncode != 0:
                    raise SystemExit(res.stdout + res.stderr)
                eng.append(json.loads(res.stdout.strip().splitlines()[-1]))
                print(json.dumps(eng[-1]), flush=True)
        if "cli" in parts:
            if a.data_dir is None:
                with tempfile.TemporaryDirectory() as tmp:
                    cli += cli_rows(n, executors, a.n_resamples, a.fmt, Path(tmp))
            else:
                cli += cli_rows(n, executors, a.n_resamples, a.fmt, a.data_dir)
    import scipy
    import sklearn

    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}, numpy "
        f"{np.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}; "
        f"{MODELS} models x {FINDINGS} findings x {REFS} references, {a.n_resamples} replicates\n"
    )
    if eng:
        serial = {r["studies"]: r["engine_s"] for r in eng if r["executor"] == "serial"}
        for r in eng:
            if r["studies"] in serial and r["executor"] != "serial":
                r["vs_serial"] = serial[r["studies"]] / r["engine_s"]
        print("### Bootstrap engine (`evaluate_auc_prepared` on prepared arrays)\n")
        print(
            table(
                eng,
                [
                    "studies",
                    "patients",
                    "executor",
                    "engine_s",
                    "engine_cpu_s",
                    "peak_rss_gib",
                    "vs_serial",
                    "sklearn_full_s",
                    "ratio",
                    "sklearn_full_cpu_s",
                    "ratio_cpu",
                    "load",
                ],
            )
        )
        print(
            "\nGrowth exponents (serial engine time): "
            + "; ".join(exponents([r for r in eng if r["executor"] == "serial"], "engine_s"))
            + "\n"
        )
    if cli:
        print("### Whole `cxreval classify` run\n")
        print(table(cli, ["studies", "executor", "classify_wall_s", "peak_rss_gib", "tree_rss_gib", "load"]))
        for ex in executors:
            ex_rows = [r for r in cli if r["executor"] == ex]
            if len(ex_rows) > 1:
                print(f"\nGrowth exponents ({ex} wall): " + "; ".join(exponents(ex_rows, "classify_wall_s")))


if __name__ == "__main__":
    main()
