"""Run the bench suites and regenerate bench/RESULTS.md from their results.

Usage::

    python bench/run.py [SUITE | SUITE:PART ...] [--quick] [--seed 0] [--peer-python PATH ...] [--build-peer-venv]
    python bench/run.py --list                   # suites, parts and what each measures
    python bench/run.py --quick --check          # also compare the deterministic figures with bench/expected
    python bench/run.py fusion --update-expected # store this run's deterministic figures as the expected ones

Every part of every suite named (all of them by default) runs in a fresh process of its own, so that the peak
resident memory it records is its own (``ru_maxrss`` of the part's process, and of the largest process it
started). A part that compares cxreval with a peer installed elsewhere (crowd-kit, medspacy, piq/pyiqa,
torchxrayvision) uses the first ``--peer-python`` interpreter (or one of ``CXREVAL_PEER_PYTHON``, separated by
``os.pathsep``) that imports the peer, with this checkout's ``src`` first on ``PYTHONPATH``; when none does, the
part records "peer unavailable" and measures cxreval alone. ``--build-peer-venv`` builds such an interpreter
first (``bench/peers.py``: a venv with piq and crowd-kit from PyPI, outside the repository). Data that is missing (the shared data mirror, the
metadata cache of ``cxreval data fetch``) makes a part record "data unavailable", not fail.

Each suite's results go to ``bench/results/<suite>.json`` (the parts run now replace those of an earlier run);
``bench/RESULTS.md`` is then written from every results file. ``--quick`` runs small sizes: every suite together
in under 10 minutes on two cores. Exit status: 0, 1 when a part failed or (``--check``) a figure differs, 2 on
bad usage.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from suites import SUITES  # noqa: E402
from suites._common import Context, Figures  # noqa: E402
from suites._markdown import write_results_md  # noqa: E402

RESULTS_DIR = BENCH / "results"
EXPECTED_DIR = BENCH / "expected"


def dumps(obj: object, indent: int = 0) -> str:
    """JSON with one key per line and every list of scalars (a table row) on one line."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(obj, dict) and obj:
        items = [
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {dumps(v, indent + 1)}" for k, v in obj.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        return "[\n" + ",\n".join(f"{inner}{dumps(v, indent + 1)}" for v in obj) + f"\n{pad}]"
    return json.dumps(obj, ensure_ascii=False, default=str)


def suite_module(name: str):
    return importlib.import_module(f"suites.{name}")


def command(suite: str, part: str | None, quick: bool) -> str:
    target = suite if part is None else f"{suite}:{part}"
    return f"python bench/run.py {target}" + (" --quick" if quick else "")


def _peer_pythons(given: list[str]) -> tuple[str, ...]:
    env = [p for p in os.environ.get("CXREVAL_PEER_PYTHON", "").split(os.pathsep) if p]
    return tuple(dict.fromkeys([*given, *env]))


_IMPORTS: dict[tuple[str, str], bool] = {}


def _imports(python: str, module: str) -> bool:
    """Whether ``python`` imports ``module`` (asked once per run)."""
    if (python, module) not in _IMPORTS:
        r = subprocess.run([python, "-c", f"import {module}"], capture_output=True, env=_child_env())
        _IMPORTS[(python, module)] = r.returncode == 0
    return _IMPORTS[(python, module)]


def _child_env() -> dict[str, str]:
    """This checkout's ``src`` first on ``PYTHONPATH`` (for peer interpreters that lack cxreval)."""
    path = [str(ROOT / "src"), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys(path)))


# ------------------------------------------------------------------------------------------ one part (child)


def run_child(target: str, out: Path, quick: bool, seed: int, peers: tuple[str, ...]) -> int:
    """Run one part in this process and write what it measured (and its own peak RSS) to ``out``."""
    suite, part_name = target.split(":")
    part = {p.name: p for p in suite_module(suite).PARTS}[part_name]
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    rec: dict[str, object] = {"part": part.name}
    with tempfile.TemporaryDirectory(prefix=f"bench-{suite}-{part.name}-") as tmp:
        try:
            figures = part.run(Context(quick=quick, seed=seed, tmp=Path(tmp), peer_pythons=peers))
            if not isinstance(figures, Figures):
                raise TypeError(f"{target} returned {type(figures).__name__}, not Figures")
            rec.update(figures.to_dict())
            rec["status"] = "unavailable" if figures.unavailable else "ok"
        except Exception:  # a failing part is recorded with its traceback; the run goes on with the others
            rec["status"] = "failed"
            rec["error"] = traceback.format_exc()[-3000:]
    rec["wall_s"] = round(time.perf_counter() - t0, 2)
    rec["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    rec["peak_rss_children_mib"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    rec["load_average"] = [round(x, 2) for x in (*load0, *os.getloadavg())]
    rec["python"] = f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})"
    out.write_text(json.dumps(rec, indent=1, default=str))
    return 0


# --------------------------------------------------------------------------------------- the runner (parent)


def run_part(suite: str, part, args: argparse.Namespace, peers: tuple[str, ...]) -> dict[str, object]:
    python = sys.executable
    if part.python_for and not _imports(python, part.python_for):
        python = next((p for p in peers if Path(p).exists() and _imports(p, part.python_for)), sys.executable)
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        out = Path(tmp) / "part.json"
        argv = [
            python,
            str(Path(__file__).resolve()),
            "--child",
            f"{suite}:{part.name}",
            "--json",
            str(out),
            "--seed",
            str(args.seed),
            *(["--quick"] if args.quick else []),
        ]
        for p in peers:
            argv += ["--peer-python", p]
        t0 = time.perf_counter()
        try:
            r = subprocess.run(
                argv, cwd=ROOT, env=_child_env(), capture_output=True, text=True, timeout=args.timeout
            )
            tail = (r.stderr or r.stdout)[-3000:]
        except subprocess.TimeoutExpired:
            r, tail = None, f"timed out after {args.timeout} s"
        if r is not None and r.returncode == 0 and out.exists():
            rec = json.loads(out.read_text())
        else:
            rec = {
                "part": part.name,
                "status": "failed",
                "error": tail,
                "wall_s": round(time.perf_counter() - t0, 2),
            }
    rec.update(
        {
            "doc": part.doc,
            "command": command(suite, part.name, args.quick),
            "quick": args.quick,
            "seed": args.seed,
            "measured_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        }
    )
    return rec


def save_suite(suite: str, parts: list[dict[str, object]], folder: Path) -> Path:
    """Write ``<folder>/<suite>.json``: these parts replace the same parts of an earlier run, the others stay."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{suite}.json"
    old = json.loads(path.read_text())["parts"] if path.exists() else []
    mod = suite_module(suite)
    order = [p.name for p in mod.PARTS]
    by_name = {p["part"]: p for p in old if p.get("part") in order}
    by_name.update({p["part"]: p for p in parts})
    doc = {
        "suite": suite,
        "title": mod.TITLE,
        "doc": (mod.__doc__ or "").strip(),
        "command": command(suite, None, False),
        "host": {"cpus": os.cpu_count(), "machine": platform.machine()},
        "parts": [by_name[n] for n in order if n in by_name],
    }
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(dumps(doc) + "\n")
    tmp.replace(path)
    return path


def check(suite: str, rec: dict[str, object], folder: Path, update: bool) -> list[str]:
    """Differences between this part's deterministic figures and the stored ones (``quick`` and ``full`` apart)."""
    path = folder / f"{suite}.json"
    stored = json.loads(path.read_text()) if path.exists() else {}
    mode = "quick" if rec.get("quick") else "full"
    if rec.get("status") != "ok":
        return []
    got = {k: str(v) for k, v in (rec.get("checked") or {}).items()}
    if update:
        stored.setdefault(mode, {})[rec["part"]] = got
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps({m: dict(sorted(parts.items())) for m, parts in sorted(stored.items())}) + "\n")
        return []
    want = stored.get(mode, {}).get(rec["part"])
    if want is None:
        return (
            [f"{suite}:{rec['part']}: no stored {mode} figures in {path} (run with --update-expected)"]
            if got
            else []
        )
    diffs = [
        f"{suite}:{rec['part']}: {k}: expected {v!r}, got {got.get(k, '(missing)')!r}"
        for k, v in want.items()
        if got.get(k) != v
    ]
    return diffs


def targets(names: list[str]) -> list[tuple[str, list[str] | None]]:
    out: list[tuple[str, list[str] | None]] = []
    for n in names or SUITES:
        suite, _, part = n.partition(":")
        if suite not in SUITES:
            raise SystemExit(f"unknown suite {suite!r}; known: {', '.join(SUITES)}")
        parts = [p.name for p in suite_module(suite).PARTS]
        if part and part not in parts:
            raise SystemExit(f"suite {suite} has no part {part!r}; its parts: {', '.join(parts)}")
        out.append((suite, [part] if part else None))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python bench/run.py", description=__doc__.splitlines()[0])
    ap.add_argument(
        "targets", nargs="*", metavar="SUITE[:PART]", help=f"default every suite: {', '.join(SUITES)}"
    )
    ap.add_argument("--quick", action="store_true", help="small sizes (every suite together in < 10 min)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic inputs (default 0)")
    ap.add_argument(
        "--peer-python",
        action="append",
        default=[],
        metavar="PATH",
        help="an interpreter holding a peer (crowd-kit, medspacy, piq, torchxrayvision); repeatable",
    )
    ap.add_argument(
        "--build-peer-venv",
        action="store_true",
        help="build (or reuse) the peer venv of bench/peers.py (piq, crowd-kit from PyPI, in "
        "~/.cache/cxreval-bench/peers) and use it as a --peer-python",
    )
    ap.add_argument("--list", action="store_true", help="list the suites and parts, run nothing")
    ap.add_argument(
        "--check", action="store_true", help="compare the deterministic figures with bench/expected"
    )
    ap.add_argument("--update-expected", action="store_true", help="store this run's deterministic figures")
    ap.add_argument("--results", type=Path, default=RESULTS_DIR, help="folder of the results JSON files")
    ap.add_argument("--expected", type=Path, default=EXPECTED_DIR, help="folder of the expected figures")
    ap.add_argument("--markdown", type=Path, default=BENCH / "RESULTS.md", help="the generated Markdown file")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds one part may run (default 1800)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help=argparse.SUPPRESS)
    try:
        args = ap.parse_args(argv)
        peers = _peer_pythons(args.peer_python)
        if args.build_peer_venv and not args.child:
            from peers import build_peer_venv

            peers = (*peers, str(build_peer_venv()))
        if args.child:
            return run_child(args.child, args.json, args.quick, args.seed, peers)
        todo = targets(args.targets)
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            return 2
        return int(exc.code or 0)
    if args.list:
        for suite, _ in todo:
            mod = suite_module(suite)
            print(f"{suite}: {mod.TITLE}")
            for p in mod.PARTS:
                print(
                    f"  {suite}:{p.name}{f' (peer in --peer-python: {p.python_for})' if p.python_for else ''}"
                    f"\n      {p.doc}"
                )
        return 0
    t_all, bad, diffs = time.perf_counter(), [], []
    print(
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)",
        flush=True,
    )
    for suite, names in todo:
        recs = []
        for part in suite_module(suite).PARTS:
            if names is not None and part.name not in names:
                continue
            rec = run_part(suite, part, args, peers)
            recs.append(rec)
            note = rec.get("unavailable") or (rec.get("peer") or {}).get("unavailable") or ""
            print(
                f"[{suite}:{part.name}] {rec['status']} {rec.get('wall_s', 0):.1f} s"
                f" peak RSS {rec.get('peak_rss_mib', '?')} MiB {note}",
                flush=True,
            )
            if rec["status"] == "failed":
                bad.append(f"{suite}:{part.name}")
                print("    " + str(rec.get("error", "")).strip().replace("\n", "\n    "), flush=True)
            if args.check or args.update_expected:
                diffs += check(suite, rec, args.expected, args.update_expected)
        path = save_suite(suite, recs, args.results)
        print(f"  -> {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}", flush=True)
    write_results_md(args.results, args.markdown)
    print(
        f"wrote {args.markdown}; {time.perf_counter() - t_all:.0f} s in all; load average at end: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for d in diffs:
        print(f"DIFFERENT {d}")
    if bad:
        print("FAILED: " + ", ".join(bad))
    return 1 if bad or diffs else 0


if __name__ == "__main__":
    sys.exit(main())
