"""Bad inputs to plan, the MIMIC-CXR / CheXpert / RSNA / SIIM exports, classify's compressed tables, finetune's
options, reader init's patients file and report, as a table of cases (:data:`CASES`), each run as a new user
would run it (``main(argv)`` on small inputs made in the case's own folder) against the run contract:

* the exit code is the case's (2: refused; 0: a valid run whose choice is reported), never 1 ("internal error"),
  and no traceback;
* a refusal is one line, ``cxreval: error: ...`` (or click's usage block for a malformed option), holding the
  option, file or value at fault (``says``);
* every input is byte for byte as before (SHA-256 of every file of the case's folder), whatever the exit code;
* nothing is written outside ``--out``: the case's whole folder, ``--out`` aside, holds the same files after the
  run as before; a refused run leaves no ``--out`` and no hidden temporary folder or lock beside it.

The run-wide checks of the earlier commands are tests/cli/test_bad_inputs.py's sweep; this table holds the
cases that failed there once: an input destroyed (report), a write outside --out (plan), decompressor errors,
an overflow, a Unicode digit and empty or undecodable files as internal errors, empty exports and dropped
parts reported as success, and messages in the library's words.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _factories import label_table, prediction_table, write_mimic_folder
from cxreval.cli.main import main

OUT = "{out}"


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[Path], list[str]]  # makes the inputs in the folder, returns the argv ({out}: --out)
    says: str  # the one line holds this (the option, file or value at fault)
    rc: int = 2


# ------------------------------------------------------------------------------------------------- inputs
def _damaged(raw: bytes, codec: str) -> bytes:
    """``raw`` (repeated, so that the damage lands inside the compressed data) compressed with ``codec``, then 40
    bytes flipped a third of the way in: the decompressor itself fails (zlib, lzma, bz2, zip)."""
    data = raw * 40
    if codec == "zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("table.csv", data)
        packed = buf.getvalue()
    else:
        packed = {"gz": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress}[codec](data)
    b = bytearray(packed)
    start = len(b) // 3
    for i in range(start, start + 40):
        b[i] ^= 0x5A
    return bytes(b)


def _plan_tables(d: Path, ids: Callable[[str], str] = str) -> tuple[Path, Path]:
    labels, preds = label_table(24, seed=0), prediction_table(24, seed=1)
    labels.assign(study_id=labels["study_id"].map(ids)).to_csv(d / "labels.csv", index=False)
    preds.assign(study_id=preds["study_id"].map(ids)).to_csv(d / "preds.csv", index=False)
    return d / "preds.csv", d / "labels.csv"


def _plan(*extra: str, ids: Callable[[str], str] = str, images: bool = False) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        preds, labels = _plan_tables(d, ids)
        args = [
            "plan",
            "-p",
            str(preds),
            "-l",
            str(labels),
            "--reference",
            "CR",
            "--budget",
            "5",
            "--n-draws",
            "10",
        ]
        if (
            images
        ):  # every study's image where its id leads from the image folder (two levels up for '../../s1')
            from PIL import Image

            (d / "a" / "b" / "imgs").mkdir(parents=True)
            for sid in pd.read_csv(preds, dtype=str)["study_id"].unique():
                target = d / "a" / "b" / "imgs" / f"{sid}.png"
                target.parent.mkdir(parents=True, exist_ok=True)
                Image.fromarray(np.zeros((8, 8), dtype=np.uint8)).save(target)
            args += ["--images", str(d / "a" / "b" / "imgs")]
        return [*args, *extra, "-o", OUT]

    return build


def _classify_compressed(table: str, codec: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        preds, labels = _plan_tables(d)
        chosen = {"labels": labels, "preds": preds}[table]
        bad = chosen.with_name(f"{chosen.name}.{codec}")
        bad.write_bytes(_damaged(chosen.read_bytes(), codec))
        chosen.unlink()
        tables = {"labels": labels, "preds": preds, table: bad}
        return [
            "classify",
            "-p",
            str(tables["preds"]),
            "-l",
            str(tables["labels"]),
            "--n-resamples",
            "0",
            "-o",
            OUT,
        ]

    return build


def _mimic(damage: str = "", *extra: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        root = write_mimic_folder(d / "mimic")
        if damage:
            f = root / damage
            f.write_bytes(_damaged(gzip.decompress(f.read_bytes()), "gz"))
        return ["data", "export", "mimic_cxr", "--path", str(root), *extra, "-o", OUT]

    return build


RELEASE_HEADER = (
    "Path,Sex,Age,Frontal/Lateral,AP/PA,No Finding,Enlarged Cardiomediastinum,Cardiomegaly,Lung Opacity,"
    "Lung Lesion,Edema,Consolidation,Pneumonia,Atelectasis,Pneumothorax,Pleural Effusion,Pleural Other,"
    "Fracture,Support Devices"
)


def _chexpert(*extra: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        root = d / "CheXpert-v1.0-small"
        root.mkdir()
        row = ",Female,68,Frontal,AP,1.0,,,,,,,,,0.0,,,,1.0"
        for name, part in (("train.csv", "train"), ("valid.csv", "valid")):
            (root / name).write_text(
                f"{RELEASE_HEADER}\nCheXpert-v1.0-small/{part}/patient00001/study1/view1_frontal.jpg{row}\n"
            )
        return ["data", "export", "chexpert", "--path", str(root), *extra, "-o", OUT]

    return build


RSNA_LABELS = "patientId,x,y,width,height,Target\n0004cfab,,,,,0\n00436515,264.0,152.0,213.0,379.0,1\n"
RSNA_CLASSES = "patientId,class\n0004cfab,No Lung Opacity / Not Normal\n00436515,Lung Opacity\n"


def _rsna(codec: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        (d / "rsna").mkdir()
        (d / "rsna" / f"stage_2_train_labels.csv.{codec}").write_bytes(_damaged(RSNA_LABELS.encode(), codec))
        (d / "rsna" / "stage_2_detailed_class_info.csv").write_text(RSNA_CLASSES)
        return ["data", "export", "rsna_pneumonia_boxes", "--path", str(d / "rsna"), "-o", OUT]

    return build


def _siim(dataset: str, encoded: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        (d / "train-rle.csv").write_text(
            f"ImageId, EncodedPixels\n1.2.3.1,-1\n1.2.3.2, 1 2 4 2\n1.2.3.3, {encoded}\n"
        )
        return ["data", "export", dataset, "--path", str(d / "train-rle.csv"), "-o", OUT]

    return build


def _finetune(*extra: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        (d / "imgs").mkdir()
        label_table(4, seed=0).to_csv(d / "labels.csv", index=False)
        (d / "m.yaml").write_text("checkpoint: m.pt\n")
        return [
            "finetune",
            "--images",
            str(d / "imgs"),
            "--labels",
            str(d / "labels.csv"),
            "--model",
            f"torch:{d / 'm.yaml'}",
            *extra,
            "-o",
            OUT,
        ]

    return build


def _reader_init(patients: bytes) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        from PIL import Image

        (d / "imgs").mkdir()
        for i in range(2):
            Image.fromarray(np.zeros((8, 8), dtype=np.uint8)).save(d / "imgs" / f"im{i}.png")
        (d / "patients.csv").write_bytes(patients)
        (d / "study.yaml").write_text(
            "findings: [Effusion]\nimages: imgs\npatients: patients.csv\nreaders: [r1]\n"
        )
        return ["reader", "init", "--study", str(d / "study.yaml"), "--db", f"sqlite:///{OUT}"]

    return build


def _classify_folder(d: Path) -> Path:
    preds, labels = _plan_tables(d)
    assert (
        main(["classify", "-p", str(preds), "-l", str(labels), "--n-resamples", "0", "-o", str(d / "cls")])
        == 0
    )
    return d / "cls"


def _report_over(name: str, *extra: str, record: bool = True) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        folder = _classify_folder(d)
        if not record:  # a folder of tables without cxreval's run.json: every result file counts
            (folder / "run.json").unlink()
        return ["report", str(folder), "--out", str(folder / name), *extra]

    return build


def _report_thresholds(d: Path) -> list[str]:
    folder = _classify_folder(d)
    (d / "th.json").write_text('{"srcc": {"stable": 0.9, "unstable": -1}}')
    return [
        "report",
        str(folder),
        "--thresholds",
        str(d / "th.json"),
        "--out",
        str(d / "th.json"),
        "--overwrite",
    ]


def _report_lost_power(d: Path) -> list[str]:
    preds, labels = _plan_tables(d)
    assert (
        main(
            [
                "plan",
                "-p",
                str(preds),
                "-l",
                str(labels),
                "--reference",
                "CR",
                "--budget",
                "5",
                "--n-draws",
                "10",
                "-o",
                str(d / "plan"),
            ]
        )
        == 0
    )
    for suffix in (".csv", ".parquet"):
        (d / "plan" / f"power{suffix}").unlink()
    return ["report", str(d / "plan"), "--out", OUT]


def _seed(command: str) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        preds, labels = _plan_tables(d)
        extra = ["--reference", "CR", "--budget", "5"] if command == "plan" else []
        return [command, "-p", str(preds), "-l", str(labels), *extra, "--seed", "-1", "-o", OUT]

    return build


CASES = [
    # 1. an input destroyed: the report replaced a file of the folder it reads
    Case("report-out-is-a-result-file-overwrite", _report_over("auc.csv", "--overwrite"), "is the input"),
    Case("report-out-is-a-result-file", _report_over("auc.csv"), "--out"),
    Case("report-out-is-its-parquet-twin", _report_over("auc.parquet", "--overwrite"), "is the input"),
    Case("report-out-is-the-run-record", _report_over("run.json", "--overwrite"), "is the input"),
    Case(
        "report-out-is-a-result-file-no-run-record",
        _report_over("auc.csv", "--overwrite", record=False),
        "is the input",
    ),
    Case("report-pdf-out-is-the-page", _report_over("r.pdf", "--pdf"), "--pdf"),
    Case("report-out-is-the-thresholds", _report_thresholds, "is the input"),
    # 2. a write outside --out: a study id leading out of the image folder
    Case(
        "plan-study-id-traversal-images", _plan(ids=lambda s: f"../../{s}", images=True), "study_id '../../"
    ),
    Case("plan-study-id-traversal", _plan(ids=lambda s: f"../../{s}"), "study_id '../../"),
    Case("plan-study-id-absolute", _plan(ids=lambda s: f"/tmp/{s}"), "is an absolute path"),
    # 3. internal errors: decompressors, an overflow, a Unicode digit, empty or undecodable files, torch's checks
    *[
        Case(f"classify-{t}-damaged-{c}", _classify_compressed(t, c), f"{t}.csv.{c}' as CSV")
        for t in ("labels", "preds")
        for c in ("gz", "zip", "xz", "bz2")
    ],
    Case(
        "mimic-damaged-labels-gz",
        _mimic("mimic-cxr-2.0.0-chexpert.csv.gz"),
        "mimic-cxr-2.0.0-chexpert.csv.gz",
    ),
    Case(
        "mimic-damaged-metadata-gz",
        _mimic("mimic-cxr-2.0.0-metadata.csv.gz", "--views", "PA"),
        "mimic-cxr-2.0.0-metadata.csv.gz",
    ),
    Case(
        "mimic-damaged-split-gz",
        _mimic("mimic-cxr-2.0.0-split.csv.gz", "--split", "test"),
        "mimic-cxr-2.0.0-split.csv.gz",
    ),
    Case("rsna-damaged-zip", _rsna("zip"), "stage_2_train_labels.csv.zip"),
    Case("rsna-damaged-gz", _rsna("gz"), "stage_2_train_labels.csv.gz"),
    Case(
        "siim-boxes-beyond-64-bits",
        _siim("siim_acr_pneumothorax_boxes", "1 99999999999999999999999"),
        "column 'EncodedPixels'",
    ),
    Case("plan-budgets-unicode-digit", _plan("--budgets", "5,²"), "--budgets"),
    Case("plan-budgets-arabic-digit", _plan("--budgets", "5,٣"), "--budgets"),
    Case("reader-init-empty-patients", _reader_init(b""), "patients.csv"),
    Case(
        "reader-init-not-utf8-patients", _reader_init(b"study_id,patient_id\nim0,\xff\xfe\n"), "patients.csv"
    ),
    Case("finetune-negative-lr", _finetune("--lr", "-1"), "--lr"),
    Case("finetune-nan-lr", _finetune("--lr", "nan"), "--lr"),
    Case("finetune-negative-weight-decay", _finetune("--weight-decay", "-1"), "--weight-decay"),
    # 4. accepted silently, or an empty success
    Case("siim-labels-not-rle", _siim("siim_acr_pneumothorax", "pneumothorax"), "column 'EncodedPixels'"),
    Case(
        "siim-labels-beyond-64-bits",
        _siim("siim_acr_pneumothorax", "1 99999999999999999999999"),
        "past the 1024 x 1024 image",
    ),
    Case("mimic-views-unknown", _mimic("", "--views", "XYZ"), "--views"),
    Case("chexpert-views-unknown", _chexpert("--views", "XYZ"), "--views"),
    Case("report-plan-power-lost", _report_lost_power, "power.csv is missing"),
    # 5. messages in the command's words
    Case("plan-negative-seed", _seed("plan"), "--seed"),
    Case("classify-negative-seed", _seed("classify"), "--seed"),
    Case("plan-draws-beyond-memory", _plan("--n-draws", str(10**12)), "--n-draws is too large"),
]


def _digest(folder: Path, skip: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and skip not in (p, *p.parents)
    }


def test_the_table_covers_every_command_of_the_issue() -> None:
    assert len(CASES) >= 26 and len({c.id for c in CASES}) == len(CASES)
    commands = {c.id.split("-")[0] for c in CASES}
    assert {
        "report",
        "plan",
        "classify",
        "mimic",
        "chexpert",
        "rsna",
        "siim",
        "reader",
        "finetune",
    } <= commands


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_run_contract(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "in"
    d.mkdir()
    out = tmp_path / "out"
    argv = [a.replace(OUT, str(out)) for a in case.build(d)]
    before = _digest(tmp_path, out)
    capsys.readouterr()
    rc = main(argv)
    cap = capsys.readouterr()
    err = [ln for ln in cap.err.splitlines() if ln.strip() and not ln.startswith("cxreval: warning:")]
    assert "Traceback" not in cap.err and "internal error" not in cap.err, cap.err
    assert rc == case.rc, (rc, cap.err)
    assert _digest(tmp_path, out) == before, "an input changed, or a file was written outside --out"
    if rc == 2:
        if err[0].startswith("cxreval: error: "):
            assert len(err) == 1, err
            assert case.says in err[0], err
        else:  # click's usage error: Usage / Try / Error
            assert any(ln.startswith("Error: ") and case.says in ln for ln in err), err
        assert not out.exists()
        assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_load_dataset_names_a_damaged_file(tmp_path: Path) -> None:
    """The library's loader raises the same one-line error the command shows (not zlib's)."""
    from cxreval import load_dataset
    from cxreval.exceptions import SchemaError

    root = write_mimic_folder(tmp_path / "mimic")
    f = root / "mimic-cxr-2.0.0-negbio.csv.gz"
    f.write_bytes(_damaged(gzip.decompress(f.read_bytes()), "gz"))
    with pytest.raises(
        SchemaError, match=r"mimic-cxr-2\.0\.0-negbio\.csv\.gz' as CSV: its gzip data is damaged"
    ):
        load_dataset("mimic_cxr", root)


def test_a_truncated_compressed_table_names_the_file(tmp_path: Path) -> None:
    from cxreval.exceptions import SchemaError
    from cxreval.io import read_table
    from cxreval.io._read import read_csv_file

    t = tmp_path / "t.csv.xz"
    packed = lzma.compress(("a,b\n" + "".join(f"{i},{i * i % 977}\n" for i in range(5000))).encode())
    t.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(SchemaError, match=r"t\.csv\.xz' as CSV: its xz data is damaged or cut short"):
        read_table(t, text=True)
    with pytest.raises(SchemaError, match=r"^custom: .*t\.csv\.xz"):
        read_csv_file(t, error=lambda p, exc: f"custom: {p}: {exc}")
    shutil.copyfile(
        t, tmp_path / "plain.csv"
    )  # the same bytes, uncompressed by name: a parse error, said as such
    with pytest.raises(SchemaError, match=r"plain\.csv' as CSV"):
        read_table(tmp_path / "plain.csv", text=True)


def test_out_of_memory_names_the_commands_own_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run out of memory is exit 2 naming the options of that command that size it: plan's --n-draws, never
    --n-resamples, which plan does not have."""
    import cxreval.planning

    def exhausted(*a: object, **k: object) -> None:
        raise MemoryError("Unable to allocate 179. GiB for an array")

    monkeypatch.setattr(cxreval.planning, "plan_relabelling", exhausted)
    preds, labels = _plan_tables(tmp_path)
    argv = [
        "plan",
        "-p",
        str(preds),
        "-l",
        str(labels),
        "--reference",
        "CR",
        "--budget",
        "5",
        "-o",
        str(tmp_path / "o"),
    ]
    assert main(argv) == 2
    line = capsys.readouterr().err.strip()
    assert (
        line.startswith("cxreval: error: out of memory (Unable to allocate 179. GiB") and "--n-draws" in line
    ), line
    assert "--n-resamples" not in line


def test_a_report_may_replace_its_own_earlier_page_in_a_result_folder(tmp_path: Path) -> None:
    """What the report reads is protected, not the folder: an earlier page beside the results is replaced with
    --overwrite, every result file byte for byte as before."""
    folder = _classify_folder(tmp_path)
    before = _digest(folder, folder / "report.html")
    for _ in range(2):
        assert main(["report", str(folder), "--out", str(folder / "report.html"), "--overwrite"]) == 0
    assert _digest(folder, folder / "report.html") == before
