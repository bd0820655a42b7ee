"""Validation of cxreval's IQA metrics against reference implementations: every row of
tests/iqa/data/reference_values.csv (piq, pyiqa, sewar, made in the dev venv) recomputed with cxreval, with
the convention options and tolerances of tests/iqa/test_iqa_reference_values.py (``CASES``); writes the
subsection "### Validation" of "## IQA" in bench/RESULTS.md. Needs only cxreval (no peers)::

    OMP_NUM_THREADS=1 .venv/bin/python bench/iqa_validation.py
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CXREVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
RESULTS = ROOT / "bench" / "RESULTS.md"
HEAD = "### Validation against reference implementations"

PEER = {"piq": "piq 0.8.0", "pyiqa": "pyiqa 0.1.16", "sewar": "sewar 0.4.10", "definition": "definition (numpy)"}


def _test_module():
    path = ROOT / "tests" / "iqa" / "test_iqa_reference_values.py"
    spec = importlib.util.spec_from_file_location("iqa_refvals_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    t = _test_module()
    rows = t.reference_rows()
    with tempfile.TemporaryDirectory() as tmp:
        pairs = t.load_pairs(SHARED, {r[5] for r in rows}, Path(tmp))
        worst: dict[tuple, list] = {}
        t0 = time.perf_counter()
        for metric, lib, key, tol, fn, pair, expected in rows:
            x, y = pairs[pair]
            got = fn(x, y)
            rel = abs(got - expected) / max(abs(expected), 1e-12)
            w = worst.setdefault((metric, lib, key), [0.0, 0, tol, ""])
            w[1] += 1
            if rel >= w[0]:
                w[0], w[3] = rel, pair
        print(f"{len(rows)} rows in {time.perf_counter() - t0:.0f} s")
    lines = [HEAD, "",
             f"{len(rows)} reference values (tests/iqa/data/reference_values.csv: 16 pairs of the shared 16-bit "
             "fixture at 512x512 and 8 degradations of NIH 00000075_000 at 1024x1024, float64 in [0, 1]) "
             "recomputed with cxreval by `bench/iqa_validation.py`; tolerances and the options that reproduce "
             "each peer's convention are in tests/iqa/test_iqa_reference_values.py (which checks a subset in "
             "CI). Relative difference = |cxreval - reference| / |reference|.", "",
             "| metric | reference implementation | tolerance | largest relative difference | pairs | "
             "convention / reason for the tolerance |", "|---|---|---|---|---|---|"]
    failed = set()
    for (metric, lib, key), (rel, n, tol, _pair) in sorted(worst.items()):
        why = t.CASES[(metric, lib, key)][2]
        peer = PEER.get(lib, lib) + (f" ({key})" if key else "")
        ok = rel <= tol
        if not ok:
            failed.add(metric)
        lines.append(f"| {metric} | {peer} | {tol:.0e} | {rel:.1e}{'' if ok else ' **FAIL**'} | {n} | {why} |")
    n_ok = {k[0] for k in worst} - failed
    fr = sorted(m for m in n_ok if m != "piqe")
    lines += ["", f"Full-reference metrics within tolerance of every reference: {len(fr)} ({', '.join(fr)}); "
              f"PIQE: {'yes' if 'piqe' in n_ok else 'no'}. The published MATLAB calibration pairs (TID2013) "
              "are not shipped with piq/pyiqa and cannot be downloaded here, so the comparison is against the "
              "peers, whose own tests pin them to the MATLAB values.", ""]
    write_section("\n".join(lines) + "\n")


def write_section(section: str) -> None:
    text = RESULTS.read_text()
    start = text.find("## IQA\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n## IQA\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        end = len(text) if end < 0 else end + 1
        body = text[start:end]
        i = body.find(HEAD)
        if i >= 0:
            j = body.find("\n### ", i + 1)
            body = body[:i] + section + (body[j + 1:] if j >= 0 else "")
        else:
            body = body.rstrip("\n") + "\n\n" + section
        text = text[:start] + body + ("\n" if not body.endswith("\n\n") and end < len(text) else "") + text[end:]
    RESULTS.write_text(text)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
