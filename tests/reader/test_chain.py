"""The chain: readers and a resolver submit through the API -> `cxreval reader export` -> `cxreval agree`,
`fuse` and `iqa agree` give hand-computed values; boxes read back with the `cxreval localize` reader."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.cli.main import main

from .conftest import decision

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

# Effusion per image (a1, a2, b1, c1); every other finding negative for both readers.
ALICE = {"a1": "positive", "a2": "negative", "b1": "positive", "c1": "negative"}
BOB = {"a1": "positive", "a2": "negative", "b1": "negative", "c1": "negative"}
# IQA (ratings of test0, test1, test2 on 1..4)
ALICE_IQA, BOB_IQA = [4, 2, 1], [3, 1, 2]


def _post(c, token: str, body: dict) -> dict:
    r = c.post("/api/submissions", headers={"Authorization": f"Bearer {token}"}, json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_submit_export_agree_fuse_iqa(app_client, image_submission, tmp_path: Path) -> None:
    store, tokens, c = app_client
    n = 0
    for reader, states in (("alice", ALICE), ("bob", BOB)):
        for item, s in states.items():
            n += 1
            boxes = (
                [{"finding": "Effusion", "x_min": 2, "y_min": 3, "x_max": 30.5, "y_max": 40}]
                if (reader, item) == ("alice", "a1")
                else []
            )
            _post(c, tokens[reader], image_submission(f"sub-{n:06d}", item, {"Effusion": s}, boxes))
    # alice first said c1 Nodule positive, then corrected it: the latest submission counts
    _post(c, tokens["alice"], image_submission("sub-c1-first", "c1", {"Nodule": "positive"}))
    _post(c, tokens["alice"], image_submission("sub-c1-again", "c1", {}))
    # report sections: alice labels the findings section of a1
    _post(
        c,
        tokens["alice"],
        {
            "id": "rep-000001",
            "task": "report",
            "item": "findings:a1",
            "labels": {"Effusion": "positive", "Cardiomegaly": "not_mentioned", "Nodule": "not_mentioned"},
        },
    )
    # the resolver sees one conflict (b1, Effusion) and resolves it negative
    h = {"Authorization": f"Bearer {tokens['carol']}"}
    assert c.get("/api/queue?task=adjudication", headers=h).json() == {
        "task": "adjudication",
        "keys": ["b1"],
        "done": "0",
    }
    item = c.get("/api/item?task=adjudication&key=b1", headers=h).json()
    assert item["conflicts"] == {"Effusion": {"alice": "positive", "bob": "negative"}}
    _post(
        c,
        tokens["carol"],
        {
            "id": "adj-000001",
            "task": "adjudication",
            "item": "b1",
            "labels": {"Effusion": "negative"},
            "conflicts": item["conflicts"],
        },
    )
    # IQA: ratings by test image
    pairs = pd.read_csv(Path(store.spec.root) / "pairs.csv")
    key_of = {v["test"]: k for k, v in store.items["iqa"].items()}
    for reader, vals in (("alice", ALICE_IQA), ("bob", BOB_IQA)):
        for k, (test, v) in enumerate(zip(pairs["test"], vals)):
            _post(
                c,
                tokens[reader],
                {
                    "id": f"iqa-{reader}-{k:04d}",
                    "task": "iqa",
                    "item": key_of[test],
                    "ratings": {"overall": v},
                },
            )

    db = str(store.engine.url)
    out = tmp_path / "export"
    assert main(["reader", "export", "--db", db, "--out", str(out)]) == 0
    assert main(["reader", "export", "--db", db, "--out", str(out)]) == 2  # refuses to overwrite
    labels = pd.read_csv(out / "labels.csv")
    assert sorted(labels["source"].unique()) == [
        "conflict_resolved",
        "img_alice",
        "img_bob",
        "rep_findings_alice",
    ]
    from cxreval.labels import read_labels

    table = read_labels(out / "labels.csv").table  # the long label table, with patients
    cr = table[(table["source"] == "conflict_resolved") & (table["finding"] == "Effusion")]
    assert dict(zip(cr["study_id"], cr["state"].astype(int))) == {"a1": 2, "a2": 0, "b1": 0, "c1": 0}
    assert set(table.loc[table["study_id"] == "a2", "patient_id"]) == {"pa"}
    c1 = table[
        (table["source"] == "img_alice") & (table["study_id"] == "c1") & (table["finding"] == "Nodule")
    ]
    assert c1["state"].astype(int).tolist() == [0]
    assert len(table[table["source"] == "img_alice"]) == 12  # 4 images x 3 findings, latest only
    audit = pd.read_csv(out / "audit.csv")
    assert len(audit) == 8 + 2 + 1 + 1 + 6 and audit["server_time"].notna().all()
    assert json.loads((out / "run.json").read_text())["status"] == "success"

    # cxreval agree: Effusion alice vs bob. Po = 3/4; marginals alice pos 1/2, bob pos 1/4 -> Pe = 1/2;
    # kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2 (quadratic weights: neg vs pos is a full disagreement).
    # F1 with alice as reference: pos P=1 R=1/2 F1=2/3; neg P=2/3 R=1 F1=4/5; support-weighted 11/15.
    assert (
        main(
            [
                "agree",
                "--labels",
                str(out / "labels.csv"),
                "--pairs",
                "img_alice:img_bob",
                "--findings",
                "Effusion",
                "--out",
                str(tmp_path / "agree"),
            ]
        )
        == 0
    )
    agr = pd.read_csv(tmp_path / "agree" / "agreement.csv").set_index("finding")
    assert agr.loc["Effusion", "kappa_w"] == pytest.approx(0.5)
    assert agr.loc["Effusion", "f1_w"] == pytest.approx(11 / 15)

    # cxreval fuse against conflict_resolved (CR = a1 pos, others neg): `and` = CR -> kappa 1; `or` = alice
    # -> kappa 1/2 as above; `mv` ties at b1 -> uncertain: quadratic kappa = 1 - (1/16) / (6/16) = 5/6.
    assert (
        main(
            [
                "fuse",
                "--labels",
                str(out / "labels.csv"),
                "--readers",
                "img_alice,img_bob",
                "--methods",
                "mv,or,and",
                "--adjudicated",
                "conflict_resolved",
                "--findings",
                "Effusion",
                "--out",
                str(tmp_path / "fuse"),
            ]
        )
        == 0
    )
    fa = pd.read_csv(tmp_path / "fuse" / "fusion_agreement.csv")
    fa = fa[fa["finding"] == "Effusion"].set_index("method")["kappa_w"]
    assert (
        fa["and"] == pytest.approx(1.0)
        and fa["or"] == pytest.approx(0.5)
        and fa["mv"] == pytest.approx(5 / 6)
    )

    # cxreval iqa agree: z-scores (ddof 0) alice [4,2,1] -> mean 7/3, sd sqrt(42/27); bob [3,1,2] -> mean 2,
    # sd sqrt(2/3); Spearman(alice, bob) = 1 - 6 * 2 / (3 * 8) = 1/2.
    ratings = pd.read_csv(out / "iqa_ratings_overall.csv")
    assert list(ratings.columns) == ["image", "rater", "rating"] and len(ratings) == 6
    scores = pd.DataFrame(
        {
            "reference": pairs["reference"],
            "test": pairs["test"],
            "metric": "psnr",
            "value": [30.0, 20.0, 25.0],
        }
    )
    scores.to_csv(tmp_path / "scores.csv", index=False)
    assert (
        main(
            [
                "iqa",
                "agree",
                "--scores",
                str(tmp_path / "scores.csv"),
                "--ratings",
                str(out / "iqa_ratings_overall.csv"),
                "--n-resamples",
                "20",
                "--out",
                str(tmp_path / "iqa"),
            ]
        )
        == 0
    )
    za = (np.array(ALICE_IQA) - 7 / 3) / math.sqrt(42 / 27)
    zb = (np.array(BOB_IQA) - 2) / math.sqrt(2 / 3)
    zmos = pd.read_csv(tmp_path / "iqa" / "zmos.csv").set_index("image")["zmos"]
    np.testing.assert_allclose(zmos.loc[list(pairs["test"])].to_numpy(), (za + zb) / 2, rtol=1e-12)
    ra = pd.read_csv(tmp_path / "iqa" / "rater_agreement.csv")
    pair = ra[(ra["rater_a"] == "alice") & (ra["rater_b"] == "bob")]
    assert pair["srcc"].iloc[0] == pytest.approx(0.5)
    full = pd.read_csv(out / "iqa_ratings.csv")
    assert set(full["degradation"]) == {"jpeg", "noise", "blur"}  # hidden from readers, kept in the export

    # boxes: the ChestX-ray14 layout that `cxreval localize --boxes` reads
    from cxreval.datasets.nih_boxes import read_nih_boxes

    boxes = read_nih_boxes(out / "boxes" / "img_alice.csv", image_shape=(48, 64)).table
    assert boxes.to_dict(orient="records") == [
        {"study_id": "a1", "finding": "Effusion", "x_min": 2.0, "y_min": 3.0, "x_max": 30.5, "y_max": 40.0}
    ]
    # and the combined boxes.csv is a box table in the one box schema (every reader a source)
    from cxreval.datasets.boxes import read_box_file

    both = read_box_file(out / "boxes.csv", image_shape=(48, 64)).table
    assert list(both.columns[:3]) == ["study_id", "finding", "source"]
    assert set(both["source"]) >= {"img_alice"} and set(both["study_id"]) == {"a1"}


def test_cli_init_add_reader_status(study_file: Path, tmp_path: Path, capsys) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["reader", "init", "--study", str(study_file), "--db", db]) == 0
    out = capsys.readouterr().out
    assert "alice: http://127.0.0.1:8000/#token=" in out and "carol: " in out
    assert "organiser (progress and export): http://127.0.0.1:8000/#token=" in out
    assert main(["reader", "init", "--study", str(study_file), "--db", db]) == 2  # already holds a study
    assert "already holds study" in capsys.readouterr().err
    assert main(["reader", "add-reader", "dave", "--db", db]) == 0
    link = capsys.readouterr().out.strip()
    assert link.startswith("http://127.0.0.1:8000/#token=")
    assert main(["reader", "add-reader", "dave", "--db", db]) == 2
    assert main(["reader", "add-reader", "../evil", "--db", db]) == 2
    from cxreval.reader.store import ReaderStore

    store = ReaderStore(db)
    assert store.authenticate(link.split("#token=")[1]).name == "dave"
    assert main(["reader", "status", "--db", db, "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["integrity"]["ok"] and {(r["reader"], r["task"]) for r in st["progress"]} >= {
        ("dave", "iqa"),
        ("carol", "adjudication"),
    }
    assert main(["reader", "status", "--db", f"sqlite:///{tmp_path / 'none.db'}"]) == 2


def test_cli_help_works_without_the_reader_extra() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfor m in ('fastapi', 'uvicorn', 'sqlalchemy', 'starlette', 'httpx'): sys.modules[m] = None\n"
        "from cxreval.cli.main import main\nsys.exit(main(['reader', '--help']) or main(['--help']))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "reader" in r.stdout


def test_report_adjudication_becomes_conflict_resolved(study_factory, tmp_path: Path) -> None:
    """Adjudicating the Findings sections: agreement is copied, the resolver's label wins on conflicts, an
    unresolved conflict is left out and counted."""
    from cxreval.reader.export import export_tables
    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    study = study_factory(
        tmp_path / "s", extra="adjudication:\n  task: report:findings\n  readers: [alice, bob]\n"
    )
    store, _tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", load_study(study))
    rd = {r.name: r for r in store.readers().itertuples()}
    from cxreval.reader.payloads import Reader

    def who(name: str) -> Reader:
        return Reader(int(rd[name].id), name, str(rd[name].role))

    a = {"a1": ("positive", "not_mentioned", "negative"), "b1": ("negative", "positive", "uncertain")}
    b = {"a1": ("positive", "negative", "negative"), "b1": ("negative", "positive", "positive")}
    for name, states in (("alice", a), ("bob", b)):
        for sid, st in states.items():
            store.submit(
                who(name),
                f"{name}-{sid}-0001",
                "report",
                f"findings:{sid}",
                {"labels": dict(zip(("Effusion", "Cardiomegaly", "Nodule"), st))},
            )
    assert store.conflicts() == {
        "a1": {"Cardiomegaly": {"alice": "not_mentioned", "bob": "negative"}},
        "b1": {"Nodule": {"alice": "uncertain", "bob": "positive"}},
    }
    store.submit(
        who("carol"),
        "carol-a1-0001",
        "adjudication",
        "a1",
        decision(store, "a1", {"Cardiomegaly": "negative"}),
    )
    (tmp_path / "out").mkdir()
    res = export_tables(store)
    res.save(tmp_path / "out")
    labels = pd.read_csv(tmp_path / "out" / "labels.csv")
    cr = labels[labels["source"] == "conflict_resolved"]
    got = {(r.study_id, r.finding): r.state for r in cr.itertuples()}
    assert got == {
        ("a1", "Effusion"): "positive",
        ("a1", "Cardiomegaly"): "negative",
        ("a1", "Nodule"): "negative",
        ("b1", "Effusion"): "negative",
        ("b1", "Cardiomegaly"): "positive",
    }
    assert res.n_unresolved == 1  # b1 Nodule
    assert (
        set(labels["source"])
        == set(res.sources)
        == {"rep_findings_alice", "rep_findings_bob", "conflict_resolved"}
    )
    store.close()
