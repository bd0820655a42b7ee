"""Datasets: exporting a MIMIC-CXR-size folder (the published file layouts, synthetic content) to cxreval's label
table, beside torchxrayvision's ``MIMIC_Dataset`` reading the same files.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from suites._common import ROOT, Context, Figures, Part, Peer, module_version

TITLE = "Datasets: MIMIC-CXR-size export"

__all__ = ["PARTS", "TITLE", "write_mimic_size_folder"]

OBSERVATIONS = (
    "Atelectasis",
    "Cardiomegaly",
    "Consolidation",
    "Edema",
    "Enlarged Cardiomediastinum",
    "Fracture",
    "Lung Lesion",
    "Lung Opacity",
    "No Finding",
    "Pleural Effusion",
    "Pleural Other",
    "Pneumonia",
    "Pneumothorax",
    "Support Devices",
)
# MIMIC-CXR-JPG 2.0.0: 377,110 images of 227,827 studies; MIMIC-CXR: 65,379 patients
FULL = (377_110, 227_827, 65_379)


def write_mimic_size_folder(folder: Path, n_images: int, n_studies: int, n_patients: int, seed: int) -> None:
    """The four MIMIC-CXR-JPG files (chexpert, negbio, split, metadata; gzipped CSV, published headers) with random
    content of the given size: every patient has a study, every study an image; label cells 1.0 / 0.0 / -1.0 /
    blank with MIMIC-like frequencies; ViewPosition PA, AP, LATERAL, LL or blank."""
    g = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    patient = np.sort(
        np.concatenate([np.arange(n_patients), g.integers(0, n_patients, n_studies - n_patients)])
    )
    subject = (10_000_000 + patient * 137).astype(str)
    study = (50_000_000 + g.permutation(n_studies) * 19).astype(str)
    for name in ("chexpert", "negbio"):
        codes = g.choice(
            np.array(["", "1.0", "0.0", "-1.0"], dtype=object),
            size=(n_studies, len(OBSERVATIONS)),
            p=[0.7, 0.15, 0.1, 0.05],
        )
        wide = pd.DataFrame(codes, columns=list(OBSERVATIONS))
        wide.insert(0, "study_id", study)
        wide.insert(0, "subject_id", subject)
        wide.to_csv(
            folder / f"mimic-cxr-2.0.0-{name}.csv.gz",
            index=False,
            compression={"method": "gzip", "compresslevel": 1},
        )
    per_study = np.concatenate([np.arange(n_studies), g.integers(0, n_studies, n_images - n_studies)])
    per_study.sort()
    dicom = pd.Series(np.arange(n_images)).map("{:08x}-0000aaaa-1111bbbb-2222cccc-3333dddd".format)
    part = np.array(["train", "validate", "test"], dtype=object)[np.minimum(patient[per_study] % 50, 2)]
    split = pd.DataFrame(
        {"dicom_id": dicom, "study_id": study[per_study], "subject_id": subject[per_study], "split": part}
    )
    split.to_csv(
        folder / "mimic-cxr-2.0.0-split.csv.gz",
        index=False,
        compression={"method": "gzip", "compresslevel": 1},
    )
    view = g.choice(
        np.array(["PA", "AP", "LATERAL", "LL", ""], dtype=object),
        size=n_images,
        p=[0.25, 0.4, 0.3, 0.04, 0.01],
    )
    meta = pd.DataFrame(
        {
            "dicom_id": dicom,
            "subject_id": subject[per_study],
            "study_id": study[per_study],
            "PerformedProcedureStepDescription": "CHEST (PA AND LAT)",
            "ViewPosition": view,
            "Rows": 3056,
            "Columns": 2544,
            "StudyDate": 21800506,
            "StudyTime": 213014.531,
            "ProcedureCodeSequence_CodeMeaning": "CHEST (PA AND LAT)",
            "ViewCodeSequence_CodeMeaning": "postero-anterior",
            "PatientOrientationCodeSequence_CodeMeaning": "Erect",
        }
    )
    meta.to_csv(
        folder / "mimic-cxr-2.0.0-metadata.csv.gz",
        index=False,
        compression={"method": "gzip", "compresslevel": 1},
    )


_MAIN = (
    "import resource, sys; from cxreval.cli.main import main; rc = main(sys.argv[1:]); "
    "print('maxrss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(rc)"
)


def _child(args: list[str]) -> tuple[float, float, float, int]:
    """Wall s, CPU s and peak RSS (MiB) of ``cxreval ARGS`` in a process of its own, and its exit status."""
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-c", _MAIN, *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin"},
    )
    wall = time.perf_counter() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    rss = [ln.split()[1] for ln in r.stderr.splitlines() if ln.startswith("maxrss ")]
    return wall, cpu, (int(rss[-1]) / 1024 if rss else float("nan")), r.returncode


def mimic_export(ctx: Context) -> Figures:
    n_images, n_studies, n_patients = ctx.size(tuple(n // 10 for n in FULL), FULL)  # type: ignore[misc]
    d = ctx.tmp / "mimic-cxr-jpg"
    t0 = time.perf_counter()
    write_mimic_size_folder(d, n_images, n_studies, n_patients, ctx.seed)
    t_build = time.perf_counter() - t0
    fig = Figures()
    t = fig.table(
        f"`cxreval data export mimic_cxr` on {n_images:,} images, {n_studies:,} studies, {n_patients:,} "
        "patients (two labellers; one process each, peak RSS its own)",
        ["command", "wall s", "CPU s", "peak RSS MiB", "label rows", "exit"],
    )
    rows = {}
    for name, extra in (("all studies", []), ("--views PA,AP", ["--views", "PA,AP"])):
        out = ctx.tmp / f"out-{len(rows)}"
        wall, cpu, rss, rc = _child(["data", "export", "mimic_cxr", "--path", str(d), *extra, "-o", str(out)])
        n = int(pd.read_parquet(out / "labels.parquet", columns=["state"]).shape[0]) if rc == 0 else -1
        rows[name] = (wall, cpu, rss, n)
        t.add(name, round(wall, 2), round(cpu, 2), round(rss, 1), n, rc)
        fig.checked[f"{name} | exit, label rows"] = f"{rc} {n}"
    t.notes.append(
        f"building the synthetic files took {t_build:.1f} s (not counted); the export reads both label "
        "files (and the metadata with --views), validates the long table and writes it as CSV + Parquet"
    )
    phases = (
        "import resource, sys, time; t0 = time.process_time(); from cxreval.datasets import export_dataset; "
        "t1 = time.process_time(); res = export_dataset('mimic_cxr', sys.argv[1]); t2 = time.process_time(); "
        "res.save(sys.argv[2]); t3 = time.process_time(); "
        "print(t1 - t0, t2 - t1, t3 - t2, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    (ctx.tmp / "phases").mkdir()
    r = subprocess.run(
        [sys.executable, "-c", phases, str(d), str(ctx.tmp / "phases")],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin"},
    )
    if r.returncode == 0:
        imp, load, save, rss = (float(v) for v in r.stdout.split()[-4:])
        ph = fig.table(
            "Where the export's CPU time goes (library, all studies; CPU s of one process)",
            [
                "import cxreval.datasets",
                "read + validate (export_dataset)",
                "write CSV + Parquet (save)",
                "peak RSS MiB",
            ],
        )
        ph.add(round(imp, 2), round(load, 2), round(save, 2), round(rss / 1024, 1))
    t.notes.append(
        "target: < 60 s and < 2 GB for the full size; on a shared machine wall time grows with the load "
        "average recorded with the run, CPU s does much less"
    )
    py = sys.executable
    peer_code = (
        "import time,sys; import torchxrayvision as x; t=time.perf_counter(); "
        f"ds=x.datasets.MIMIC_Dataset(imgpath='.', csvpath=r'{d}/mimic-cxr-2.0.0-chexpert.csv.gz', "
        f"metacsvpath=r'{d}/mimic-cxr-2.0.0-metadata.csv.gz', views=['PA','AP'], unique_patients=False); "
        "print(time.perf_counter()-t, len(ds))"
    )
    r = subprocess.run([py, "-c", peer_code], capture_output=True, text=True)
    if r.returncode == 0:
        secs, n_ds = r.stdout.split()[-2:]
        fig.peer = Peer(
            "torchxrayvision MIMIC_Dataset (CheXpert labeler file + metadata, views PA, AP)",
            module_version("torchxrayvision"),
        )
        p = fig.table("Reading the same files for PA/AP images", ["reader", "s", "output"])
        p.add(
            "torchxrayvision MIMIC_Dataset (one labeller; after import)",
            round(float(secs), 2),
            f"{int(n_ds):,} images (label rows of 13 findings)",
        )
        p.add(
            "cxreval data export --views PA,AP (two labellers; the whole command: import, read, check, write CSV "
            "+ Parquet)",
            round(rows["--views PA,AP"][0], 2),
            f"{rows['--views PA,AP'][3] // 28:,} studies x 14 findings x 2 labellers",
        )
        fig.ratios["torchxrayvision read / cxreval export (--views PA,AP)"] = (
            float(secs) / rows["--views PA,AP"][0]
        )
    else:
        fig.peer = Peer(
            "torchxrayvision MIMIC_Dataset",
            unavailable=f"peer unavailable: {(r.stderr or '').strip()[-120:]}",
        )
    return fig


PARTS = (
    Part(
        "mimic_export",
        "Export of a MIMIC-CXR-size folder (377,110 images, 227,827 studies, synthetic, in the "
        "published layouts) with `cxreval data export mimic_cxr`, all studies and --views PA,AP: wall, CPU and "
        "peak RSS of the command's process; beside torchxrayvision's MIMIC_Dataset reading the same files.",
        mimic_export,
    ),
)
