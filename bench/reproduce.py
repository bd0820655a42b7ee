"""Do the figures of bench/RESULTS.md reproduce?  Reruns the bench scripts and compares (issue 13).

Every *deterministic* figure of ``bench/RESULTS.md`` that a bench script prints in reasonable time (accuracies,
agreements, correlations, counts, published-value comparisons, hashes of fused labels, "same output" claims) is
grouped by the command that prints it. This script runs each group's command as a subprocess (so it imports no
cxreval code itself), parses the figures from what the command prints or writes (markdown tables, ``key: value``
lines, JSON), and compares them with the values stored in ``bench/expected/<group>.json``:

- a figure is compared **exactly**, as printed (the printed decimals are the precision RESULTS.md claims);
- a rounding-level difference between two implementations (``max abs diff 3.3e-16``) is checked as a
  bound (``<= 1e-12``), because the claim is "equal up to floating-point rounding";
- timings, memory and speed-ups are never compared (they are noise on a shared machine; see the section
  "Figures reproduce (issue 13)" of bench/RESULTS.md for what is and is not rerun and why).

Usage::

    .venv/bin/python bench/reproduce.py                 # the default groups (~6 min, 2 busy cores)
    .venv/bin/python bench/reproduce.py --list          # groups, their commands and what they need
    .venv/bin/python bench/reproduce.py --only xqa_fidelity,iqa_defaults
    .venv/bin/python bench/reproduce.py --slow          # also the slow groups (crowd-kit, medspacy peers)
    .venv/bin/python bench/reproduce.py --update        # store the current figures as the expected ones
    .venv/bin/python bench/reproduce.py --results-md    # also compare the figures with the tables of RESULTS.md

Exit status: 0 when every figure of every group that ran reproduces (groups whose data or peer is missing
print ``skipped: <why>`` and do not fail the run), 1 with the list of differences otherwise, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GROUPS", "Group", "Outcome", "compare", "main", "markdown_tables", "new_figures", "run_group",
           "table_figures"]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS.md"
EXPECTED = ROOT / "bench" / "expected"
SHARED = ROOT.parent / "shared" / "data"  # where the bench scripts look for the shared data
CROWDKIT_PY = Path(os.environ.get("CXREVAL_CROWDKIT_PYTHON", "/work/venvs/crowdkit/bin/python"))
MEDSPACY_PY = Path(os.environ.get("CXREVAL_MEDSPACY_PYTHON", "/work/venvs/medspacy/bin/python"))
BOUND = 1e-12  # "equal up to rounding": a difference printed as 3.3e-16 may be any value up to this

Figures = dict[str, object]  # key -> printed string, or {"at_most": limit, "observed": printed}


# ---------------------------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class MarkdownTable:
    """One pipe table: the heading or bold line above it, its header cells and its rows of cells."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def _cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in line.strip().strip("|").split("|"))


def markdown_tables(text: str) -> list[MarkdownTable]:
    """Every pipe table of ``text`` with its title: the nearest heading (``#``) or bold line (``**``) above it."""
    lines = text.splitlines()
    out, title, i = [], "", 0
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith("#"):
            title = s.lstrip("#").strip()
        elif s.startswith("**") and s.count("**") >= 2 and not s.startswith("|"):
            title = s.split("**")[1].strip()
        if s.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|?\s*:?-{3,}.*", lines[i + 1].strip()):
            header = _cells(s)
            rows = []
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            out.append(MarkdownTable(title, header, tuple(rows)))
            continue
        i += 1
    return out


def _row_keys(table: MarkdownTable) -> list[str]:
    """The first cell of each row; the first two (then three) when the first ones repeat."""
    for k in (1, 2, 3):
        keys = [" / ".join(r[:k]) for r in table.rows]
        if len(set(keys)) == len(keys):
            return keys
    return [f"{' / '.join(r[:3])} #{n}" for n, r in enumerate(table.rows)]


def table_figures(table: MarkdownTable, *, drop: str | None = None, bound: str | None = None,
                  prefix: str | None = None) -> Figures:
    """The cells of a table as figures ``"<title> | <row> | <column>"``.

    Columns whose name matches the regular expression ``drop`` (timings, memory, speed-ups) are left out; cells
    of columns matching ``bound`` are rounding-level differences, checked as ``<= BOUND``.
    """
    figs: Figures = {}
    name = table.title if prefix is None else prefix
    keys = _row_keys(table)
    for key, row in zip(keys, table.rows):
        for col, cell in zip(table.header[1:], row[1:]):
            if drop and re.search(drop, col, re.I):
                continue
            k = f"{name} | {key} | {col}"
            if bound and re.search(bound, col, re.I):
                figs[k] = {"at_most": BOUND, "observed": cell}
            else:
                figs[k] = cell
    return figs


def _all_tables(text: str, *, drop: str | None = None, bound: str | None = None) -> Figures:
    figs: Figures = {}
    for t in markdown_tables(text):
        figs.update(table_figures(t, drop=drop, bound=bound))
    return figs


def _search(pattern: str, text: str, what: str) -> re.Match[str]:
    m = re.search(pattern, text)
    if m is None:
        raise ValueError(f"the output has no {what} (pattern {pattern!r})")
    return m


# ------------------------------------------------------------------------------------ one parser per group

TIMING = r"(^|\b)(s|ms|seconds|time|wall|cpu|rss|speed-?up|ratio|loop / cxreval|loop s|cxreval s|t_\w+)(\b|$)"


def parse_iqa_defaults(stdout: str, out: Path) -> Figures:
    return _all_tables(stdout)


def parse_iqa_validation(stdout: str, out: Path) -> Figures:
    text = (out / "RESULTS.md").read_text()
    i = text.index("### Validation against reference implementations")
    j = text.find("\n## ", i)
    section = text[i:j if j >= 0 else None]
    figs = _all_tables(section)
    figs["reference values recomputed"] = _search(r"(\d+) reference values", section, "row count").group(1)
    figs["within tolerance"] = _search(r"Full-reference metrics within tolerance[^\n]*?PIQE: \w+", section,
                                       "summary line").group(0)
    return figs


def parse_xqa_fidelity(stdout: str, out: Path) -> Figures:
    figs: Figures = {}
    for t in markdown_tables(stdout):
        if t.title.startswith("Kendall's tau"):
            for row in t.rows:
                if row[0] == "tau-b":
                    figs[f"{t.title} | tau-b | cxreval"] = row[1]
                    figs[f"{t.title} | tau-b | scipy"] = row[2]
                    figs[f"{t.title} | tau-b | diff"] = {"at_most": BOUND, "observed": row[3]}
                elif row[0].startswith("tau-a"):
                    figs[f"{t.title} | tau-a (seed)"] = row[1].split(",")[0].strip()
        elif t.title.startswith("Bootstrap case"):
            for row in t.rows:
                cell = row[-1]
                key = f"{t.title} | {row[0]} | max abs diff"
                figs[key] = cell if cell.startswith("mean") else {"at_most": BOUND, "observed": cell}
        else:
            figs.update(table_figures(t))
    figs["all-pairs size"] = _search(r"would hold ([\d,]+) pairs: (\d+) GB", stdout, "all-pairs line").group(0)
    return figs


def parse_labeller(stdout: str, out: Path) -> Figures:
    text = (out / "labeller.md").read_text()
    figs = _all_tables(text)
    for m in re.finditer(r"^- (dev-half micro F1.*)$", text, re.M):
        figs["dev-half whole-report F1, cxreval vs medspacy"] = m.group(1)
    return figs


def parse_mace_simulation(stdout: str, out: Path) -> Figures:
    head = _search(r"n = \d+ items x \d+ readers, prevalence [\d.]+, seed \d+", stdout, "header line").group(0)
    figs: Figures = {"simulation": head}
    figs.update(_all_tables(stdout, drop=r"^seconds$"))
    shares = _search(r"readers' answer shares.*?\n((?:.*\n)+?)\n", stdout, "answer shares").group(1)
    # the reader rows only: the axis names (reader/label, source/state) are vocabulary, not figures
    figs["readers' answer shares (NEG, UNC, POS)"] = " ; ".join(
        " ".join(ln.split()) for ln in shares.strip().splitlines() if re.match(r"\s*R\d", ln))
    return figs


def parse_scale_fuse(stdout: str, out: Path) -> Figures:
    figs: Figures = {}
    for r in json.loads((out / "scale_fuse.json").read_text()):
        k = f"n={r['n']} {r['impl']} {r['method']}"
        figs[f"{k} | accuracy"] = f"{r['accuracy']:.6f}"
        figs[f"{k} | fused labels sha256"] = r["labels_sha256"]
        for f in ("n_iter", "converged"):
            if f in r:
                figs[f"{k} | {f}"] = str(r[f])
        if r.get("final_change") is not None:
            figs[f"{k} | final change per item"] = f"{r['final_change']:.2e}"
    return figs


def parse_localization(stdout: str, out: Path) -> Figures:
    a = _search(r"heatmap -> boxes \((.*?)\):.*same boxes (\w+)", stdout, "heatmap -> boxes line")
    b = _search(r"synthetic study end to end \((per_size \d+)\):.*same output (\w+)", stdout, "synthetic study line")
    return {f"heatmap -> boxes ({a.group(1)}) | same boxes as the seed's pipeline": a.group(2),
            f"synthetic study ({b.group(1)}) | same printed output as the seed's script": b.group(2)}


def parse_iqa_owners(stdout: str, out: Path) -> Figures:
    figs = _all_tables(stdout, drop=TIMING, bound=r"max abs difference")
    m = _search(r"(\d+) cases \(([^)]*)\), largest difference ([\d.e+-]+)", stdout, "box_downsample line")
    figs["box_downsample vs block means | cases"] = f"{m.group(1)} ({m.group(2)})"
    figs["box_downsample vs block means | largest difference"] = {"at_most": BOUND, "observed": m.group(3)}
    return figs


def parse_bootstrap_auc(stdout: str, out: Path) -> Figures:
    figs: Figures = {}
    for line in stdout.splitlines():
        if line.startswith("{'benchmark'"):
            row = ast.literal_eval(line)
            b = row["benchmark"]
            for f in ("models", "findings", "references", "studies", "patients", "replicates", "auc_per_replicate",
                      "loop_replicates_timed", "same_undefined"):
                figs[f"{b} | {f}"] = str(row[f])
            figs[f"{b} | cxreval vs sklearn loop, max abs diff"] = {"at_most": BOUND,
                                                                    "observed": f"{row['max_abs_diff']:.1e}"}
    if not figs:
        raise ValueError("the output has no result rows")
    return figs


def parse_fusion(stdout: str, out: Path) -> Figures:
    text = (out / "fusion_section.md").read_text()
    figs = _all_tables(text, drop=r"\(s\)|speed-up|^t_")
    figs["items"] = _search(r"= ([\d,]+) \(image, finding\) items", text, "item count").group(1)
    for n, m in enumerate(re.finditer(r"^- (crowd-kit .*)$", text, re.M)):
        figs[f"note {n + 1}"] = m.group(1)
    return figs


def parse_labeller_peer(stdout: str, out: Path) -> Figures:
    text = (out / "labeller.md").read_text()
    figs: Figures = {}
    for t in markdown_tables(text):
        if t.title.startswith("medspacy"):
            figs.update(table_figures(t))
    figs["dev-half whole-report F1, cxreval vs medspacy"] = _search(r"dev-half micro F1 on the same[^\n]*", text,
                                                                    "F1 line").group(0)
    return figs


# -------------------------------------------------------------------------------------------------- groups


@dataclass(frozen=True)
class Group:
    """One bench command and the figures of bench/RESULTS.md it prints.

    ``command`` is an argv whose items may hold ``{python}`` (this interpreter), ``{out}`` (a fresh temporary
    folder), ``{crowdkit}`` / ``{medspacy}`` (the peers' venvs). ``needs`` are paths that must exist and
    ``modules`` modules the command's interpreter must import; otherwise the group is skipped, saying why.
    ``results_md`` groups are run on a copy of the repository's bench/RESULTS.md (the script rewrites it).
    """

    name: str
    section: str
    command: tuple[str, ...]
    parse: Callable[[str, Path], Figures]
    needs: tuple[Path, ...] = ()
    modules: tuple[str, ...] = ()
    python: str = "{python}"
    env: dict[str, str] = field(default_factory=dict)
    slow: bool = False
    results_md: bool = False
    note: str = ""


GROUPS: tuple[Group, ...] = (
    Group("iqa_defaults", "Issue 15 (items 5-10, 12) / IW-SSIM and GMSD against the original MATLAB codes",
          ("bench/iqa_issue15_defaults.py",), parse_iqa_defaults, needs=(SHARED / "images" / "nih",)),
    Group("iqa_validation", "IQA / Validation against reference implementations",
          ("bench/iqa_validation.py",), parse_iqa_validation, needs=(SHARED / "iqa_fixture", SHARED / "images"),
          env={"CXREVAL_SHARED_DATA": str(SHARED), "OMP_NUM_THREADS": "1"}, results_md=True,
          note="rewrites its subsection of RESULTS.md: run on a copy of the repository's bench/"),
    Group("xqa_fidelity", "XQA fidelity (issue 15)", ("bench/xqa_fidelity.py",), parse_xqa_fidelity),
    Group("labeller_openi", "Report labeller on OpenI",
          ("bench/labeller_openi.py", "--markdown", "{out}/labeller.md", "--repeats", "1"), parse_labeller,
          note="needs `cxreval data fetch` (OpenI reports and MeSH codes); --repeats only changes the timing"),
    Group("mace_simulation", "Issue 15 / MACE on simulated readers (item 12), n = 100,000 rows",
          ("bench/fusion_mace_simulation.py", "--n", "100000", "--no-crowdkit"), parse_mace_simulation),
    Group("mace_simulation_1m", "Issue 15 / MACE on simulated readers (item 12), n = 1,000,000 rows",
          ("bench/fusion_mace_simulation.py", "--n", "1000000", "--no-crowdkit"), parse_mace_simulation),
    Group("scale_fuse", "Scale: fusion (issue 18): accuracy, iterations and fused-label hashes of the 'after' rows",
          ("bench/scale_fuse.py", "--sizes", "100000,1000000", "--impl", "after", "--out", "{out}/scale_fuse.json"),
          parse_scale_fuse, env={"OMP_NUM_THREADS": "1"}),
    Group("localization", "Localization: same boxes / same output as the seed's reference pipeline",
          ("bench/localization.py",), parse_localization,
          env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}),
    Group("iqa_owners", "Issue 13 in cxreval.iqa (one owner per concept)", ("bench/iqa_owners.py",),
          parse_iqa_owners),
    Group("bootstrap_auc", "Bootstrap AUC: problem sizes and agreement with the sklearn loop",
          ("bench/bootstrap_auc.py", "--repeats", "1"), parse_bootstrap_auc,
          needs=(SHARED / "nih_fold_predictions",), modules=("sklearn",),
          note="--repeats only changes the timing; loop replicates as documented (50 / 10)"),
    Group("fusion_crowdkit", "Fusion (cxreval vs crowd-kit 1.4.2 on VinDr-CXR, 14 findings)",
          ("bench/fusion.py", "--out", "{out}"), parse_fusion, python="{crowdkit}", modules=("crowdkit",),
          env={"OMP_NUM_THREADS": "1"}, slow=True,
          note="crowd-kit's MACE takes ~7 min of the ~10; the peer venv: see the script's docstring"),
    Group("labeller_openi_medspacy", "Report labeller on OpenI: medspacy ConText (peer) on the development half",
          ("bench/labeller_openi.py", "--markdown", "{out}/labeller.md", "--repeats", "1", "--peer-python",
           "{medspacy}"), parse_labeller_peer, needs=(MEDSPACY_PY,), slow=True,
          note="the peer venv: bench/requirements-medspacy.txt"),
)


# ----------------------------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Outcome:
    """What one group gave: ``status`` is ``ok``, ``differ``, ``skipped``, ``failed`` or ``updated``."""

    group: str
    status: str
    seconds: float
    differences: tuple[str, ...] = ()
    reason: str = ""
    figures: int = 0


def _python() -> str:
    """This interpreter if it has cxreval (looked up, not imported), else the project's ``.venv``."""
    venv = ROOT / ".venv" / "bin" / "python"
    if importlib.util.find_spec("cxreval") is None and venv.exists():
        return str(venv)
    return sys.executable


def _fill(item: str, out: Path) -> str:
    return item.format(python=_python(), out=out, crowdkit=CROWDKIT_PY, medspacy=MEDSPACY_PY)


def command_line(group: Group) -> str:
    """The group's command as one would type it (``{out}`` stands for a temporary folder)."""
    py = {"{python}": ".venv/bin/python", "{crowdkit}": f"PYTHONPATH=src {CROWDKIT_PY}"}.get(group.python,
                                                                                            group.python)
    env = " ".join(f"{k}={v}" for k, v in group.env.items())
    args = " ".join(a.replace("{out}", "OUT").replace("{medspacy}", str(MEDSPACY_PY)) for a in group.command)
    return " ".join(x for x in (env, py, args) if x)


def skip_reason(group: Group) -> str | None:
    """Why the group cannot run here (missing data, peer venv or module), or None."""
    for p in group.needs:
        if not p.exists():
            return f"{p} is missing"
    python = _fill(group.python, Path("."))
    if not Path(python).exists():
        return f"no peer interpreter {python}"
    for mod in group.modules:
        r = subprocess.run([python, "-c", f"import {mod}"], capture_output=True)
        if r.returncode != 0:
            return f"{python} cannot import {mod}"
    return None


def _script_root(group: Group, tmp: Path) -> Path:
    """The tree the script runs from: the repository, or for ``results_md`` groups a copy of bench/ beside it."""
    if not group.results_md:
        return ROOT
    # ROOT/bench/X.py finds ROOT via its own path: copy bench/ into a sibling tree whose other top-level folders
    # are links to the repository's, so that the script rewrites the copy of RESULTS.md, never the original.
    root = tmp / "tree"
    root.mkdir()
    shutil.copytree(ROOT / "bench", root / "bench", ignore=shutil.ignore_patterns("expected", "__pycache__"))
    for p in ROOT.iterdir():
        if p.name not in ("bench", ".git") and not (root / p.name).exists():
            (root / p.name).symlink_to(p)
    return root


def run_group(group: Group, *, timeout: float = 1800) -> tuple[Figures | None, str, float]:
    """Run the group's command; return (figures, error or skip reason, seconds). Figures is None on failure."""
    why = skip_reason(group)
    if why:
        return None, f"skipped: {why}", 0.0
    with tempfile.TemporaryDirectory(prefix=f"reproduce-{group.name}-") as tmpd:
        tmp = Path(tmpd)
        out = tmp / "out"
        out.mkdir()
        root = _script_root(group, tmp)
        argv = [_fill(group.python, out)] + [_fill(a, out) for a in group.command]
        argv[1] = str(root / argv[1])
        env = dict(os.environ, **group.env)
        if group.python == "{crowdkit}":  # the peer venv runs this checkout's cxreval
            env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        t0 = time.perf_counter()
        try:
            r = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"failed: timed out after {timeout:.0f} s", time.perf_counter() - t0
        seconds = time.perf_counter() - t0
        if r.returncode != 0:
            tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-6:])
            if "data fetch" in tail:
                return None, f"skipped: metadata cache missing (run `cxreval data fetch`): {tail.splitlines()[-1]}", 0.0
            return None, f"failed: exit {r.returncode}\n{tail}", seconds
        if group.results_md:
            shutil.copy(root / "bench" / "RESULTS.md", out / "RESULTS.md")
        try:
            return group.parse(r.stdout, out), "", seconds
        except (ValueError, KeyError, OSError, json.JSONDecodeError) as e:
            return None, f"failed: cannot read the figures: {e}\n{r.stdout[-800:]}", seconds


def _as_float(s: str) -> float:
    """The number of a rounding-level cell (``3.3e-16``, ``diff 1.1e-16``); NaN when it says anything else."""
    m = re.fullmatch(r"(diff )?([-+]?\d+(\.\d+)?(e[-+]?\d+)?)", s.strip())
    return float(m.group(2)) if m else math.nan


def compare(expected: Figures, got: Figures) -> list[str]:
    """Differences between stored and current figures, one line each (empty: everything reproduces)."""
    diffs = []
    fresh = got.keys() - expected.keys()
    for key, want in expected.items():
        if key not in got:
            line = f"{key}: missing (expected {want if not isinstance(want, dict) else want['observed']})"
            # a column or row renamed (issue 13's vocabulary) shows the same value under a new key: say where
            same = [k for k in fresh if got[k] == want and k.rsplit(" | ", 1)[0] == key.rsplit(" | ", 1)[0]]
            if len(same) == 1:
                line += f"; the same value is now under {same[0]!r} (renamed? check, then --update)"
            diffs.append(line)
            continue
        have = got[key]
        if isinstance(want, dict):
            seen = have["observed"] if isinstance(have, dict) else str(have)
            value = _as_float(seen)
            if not value <= want["at_most"]:
                diffs.append(f"{key}: {seen} > {want['at_most']:g} (stored run: {want['observed']})")
        elif isinstance(have, dict) or str(have) != str(want):
            diffs.append(f"{key}: expected {want!r}, got {have['observed'] if isinstance(have, dict) else have!r}")
    return diffs


def new_figures(expected: Figures, got: Figures) -> list[str]:
    """Figures this run printed that the stored file lacks (notes, not failures: nothing changed)."""
    return [f"{k}: {got[k]!r}" for k in sorted(got.keys() - expected.keys())]


def expected_path(group: Group, folder: Path = EXPECTED) -> Path:
    return folder / f"{group.name}.json"


def load_expected(group: Group, folder: Path = EXPECTED) -> Figures:
    return json.loads(expected_path(group, folder).read_text())["figures"]


def save_expected(group: Group, figures: Figures, folder: Path = EXPECTED) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"group": group.name, "results_md_section": group.section, "command": command_line(group),
           "figures": dict(sorted(figures.items()))}
    expected_path(group, folder).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


# ------------------------------------------------------------------------------ cross-check with RESULTS.md


def results_md_check(figures: Figures, text: str) -> tuple[int, list[str]]:
    """Compare figures with the cells of RESULTS.md tables of the same title and header (where one exists).

    Returns the number of figures found in RESULTS.md and the differences. Figures of tables RESULTS.md
    prints differently (other columns, hand-edited text) are not found and not counted.
    """
    cells: dict[str, str] = {}
    by_cell: dict[str, list[str]] = {}  # "row | column" -> values, for tables printed without a title
    for t in markdown_tables(text):
        for k, v in table_figures(t).items():
            cells.setdefault(k, str(v))
            by_cell.setdefault(k.split(" | ", 1)[1], []).append(str(v))
    titles = {k.split(" | ", 1)[0] for k in cells}
    found, diffs = 0, []
    for key, want in figures.items():
        title, _, cell = key.partition(" | ")
        if key not in cells and title not in titles and len(by_cell.get(cell, [])) == 1:
            cells[key] = by_cell[cell][0]  # a table printed without (or with another) title: unique row/column
        if key in cells:
            found += 1
            seen = want["observed"] if isinstance(want, dict) else str(want)
            if isinstance(want, dict):
                if not _as_float(cells[key]) <= BOUND:
                    diffs.append(f"{key}: RESULTS.md {cells[key]!r} is not a rounding-level difference")
            elif cells[key] != seen:
                diffs.append(f"{key}: RESULTS.md {cells[key]!r}, this run {seen!r}")
    return found, diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list the groups and their commands, run nothing")
    ap.add_argument("--only", default=None, help="comma-separated group names (slow ones included if named)")
    ap.add_argument("--slow", action="store_true", help="also run the slow groups (peers in separate venvs)")
    ap.add_argument("--update", action="store_true", help="store the figures of this run as the expected ones")
    ap.add_argument("--expected", type=Path, default=EXPECTED, help="folder of the stored figures")
    ap.add_argument("--results-md", action="store_true", help="also compare with the tables of bench/RESULTS.md")
    a = ap.parse_args(argv)
    by_name = {g.name: g for g in GROUPS}
    if a.only:
        names = [n.strip() for n in a.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in by_name]
        if unknown:
            print(f"unknown group(s) {', '.join(unknown)}; known: {', '.join(by_name)}", file=sys.stderr)
            return 2
        groups = [by_name[n] for n in names]
    else:
        groups = [g for g in GROUPS if a.slow or not g.slow]
    if a.list:
        for g in GROUPS:
            print(f"{g.name}{' (slow)' if g.slow else ''}: {g.section}\n    {command_line(g)}"
                  + (f"\n    {g.note}" if g.note else ""))
        return 0
    outcomes = []
    for g in groups:
        print(f"[{g.name}] {command_line(g)}", flush=True)
        figs, why, seconds = run_group(g)
        if figs is None:
            status = "skipped" if why.startswith("skipped") else "failed"
            outcomes.append(Outcome(g.name, status, seconds, reason=why))
            print(f"  {why}", flush=True)
            continue
        if a.results_md:
            found, rdiffs = results_md_check(figs, RESULTS.read_text())
            print(f"  RESULTS.md: {found} of {len(figs)} figures found in its tables, {len(rdiffs)} differ")
            for d in rdiffs:
                print(f"    {d}")
        if a.update:
            save_expected(g, figs, a.expected)
            outcomes.append(Outcome(g.name, "updated", seconds, figures=len(figs)))
            print(f"  stored {len(figs)} figures in {expected_path(g, a.expected)} ({seconds:.0f} s)", flush=True)
            continue
        if not expected_path(g, a.expected).exists():
            outcomes.append(Outcome(g.name, "failed", seconds, reason=f"no {expected_path(g, a.expected)}"))
            print("  failed: no stored figures (run with --update)", flush=True)
            continue
        stored = load_expected(g, a.expected)
        diffs = compare(stored, figs)
        notes = new_figures(stored, figs)
        outcomes.append(Outcome(g.name, "differ" if diffs else "ok", seconds, tuple(diffs), figures=len(figs)))
        print(f"  {'DIFFERENT' if diffs else 'ok'}: {len(figs)} figures, {len(diffs)} differ ({seconds:.0f} s)",
              flush=True)
        for d in diffs:
            print(f"    {d}")
        if notes:
            print(f"  note: {len(notes)} figure(s) not in the stored file (rerun with --update to keep them):")
            for d in notes:
                print(f"    {d}")
    bad = [o for o in outcomes if o.status in ("differ", "failed")]
    print("\nsummary: " + ", ".join(f"{o.group} {o.status}" for o in outcomes))
    if bad:
        print("NOT REPRODUCED:")
        for o in bad:
            print(f"- {o.group}: " + (f"{len(o.differences)} figure(s) differ" if o.differences else
                                      o.reason.splitlines()[0]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
