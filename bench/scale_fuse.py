"""Benchmark: label fusion at 10^5 and 10^6 items x 5 readers, this checkout and optionally a baseline commit.

The simulation is ``bench/fusion_mace_simulation.py``'s: binary truth (10 % positives), 5 readers answering
NEG / UNC / POS with fixed confusions, every reader on every item (3-state labels, 5 annotations per item).
For each size and each implementation, one child process (``OMP_NUM_THREADS=1``) simulates the table with
the same seed, then fits majority vote, Dawid-Skene and MACE with their defaults (``MACE(rng=0)``) on it and
reports per method the wall time of ``fit_predict``, the iterations used and whether the stopping rule was
met (Dawid-Skene; MACE runs its fixed 10 x 50), the accuracy against the simulated truth, and the child's
peak RSS (after the simulation alone, and at the end).

"baseline" runs the code of ``--baseline-ref`` (a git ref), exported with
``git archive`` into a temporary folder and put first on ``PYTHONPATH``; "checkout" runs this checkout's
``src``. One run of this script times both, so the ratio comes from one machine state::

    .venv/bin/python bench/scale_fuse.py                           # 10^5 and 10^6 items, this checkout
    .venv/bin/python bench/scale_fuse.py --sizes 100000 --impl checkout,baseline --baseline-ref REF
    .venv/bin/python bench/scale_fuse.py --cli-methods mv     # + `cxreval fuse` wall time, RSS, output size

``main(argv)`` returns the rows (also printed as a markdown table; ``--out FILE`` writes them as JSON).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE_REF = "main"  # the ref of the "baseline" runs

__all__ = ["main", "BASELINE_REF"]


def _peak_rss_gib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux: KiB


def _child(n: int, seed: int, methods: list[str]) -> list[dict[str, object]]:
    """Simulate, fit every method, return one row per method (runs in the child process)."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "bench"))
    from fusion_mace_simulation import simulate

    import cxreval
    from cxreval.fusion import MACE, DawidSkene, MajorityVote

    t0 = time.perf_counter()
    ann, truth = simulate(n, prevalence=0.1, rng=seed)
    sim_s, sim_rss = time.perf_counter() - t0, _peak_rss_gib()
    make = {"mv": MajorityVote, "ds": DawidSkene, "mace": lambda: MACE(rng=0)}
    rows = []
    for m in methods:
        est = make[m]()
        t0 = time.perf_counter()
        lab = est.fit_predict(ann)
        sec = time.perf_counter() - t0
        acc = float(np.mean(lab.reindex(truth.index).to_numpy() == truth.to_numpy()))
        digest = hashlib.sha256(lab.reindex(truth.index).to_numpy().astype(np.int8).tobytes()).hexdigest()[
            :16
        ]
        row: dict[str, object] = {"method": m, "seconds": sec, "accuracy": acc, "labels_sha256": digest}
        info = getattr(est, "fit_info_", None)
        if m == "ds":
            hist = est.log_likelihood_history_["*"]
            row.update(
                n_iter=int(info["n_iter"].iloc[0]),
                converged=bool(info["converged"].iloc[0]),
                final_change=float(hist[-1] - hist[-2]) / n if len(hist) > 1 else float("nan"),
            )
        elif m == "mace":
            row.update(
                n_iter=int(info["n_iter"].iloc[0]) if info is not None else est.n_iter,
                converged=bool(info["converged"].iloc[0]) if info is not None else False,
            )
        rows.append(row)
    peak = _peak_rss_gib()
    for r in rows:
        r.update(
            n=n,
            sim_seconds=sim_s,
            rss_after_sim_gib=sim_rss,
            peak_rss_gib=peak,
            cxreval_file=str(Path(cxreval.__file__).parent),
        )
    return rows


def _run_child(src: Path, n: int, seed: int, methods: list[str]) -> list[dict[str, object]]:
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    )
    cmd = [
        sys.executable,
        __file__,
        "--child",
        "--sizes",
        str(n),
        "--seed",
        str(seed),
        "--methods",
        ",".join(methods),
    ]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _cli_run(src: Path, n: int, seed: int, methods: str, tmp: Path, impl: str) -> dict[str, object]:
    """``cxreval fuse`` on the simulated table (Parquet, finding 'Effusion'): wall time, peak RSS, output size."""
    table = tmp / f"labels_{n}.parquet"
    if not table.exists():
        import pandas as pd

        sys.path.insert(0, str(ROOT / "bench"))
        from fusion_mace_simulation import simulate

        ann, _ = simulate(n, prevalence=0.1, rng=seed)
        pd.DataFrame(
            {
                "study_id": ann["study_id"],
                "finding": "Effusion",
                "source": ann["source"],
                "state": ann["state"].map({0: "negative", 1: "uncertain", 2: "positive"}),
            }
        ).to_parquet(table, index=False)
    out = tmp / f"out_{impl}_{n}"
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    )
    cmd = [
        sys.executable,
        "-m",
        "cxreval",
        "fuse",
        "-l",
        str(table),
        "--readers",
        "R1,R2,R3,R4,R5",
        "--methods",
        methods,
        "--seed",
        "0",
        "-o",
        str(out),
    ]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    sec = time.perf_counter() - t0
    if status != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    files = {p.name: p.stat().st_size for p in out.iterdir() if p.is_file()}
    return {
        "n": n,
        "impl": impl,
        "methods": methods,
        "seconds": sec,
        "peak_rss_gib": usage.ru_maxrss / 2**20,
        "output_mib": sum(files.values()) / 2**20,
        "fused_labels_mib": sum(v for k, v in files.items() if k.startswith("fused_labels")) / 2**20,
        "files": sorted(files),
    }


def _export(ref: str, dest: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "src"


def _markdown(rows: list[dict[str, object]]) -> str:
    head = ["n items", "impl", "method", "s", "iterations", "converged", "accuracy", "peak RSS GiB"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        it = r.get("n_iter", "")
        conv = {True: "yes", False: "no"}.get(r.get("converged"), "")  # type: ignore[arg-type]
        lines.append(
            f"| {r['n']:,} | {r['impl']} | {r['method']} | {r['seconds']:.2f} | {it} | {conv} | "
            f"{r['accuracy']:.4f} | {r['peak_rss_gib']:.2f} |"
        )
    tot: dict[tuple[int, str], float] = {}
    for r in rows:
        key = (int(r["n"]), str(r["impl"]))  # type: ignore[call-overload]
        tot[key] = tot.get(key, 0.0) + float(r["seconds"])  # type: ignore[arg-type]
    lines.append("")
    digests: dict[tuple[int, str], dict[str, object]] = {}
    for r in rows:
        digests.setdefault((int(r["n"]), str(r["method"])), {})[str(r["impl"])] = r.get("labels_sha256")  # type: ignore[call-overload]
    for (n, m), d in sorted(digests.items()):
        if len(d) == 2:
            lines.append(
                f"- {n:,} items, {m}: fused labels baseline == checkout: {d['baseline'] == d['checkout']}"
            )
    for n in sorted({k[0] for k in tot}):
        b, a = tot.get((n, "baseline")), tot.get((n, "checkout"))
        parts = [f"{impl} {tot[(n, impl)]:.2f} s" for impl in ("baseline", "checkout") if (n, impl) in tot]
        ratio = f"; speed-up {b / a:.1f}x" if a and b else ""
        lines.append(f"- {n:,} items, MV + DS + MACE: {', '.join(parts)}{ratio}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict[str, object]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000", help="comma-separated item counts")
    ap.add_argument("--seed", type=int, default=0, help="simulation seed")
    ap.add_argument("--methods", default="mv,ds,mace", help="comma-separated: mv, ds, mace")
    ap.add_argument(
        "--impl", default="checkout", help="checkout (this checkout), baseline (--baseline-ref), or both"
    )
    ap.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the 'baseline' code")
    ap.add_argument(
        "--cli-methods",
        default=None,
        help="also time `cxreval fuse --methods M` on the simulated "
        "table (as Parquet) per size and implementation: wall time, peak RSS, output size",
    )
    ap.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    sizes = [int(x) for x in a.sizes.split(",")]
    methods = [m.strip() for m in a.methods.split(",")]
    if a.child:
        rows = _child(sizes[0], a.seed, methods)
        print(json.dumps(rows))
        return rows
    impls = [x.strip() for x in a.impl.split(",")]
    rows: list[dict[str, object]] = []
    cli_rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="cxreval-scale-fuse-") as tmp:
        srcs = {"checkout": ROOT / "src"}
        if "baseline" in impls:
            srcs["baseline"] = _export(a.baseline_ref, Path(tmp))
        for n in sizes:
            for impl in impls:
                got = _run_child(srcs[impl], n, a.seed, methods)
                for r in got:
                    r["impl"] = impl
                    print(json.dumps(r), file=sys.stderr, flush=True)
                rows += got
                if a.cli_methods:
                    cli = _cli_run(srcs[impl], n, a.seed, a.cli_methods, Path(tmp), impl)
                    print(json.dumps(cli), file=sys.stderr, flush=True)
                    cli_rows.append(cli)
    print(_markdown(rows))
    if cli_rows:
        print(
            "\n| n items | impl | `cxreval fuse --methods` | s | peak RSS GiB | output MiB | fused_labels MiB |\n"
            "|---|---|---|---|---|---|---|"
        )
        for c in cli_rows:
            print(
                f"| {c['n']:,} | {c['impl']} | {c['methods']} | {c['seconds']:.1f} | {c['peak_rss_gib']:.2f} | "
                f"{c['output_mib']:.1f} | {c['fused_labels_mib']:.1f} |"
            )
        rows = rows + [dict(c, method="cli") for c in cli_rows]
    if a.out is not None:
        a.out.write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    main()
