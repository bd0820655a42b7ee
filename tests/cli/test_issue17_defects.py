"""Issue 17, defects 5-9: each reproduction from the issue as a test (they failed on b07316c; see the commit).

5 tracebacks after the computation for unusable paths and empty inputs; 6 silent coercions and drops;
7 a split name escaping --out; 8 progress and warnings; 9 one flag vocabulary, help texts, lazy import.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer

from cxreval.cli.main import app, main

from .conftest import command_args


def _err_line(capsys: pytest.CaptureFixture[str]) -> str:
    cap = capsys.readouterr()
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in cap.err, cap.err
    return lines[0]


# --- defect 5: one line and exit 2, never a traceback ---------------------------------------------------------

@pytest.mark.parametrize("cmd", [["data", "fetch"], ["data", "audit", "chestxray14"],
                                 ["data", "split", "chestxray14", "-o", "{tmp}/o"],
                                 ["demo", "--offline", "-o", "{tmp}/o"]])
@pytest.mark.parametrize("where", ["file", "under-file"])
def test_cache_dir_file_is_one_line(tmp_path, capsys, cmd, where):
    f = tmp_path / "f"
    f.write_text("x")
    cache = f if where == "file" else f / "sub"
    args = [a.replace("{tmp}", str(tmp_path)) for a in cmd]
    assert main([*args, "--cache-dir", str(cache)]) == 2
    line = _err_line(capsys)
    assert str(f) in line and ("--cache-dir" in line or "is a file" in line)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("content", ["", "reference,test\n"])
def test_iqa_score_empty_or_header_only_pairs(tmp_path, capsys, content):
    p = tmp_path / "pairs.csv"
    p.write_text(content)
    assert main(["iqa", "score", "--pairs", str(p), "--metrics", "psnr", "-o", str(tmp_path / "o")]) == 2
    assert str(p) in _err_line(capsys)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("which, content", [("scores", ""), ("ratings", ""), ("ratings", "image,rater,rating\n")])
def test_iqa_agree_empty_or_header_only_inputs(tmp_path, capsys, which, content):
    args = command_args("iqa-agree", tmp_path)
    (tmp_path / f"{which}.csv").write_text(content)
    assert main([*args, "-o", str(tmp_path / "o")]) == 2
    assert f"--{which} file" in _err_line(capsys)


def test_synth_real_boxes_header_only(tmp_path, capsys):
    p = tmp_path / "bbox.csv"
    p.write_text("Image Index,Finding Label,Bbox [x,y,w,h],,,\n")
    assert main(["synth", "--per-size", "1", "--real-boxes", str(p), "-o", str(tmp_path / "o")]) == 2
    assert f"{p} has no rows" in _err_line(capsys)
    assert not (tmp_path / "o").exists()


# --- defect 6: no silent coercion or drop -----------------------------------------------------------------------

def _float_tiff(path: Path, scale: float) -> None:
    import tifffile

    rng = np.random.default_rng(0)
    tifffile.imwrite(path, (rng.random((16, 16)) * scale).astype(np.float32))


def test_iqa_degrade_refuses_float_images_outside_0_1(tmp_path, capsys):
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    _float_tiff(imgs / "a.tif", 4000.0)  # e.g. raw detector values: clipping would saturate ~every pixel
    plan = tmp_path / "plan.yaml"
    plan.write_text("degradations:\n  - {transform: gaussian_blur, params: {sigma: 1.0}}\n")
    assert main(["iqa", "degrade", "--images", str(imgs), "--plan", str(plan), "-o", str(tmp_path / "o")]) == 2
    line = _err_line(capsys)
    assert "outside the data range 0..1" in line and "a.tif" in line
    assert not (tmp_path / "o").exists()
    _float_tiff(imgs / "a.tif", 1.0)  # in range: accepted
    assert main(["iqa", "degrade", "--images", str(imgs), "--plan", str(plan), "-o", str(tmp_path / "o")]) == 0


@pytest.mark.parametrize("entry", ["{transform: gaussian_blur, params: {sigma: -1}}",
                                   "{transform: gaussian_blur, params: {sigma: 0}}",
                                   "{transform: gaussian_noise, params: {sigma: -0.1}}",
                                   "{transform: unsharp_mask, params: {sigma: 1, amount: 0}}"])
def test_iqa_degrade_refuses_no_op_or_negative_parameters_before_writing(tmp_path, capsys, entry):
    args = command_args("iqa-degrade", tmp_path)
    plan = Path(args[args.index("--plan") + 1])
    plan.write_text("degradations:\n  - {transform: gamma, params: {gamma: 0.5}}\n  - " + entry + "\n")
    assert main([*args, "-o", str(tmp_path / "o")]) == 2
    assert "must be a number > 0" in _err_line(capsys)
    assert not (tmp_path / "o").exists()


def test_iqa_degrade_failing_midway_leaves_no_partial_output(tmp_path, capsys):
    args = command_args("iqa-degrade", tmp_path)
    imgs = Path(args[args.index("--images") + 1])
    (imgs / "zz_broken.png").write_bytes(b"not a png")  # sorted last: the first images are written first
    assert main([*args, "-o", str(tmp_path / "o")]) == 2
    _err_line(capsys)
    assert not (tmp_path / "o").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".o.")] == []


def test_classify_reads_parquet_and_upper_case_csv_model_files(tmp_path, capsys):
    args = command_args("classify", tmp_path)
    preds = pd.read_csv(args[args.index("-p") + 1])
    folder = tmp_path / "wide"
    folder.mkdir()
    for m, g in preds.groupby("model"):
        wide = g.pivot(index="study_id", columns="finding", values="score").reset_index()
        {"m1": lambda w: w.to_csv(folder / "m1.csv", index=False),
         "m2": lambda w: w.to_parquet(folder / "m2.parquet", index=False),
         "m3": lambda w: w.to_csv(folder / "m3.CSV", index=False)}[m](wide)
    (folder / "notes.txt").write_text("x")
    args[args.index("-p") + 1] = str(folder)
    assert main([*args, "-o", str(tmp_path / "o"), "--json"]) == 0
    auc = pd.DataFrame(json.loads(capsys.readouterr().out)["auc"])
    assert set(auc.model) == {"m1", "m2", "m3", "Mean"}
    assert "notes.txt" in (tmp_path / "o" / "summary.md").read_text()  # what was not read is said


def test_localize_refuses_non_square_heatmaps_and_duplicated_boxes(tmp_path, capsys):
    args = command_args("localize", tmp_path)
    npz, bbox = Path(args[args.index("--heatmaps") + 1]), Path(args[args.index("--boxes") + 1])
    np.savez(tmp_path / "rect.npz", **{"im1.png/Atelectasis": np.ones((8, 16)), "im2.png/Nodule": np.ones((8, 8))})
    rect = [*args]
    rect[rect.index("--heatmaps") + 1] = str(tmp_path / "rect.npz")
    assert main([*rect, "-o", str(tmp_path / "o")]) == 2
    assert "is 8 x 16 but the image is 1024 x 1024" in _err_line(capsys)
    bbox.write_text(bbox.read_text() + "im2.png,Nodule,600,600,40,50\n")
    assert main([*args, "-o", str(tmp_path / "o")]) == 2
    assert "repeats the same box in rows [1, 2]" in _err_line(capsys)
    assert npz.exists() and not (tmp_path / "o").exists()


@pytest.mark.parametrize("auc", [1.7, -0.2])
def test_rank_refuses_auc_outside_0_1(tmp_path, capsys, auc):
    rows = [{"model": f"m{i}", "finding": "Edema", "reference": r, "auc": 0.5 + 0.1 * i}
            for i in range(3) for r in ("A", "B")]
    rows[4]["auc"] = auc
    p = tmp_path / "auc.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    assert main(["rank", "--auc-table", str(p), "-o", str(tmp_path / "o")]) == 2
    assert f"'auc' {auc:g} is outside [0, 1]" in _err_line(capsys)


# --- defect 7: names escaping --out -----------------------------------------------------------------------------

@pytest.mark.parametrize("names", ["../evil,test", "a/b,test", "/abs,test", "..,test"])
def test_data_split_names_cannot_escape_out(tmp_path, capsys, names):
    args = command_args("data-split", tmp_path / "in")
    args[args.index("--names") + 1] = names
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    assert main([*args, "-o", str(tmp_path / "out" / "split")]) == 2
    assert "is not a plain file-name part" in _err_line(capsys)
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_stale_split_lists_are_not_audited(tmp_path, capsys):
    audit_args = command_args("data-audit", tmp_path / "in")
    de = audit_args[audit_args.index("--data-entry") + 1]
    out = tmp_path / "split"
    assert main(["data", "split", "chestxray14", "--data-entry", de, "--fractions", "0.5,0.5", "--names",
                 "train,test", "-o", str(out)]) == 0
    capsys.readouterr()
    # a stale list beside the run's files (e.g. copied in by hand) would make every patient of it shared
    (out / "old_list.txt").write_text("".join(f"{p:08d}_000.png\n" for p in range(1, 31)))
    assert main([*audit_args, "--split-dir", str(out), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)["split"]
    assert audit["n_shared_patients"] == 0
    assert sorted(s["split"] for s in audit["sizes"]) == ["test", "train"]


# --- defect 8: progress off when not a terminal; warnings once, one line each ----------------------------------

def test_warnings_are_summarised_one_line_each(tmp_path, capsys):
    args = command_args("classify", tmp_path)
    labels = pd.read_csv(args[args.index("-l") + 1])
    labels.loc[labels.finding == "Effusion", "state"] = "negative"  # AUC undefined for every model
    labels.to_csv(args[args.index("-l") + 1], index=False)
    assert main([*args, "-o", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    warn = [ln for ln in err if ln.startswith("cxreval: warning: ")]
    assert warn and len(warn) == len(set(warn)) == len(err)  # nothing but the summary lines, each once
    assert all(ln.endswith("[UndefinedMetricWarning]") for ln in warn)


def test_no_progress_output_when_stderr_is_not_a_terminal(tmp_path):
    args = command_args("fuse", tmp_path)
    r = subprocess.run([sys.executable, "-m", "cxreval", *args, "-o", str(tmp_path / "o")], capture_output=True,
                       text=True, timeout=120)
    # only the once-per-run warning summary (e.g. fusion's over-fused states) may appear: no progress output
    assert r.returncode == 0, r.stderr
    assert all(ln.startswith("cxreval: warning: ") for ln in r.stderr.splitlines()), r.stderr


def test_progress_bars_render_on_a_terminal(monkeypatch):
    import io

    import rich.console

    from cxreval.cli import _common
    from cxreval.executor import SerialExecutor

    buf = io.StringIO()
    real = rich.console.Console
    monkeypatch.setattr(rich.console, "Console", lambda **k: real(file=buf, force_terminal=True, width=100))
    with _common.progress() as prog:
        task = prog.add("shards", total=3)
        out = SerialExecutor().map(lambda x: x * 2, [1, 2, 3], on_item=lambda _: prog.advance(task))
    assert out == [2, 4, 6]
    assert "shards" in buf.getvalue() and "3/3" in buf.getvalue()


# --- defect 9: one vocabulary, help, examples, lazy import -----------------------------------------------------

def _all_commands():
    root = typer.main.get_command(app)
    out = []

    def walk(cmd, path):
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(None):
                walk(cmd.get_command(None, name), (*path, name))
        else:
            out.append((path, cmd))

    walk(root, ())
    return out


ALL = _all_commands()


@pytest.mark.parametrize("path, cmd", ALL, ids=[" ".join(p) for p, _ in ALL])
def test_help_vocabulary_and_example(path, cmd, capsys):
    opts = [o for p in cmd.params for o in getattr(p, "opts", [])]
    for p in cmd.params:
        if getattr(p, "param_type_name", "") == "option":
            assert p.help, f"{' '.join(path)} {p.opts} has no help text"
            assert all(o == o.lower() for o in p.opts if o.startswith("--")), p.opts
    if "--out" in opts:
        assert "-o" in opts, f"{' '.join(path)}: --out without -o"
    if "--seed" in opts or any(getattr(p, "name", "") == "seed" for p in cmd.params):
        assert "--seed" in opts
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    assert "<bool>" not in text
    if path[-1] not in ("list",) and path != ("report",):  # `report` is owned by another change
        assert "Example:" in text, f"{' '.join(path)} --help has no example"


@pytest.mark.parametrize("path, cmd", ALL, ids=[" ".join(p) for p, _ in ALL])
def test_help_text_is_shown_verbatim(path, cmd, capsys):
    """No markup eats text such as '[patient_id,]' or '[0, 255]': every option's help appears in --help."""
    assert main([*path, "--help"]) == 0
    shown = "".join(capsys.readouterr().out.split())
    for p in cmd.params:
        if getattr(p, "help", None):
            assert "".join(p.help.split()) in shown, (path, p.help)


def test_help_texts_that_describe_their_values(capsys):
    from cxreval.demo import SECTIONS

    assert main(["iqa", "degrade", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "degradations:" in text and "gaussian_blur" in text and "output_dtype" in text
    assert main(["demo", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for key in (s.key for s in SECTIONS):
        assert key in text



def test_findings_comma_separated_equals_repeated_and_labels_repeatable(tmp_path, capsys):
    args = command_args("classify", tmp_path)
    assert main([*args, "--findings", "Edema,Effusion", "-o", str(tmp_path / "a"), "--json"]) == 0
    a = json.loads(capsys.readouterr().out)["auc"]
    assert main([*args, "-f", "Edema", "-f", "Effusion", "-o", str(tmp_path / "b"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["auc"] == a
    lab = pd.read_csv(args[args.index("-l") + 1])
    lab[lab.source == "CR"].to_csv(tmp_path / "cr.csv", index=False)
    lab[lab.source != "CR"].to_csv(tmp_path / "readers.csv", index=False)
    for cmd in (["agree", "--pairs", "CR:Rep1"], ["fuse", "--readers", "Rep1,Rep2", "--methods", "mv",
                                                  "--adjudicated", "CR"]):
        assert main([*cmd, "-l", str(tmp_path / "cr.csv"), "-l", str(tmp_path / "readers.csv"),
                     "-o", str(tmp_path / cmd[0])]) == 0, capsys.readouterr().err


def test_library_parameter_names_become_flags(tmp_path, capsys):
    args = command_args("classify", tmp_path)
    assert main([*args, "--confidence-level", "1.5", "-o", str(tmp_path / "o")]) == 2
    line = _err_line(capsys)
    assert line.startswith("cxreval: error: --confidence-level must be") and "evaluate_auc" not in line


def test_version_imports_no_command_module():
    code = ("import sys; from cxreval.cli.main import main; rc = main(['--version']); "
            "heavy = [m for m in ('pandas', 'numpy', 'scipy', 'cxreval.cli.classify', 'cxreval.cli.iqa') "
            "if m in sys.modules]; print(rc, heavy)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip().splitlines()[-1] == "0 []", r.stdout + r.stderr


def test_every_command_is_listed_in_root_help(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for cmd in ("agree", "classify", "data", "demo", "fuse", "iqa", "localize", "rank", "report", "synth"):
        assert f"  {cmd}" in text
