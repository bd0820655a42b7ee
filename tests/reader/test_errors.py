"""What the reader study answers when a research group's use goes wrong: the command line's
answers to a busy port, Ctrl-C, an unreachable database, ambiguous study files, and a partial adjudication."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cxreval.cli.main import main
from cxreval.exceptions import SchemaError
from cxreval.reader.store import ReaderStore
from cxreval.reader.study import load_study

from .conftest import decision, free_port, wait_until_serving


def _init(study: Path, url: str) -> dict[str, str]:
    _store, tokens = ReaderStore.create(url, load_study(study))
    _store.close()
    return tokens


def test_serve_on_a_busy_port_is_one_line_and_exit_2(study_file: Path, sqlite_url: str, capsys) -> None:
    _init(study_file, sqlite_url)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        rc = main(["reader", "serve", "--db", sqlite_url, "--port", str(port)])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and f"127.0.0.1:{port}" in err and "--port" in err, err


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_serve_interrupted_exits_130_or_143_and_the_database_is_consistent(
    study_file: Path, sqlite_url: str, sig: int, code: int
) -> None:
    import httpx

    tokens = _init(study_file, sqlite_url)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cxreval", "reader", "serve", "--db", sqlite_url, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(proc, base, require_ok=False)  # type: ignore[arg-type]
        body = {
            "id": "qa-int-1",
            "task": "image",
            "item": "a1",
            "boxes": [],
            "labels": {"Effusion": "positive", "Cardiomegaly": "negative", "Nodule": "negative"},
        }
        r = httpx.post(
            base + "/api/submissions", json=body, headers={"Authorization": f"Bearer {tokens['alice']}"}
        )
        assert r.status_code == 200, r.text
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err.decode()
    store = ReaderStore.open(sqlite_url)
    assert store.check_integrity().ok
    assert len(store.submissions()) == 1
    store.close()


def test_unreachable_postgres_is_one_line_without_init_advice(capsys) -> None:
    pytest.importorskip("psycopg", reason="psycopg is in the reader extra")
    port = free_port()  # nothing listens there
    rc = main(["reader", "status", "--db", f"postgresql://nobody@127.0.0.1:{port}/study"])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1, err
    assert "cannot connect" in err.lower() and "reader init" not in err, err


def test_duplicate_reader_is_named(study_factory, tmp_path: Path) -> None:
    study = study_factory(tmp_path / "s", readers=("alice", "bob", "alice"))
    with pytest.raises(SchemaError, match=r"reader 'alice' is listed twice"):
        load_study(study)


def test_three_readers_and_a_resolver_need_explicit_adjudication_readers(
    study_factory, tmp_path: Path
) -> None:
    study = study_factory(tmp_path / "s", readers=("alice", "bob", "dave"))
    with pytest.raises(SchemaError, match=r"adjudication.*readers.*alice, bob, dave|which two"):
        load_study(study)
    ok = study_factory(
        tmp_path / "t", readers=("alice", "bob", "dave"), extra="adjudication:\n  readers: [bob, dave]\n"
    )
    assert load_study(ok).adjudication_readers == ("bob", "dave")


def test_a_partial_adjudication_is_not_done(study_file: Path, sqlite_url: str, image_submission) -> None:
    store, tokens = ReaderStore.create(sqlite_url, load_study(study_file))
    rd = {n: store.authenticate(tokens[n]) for n in ("alice", "bob", "carol")}
    store.submit(
        rd["alice"],
        "alice-b1-1",
        "image",
        "b1",
        {
            k: v
            for k, v in image_submission("x", "b1", {"Effusion": "positive", "Nodule": "positive"}).items()
            if k in ("labels", "boxes")
        },
    )
    store.submit(
        rd["bob"],
        "bob-b1-01",
        "image",
        "b1",
        {k: v for k, v in image_submission("x", "b1").items() if k in ("labels", "boxes")},
    )
    assert set(store.conflicts()["b1"]) == {"Effusion", "Nodule"}
    store.submit(
        rd["carol"], "carol-b1-1", "adjudication", "b1", decision(store, "b1", {"Effusion": "positive"})
    )
    assert store.queue(rd["carol"], "adjudication") == [{"key": "b1", "done": False}]
    st = store.status().set_index(["reader", "task"])
    assert st.loc[("carol", "adjudication"), "n_done"] == 0
    store.submit(
        rd["carol"],
        "carol-b1-2",
        "adjudication",
        "b1",
        decision(store, "b1", {"Effusion": "positive", "Nodule": "negative"}),
    )
    assert store.queue(rd["carol"], "adjudication") == [{"key": "b1", "done": True}]
    assert store.status().set_index(["reader", "task"]).loc[("carol", "adjudication"), "n_done"] == 1
    store.close()


@pytest.mark.parametrize("command", ["status", "init"])
def test_a_file_that_is_not_a_database_is_a_clear_error(
    study_file: Path, tmp_path: Path, command: str, capsys
) -> None:
    bad = tmp_path / "notes.db"
    bad.write_text("this is not an SQLite database\n" * 10)
    args = ["--study", str(study_file)] if command == "init" else []
    rc = main(["reader", command, "--db", f"sqlite:///{bad}", *args])
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "not a database" in err and "notes.db" in err, err
    assert bad.read_text().startswith("this is not")


def test_an_image_deleted_after_init_is_said_in_words(app_client, study_file: Path) -> None:
    _store, tokens, c = app_client
    (study_file.parent / "images" / "a1.png").unlink()
    r = c.get("/api/pixels?task=image&key=a1", headers={"Authorization": f"Bearer {tokens['alice']}"})
    assert r.status_code == 404
    assert "missing" in r.json()["detail"] and "a1" in r.json()["detail"], r.json()


def test_a_box_on_a_negative_finding_is_refused_and_changes_nothing(app_client, image_submission) -> None:
    store, tokens, c = app_client
    box = {"finding": "Nodule", "x_min": 1, "y_min": 1, "x_max": 10, "y_max": 10}
    h = {"Authorization": f"Bearer {tokens['alice']}"}
    r = c.post("/api/submissions", headers=h, json=image_submission("qa-box-neg-1", "a1", boxes=[box]))
    assert r.status_code == 422 and "Nodule" in r.json()["detail"] and "negative" in r.json()["detail"], (
        r.text
    )
    assert len(store.submissions()) == 0
    for state in ("positive", "uncertain"):
        ok = c.post(
            "/api/submissions",
            headers=h,
            json=image_submission(f"qa-box-{state}", "a1", {"Nodule": state}, boxes=[box]),
        )
        assert ok.status_code == 200, ok.text


def test_serve_refuses_a_read_only_database_in_one_line(study_file: Path, tmp_path: Path, capsys) -> None:
    db = tmp_path / "study.db"
    _init(study_file, f"sqlite:///{db}")
    ro = f"sqlite:///file:{db}?mode=ro&uri=true"
    assert main(["reader", "serve", "--db", ro, "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.strip()
    assert "not writable" in err and "readonly" in err and len(err.splitlines()) == 1
    assert main(["reader", "status", "--db", ro]) == 0  # reading it is fine


def test_init_without_readers_says_how_to_add_them(study_factory, tmp_path: Path, capsys) -> None:
    study = study_factory(tmp_path / "s")
    text = study.read_text()
    study.write_text(text.replace("readers: [alice, bob]\n", "").replace("resolvers: [carol]\n", ""))
    db = f"sqlite:///{tmp_path / 'r.db'}"
    assert main(["reader", "init", "--study", str(study), "--db", db]) == 0
    out = capsys.readouterr().out
    assert "add readers with `cxreval reader add-reader NAME --db" in out
    assert (
        out.count("#token=") == 1 and "organiser (progress and export): http" in out
    )  # only the organiser's link
    assert main(["reader", "add-reader", "alice", "--db", db]) == 0
    assert "#token=" in capsys.readouterr().out
