"""The command line: start-up time, what importing each package costs, refusing a bad table from its header
before reading data, and the cost of atomic output folders (temporary sibling folder, lock, run.json, rename) on
the demo.
"""

from __future__ import annotations

import json
import pkgutil
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from suites._common import Context, Figures, Part

TITLE = "CLI: start-up, import weight, header checks, atomic outputs"

__all__ = ["PARTS", "TITLE"]

FINDINGS = ["Edema", "Effusion", "Atelectasis", "Cardiomegaly", "Pneumonia"]


def _run(argv: list[str]) -> tuple[float, float, int, str]:
    """Wall and CPU seconds (user + system of the child, which a loaded machine does not inflate), exit, last line."""
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    return wall, cpu, r.returncode, (r.stderr.strip().splitlines() or [""])[-1]


def startup(ctx: Context) -> Figures:
    runs = ctx.size(2, 20)
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "cxreval --version": [sys.executable, "-m", "cxreval", "--version"],
        "cxreval --help (imports every command)": [sys.executable, "-m", "cxreval", "--help"],
    }
    fig = Figures()
    t = fig.table(
        f"`python -m cxreval`, {runs} runs each", ["command", "wall min s", "wall median s", "CPU median s"]
    )
    for name, cmd in cases.items():
        res = [_run(cmd) for _ in range(runs)]
        wall, cpu = [r[0] for r in res], [r[1] for r in res]
        t.add(name, round(min(wall), 3), round(statistics.median(wall), 3), round(statistics.median(cpu), 3))
        fig.checked[f"{name} | exit"] = str(max(r[2] for r in res))
    return fig


HEAVY = (
    "scipy.stats",
    "scipy.ndimage",
    "scipy.sparse",
    "scipy.optimize",
    "scipy.special",
    "scipy.fft",
    "skimage",
    "sklearn",
    "plotly",
    "torch",
    "matplotlib",
    "dask",
)
COMMANDS = (
    "classify",
    "rank",
    "agree",
    "fuse",
    "localize",
    "synth",
    "iqa",
    "label-reports",
    "predict",
    "finetune",
    "report",
    "demo",
    "data",
    "reader",
)
_IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")


def _import_cost(name: str) -> tuple[float, float, list[str]]:
    """Total import time (s, the top-level entries of ``-X importtime``) of ``import name`` in a fresh interpreter,
    the interpreter's CPU seconds, and the heavy dependencies the import loaded."""
    code = f"import sys, json, {name}; print(json.dumps([h for h in {HEAVY!r} if h in sys.modules]))"
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], check=True, capture_output=True, text=True
    )
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = sum(int(m.group(1)) for m in map(_IMPORT_LINE.match, r.stderr.splitlines()) if m)
    return total / 1e6, (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime), json.loads(r.stdout)


def import_weight(ctx: Context) -> Figures:
    import cxreval

    runs = ctx.size(1, 5)
    names = sorted(m.name for m in pkgutil.iter_modules(cxreval.__path__) if m.name != "__main__")
    fig = Figures()
    t = fig.table(
        f"`import X` in a fresh interpreter, median of {runs}",
        ["import", "import time s", "CPU s", "heavy dependencies loaded"],
    )
    for name in ["numpy", "pandas"] + [f"cxreval.{n}" for n in names]:
        res = [_import_cost(name) for _ in range(runs)]
        heavy = ", ".join(res[0][2]) or "-"
        t.add(
            name,
            round(statistics.median(r[0] for r in res), 3),
            round(statistics.median(r[1] for r in res), 3),
            heavy,
        )
        if name.startswith("cxreval."):
            fig.checked[f"{name} | heavy dependencies"] = heavy
    c = fig.table(
        f"`cxreval CMD --help` (what a command loads before parsing its options), median of {runs}",
        ["command", "wall median s", "CPU median s"],
    )
    cli = [sys.executable, "-m", "cxreval"]
    with tempfile.TemporaryDirectory() as d:
        cases = {"python -c pass": [sys.executable, "-c", "pass"], "cxreval --help": [*cli, "--help"]}
        cases.update({f"cxreval {cmd} --help": [*cli, cmd, "--help"] for cmd in COMMANDS})
        cases["cxreval synth (prints the study)"] = [*cli, "synth"]
        cases["cxreval synth -o DIR (writes its tables too)"] = [
            *cli,
            "synth",
            "-o",
            str(Path(d) / "s"),
            "--overwrite",
        ]
        for name, cmd in cases.items():
            res = [_run(cmd) for _ in range(runs)]
            c.add(
                name,
                round(statistics.median(r[0] for r in res), 3),
                round(statistics.median(r[1] for r in res), 3),
            )
    return fig


def _inputs(d: Path, n_studies: int, seed: int) -> dict[str, Path]:
    rng = np.random.default_rng(seed)
    models = [f"m{k}" for k in range(8)]
    studies = np.array([f"s{k}" for k in range(n_studies)])
    n = n_studies * len(FINDINGS)
    pd.DataFrame(
        {
            "study_id": np.tile(np.repeat(studies, len(FINDINGS)), len(models)),
            "model": np.repeat(models, n),
            "finding": np.tile(FINDINGS, n_studies * len(models)),
            "score": rng.random(n * len(models)).round(4),
        }
    ).to_csv(d / "preds.csv", index=False)
    labels = pd.DataFrame(
        {
            "study_id": np.repeat(studies, len(FINDINGS)),
            "patient_id": np.repeat([f"p{k // 2}" for k in range(n_studies)], len(FINDINGS)),
            "finding": np.tile(FINDINGS, n_studies),
            "state": rng.choice(["positive", "negative", "uncertain"], n),
        }
    )
    labels = pd.concat([labels.assign(source="CR"), labels.assign(source="Rep1")], ignore_index=True)
    labels.to_csv(d / "labels.csv", index=False)
    labels.drop(columns=["state"]).to_csv(d / "no_state.csv", index=False)
    labels.rename(columns={"source": "reader"}).to_csv(d / "reader.csv", index=False)
    return {
        "valid": d / "labels.csv",
        "state column missing": d / "no_state.csv",
        "source renamed reader": d / "reader.csv",
    }


def header_check(ctx: Context) -> Figures:
    n = ctx.size(5_000, 50_000)
    labels = _inputs(ctx.tmp, n, ctx.seed)
    py = [sys.executable, "-m", "cxreval"]
    commands = {
        "classify": ["classify", "-p", str(ctx.tmp / "preds.csv"), "--n-resamples", str(ctx.size(50, 200))],
        "agree": ["agree", "--pairs", "CR:Rep1"],
    }
    fig = Figures()
    t = fig.table(
        f"{n:,} studies x 5 findings, {n * 40:,} prediction rows; each command a fresh process",
        ["command", "labels", "wall s", "CPU s", "exit", "last line"],
    )
    for name, base in commands.items():
        for case, lab in labels.items():
            wall, cpu, rc, last = _run(
                [*py, *base, "-l", str(lab), "-o", str(ctx.tmp / f"{name}-{case.replace(' ', '-')}")]
            )
            t.add(name, case, round(wall, 2), round(cpu, 2), rc, last.replace(str(ctx.tmp), "TMP")[:110])
            fig.checked[f"{name} | {case} | exit"] = str(rc)
    wall, cpu, _, _ = _run([*py, "--version"])
    t.notes.append(
        f"Python + cxreval start-up (`cxreval --version`): {wall:.2f} s wall, {cpu:.2f} s CPU; a refusal "
        "reads no data block before the header check"
    )
    return fig


def atomic_outputs(ctx: Context) -> Figures:
    from cxreval.datasets.mirror import default_mirror
    from cxreval.demo import run_demo
    from cxreval.demo.sections import SECTIONS
    from cxreval.outputs import output_folder

    sections = ctx.size(["audit"], None)
    mirror = default_mirror(None)
    if mirror is None:
        return Figures(unavailable="data unavailable: no shared data mirror")
    kw = dict(
        data_mirror=mirror, n_resamples=ctx.size(50, 200), rng=ctx.seed, download=False, sections=sections
    )

    def in_place(out: Path) -> dict:
        t0 = time.perf_counter()
        run_demo(out, **kw)
        return {"wall": time.perf_counter() - t0, "layer": 0.0}

    def atomic(out: Path) -> dict:
        t0 = time.perf_counter()
        with output_folder(out, overwrite=False, argv=["bench"]) as d:
            t1 = time.perf_counter()
            run_demo(d, **kw)
            t2 = time.perf_counter()
        t3 = time.perf_counter()
        return {
            "wall": t3 - t0,
            "layer": (t1 - t0) + (t3 - t2),
            "n_files": sum(1 for p in out.rglob("*") if p.is_file()),
        }

    runs: dict[str, list[dict]] = {"in place": [], "atomic": []}
    k = 0
    for _ in range(ctx.size(1, 2)):
        for mode in ("in place", "atomic", "atomic", "in place"):  # ABBA: drift hits both alike
            k += 1
            out = ctx.tmp / f"run{k}"
            runs[mode].append((in_place if mode == "in place" else atomic)(out))
            shutil.rmtree(out)
    fig = Figures()
    names = ", ".join(sections or [s.key for s in SECTIONS])
    t = fig.table(
        f"the demo ({names}) written in place vs through output_folder; "
        f"{runs['atomic'][0]['n_files']} files per run, ABBA order",
        ["mode", "min wall s", "median wall s", "runs in order s"],
    )
    for m, rs in runs.items():
        t.add(
            m,
            round(min(r["wall"] for r in rs), 2),
            round(statistics.median(r["wall"] for r in rs), 2),
            ", ".join(f"{r['wall']:.2f}" for r in rs),
        )
    layer = [r["layer"] / r["wall"] for r in runs["atomic"]]
    t.notes.append(
        f"output layer's own time (checks, lock, temporary folder, run.json, rename), measured inside the "
        f"atomic runs: {1000 * statistics.median(r['layer'] for r in runs['atomic']):.1f} ms median = "
        f"{100 * max(layer):.3f} % of the run at most"
    )
    fig.ratios["atomic / in place (min wall)"] = min(r["wall"] for r in runs["atomic"]) / min(
        r["wall"] for r in runs["in place"]
    )
    fig.checked["files per run"] = str(runs["atomic"][0]["n_files"])
    return fig


PARTS = (
    Part(
        "startup",
        "Wall and CPU time of `cxreval --version` and `--help` beside `python -c pass` (2 runs quick, "
        "20 full): command modules are imported only when their command runs.",
        startup,
    ),
    Part(
        "import_weight",
        "The import time, CPU time and heavy dependencies (scipy submodules, skimage, sklearn, "
        "plotly, torch, dask) of `import cxreval.X` for every package, and `cxreval CMD --help` for every command "
        "(1 run quick, 5 full).",
        import_weight,
    ),
    Part(
        "header_check",
        "`classify` and `agree` on a valid label table, one without its state column and one "
        "with source renamed: the refusals answer from the header (5,000 studies quick, 50,000 full).",
        header_check,
    ),
    Part(
        "atomic_outputs",
        "The demo (its audit section quick, every section full) written in place vs through "
        "the atomic output folder: the output layer's share of the run.",
        atomic_outputs,
    ),
)
