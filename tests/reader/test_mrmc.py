"""What an MRMC ROC analysis needs from a reader study (:mod:`cxreval.reader.mrmc`): study files whose MRMC keys
are refused naming the file and the field, the study with sessions round-tripping through the database, and
``ratings.csv``, the long table an MRMC analysis reads (the rating: test_mrmc_rating.py; the sessions and the
washout: test_mrmc_sessions.py). Everything goes through the HTTP API, as the page sends it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cxreval.exceptions import SchemaError
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study, study_items

from .conftest import FINDINGS, IDS, SESSIONS, T0, Clock, _client, _h, _scores, _study

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


# -- bad study files ----------------------------------------------------------------------------------------------
BAD_STUDIES = [
    (
        "rating: {scale: ten_point}\n",
        None,
        "key 'rating.scale': expected one of ['five_point', 'probability']",
    ),
    ("rating: {scale: five_point, with_label: maybe}\n", None, "key 'rating.with_label'"),
    ("rating: {scale: five_point, colour: red}\n", None, "key 'rating': expected a mapping"),
    (
        SESSIONS.replace("washout_days: 28", "washout_days: -3"),
        _scores(),
        "key 'washout_days': expected a number of days >= 0",
    ),
    (SESSIONS.replace("washout_days: 28", "washout_days: two"), _scores(), "key 'washout_days'"),
    ("washout_days: 7\n", None, "a washout separates the readings of two sessions"),
    (SESSIONS.replace("- name: aided", "- name: image"), _scores(), "key 'sessions[1]'.name"),
    (SESSIONS.replace("- name: aided", "- name: unaided"), _scores(), "listed twice"),
    (SESSIONS.replace("- name: aided", "- name: an-aided-session-name"), _scores(), "1-16 letters"),
    (
        SESSIONS.replace("    model_scores: predictions.csv\n", "    model: densenet\n"),
        _scores(),
        "names a model of",
    ),
    (
        SESSIONS,
        _scores(IDS[:3] + IDS[4:]),
        f"has no score for 1 of the study's 6 images, e.g. study_id ['{IDS[3]}']",
    ),
    (
        SESSIONS,
        _scores().replace(f"{IDS[5]},densenet,Nodule", f"{IDS[5]},densenet,Mass"),
        f"no score of study_id '{IDS[5]}' for finding(s) ['Nodule']",
    ),
    (SESSIONS, _scores(models=("densenet", "resnet")), "holds the scores of 2 models ['densenet', 'resnet']"),
    (
        SESSIONS.replace("predictions.csv\n", "predictions.csv\n    model: vit\n"),
        _scores(),
        "has no model 'vit'",
    ),
    (SESSIONS.replace("predictions.csv", "../predictions.csv"), _scores(), "leaves the study folder"),
    (SESSIONS.replace("predictions.csv", "nothing.csv"), _scores(), "nothing.csv does not exist"),
    (
        SESSIONS.replace("predictions.csv\n", "predictions.csv\n    heatmaps: maps\n"),
        _scores(),
        "maps does not exist",
    ),
]


@pytest.mark.parametrize(
    "extra,scores,message", BAD_STUDIES, ids=[f"bad{k}" for k in range(len(BAD_STUDIES))]
)
def test_bad_mrmc_keys_are_refused_naming_the_file_and_the_field(
    study_factory, tmp_path: Path, extra: str, scores: str | None, message: str
) -> None:
    study = _study(study_factory, tmp_path / "s", extra, scores=scores)
    with pytest.raises(SchemaError) as err:
        study_items(load_study(study))
    text = str(err.value)  # the study file for its keys, the data file (and the session's key) for its data
    assert message in text
    assert str(study) in text or ("'sessions' 'aided', " in text and str(study.parent) in text), text


def test_heat_maps_of_no_study_image_are_refused(study_factory, tmp_path: Path) -> None:
    root = tmp_path / "s"
    study = _study(
        study_factory,
        root,
        SESSIONS.replace("predictions.csv\n", "predictions.csv\n    heatmaps: maps.npz\n"),
        scores=_scores(),
    )
    np.savez(root / "maps.npz", **{"other/Effusion": np.ones((2, 2))})
    with pytest.raises(SchemaError, match="none of the 1 maps .* is keyed '<study_id>/<finding>'"):
        study_items(load_study(study))


def test_the_study_with_sessions_round_trips_through_the_database(study_factory, tmp_path: Path) -> None:
    study = _study(study_factory, tmp_path / "s", SESSIONS, scores=_scores())
    spec = load_study(study)
    store, _tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'r.db'}", spec)
    store.close()
    again = ReaderStore.open(f"sqlite:///{tmp_path / 'r.db'}")
    assert again.spec == spec and again.spec.rating == spec.rating and again.spec.washout_days == 28
    assert json.loads(json.dumps(spec.to_dict()))["sessions"][1]["model_scores"] == "predictions.csv"
    again.close()


def test_cxreval_reader_export_writes_ratings_csv_an_mrmc_analysis_reads_as_it_is(
    study_factory, tmp_path: Path, capsys
) -> None:
    """Two readers, two modalities, a five-point rating per finding: ``ratings.csv`` gives each reader's
    empirical AUC per modality by a group-by on its columns (sklearn's ``roc_auc_score`` on the ratings sent)."""
    from sklearn.metrics import roc_auc_score

    from cxreval.cli.main import main

    study = _study(
        study_factory,
        tmp_path / "s",
        SESSIONS.replace("washout_days: 28", "washout_days: 0.5"),
        scores=_scores(),
    )
    (study.parent / "patients.csv").write_text("study_id,patient_id\n" + "".join(f"{i},p{i}\n" for i in IDS))
    url = f"sqlite:///{tmp_path / 'r.db'}"
    clock = Clock(T0)
    store, tokens, c = _client(study, url, clock)
    truth = {sid: int(i % 2 == 0) for i, sid in enumerate(IDS)}  # Effusion present in every other image
    rng = np.random.default_rng(0)
    sent = {}
    for task in ("unaided", "aided"):
        for reader in ("alice", "bob"):
            for k, sid in enumerate(IDS):
                r = int(np.clip(2 + 2 * truth[sid] + rng.integers(-1, 2), 1, 5))
                sent[(reader, task, sid)] = r
                body = {
                    "id": f"{reader}-{task}-{k:04d}",
                    "task": task,
                    "item": sid,
                    "seconds": 7,
                    "labels": dict.fromkeys(FINDINGS, "negative")
                    | {"Effusion": "positive" if r > 3 else "negative"},
                    "ratings": {"Effusion": r, "Cardiomegaly": 1, "Nodule": 2},
                }
                assert c.post("/api/submissions", headers=_h(tokens[reader]), json=body).status_code == 200
        clock.t += dt.timedelta(days=1)
    store.close()
    capsys.readouterr()
    assert main(["reader", "export", "--db", url, "--out", str(tmp_path / "out")]) == 0
    assert f"{2 * 2 * len(IDS) * 3} finding ratings (ratings.csv)" in capsys.readouterr().out
    table = pd.read_csv(tmp_path / "out" / "ratings.csv")
    eff = table[table["finding"] == "Effusion"].assign(truth=lambda d: d["study_id"].map(truth))
    got = (
        eff.groupby(["reader", "modality"])
        .apply(lambda d: roc_auc_score(d["truth"], d["rating"]), include_groups=False)
        .to_dict()
    )
    want = {
        (reader, task): roc_auc_score([truth[s] for s in IDS], [sent[(reader, task, s)] for s in IDS])
        for reader in ("alice", "bob")
        for task in ("unaided", "aided")
    }
    assert got == pytest.approx(want) and len(got) == 4
    assert set(table["scale"]) == {"five_point"} and set(table["seconds"]) == {7}
    assert table["modality"].tolist()[: 3 * len(IDS) * 2] == ["unaided"] * (
        3 * len(IDS) * 2
    )  # session order first
    # and `cxreval mrmc` reads it as it is: the same AUCs, and the OR analysis of the two sessions
    pd.DataFrame(
        {
            "study_id": IDS,
            "patient_id": IDS,
            "finding": "Effusion",
            "source": "truth",
            "state": ["positive" if truth[s] else "negative" for s in IDS],
        }
    ).to_csv(tmp_path / "truth.csv", index=False)
    assert (
        main(
            [
                "mrmc",
                "--ratings",
                str(tmp_path / "out" / "ratings.csv"),
                "-l",
                str(tmp_path / "truth.csv"),
                "-r",
                "truth",
                "-f",
                "Effusion",
                "--scale",
                "1:5",
                "-o",
                str(tmp_path / "mrmc"),
            ]
        )
        == 0
    )
    aucs = pd.read_csv(tmp_path / "mrmc" / "mrmc_reader_auc.csv")
    assert aucs.set_index(["reader", "modality"])["auc"].to_dict() == pytest.approx(want)
    tests = pd.read_csv(tmp_path / "mrmc" / "mrmc_tests.csv")
    assert set(zip(tests["method"], tests["analysis"])) == {
        (m, a) for m in ("OR", "DBM") for a in ("RRRC", "FRRC", "RRFC")
    }


def test_init_renders_each_image_once_for_all_sessions(study_factory, tmp_path: Path) -> None:
    from cxreval.reader import create_study

    study = _study(study_factory, tmp_path / "s", SESSIONS, scores=_scores())
    made = create_study(study, f"sqlite:///{tmp_path / 'r.db'}", fit=64)
    assert dict(made.n_items) == {"unaided": len(IDS), "aided": len(IDS)}
    assert made.renditions.n_made == len(IDS)
