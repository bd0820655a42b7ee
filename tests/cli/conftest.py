"""Small inputs for every command that writes a folder, made in the test's tmp folder (tests/cli)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _factories import label_table, prediction_table

WRITING_COMMANDS = (
    "classify",
    "rank",
    "agree",
    "fuse",
    "localize",
    "synth",
    "iqa-degrade",
    "iqa-score",
    "iqa-agree",
    "iqa-compare",
    "data-split",
    "data-audit",
    "data-export",
    "demo",
    "label-reports",
    "reader-export",
    "predict",
    "finetune",
    "plan",
    "mrmc",
    "subgroups",
)
"""Every command that writes an output folder (ids: the command words joined by '-')."""

COMPUTE = {  # the first expensive library call of each command: must not run when --out is unusable
    "classify": "cxreval.classification._files.evaluate_auc_files",
    "rank": "cxreval.classification._files.evaluate_auc_files",
    "agree": "cxreval.jobs._agree.compare_sources",
    "fuse": "cxreval.jobs._fuse.fuse_labels",
    "localize": "cxreval.localization.evaluate_heatmap_files",
    "synth": "cxreval.localization.simulate_localization_study",
    "iqa-degrade": "cxreval.iqa._degrade.degrade_images",
    "iqa-score": "cxreval.iqa._scoring.score_pair_batches",
    "iqa-agree": "cxreval.iqa._zscores.zscores",
    "iqa-compare": "cxreval.iqa.compare_metrics",
    "data-split": "cxreval.datasets.patient_split",
    "data-audit": "cxreval.datasets.audit.audit_chestxray14",
    "data-export": "cxreval.datasets.load_dataset",
    "demo": "cxreval.demo._runner._run_section",
    "label-reports": "cxreval.labeller.label_reports",
    "reader-export": "cxreval.reader._jobs.export_tables",
    "predict": "cxreval.predict._models.load_model",
    "finetune": "cxreval.predict._models.load_model",
    "plan": "cxreval.planning.plan_relabelling",
    "mrmc": "cxreval.jobs.evaluate_reader_study_files",
    "subgroups": "cxreval.jobs._subgroups.prepare_from_files",
}


def _labels(d: Path) -> Path:
    p = d / "labels.csv"
    label_table(24, seed=0).to_csv(p, index=False)
    return p


def _preds(d: Path) -> Path:
    p = d / "preds.csv"
    prediction_table(24, seed=1).to_csv(p, index=False)
    return p


def _data_entry(d: Path) -> Path:
    rows = ["Image Index,Finding Labels,Follow-up #,Patient ID,Patient Age,Patient Gender,View Position"]
    for p in range(1, 31):
        for k in range(2):
            rows.append(f"{p:08d}_{k:03d}.png,{'Edema' if p % 3 == 0 else 'No Finding'},{k},{p},50,M,PA")
    path = d / "de.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def _bbox(d: Path) -> Path:
    p = d / "bbox.csv"
    p.write_text(
        "Image Index,Finding Label,Bbox [x,y,w,h],,,\n"
        "im1.png,Atelectasis,100,200,200,300\nim2.png,Nodule,600,600,40,50\n"
    )
    return p


def _heatmaps(d: Path) -> Path:
    yy, xx = np.mgrid[0:32, 0:32]
    m1 = np.exp(-((yy - 11) ** 2 + (xx - 6) ** 2) / 20.0)
    m2 = np.exp(-((yy - 19) ** 2 + (xx - 19) ** 2) / 4.0)
    p = d / "maps.npz"
    np.savez(p, **{"im1.png/Atelectasis": m1, "im2.png/Nodule": m2})
    return p


def _images(d: Path) -> Path:
    from PIL import Image

    rng = np.random.default_rng(0)
    imgs = d / "imgs"
    imgs.mkdir(exist_ok=True)
    for i in range(2):
        base = np.cumsum(rng.random((32, 32)), axis=1)
        Image.fromarray((base / base.max() * 60000).astype(np.uint16)).save(imgs / f"im{i}.png")
    return imgs


def _tiny_model(d: Path) -> Path:
    """A 1-conv CNN as state_dict + architecture file + YAML (needs torch; skips without it)."""
    torch = pytest.importorskip("torch")
    import yaml

    (d / "arch.py").write_text(
        "import torch\n\ndef build():\n    return torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), "
        "torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), "
        "torch.nn.Linear(2, 2))\n"
    )
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(2, 2),
    )
    torch.save(net.state_dict(), d / "m.pt")
    (d / "m.yaml").write_text(
        yaml.safe_dump(
            {
                "checkpoint": "m.pt",
                "architecture": "arch.py:build",
                "input": {"size": 16},
                "findings": ["Atelectasis", "Nodule"],
                "target_layer": "1",
            }
        )
    )
    return d / "m.yaml"


def command_args(name: str, d: Path) -> list[str]:
    """The arguments (without -o) of a small, valid run of command ``name`` on inputs made in ``d``."""
    d.mkdir(parents=True, exist_ok=True)
    if name in ("classify", "rank"):
        return [name, "-p", str(_preds(d)), "-l", str(_labels(d)), "--n-resamples", "20", "--seed", "1"] + (
            ["--min-models", "2"] if name == "rank" else []
        )
    if name == "subgroups":
        meta = d / "meta.csv"
        pd.DataFrame({"study_id": [f"s{i}" for i in range(24)], "sex": ["F", "M"] * 12}).to_csv(
            meta, index=False
        )
        return ["subgroups", "-p", str(_preds(d)), "-l", str(_labels(d)), "-m", str(meta), "--by", "sex"] + [
            "--n-resamples",
            "20",
        ]
    if name == "agree":
        return ["agree", "-l", str(_labels(d)), "--pairs", "CR:Rep1,CR:Rep2"]
    if name == "fuse":
        return [
            "fuse",
            "-l",
            str(_labels(d)),
            "--readers",
            "Rep1,Rep2",
            "--methods",
            "mv,or",
            "--adjudicated",
            "CR",
        ]
    if name == "localize":
        return ["localize", "--heatmaps", str(_heatmaps(d)), "--boxes", str(_bbox(d)), "--rule", "IoBB"]
    if name == "synth":
        return ["synth", "--per-size", "2", "--seed", "0"]
    if name == "iqa-degrade":
        plan = d / "plan.yaml"
        plan.write_text("seed: 1\ndegradations:\n  - {transform: gaussian_blur, params: {sigma: 1.0}}\n")
        return ["iqa", "degrade", "--images", str(_images(d)), "--plan", str(plan)]
    if name == "iqa-score":
        imgs = _images(d)
        pairs = d / "pairs.csv"
        pairs.write_text(
            f"reference,test\n{imgs / 'im0.png'},{imgs / 'im1.png'}\n{imgs / 'im1.png'},{imgs / 'im0.png'}\n"
        )
        return ["iqa", "score", "--pairs", str(pairs), "--metrics", "psnr,rmse"]
    if name == "iqa-agree":
        tests = [f"/x/t{i}.png" for i in range(6)]
        scores = pd.DataFrame(
            [
                {"reference": "/x/r.png", "test": t, "metric": m, "value": float(v + k)}
                for k, m in enumerate(("psnr", "rmse"))
                for v, t in enumerate(tests)
            ]
        )
        scores.to_csv(d / "scores.csv", index=False)
        ratings = pd.DataFrame(
            [
                {"image": f"t{i}", "rater": r, "rating": 1 + (i * (j + 1)) % 4}
                for i in range(6)
                for j, r in enumerate("ABC")
            ]
        )
        ratings.to_csv(d / "ratings.csv", index=False)
        return [
            "iqa",
            "agree",
            "--scores",
            str(d / "scores.csv"),
            "--ratings",
            str(d / "ratings.csv"),
            "--n-resamples",
            "20",
        ]
    if name == "iqa-compare":
        scores = pd.DataFrame(
            [
                {"test": f"/x/t{i}_{g}.png", "degradation": g, "metric": m, "value": float(i + k + j)}
                for k, m in enumerate(("psnr", "rmse"))
                for i in range(3)
                for j, g in enumerate(("blur", "noise"))
            ]
        )
        scores.to_csv(d / "scores.csv", index=False)
        return ["iqa", "compare", "--scores", str(d / "scores.csv")]
    if name == "data-split":
        return [
            "data",
            "split",
            "chestxray14",
            "--data-entry",
            str(_data_entry(d)),
            "--fractions",
            "0.5,0.5",
            "--names",
            "train,test",
        ]
    if name == "data-audit":
        return [
            "data",
            "audit",
            "chestxray14",
            "--data-entry",
            str(_data_entry(d)),
            "--bbox-list",
            str(_bbox(d)),
        ]
    if name == "data-export":
        return ["data", "export", "chestxray14", "--path", str(_data_entry(d))]
    if name == "demo":
        return [
            "demo",
            "--offline",
            "--data-mirror",
            str(d / "no-mirror"),
            "--cache-dir",
            str(d / "no-cache"),
            "--section",
            "xqa_published",
        ]
    if name == "label-reports":
        p = d / "reports.csv"
        pd.DataFrame(
            {
                "study_id": [f"r{i}" for i in range(6)],
                "findings": ["Small left effusion.", "No pneumothorax.", "Heart size is normal."] * 2,
                "impression": ["Effusion.", "No acute disease.", "Possible atelectasis."] * 2,
            }
        ).to_csv(p, index=False)
        return ["label-reports", "--reports", str(p)]
    if name == "reader-export":
        return ["reader", "export", "--db", _reader_db(d)]
    if name == "predict":
        return ["predict", "--images", str(_images(d)), "--model", f"torch:{_tiny_model(d)}", "--heatmaps"]
    if name == "finetune":
        from PIL import Image

        imgs = d / "ft_imgs"
        imgs.mkdir(exist_ok=True)
        rng = np.random.default_rng(0)
        for i in range(4):  # patient i // 2: one positive and one negative image each
            Image.fromarray(rng.integers(0, 256, (16, 16), dtype=np.uint8)).save(imgs / f"im{i}.png")
        pd.DataFrame(
            {
                "study_id": [f"im{i}.png" for i in range(4)] * 2,
                "patient_id": [f"p{i // 2}" for i in range(4)] * 2,
                "finding": ["Atelectasis"] * 4 + ["Nodule"] * 4,
                "source": "s",
                "state": ["positive", "negative"] * 4,
            }
        ).to_csv(d / "ft_labels.csv", index=False)
        return [
            "finetune",
            "--images",
            str(imgs),
            "--labels",
            str(d / "ft_labels.csv"),
            "--model",
            f"torch:{_tiny_model(d)}",
            "--epochs",
            "1",
            "--val-fraction",
            "0.5",
            "--no-progress",
        ]
    if name == "plan":
        return [
            "plan",
            "-p",
            str(_preds(d)),
            "-l",
            str(_labels(d)),
            "--reference",
            "CR",
            "--budget",
            "5",
            "--n-draws",
            "10",
        ]
    if name == "mrmc":  # 60 studies: every bootstrap replicate draws both classes (no warning line)
        label_table(60, seed=0).to_csv(d / "mrmc_labels.csv", index=False)
        prediction_table(60, seed=1).to_csv(d / "mrmc_preds.csv", index=False)
        return [
            "mrmc",
            "-l",
            str(d / "mrmc_labels.csv"),
            "--readers",
            "Rep1,Rep2",
            "-p",
            str(d / "mrmc_preds.csv"),
            "-r",
            "CR",
            "--n-resamples",
            "20",
        ]
    raise KeyError(name)


def _reader_db(d: Path) -> str:
    """A reader-study database with two readers' image labels (needs the reader extra)."""
    pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")
    from cxreval.reader.payloads import Reader
    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    imgs = _images(d)
    (d / "study.yaml").write_text(f"findings: [Effusion]\nimages: {imgs.name}\nreaders: [r1, r2]\n")
    url = f"sqlite:///{d / 'study.db'}"
    store, _ = ReaderStore.create(url, load_study(d / "study.yaml"))
    for row in store.readers().itertuples():
        for k, item in enumerate(sorted(store.items["image"])):
            store.submit(
                Reader(int(row.id), row.name, row.role),
                f"{row.name}-{k:06d}",
                "image",
                item,
                {"labels": {"Effusion": "positive" if k else "negative"}},
            )
    store.close()
    return url


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a failed command wrote to stderr (fails on more lines or a traceback)."""
    cap = capsys.readouterr()
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in cap.err, cap.err
    return lines[0]


@pytest.fixture
def make_args() -> Callable[[str, Path], list[str]]:
    return command_args


# ------------------------------------------------------------------ an input table of a command line
def _table(args: list[str], name: str) -> Path:
    return next(Path(a) for a in args if Path(a).name == name)


def _replace(args: list[str], old: Path, new: Path | str) -> list[str]:
    return [str(new) if a == str(old) else a for a in args]
