"""Every command that the report or an error message suggests runs.

Two checks over the source of :mod:`cxreval` (string literals that are not docstrings, f-strings included, and
the text of its HTML templates, ``*.html.j2``):

* every mention ``cxreval <command> [options...]`` names a command that exists, and every option it names is
  an option of that command (so a renamed option cannot linger in a message);
* every mention that tells the user to run something is listed in :data:`RUNS` and is run here, as written
  (placeholders such as ``PATH``, ``S``, ``R``, ``OUT`` replaced by small inputs), exit 0 with the expected
  output. :func:`test_every_suggestion_is_run` fails when a new suggestion appears without a run.

The demo commands the report suggests for a missing analysis
(``cxreval demo --out cxreval-demo-KIND --section SECTION``, one per report kind) are each run, with real data,
by ``tests/demo/test_demo.py::test_suggested_commands_run_as_written`` (slow); here one of them runs and the
others are checked to parse.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import zipfile
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import typer

import cxreval
from cxreval.cli.main import app, main

SRC = Path(cxreval.__file__).parent

_TOKEN = r"(?:--?[a-z][\w-]*|(?:[a-z0-9]|\{\})(?:[\w.-]|\{\})*|[A-Z][A-Z_]*|\.\.\.)"
MENTION = re.compile(rf"cxreval((?: {_TOKEN})+)")
"""``cxreval`` then words, options, PLACEHOLDERS, ``{}`` (an f-string field) or ``...``, space-separated."""


def _root() -> Any:
    return typer.main.get_command(app)


def _resolve(words: list[str]) -> tuple[list[str], Any, list[str]]:
    """Split ``words`` into the command path, its (click) command (None: not a command) and the rest."""
    cmd = _root()
    path: list[str] = []
    for i, w in enumerate(words):
        if not hasattr(cmd, "get_command"):  # a command, not a group (typer vendors click: no isinstance)
            return path, cmd, words[i:]
        sub = cmd.get_command(None, w)
        if sub is None:
            return path, (cmd if path else None), words[i:]
        path.append(w)
        cmd = sub
    return path, cmd, []


def _literals(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, text) of every string literal that is not a docstring; f-string fields become ``{}``."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skip.add(id(node.value))  # docstrings and attribute docstrings
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            yield node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def _command_words(words: list[str]) -> list[str] | None:
    """The words of ``words`` that form a command line: the command path, then options (with their value when
    they take one) and the command's positional arguments; None when ``words`` names no command."""
    path, cmd, rest = _resolve(words)
    if cmd is None or cmd is _root():
        return None
    params = list(getattr(cmd, "params", []))
    opts = {o: p for p in params for o in (*p.opts, *p.secondary_opts)}
    n_args = sum(1 for p in params if p.param_type_name == "argument")
    out, i = list(path), 0
    while i < len(rest):
        w = rest[i]
        if w.startswith("-"):
            out.append(w)
            p = opts.get(w)
            takes_value = p is None or not (getattr(p, "is_flag", False) or getattr(p, "count", False))
            if takes_value and i + 1 < len(rest) and not rest[i + 1].startswith("-"):
                out.append(rest[i + 1])
                i += 1
        elif n_args > 0:
            out.append(w)
            n_args -= 1
        else:
            break
        i += 1
    return out


def mentions() -> dict[str, list[str]]:
    """``{mention: [file:line, ...]}`` for every command mentioned in a string literal or an HTML template of
    cxreval."""
    out: dict[str, list[str]] = {}
    texts: list[tuple[Path, Iterator[tuple[int, str]]]] = [
        (p, _literals(ast.parse(p.read_text(), str(p)))) for p in sorted(SRC.rglob("*.py"))
    ]
    texts += [(p, enumerate(p.read_text().splitlines(), 1)) for p in sorted(SRC.rglob("*.html.j2"))]
    for p, lines in texts:
        for line, text in lines:
            for m in MENTION.finditer(text):
                words = _command_words(m.group(1).split())
                if words is not None:
                    out.setdefault(" ".join(["cxreval", *words]), []).append(f"{p.relative_to(SRC)}:{line}")
    return out


# --- the runs ------------------------------------------------------------------------------------------------------


def _fake_wheel(d: Path) -> tuple[Path, str]:
    from cxreval.datasets._fetch import METADATA_FILES, WHEEL_FILE

    p = d / WHEEL_FILE
    with zipfile.ZipFile(p, "w") as zf:
        for n in METADATA_FILES:
            zf.writestr(f"torchxrayvision/data/{n}", f"content of {n}\n")
    return p, hashlib.sha256(p.read_bytes()).hexdigest()


def run_data_fetch(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    mp.setenv("CXREVAL_CACHE", str(request.getfixturevalue("metadata_dir").parent))
    assert main(["data", "fetch"]) == 0
    assert capsys.readouterr().out.startswith("cached: 7 metadata files in ")


def run_data_fetch_all(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    import shutil

    from cxreval.datasets.mirror import PINNED

    metadata = request.getfixturevalue("metadata_dir")
    shutil.copytree(metadata, tmp / "cache" / metadata.name)
    mp.setenv("CXREVAL_CACHE", str(tmp / "cache"))
    mp.setenv("CXREVAL_DATA_MIRROR", str(request.getfixturevalue("shared_data")))
    assert main(["data", "fetch", "--all"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cached: 7 metadata files in ")
    assert f"cached: {len(PINNED)} pinned reference files (" in out and str(tmp / "cache" / "mirror") in out
    assert all((tmp / "cache" / "mirror" / e.local_path).is_file() for e in PINNED)


def run_data_fetch_from_wheel(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    import cxreval.jobs._data as data_jobs
    from cxreval.datasets import fetch_metadata

    whl, sha = _fake_wheel(tmp)  # a small wheel with the real layout; its own checksum stands in for the pin
    mp.setattr(data_jobs, "fetch_metadata", partial(fetch_metadata, expected_sha256=sha))
    mp.setenv("CXREVAL_CACHE", str(tmp / "cache"))
    assert main(["data", "fetch", "--from-wheel", str(whl)]) == 0
    assert capsys.readouterr().out.startswith("extracted: 7 metadata files in ")


def run_audit_json(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    mp.setenv("CXREVAL_CACHE", str(request.getfixturevalue("metadata_dir").parent))
    assert main(["data", "audit", "chestxray14", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_images"] == 112_120


def run_rank_xqa(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    mp.chdir(tmp)
    assert main(["rank", "--auc-table", "xqa", "--out", "xqa"]) == 0
    assert (tmp / "xqa" / "rank_correlation.csv").exists()


def run_rank_predictions(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    args = request.getfixturevalue("make_args")("rank", tmp / "in")  # tests/cli/conftest.py: small inputs
    assert main(args + ["--out", str(tmp / "rank")]) == 0
    assert len(pd.read_csv(tmp / "rank" / "rank_correlation.csv")) > 0


def run_iqa_agree(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    args = request.getfixturevalue("make_args")("iqa-agree", tmp / "in")
    s, r = args[args.index("--scores") + 1], args[args.index("--ratings") + 1]
    assert main(["iqa", "agree", "--scores", s, "--ratings", r, "--out", str(tmp / "OUT")]) == 0
    assert len(pd.read_csv(tmp / "OUT" / "metric_agreement.csv")) > 0


def run_reader_init(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")
    args = request.getfixturevalue("make_args")("iqa-degrade", tmp)  # writes two small PNGs into tmp/imgs
    imgs = Path(args[args.index("--images") + 1])
    (tmp / "study.yaml").write_text(f"findings: [Effusion]\nimages: {imgs.name}\nreaders: [r1, r2]\n")
    mp.chdir(tmp)
    mp.delenv("CXREVAL_READER_DB", raising=False)
    assert main(["reader", "init", "--study", str(tmp / "study.yaml")]) == 0
    from cxreval.reader.db import DEFAULT_URL

    assert (tmp / DEFAULT_URL.removeprefix("sqlite:///")).exists() and "r1: http" in capsys.readouterr().out


def _plan_inputs(tmp: Path) -> None:
    """A simulated plan's inputs in ``tmp``: p.csv, l.csv and an image per study in imgs/."""
    from PIL import Image

    from cxreval.planning import simulate_study_set

    sim = simulate_study_set(
        30, auc=[0.85, 0.75], sensitivity=[0.8], specificity=[0.85], prevalence=0.3, rng=0
    )
    sim.predictions.to_csv(tmp / "p.csv", index=False)
    sim.labels.to_csv(tmp / "l.csv", index=False)
    (tmp / "imgs").mkdir()
    for sid in sim.truth.index:
        Image.new("L", (8, 8), 9).save(tmp / "imgs" / f"{sid}.png")


def run_plan_reader_study(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    """`cxreval plan --images` says `reader init --study OUT/study.yaml`; its summary.md says `reader init --study
    study.yaml --db sqlite:///relabel.db` and `reader add-reader NAME --db sqlite:///relabel.db`, in the folder."""
    pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")
    _plan_inputs(tmp)
    out = tmp / "OUT"
    assert (
        main(
            [
                "plan",
                "-p",
                str(tmp / "p.csv"),
                "-l",
                str(tmp / "l.csv"),
                "--reference",
                "ref0",
                "--budget",
                "4",
                "--n-draws",
                "5",
                "--images",
                str(tmp / "imgs"),
                "-o",
                str(out),
            ]
        )
        == 0
    )
    said = capsys.readouterr().out
    assert f"cxreval reader init --study {out / 'study.yaml'}" in said
    assert (
        main(["reader", "init", "--study", str(out / "study.yaml"), "--db", f"sqlite:///{tmp / 'a.db'}"]) == 0
    )
    summary = (out / "summary.md").read_text()
    assert "`cxreval reader init --study study.yaml --db sqlite:///relabel.db`" in summary
    mp.chdir(out)
    assert main(["reader", "init", "--study", "study.yaml", "--db", "sqlite:///relabel.db"]) == 0
    assert main(["reader", "add-reader", "expert1", "--db", "sqlite:///relabel.db"]) == 0
    assert "http" in capsys.readouterr().out


def run_plan_without_images(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    """`cxreval plan` without --images says `reader init --study OUT/study.yaml --images IMAGES` and its summary.md
    `reader init --study study.yaml --images IMAGES --db sqlite:///relabel.db`: each runs as printed, IMAGES the
    image folder, and copies the planned studies' images into the study."""
    pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")
    import shlex
    import shutil

    _plan_inputs(tmp)
    out = tmp / "OUT"
    args = [
        "plan",
        "-p",
        str(tmp / "p.csv"),
        "-l",
        str(tmp / "l.csv"),
        "--reference",
        "ref0",
        "--budget",
        "4",
    ]
    assert main([*args, "--n-draws", "5", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    line = said[said.index("cxreval reader init") :].split(" (")[0].strip()
    assert line == f"cxreval reader init --study {out / 'study.yaml'} --images IMAGES", said
    words = [w if w != "IMAGES" else str(tmp / "imgs") for w in shlex.split(line)[1:]]
    assert main([*words, "--db", f"sqlite:///{tmp / 'a.db'}"]) == 0
    assert sorted(p.name for p in (out / "images").iterdir()) == sorted(
        f"{s}.png" for s in pd.read_csv(out / "relabel.csv")["study_id"]
    )
    shutil.rmtree(out / "images")  # the summary's command, in the folder, copies them again
    summary = (out / "summary.md").read_text()
    suggested = "cxreval reader init --study study.yaml --images IMAGES --db sqlite:///relabel.db"
    assert f"`{suggested}`" in summary
    mp.chdir(out)
    words = [w if w != "IMAGES" else str(tmp / "imgs") for w in suggested.split()[1:]]
    assert main(words) == 0 and len(list((out / "images").iterdir())) == 4


def run_plan_pilot(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    """`cxreval plan --pilot`'s summary.md says `reader init --study study.yaml` and `reader add-reader`, in the
    folder: both run there."""
    pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")
    from PIL import Image

    from cxreval.mrmc import simulate_roe_metz

    sim = simulate_roe_metz(n_readers=4, n_cases_negative=30, n_cases_positive=30, rng=0)
    pd.DataFrame(
        [
            {
                "reader": f"r{r}",
                "modality": ("unaided", "aided")[m],
                "study_id": f"s{i}",
                "finding": "Effusion",
                "rating": float(sim.ratings[m, r, i]),
            }
            for m in range(2)
            for r in range(4)
            for i in range(60)
        ]
    ).to_csv(tmp / "pilot.csv", index=False)
    pd.DataFrame(
        {
            "study_id": [f"s{i}" for i in range(60)],
            "patient_id": [f"p{i}" for i in range(60)],
            "finding": "Effusion",
            "source": "gt",
            "state": ["positive" if t else "negative" for t in sim.truth],
        }
    ).to_csv(tmp / "labels.csv", index=False)
    (tmp / "imgs").mkdir()
    for i in range(60):
        Image.new("L", (8, 8), 9).save(tmp / "imgs" / f"s{i}.png")
    out = tmp / "OUT"
    assert (
        main(
            [
                "plan",
                "--pilot",
                str(tmp / "pilot.csv"),
                "-l",
                str(tmp / "labels.csv"),
                "--reference",
                "gt",
                "--effect",
                "0.05",
                "--images",
                str(tmp / "imgs"),
                "-o",
                str(out),
            ]
        )
        == 0
    )
    summary = (out / "summary.md").read_text()
    assert "`cxreval reader init --study study.yaml`" in summary and "`cxreval reader add-reader`" in summary
    mp.chdir(out)
    assert main(["reader", "init", "--study", "study.yaml"]) == 0
    capsys.readouterr()
    assert main(["reader", "add-reader", "alice"]) == 0
    assert "#token=" in capsys.readouterr().out


def run_reader_add_reader(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    """`reader init` of a study file without readers suggests `add-reader NAME --db DB`: it adds one."""
    pytest.importorskip("sqlalchemy", reason="the reader extra (sqlalchemy) is in the test extra")
    args = request.getfixturevalue("make_args")("iqa-degrade", tmp)
    imgs = Path(args[args.index("--images") + 1])
    (tmp / "study.yaml").write_text(f"findings: [Effusion]\nimages: {imgs.name}\n")
    db = f"sqlite:///{tmp / 'study.db'}"
    assert main(["reader", "init", "--study", str(tmp / "study.yaml"), "--db", db]) == 0
    assert f"`cxreval reader add-reader NAME --db {db}`" in capsys.readouterr().out
    assert main(["reader", "add-reader", "alice", "--db", db]) == 0
    assert "#token=" in capsys.readouterr().out


def run_label_reports(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    assert (
        main(request.getfixturevalue("make_args")("label-reports", tmp / "in") + ["--out", str(tmp / "lab")])
        == 0
    )
    assert (tmp / "lab" / "run.json").exists()


def run_report_thresholds(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    assert (
        main(request.getfixturevalue("make_args")("classify", tmp / "in") + ["--out", str(tmp / "cls")]) == 0
    )
    thr = tmp / "FILE"
    thr.write_text(json.dumps({"srcc": {"stable": 0.95, "moderately stable": 0.8, "unstable": -1}}))
    assert main(["report", str(tmp / "cls"), "--thresholds", str(thr), "--out", str(tmp / "r.html")]) == 0
    assert "stable" in (tmp / "r.html").read_text()


def run_demo_section(
    tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    """The report's command for a missing analysis, run for the audit kind (the others: tests/demo/test_demo.py);
    for every kind, the demo command parses to a demo section and '<its own command> --help' runs."""
    from cxreval.demo.sections import SECTIONS
    from cxreval.report._sections import KINDS

    mp.chdir(tmp)
    mp.setenv("CXREVAL_DATA_MIRROR", str(request.getfixturevalue("shared_data")))
    mp.setenv("CXREVAL_CACHE", str(request.getfixturevalue("metadata_dir").parent))
    audit = next(k for k in KINDS if k.name == "audit")
    assert main(audit.commands[0].split()[1:]) == 0
    assert (tmp / "cxreval-demo-audit" / "report.html").exists()
    capsys.readouterr()
    for kind in KINDS:
        demo_cmd, help_cmd = kind.commands
        words = demo_cmd.split()[1:]
        _, cmd, _ = _resolve(words)
        ctx = cmd.make_context("demo", words[1:])
        assert list(ctx.params["section"]) == [kind.demo_section]  # click gives a tuple, typer a list
        assert kind.demo_section in {s.key for s in SECTIONS}
        assert main(help_cmd.split()[1:]) == 0, help_cmd
        assert capsys.readouterr().out.startswith("Usage: ")


def run_help(command: str) -> Callable[..., None]:
    """For a command named without its arguments (a heading, an error prefix, a help text, a report kind's
    own command): ``<command> --help`` runs and lists every option the mention names."""

    def run(
        tmp: Path, mp: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
    ) -> None:
        path, _, rest = _resolve(command.split()[1:])
        assert main([*path, "--help"]) == 0, command
        out = capsys.readouterr().out
        assert out.startswith("Usage: cxreval " + " ".join(path))
        assert all(w in out for w in rest if w.startswith("-")), (command, out)

    return run


def run_export_openi_mesh(tmp_path, monkeypatch, capsys, request) -> None:
    monkeypatch.setenv("CXREVAL_CACHE", str(request.getfixturevalue("metadata_dir").parent))
    assert main(["data", "export", "openi_mesh", "-o", str(tmp_path / "DIR")]) == 0
    assert set(pd.read_csv(tmp_path / "DIR" / "labels.csv")["source"]) == {"openi_mesh"}


def run_export_openi_mesh_held_out(tmp_path, monkeypatch, capsys, request) -> None:
    monkeypatch.setenv("CXREVAL_CACHE", str(request.getfixturevalue("metadata_dir").parent))
    assert main(["data", "export", "openi_mesh", "--half", "held-out", "-o", str(tmp_path / "DIR")]) == 0
    lab = pd.read_csv(tmp_path / "DIR" / "labels.csv")
    dropped = pd.read_csv(tmp_path / "DIR" / "dropped.csv")
    assert set(lab["source"]) == {"openi_mesh"}
    # one half of the reports with images and usable codes; the development half is listed as dropped
    n_dev = int(
        (dropped["reason"] == "in the development half (cxreval.datasets.openi.openi_tuning_split)").sum()
    )
    assert lab["study_id"].nunique() in (n_dev, n_dev + 1)
    assert json.loads((tmp_path / "DIR" / "run.json").read_text())["half"] == "held-out"


def run_data_list(tmp_path, monkeypatch, capsys, request) -> None:
    assert main(["data", "list"]) == 0
    assert "openi_mesh" in capsys.readouterr().out


RUNS: dict[str, Callable[..., None]] = {
    "cxreval data fetch": run_data_fetch,
    "cxreval data fetch --all": run_data_fetch_all,
    "cxreval data fetch --from-wheel PATH": run_data_fetch_from_wheel,
    "cxreval data audit chestxray14 --json": run_audit_json,
    "cxreval rank --auc-table xqa": run_rank_xqa,
    "cxreval rank --predictions ... --labels ...": run_rank_predictions,
    "cxreval iqa agree --scores S --ratings R --out OUT": run_iqa_agree,
    "cxreval reader init": run_reader_init,
    "cxreval reader add-reader NAME --db {}": run_reader_add_reader,
    **{
        c: run_plan_reader_study
        for c in (
            "cxreval reader init --study OUT",
            "cxreval reader init --study {}",
            "cxreval reader init --study study.yaml --db sqlite",
            "cxreval reader add-reader NAME --db sqlite",
        )
    },
    "cxreval reader add-reader": run_plan_pilot,
    "cxreval reader init --study study.yaml --images IMAGES --db sqlite": run_plan_without_images,
    "cxreval label-reports": run_label_reports,
    "cxreval data list": run_data_list,
    "cxreval data export openi_mesh -o DIR": run_export_openi_mesh,
    "cxreval data export openi_mesh --half held-out": run_export_openi_mesh_held_out,
    "cxreval report --thresholds FILE": run_report_thresholds,
    "cxreval demo --out cxreval-demo-{} --section {}": run_demo_section,
    **{
        c: run_help(c)
        for c in (
            "cxreval agree",
            "cxreval classify",
            "cxreval data audit",
            "cxreval finetune",
            "cxreval data split",
            "cxreval data split --names",
            "cxreval demo",
            "cxreval fuse",
            "cxreval iqa agree",
            "cxreval iqa compare",
            "cxreval iqa degrade",
            "cxreval iqa score",
            "cxreval localize",
            "cxreval localize --heatmaps",
            "cxreval predict",
            "cxreval rank",
            "cxreval reader",
            "cxreval report",
            "cxreval synth",
            "cxreval plan",
            "cxreval classify --latent-truth",
            "cxreval mrmc",
            "cxreval reader export",
            "cxreval mrmc --ratings",
            "cxreval subgroups",
        )
    },
    # a demo section's run.json `commands`: run as written, in an empty folder, by
    # tests/demo/test_recorded_commands.py (real data); here their options are checked against --help
    **{
        c: run_help(c)
        for c in (
            "cxreval agree -l nih",
            "cxreval data audit chestxray14",
            "cxreval data export",
            "cxreval data export {} -o {}",
            "cxreval rank --auc-table xqa -o xqa_published",
            "cxreval rank -p {} -l nih",
            "cxreval synth --seed 0 --per-size 60 -o localization_synthetic",
            "cxreval data export {} --path {} -o {}",
            "cxreval rank -p chexpert_predictions",
            "cxreval agree -l chexpert",
            "cxreval fuse -l chexpert",
            "cxreval synth --no-synthetic --real-boxes auto",
            "cxreval data export openi_mesh --half held-out -o openi_mesh",
            "cxreval label-reports --reports {} --sections whole --validate-against openi_mesh",
            "cxreval label-reports --reports {} --sections findings",
            "cxreval agree -l openi_sections",
            "cxreval iqa degrade --images {} --plan {} --sample {} --max-size {} -o iqa",
            "cxreval iqa score --pairs iqa",
            "cxreval iqa compare --scores iqa",
            "cxreval plan -p chexpert_predictions",
            "cxreval mrmc -l chexpert",
            "cxreval data export chestxray14_metadata",
        )
    },
}
"""Every command mentioned in cxreval's messages and report (as it stands in the source) and its test run."""


# --- the tests -----------------------------------------------------------------------------------------------------


def test_every_mentioned_command_and_option_exists() -> None:
    found = mentions()
    assert len(found) > 20, found  # the scan sees the messages
    bad = []
    for mention, where in found.items():
        path, cmd, rest = _resolve(mention.split()[1:])
        opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        unknown = [w for w in rest if w.startswith("-") and w not in opts]
        if unknown:
            bad.append(f"{where}: {mention!r}: 'cxreval {' '.join(path)}' has no option {unknown}")
    assert not bad, "\n".join(bad)


def test_every_mention_has_a_run() -> None:
    """RUNS is complete (a new suggestion without a run fails here) and has no stale entry."""
    found = mentions()
    assert set(found) - set(RUNS) == set(), {m: found[m] for m in set(found) - set(RUNS)}
    assert set(RUNS) - set(found) == set(), (
        f"RUNS lists commands no longer mentioned: {set(RUNS) - set(found)}"
    )


@pytest.mark.parametrize("command", sorted(RUNS))
def test_suggested_command_runs(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    RUNS[command](tmp_path, monkeypatch, capsys, request)


def test_the_option_check_catches_a_wrong_option() -> None:
    """The check fails on a deliberate violation: the demo once suggested `cxreval rank --published xqa`."""
    assert _command_words("rank --published xqa".split()) == ["rank", "--published", "xqa"]
    path, cmd, rest = _resolve(["rank", "--published", "xqa"])
    opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    assert path == ["rank"] and rest[0] not in opts and "--auc-table" in opts


def _all_options(cmd: Any = None) -> set[str]:
    cmd = _root() if cmd is None else cmd
    opts = {o for p in getattr(cmd, "params", []) for o in (*p.opts, *p.secondary_opts)}
    for name in cmd.list_commands(None) if hasattr(cmd, "list_commands") else []:
        opts |= _all_options(cmd.get_command(None, name))
    return opts


NOT_CXREVAL_OPTIONS = {
    "--no-deps": "pip's option, in the install hint of iqa/adapters.py",
    "--force-reinstall": "pip's option, in the torchvision-mismatch fix of predict/models.py",
    "--index-url": "pip's option, in the torchvision-mismatch fix of predict/models.py",
    "--help": "every command's help ('<command> --help' in the report)",
}
PENDING_OPTIONS = {
    "--executor": "rank, fuse and iqa take --executor SPEC; cli.main suggests it for --workers"
}


def test_every_option_a_message_names_exists() -> None:
    """Every ``--option`` in a message (a string literal with a space, not an argv element) is an option of some
    cxreval command."""
    known = _all_options() | set(NOT_CXREVAL_OPTIONS)
    pending = {o for o in PENDING_OPTIONS if o not in known}
    bad: list[str] = []
    for p in sorted(SRC.rglob("*.py")):
        for line, text in _literals(ast.parse(p.read_text(), str(p))):
            if " " in text.strip():
                bad += [
                    f"{p.relative_to(SRC)}:{line}: {o} ({text[:80]!r})"
                    for o in re.findall(r"(?<![\w-])--[a-z][\w-]*", text)
                    if o not in known | pending
                ]
    assert not bad, "\n".join(bad)
