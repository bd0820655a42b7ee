"""The server's refusals: tokens, authorisation, path traversal, malformed/oversized payloads, unknown
findings, out-of-range ratings; each answers 4xx with a message and changes nothing. Plus idempotent retries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

AUTH = "Authorization"


def _h(token: str) -> dict[str, str]:
    return {AUTH: f"Bearer {token}"}


def _count(store) -> int:
    return len(store.submissions())


def test_retry_is_stored_once_and_reused_id_is_refused(app_client, image_submission) -> None:
    store, tokens, c = app_client
    body = image_submission("sub-00000001", "a1", {"Effusion": "positive"})
    r1 = c.post("/api/submissions", headers=_h(tokens["alice"]), json=body)
    r2 = c.post("/api/submissions", headers=_h(tokens["alice"]), json=body)
    assert (r1.status_code, r1.json()["status"]) == (200, "stored")
    assert (r2.status_code, r2.json()["status"], r2.json()["seq"]) == (200, "duplicate", r1.json()["seq"])
    other = image_submission("sub-00000001", "a1", {"Effusion": "negative"})
    r3 = c.post("/api/submissions", headers=_h(tokens["alice"]), json=other)
    r4 = c.post("/api/submissions", headers=_h(tokens["bob"]), json=body)
    assert r3.status_code == 409 and r4.status_code == 409 and "already used" in r3.json()["detail"]
    assert _count(store) == 1


@pytest.mark.parametrize("header", [None, "Bearer ", "Bearer not-a-token-but-long-enough-xxxx", "Basic abc"])
def test_requests_without_a_valid_token_are_refused(app_client, image_submission, header) -> None:
    store, _tokens, c = app_client
    headers = {AUTH: header} if header is not None else {}
    for method, path in (
        ("get", "/api/me"),
        ("get", "/api/queue?task=image"),
        ("get", "/api/item?task=image&key=a1"),
        ("get", "/api/pixels?task=image&key=a1"),
    ):
        r = getattr(c, method)(path, headers=headers)
        assert r.status_code == 401, path
        assert "token" in r.json()["detail"]
    r = c.post("/api/submissions", headers=headers, json=image_submission("sub-00000002", "a1"))
    assert r.status_code == 401 and _count(store) == 0


def test_a_reader_sees_and_changes_only_their_own_labels(app_client, image_submission) -> None:
    store, tokens, c = app_client
    c.post(
        "/api/submissions",
        headers=_h(tokens["alice"]),
        json=image_submission("alice-0001", "a1", {"Nodule": "positive"}),
    )
    mine = c.get("/api/item?task=image&key=a1", headers=_h(tokens["bob"])).json()["mine"]
    assert mine is None  # bob does not see alice's label
    assert (
        c.get("/api/item?task=image&key=a1", headers=_h(tokens["alice"])).json()["mine"]["labels"]["Nodule"]
        == "positive"
    )
    # whatever bob sends is stored as bob's: no field names another reader
    body = image_submission("bob-00001", "a1") | {"reader": "alice"}
    r = c.post("/api/submissions", headers=_h(tokens["bob"]), json=body)
    assert r.status_code == 422 and "reader" in r.json()["detail"]
    r = c.post("/api/submissions", headers=_h(tokens["bob"]), json=image_submission("bob-00002", "a1"))
    assert r.status_code == 200
    sub = store.submissions()
    assert sub["reader"].tolist() == ["alice", "bob"]
    assert json.loads(sub["payload"].iloc[0])["labels"]["Nodule"] == "positive"
    # a resolver cannot label, a reader cannot adjudicate
    r = c.post("/api/submissions", headers=_h(tokens["carol"]), json=image_submission("carol-0001", "a1"))
    assert r.status_code == 403
    r = c.get("/api/queue?task=adjudication", headers=_h(tokens["alice"]))
    assert r.status_code == 403
    assert _count(store) == 2


@pytest.mark.parametrize(
    "key",
    [
        "../study.yaml",
        "../../etc/passwd",
        "/etc/passwd",
        "images/a1",
        "a1.png",
        "..%2Fstudy.yaml",
        "a1/../../study.yaml",
        "a1%00",
    ],
)
def test_item_ids_cannot_escape_the_study_folder(app_client, key) -> None:
    _store, tokens, c = app_client
    for path in (
        f"/api/pixels?task=image&key={key}",
        f"/api/item?task=image&key={key}",
        f"/api/pixels?task=iqa&key={key}&which=test",
    ):
        r = c.get(path, headers=_h(tokens["alice"]))
        assert r.status_code == (400 if "%00" in key else 404), (path, r.status_code)  # a NUL: bad text
    for name in ("..%2Fdb.py", "../app.py", "app.py", "..%2F..%2Fstudy.yaml"):
        assert c.get(f"/static/{name}").status_code == 404


def test_iqa_which_must_be_reference_or_test(app_client) -> None:
    store, tokens, c = app_client
    key = next(iter(store.items["iqa"]))
    assert c.get(f"/api/pixels?task=iqa&key={key}&which=test", headers=_h(tokens["alice"])).status_code == 200
    r = c.get(f"/api/pixels?task=iqa&key={key}&which=../study.yaml", headers=_h(tokens["alice"]))
    assert r.status_code == 422


BAD_BODIES = [
    ("not json", b"{labels:", 400, "JSON"),
    ("not an object", b"[1, 2]", 400, "object"),
    ("missing id", json.dumps({"task": "image", "item": "a1"}).encode(), 422, "'id'"),
    ("short id", None, 422, "8-64"),
    ("unknown finding", None, 422, "Unknown finding"),
    ("bad state", None, 422, "not one of"),
    ("incomplete labels", None, 422, "missing"),
    ("unknown item", None, 404, "Unknown image item"),
    ("unknown task", None, 403, "does not do task"),
    ("box outside", None, 422, "outside"),
    ("box unknown finding", None, 422, "unknown finding"),
    ("box bad coordinate", None, 422, "finite numbers"),
    ("extra field", None, 422, "Unexpected"),
]


@pytest.mark.parametrize("name,raw,status,message", BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_malformed_payloads_get_4xx_and_change_nothing(
    app_client, image_submission, name, raw, status, message
) -> None:
    store, tokens, c = app_client
    body = image_submission("sub-bad-0001", "a1")
    box = {"finding": "Effusion", "x_min": 1, "y_min": 1, "x_max": 10, "y_max": 10}
    if name == "short id":
        body["id"] = "x"
    elif name == "unknown finding":
        body["labels"]["Pneumothorax"] = "positive"
    elif name == "bad state":
        body["labels"]["Effusion"] = "maybe"
    elif name == "incomplete labels":
        del body["labels"]["Nodule"]
    elif name == "unknown item":
        body["item"] = "zz9"
    elif name == "unknown task":
        body["task"] = "segmentation"
    elif name == "box outside":
        body["boxes"] = [box | {"x_max": 65}]  # the image is 64 wide
    elif name == "box unknown finding":
        body["boxes"] = [box | {"finding": "Hernia"}]
    elif name == "box bad coordinate":
        body["boxes"] = [box | {"x_min": "1"}]
    elif name == "extra field":
        body["colour"] = "red"
    data = raw if raw is not None else json.dumps(body).encode()
    r = c.post(
        "/api/submissions", headers=_h(tokens["alice"]) | {"Content-Type": "application/json"}, content=data
    )
    assert r.status_code == status, r.text
    assert message in r.json()["detail"]
    assert _count(store) == 0


def test_oversized_payloads_are_refused(app_client, image_submission) -> None:
    from cxreval.reader.app import MAX_BODY

    store, tokens, c = app_client
    body = image_submission("sub-big-0001", "a1")
    body["pad"] = "x" * MAX_BODY
    r = c.post("/api/submissions", headers=_h(tokens["alice"]), json=body)
    assert r.status_code == 413 and "bytes" in r.json()["detail"]

    def chunks():  # no content-length: counted while streaming
        yield b'{"id": "sub-big-0002", "pad": "'
        for _ in range(MAX_BODY // 1000 + 2):
            yield b"x" * 1000
        yield b'"}'

    r = c.post("/api/submissions", headers=_h(tokens["alice"]), content=chunks())
    assert r.status_code == 413
    assert _count(store) == 0


@pytest.mark.parametrize(
    "ratings,message",
    [
        ({"overall": 5}, "outside the scale"),
        ({"overall": 0}, "outside"),
        ({"overall": 2.5}, "outside"),
        ({"overall": True}, "outside"),
        ({}, "exactly the criteria"),
        ({"overall": 2, "sharpness": 3}, "exactly the criteria"),
    ],
)
def test_out_of_range_ratings_are_refused(app_client, ratings, message) -> None:
    store, tokens, c = app_client
    key = next(iter(store.items["iqa"]))
    r = c.post(
        "/api/submissions",
        headers=_h(tokens["alice"]),
        json={"id": "rate-00001", "task": "iqa", "item": key, "ratings": ratings},
    )
    assert r.status_code == 422 and message in r.json()["detail"]
    assert _count(store) == 0
    r = c.post(
        "/api/submissions",
        headers=_h(tokens["alice"]),
        json={"id": "rate-00002", "task": "iqa", "item": key, "ratings": {"overall": 4}},
    )
    assert r.status_code == 200 and _count(store) == 1


def test_iqa_item_hides_paths_and_degradation(app_client) -> None:
    store, tokens, c = app_client
    q = c.get("/api/queue?task=iqa", headers=_h(tokens["alice"])).json()["keys"]
    item = c.get(f"/api/item?task=iqa&key={q[0]}", headers=_h(tokens["alice"])).text
    for secret in ("test", "ref", "jpeg", "noise", "blur", ".png"):
        assert secret not in item.replace('"task":"iqa"', "").replace('"task": "iqa"', ""), secret


def test_tokens_are_stored_hashed(app_client) -> None:
    store, tokens, _c = app_client
    import sqlalchemy as sa

    with store.engine.connect() as conn:
        hashes = [r[0] for r in conn.execute(sa.text("SELECT token_hash FROM readers"))]
    assert len(hashes) == 3
    for tok in tokens.values():
        assert tok not in hashes and all(tok not in h for h in hashes)
    from cxreval.reader.store import hash_token

    assert sorted(hashes) == sorted(hash_token(t) for t in tokens.values())


def test_security_headers_and_page(app_client) -> None:
    _store, _tokens, c = app_client
    r = c.get("/")
    assert r.status_code == 200 and "app.js" in r.text
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'self'" in r.headers["Content-Security-Policy"]
    assert c.get("/docs").status_code == 404 and c.get("/openapi.json").status_code == 404


@pytest.mark.shared_data
def test_real_radiographs_are_served_at_full_size(shared_data, study_factory, tmp_path) -> None:
    """Two NIH radiographs (copied into a temporary study folder): their sizes, pixels and a box at the
    image's far corner are accepted; one pixel beyond is refused."""
    import shutil

    import numpy as np
    from fastapi.testclient import TestClient
    from PIL import Image

    from cxreval.reader.app import create_app
    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    src = sorted((shared_data / "images" / "nih").glob("*.png"))[:2]
    if len(src) < 2:
        pytest.skip("fewer than two NIH images in the shared data")
    root = tmp_path / "nih"
    (root / "images").mkdir(parents=True)
    for f in src:
        shutil.copy(f, root / "images" / f.name)
    (root / "study.yaml").write_text("name: nih\nfindings: chestxray8\nimages: images\nreaders: [alice]\n")
    store, tokens = ReaderStore.create(f"sqlite:///{tmp_path / 'nih.db'}", load_study(root / "study.yaml"))
    with TestClient(create_app(store)) as c:
        h = _h(tokens["alice"])
        key = src[0].stem
        with Image.open(src[0]) as im:
            ref = np.asarray(im.convert("L"))
        r = c.get(f"/api/pixels?task=image&key={key}", headers=h)
        w, hh = int(r.headers["X-Width"]), int(r.headers["X-Height"])
        assert (hh, w) == ref.shape and int(r.headers["X-Data-Range"]) == 255
        np.testing.assert_array_equal(np.frombuffer(r.content, "<u2").reshape(hh, w), ref)
        labels = dict.fromkeys(store.spec.findings, "negative") | {"Effusion": "positive"}
        box = {"finding": "Effusion", "x_min": w - 10, "y_min": hh - 10, "x_max": w, "y_max": hh}
        ok = c.post(
            "/api/submissions",
            headers=h,
            json={"id": "nih-000001", "task": "image", "item": key, "labels": labels, "boxes": [box]},
        )
        assert ok.status_code == 200
        bad = c.post(
            "/api/submissions",
            headers=h,
            json={
                "id": "nih-000002",
                "task": "image",
                "item": key,
                "labels": labels,
                "boxes": [box | {"x_max": w + 1}],
            },
        )
        assert bad.status_code == 422
    assert len(store.submissions()) == 1
    store.engine.dispose()


def test_group_commit_stores_each_id_once_under_concurrent_retries(app_client, image_submission) -> None:
    """16 threads in 8 pairs; both threads of a pair submit the same 40 ids at the same time (a retry
    racing the original): each id is stored once, one answer says 'stored' and the other 'duplicate'
    with the same seq, and every answered row is readable."""
    import threading

    from cxreval.reader.payloads import Reader

    store, _tokens, _c = app_client
    readers = {r.name: Reader(int(r.id), r.name, r.role) for r in store.readers().itertuples()}
    answers: dict[str, list[tuple[str, int]]] = {}
    lock = threading.Lock()
    errors: list[BaseException] = []
    barrier = threading.Barrier(16)

    def worker(t: int) -> None:
        try:
            pair = t % 8
            reader = readers["alice" if pair % 2 else "bob"]
            barrier.wait()
            for k in range(40):
                sid = f"t{pair}-k{k:04d}-x"
                body = image_submission(sid, ["a1", "a2", "b1", "c1"][k % 4], {"Nodule": "positive"})
                payload = {k_: v for k_, v in body.items() if k_ not in ("id", "task", "item")}
                res = store.submit(reader, sid, "image", body["item"], payload)
                with lock:
                    answers.setdefault(sid, []).append((res.status, res.seq))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors[:1]
    sub = store.submissions()
    assert len(sub) == 320 and sub["id"].is_unique and set(sub["id"]) == set(answers)
    seq_of = dict(zip(sub["id"], sub["seq"]))
    for sid, got in answers.items():
        assert sorted(s for s, _ in got) == ["duplicate", "stored"]
        assert {q for _, q in got} == {seq_of[sid]}
    assert store.check_integrity().ok


def test_dicom_image_is_served_at_its_bit_depth(tmp_path) -> None:
    """A 12-bit MONOCHROME2 DICOM (optional pydicom): size from the file, pixels unchanged, range 4095."""
    pydicom = pytest.importorskip("pydicom", reason="DICOM needs the optional pydicom (cxreval[dicom])")
    import numpy as np
    from fastapi.testclient import TestClient

    from cxreval.reader.app import create_app
    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    from .conftest import write_dicom

    arr = np.random.default_rng(0).integers(0, 4096, size=(40, 50)).astype(np.uint16)
    write_dicom(tmp_path / "s" / "images" / "d1.dcm", arr, bits=12)
    (tmp_path / "s" / "study.yaml").write_text("findings: [Effusion]\nimages: images\nreaders: [alice]\n")
    store, tokens = ReaderStore.create(
        f"sqlite:///{tmp_path / 'd.db'}", load_study(tmp_path / "s" / "study.yaml")
    )
    assert (store.items["image"]["d1"]["width"], store.items["image"]["d1"]["height"]) == (50, 40)
    with TestClient(create_app(store)) as c:
        r = c.get("/api/pixels?task=image&key=d1", headers=_h(tokens["alice"]))
    assert r.status_code == 200 and r.headers["X-Data-Range"] == "4095"
    np.testing.assert_array_equal(np.frombuffer(r.content, "<u2").reshape(40, 50), arr)
    assert pydicom.dcmread(tmp_path / "s" / "images" / "d1.dcm").BitsStored == 12
    store.close()


@pytest.mark.parametrize("name", ["400-digit coordinate", "20000-deep JSON", "deep JSON in a label"])
def test_overflowing_and_deeply_nested_bodies_are_4xx(app_client, image_submission, name) -> None:
    store, tokens, c = app_client
    body = image_submission("sub-deep-0001", "a1", {"Effusion": "positive"})
    if name == "400-digit coordinate":
        data = (
            json.dumps(
                body
                | {"boxes": [{"finding": "Effusion", "x_min": 1, "y_min": 1, "x_max": 2, "y_max": "BIG"}]}
            )
            .replace('"BIG"', "9" * 400)
            .encode()
        )
        want = 422
    elif name == "20000-deep JSON":
        data = ("[" * 20000 + "]" * 20000).encode()
        want = 400
    else:
        data = json.dumps(body).replace('"positive"', "[" * 20000 + "]" * 20000).encode()
        want = 400
    assert len(data) < 64 * 1024
    r = c.post(
        "/api/submissions", headers=_h(tokens["alice"]) | {"Content-Type": "application/json"}, content=data
    )
    assert r.status_code == want, r.text
    assert "detail" in r.json() and _count(store) == 0


def test_a_write_failure_while_serving_is_503_with_a_reason_never_an_acknowledgement(
    app_client, image_submission
) -> None:
    import sqlalchemy as sa

    store, tokens, c = app_client
    store.engine.dispose()

    @sa.event.listens_for(store.engine, "connect")
    def _read_only(dbapi_conn, _record) -> None:  # the file turned read-only (or the disk full) while serving
        dbapi_conn.execute("PRAGMA query_only=ON")

    r = c.post("/api/submissions", headers=_h(tokens["alice"]), json=image_submission("sub-ro-00001", "a1"))
    assert r.status_code == 503, r.text
    assert "cannot store submissions" in r.json()["detail"] and "readonly" in r.json()["detail"]
    sa.event.remove(store.engine, "connect", _read_only)
    store.engine.dispose()
    assert _count(store) == 0
    r = c.post("/api/submissions", headers=_h(tokens["alice"]), json=image_submission("sub-ro-00001", "a1"))
    assert r.status_code == 200 and _count(store) == 1  # the page's retry is stored once the disk is back


def test_iqa_item_keys_are_random_per_study_and_stored(app_client, study_file, tmp_path) -> None:
    import hashlib

    from cxreval.reader.store import ReaderStore
    from cxreval.reader.study import load_study

    store, _tokens, _c = app_client
    keys = set(store.items["iqa"])
    tests = [v["test"] for v in store.items["iqa"].values()]
    guesses = {"q" + hashlib.sha256(t.encode()).hexdigest()[:12] for t in tests}
    assert len(keys) == 3 and not keys & guesses and all(len(k) == 17 for k in keys)
    assert set(ReaderStore.open(str(store.engine.url)).items["iqa"]) == keys  # stored, not re-derived
    other, _ = ReaderStore.create(f"sqlite:///{tmp_path / 'other.db'}", load_study(study_file))
    assert not set(other.items["iqa"]) & keys  # the same study file initialised again: other keys
    other.close()


def test_the_queue_answers_keys_and_done_flags_that_follow_submissions(app_client, image_submission) -> None:
    store, tokens, c = app_client
    alice = store.authenticate(tokens["alice"])
    q = c.get("/api/queue?task=image", headers=_h(tokens["alice"])).json()
    assert sorted(q["keys"]) == ["a1", "a2", "b1", "c1"] and q["done"] == "0000"
    for k, key in enumerate(q["keys"][1:3]):
        assert (
            c.post(
                "/api/submissions", headers=_h(tokens["alice"]), json=image_submission(f"sub-q-{k:04d}", key)
            ).status_code
            == 200
        )
    assert c.get("/api/queue?task=image", headers=_h(tokens["alice"])).json()["done"] == "0110"
    # a submission written by another process (another store on the same database) is seen too
    from cxreval.reader.store import ReaderStore

    other = ReaderStore.open(str(store.engine.url))
    other.submit(
        alice,
        "sub-q-other",
        "image",
        q["keys"][3],
        {k: v for k, v in image_submission("x", q["keys"][3]).items() if k in ("labels", "boxes")},
    )
    other.close()
    assert c.get("/api/queue?task=image", headers=_h(tokens["alice"])).json()["done"] == "0111"
    me = c.get("/api/me", headers=_h(tokens["alice"])).json()
    assert {t["task"]: (t["n_done"], t["n_items"]) for t in me["tasks"]}["image"] == (3, 4)
    assert store.queue(alice, "image") == [{"key": k, "done": f == "1"} for k, f in zip(q["keys"], "0111")]


def _finished(c, token: str, job_id: str, timeout: float = 180) -> dict:
    """The background job ``job_id`` once done or failed (polled)."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        job = c.get(f"/api/organiser/jobs/{job_id}", headers=_h(token)).json()
        if job["state"] in ("done", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s: {job}")


def test_the_organiser_sees_progress_and_downloads_the_export(app_client, image_submission) -> None:
    import io
    import zipfile

    store, tokens, c = app_client
    org = store.add_reader("olga", role="organiser")
    assert (
        c.post(
            "/api/submissions",
            headers=_h(tokens["alice"]),
            json=image_submission("sub-org-0001", "b1", {"Effusion": "positive"}),
        ).status_code
        == 200
    )
    assert (
        c.post(
            "/api/submissions", headers=_h(tokens["bob"]), json=image_submission("sub-org-0002", "b1")
        ).status_code
        == 200
    )
    for who in ("alice", "carol"):
        assert c.get("/api/organiser/status", headers=_h(tokens[who])).status_code == 403
        assert c.post("/api/organiser/jobs?kind=export", headers=_h(tokens[who])).status_code == 403
        assert c.get("/api/organiser/jobs", headers=_h(tokens[who])).status_code == 403
    assert (
        c.post("/api/submissions", headers=_h(org), json=image_submission("sub-org-0003", "a1")).status_code
        == 403
    )
    st = c.get("/api/organiser/status", headers=_h(org)).json()
    prog = {(r["reader"], r["task"]): (r["n_done"], r["n_items"]) for r in st["progress"]}
    assert prog[("alice", "image")] == (1, 4) and prog[("carol", "adjudication")] == (0, 1)
    assert (st["n_conflicts"], st["n_resolved"]) == (1, 0)
    assert c.get("/api/organiser/integrity", headers=_h(tokens["alice"])).status_code == 403
    first = c.get("/api/organiser/integrity", headers=_h(org)).json()  # none yet: one started
    assert first["checked"] is None and first["job"]["kind"] == "integrity"
    assert _finished(c, org, first["job"]["id"])["result"]["ok"] is True
    cached = c.get("/api/organiser/integrity", headers=_h(org)).json()
    assert cached["result"]["ok"] is True and cached["checked"] and cached["job"] is None
    assert c.post("/api/organiser/jobs?kind=nothing", headers=_h(org)).status_code == 422
    started = c.post("/api/organiser/jobs?kind=export", headers=_h(org))
    assert started.status_code == 202 and started.json()["state"] in ("queued", "running")
    job = _finished(c, org, started.json()["id"])
    assert job["state"] == "done" and job["result"]["n_unresolved"] == 1
    r = c.get(f"/api/organiser/jobs/{job['id']}/file", headers=_h(org))
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    assert (Path(store.spec.root) / "exports" / job["file"]).read_bytes() == r.content
    assert c.get(f"/api/organiser/jobs/{job['id']}/file", headers=_h(tokens["alice"])).status_code == 403
    assert c.get("/api/organiser/jobs/nothing", headers=_h(org)).status_code == 404
    zf = zipfile.ZipFile(io.BytesIO(r.content))
    assert {"labels.csv", "audit.csv", "export.json"} <= set(zf.namelist())
    assert json.loads(zf.read("export.json"))["n_unresolved"] == 1
    assert zf.read("labels.csv").decode().count("img_alice") == 3
