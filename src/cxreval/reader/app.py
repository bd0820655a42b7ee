"""The reader study's web server: a FastAPI app over a :class:`~cxreval.reader.store.ReaderStore`.

Every ``/api`` request needs ``Authorization: Bearer <token>`` (the reader's link carries the token in
the URL fragment, which the browser never sends to a server). Items are addressed by their stored key
only; files are looked up from the database and must resolve inside the study folder, so no request can
name a path. Bodies over :data:`MAX_BODY` bytes get 413, headers over :data:`MAX_HEADERS` bytes 431,
malformed JSON 400, invalid content 422, an unknown item (or one not assigned to the reader: the same
answer, so that no reader learns which studies exist) 404, a task the reader does not do 403, a reused
submission id 409; a database that cannot answer now (restarting, unreachable, locked) 503 with
``Retry-After`` (:func:`database_refusal`). A submission is answered only after its transaction has
committed.
"""

import contextlib
import datetime
import json
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from ..exceptions import CxrevalError, InvalidParameterError
from .payloads import SubmissionError
from .store import ReaderStore

__all__ = [
    "create_app",
]

MAX_BODY = 64 * 1024
MAX_HEADERS = 16 * 1024
"""The most bytes of request headers (names and values) served; more is answered 431."""
RETRY_AFTER_S = 2
"""Seconds a client is told to wait (``Retry-After``) when the database cannot answer now (503)."""
READ_AHEAD = 3
"""Studies of a reader's queue after the one they open whose display renditions the server makes ahead."""
_SECURITY = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; "
    "script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
}
_RAW_HEADERS = [(k.lower().encode(), v.encode()) for k, v in _SECURITY.items()]


def bad_text(value: object, where: str = "body") -> str | None:
    """Where ``value`` (parsed JSON) holds text no database stores: a NUL character (PostgreSQL refuses
    it) or a lone surrogate (not UTF-8), in a key or a value; None when it holds none."""
    stack: list[tuple[str, object]] = [(where, value)]
    while stack:
        at, v = stack.pop()
        if isinstance(v, str):
            if "\x00" in v:
                return at
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate
                    return at
        elif isinstance(v, dict):
            for k, x in v.items():
                if bad_text(k) is not None:
                    return f"{at}: a key"
                stack.append((f"{at}.{str(k)[:40]}", x))
        elif isinstance(v, list):
            stack.extend((f"{at}[{i}]", x) for i, x in enumerate(v))
    return None


def database_refusal(exc: BaseException) -> SubmissionError | None:
    """The answer to an error raised while serving a request: ``exc`` itself when it is a refusal, 503 when
    the database cannot answer now (a connection refused or cut, a server restarting, a locked SQLite file,
    a pool with no free connection), 422 when a value is out of the database's range; None for any other
    error (a fault of the server: 500)."""
    if isinstance(exc, SubmissionError):
        return exc
    from .db import require_sqlalchemy

    sa = require_sqlalchemy()
    reason = " ".join(str(getattr(exc, "orig", None) or exc).split())[:200]
    if isinstance(exc, (sa.exc.DataError, OverflowError)):
        return SubmissionError(f"A value of the request is out of the database's range ({reason}).", 422)
    transient = (
        sa.exc.OperationalError,
        sa.exc.InterfaceError,
        sa.exc.TimeoutError,
        sa.exc.DisconnectionError,
    )
    if isinstance(exc, transient) or (isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated):
        return SubmissionError(
            f"The study database cannot answer now ({reason}); try again in a few seconds "
            "(the page retries by itself).",
            503,
        )
    return None


def _retry_after(status: int) -> dict[str, str]:
    return {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else {}


def _bad_query(scope: Any) -> str | None:
    """Why the request's path or query string cannot be served (a NUL, or percent-encoded bytes that are
    not UTF-8, e.g. a lone surrogate), or None."""
    from urllib.parse import unquote_to_bytes

    qs = scope.get("query_string", b"")
    if "\x00" in scope["path"]:
        return "the path holds a NUL character"
    for part in qs.replace(b"+", b" ").split(b"&"):
        try:
            text = unquote_to_bytes(part).decode("utf-8")
        except UnicodeDecodeError:
            return "the query string is not UTF-8 text (percent-encoded bytes that are no characters)"
        if "\x00" in text:
            return "the query string holds a NUL character"
    return None


def _require_web() -> tuple[Any, Any]:
    try:
        import fastapi
        import starlette.concurrency
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise CxrevalError(
            "The reader study server needs the 'reader' extra: pip install 'cxreval[reader]'."
        ) from exc
    return fastapi, starlette.concurrency


def create_app(
    store: ReaderStore | str,
    *,
    read_ahead: int = READ_AHEAD,
    clock: Callable[[], datetime.datetime] | None = None,
) -> Any:
    """The FastAPI application of a study.

    Parameters
    ----------
    store : ReaderStore or str
        The store, or its database URL.
    read_ahead : int, default=READ_AHEAD
        Display renditions made ahead, in the background, for the studies after the one a reader's page
        asks for (their queue's order, the ones not yet labelled); 0: none (each made when asked for).
    clock : callable, optional
        ``clock() -> datetime`` (aware): the server's time, of every stored submission and every washout
        decision (:attr:`cxreval.reader.store.ReaderStore.clock`); the store's own clock when not given.
    """
    fastapi, concurrency = _require_web()
    from fastapi.responses import JSONResponse

    st = ReaderStore.open(store) if isinstance(store, str) else store
    if clock is not None:
        st.clock = clock
    from ._study_routes import StudyRoutes

    routes = StudyRoutes(st, read_ahead=read_ahead)
    spec, cache = routes.spec, routes.cache
    from ..io.images import read_image  # noqa: F401 - imported once at start, not inside the first image request

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> Any:
        yield
        routes.jobs.close()  # the server stops: so does a background job's process

    app = fastapi.FastAPI(
        title=f"cxreval reader: {spec.name}",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )

    @app.exception_handler(SubmissionError)
    async def _refused(_request: Any, exc: SubmissionError) -> Any:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status, headers=_retry_after(exc.status))

    async def _database(_request: Any, exc: Exception) -> Any:
        refusal = database_refusal(exc)
        if refusal is None:
            raise exc
        return await _refused(_request, refusal)

    app.exception_handler(st.sa.exc.SQLAlchemyError)(_database)
    app.exception_handler(OverflowError)(_database)

    @app.get("/")
    def index() -> Any:
        return routes.static("index.html")

    for path, endpoint in (
        ("/static/{name}", routes.static_file),
        ("/api/me", routes.me),
        ("/api/queue", routes.queue),
        ("/api/item", routes.item),
        ("/api/organiser/status", routes.organiser_status),
        ("/api/organiser/integrity", routes.organiser_integrity),
        ("/api/organiser/jobs", routes.organiser_jobs),
        ("/api/organiser/jobs/{job_id}", routes.organiser_job),
        ("/api/organiser/jobs/{job_id}/file", routes.organiser_job_file),
        ("/api/pixels", routes.image_pixels),
        ("/api/heatmap", routes.heatmap),
    ):
        app.get(path)(endpoint)
    app.post("/api/organiser/jobs", status_code=202)(routes.organiser_start_job)

    def submit(raw: bytes, authorization: str) -> dict[str, object]:
        """POST /api/submissions (served by :class:`_Limits` without the framework: the hot path)."""
        scheme, _, token = authorization.partition(" ")
        reader = st.authenticate(token.strip()) if scheme.lower() == "bearer" else None
        if reader is None:
            raise SubmissionError("A valid reader token is required (Authorization: Bearer <token>).", 401)
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise SubmissionError(f"The body is not valid JSON: {exc}.", 400) from None
        except RecursionError:
            raise SubmissionError("The body is nested too deeply to be a submission.", 400) from None
        if not isinstance(body, dict):
            raise SubmissionError("The body must be a JSON object {id, task, item, ...}.", 400)
        where = bad_text(body)
        if where is not None:
            raise SubmissionError(
                f"The body holds a NUL character or a lone surrogate ({where}); text must be "
                "UTF-8 without NUL.",
                400,
            )
        for k in ("id", "task", "item"):
            if not isinstance(body.get(k), str):
                raise SubmissionError(f"Field {k!r} (a string) is required.", 422)
        content = {k: v for k, v in body.items() if k not in ("id", "task", "item", "client_time")}
        return st.submit(
            reader, body["id"], body["task"], body["item"], content, client_time=body.get("client_time")
        ).to_dict()

    wrapped = _Limits(app, submit)
    wrapped.store, wrapped.cache, wrapped.jobs = st, cache, routes.jobs
    return wrapped


class _Limits:
    """Pure ASGI middleware: refuse headers over :data:`MAX_HEADERS` bytes, and a declared body over
    :data:`MAX_BODY` before reading it; add the
    security headers to every answer and ``Cache-Control: no-store`` to the API's; serve
    ``POST /api/submissions`` directly (read the body up to the limit, then validate, append and wait for
    the commit in a worker thread)."""

    def __init__(self, app: Any, submit: Any) -> None:
        self.app, self.submit = app, submit
        self.store: Any = None
        self.cache: Any = None
        self.jobs: Any = None

    @staticmethod
    async def _json(
        send: Any, status: int, obj: object, *, extra: tuple[tuple[bytes, bytes], ...] = ()
    ) -> None:
        body = json.dumps(obj).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    *_RAW_HEADERS,
                    *extra,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _submission(self, scope: Any, receive: Any, send: Any) -> None:
        import anyio

        raw = bytearray()
        more = True
        while more:  # chunked bodies have no content-length: count while reading
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            raw += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(raw) > MAX_BODY:
                await self._json(send, 413, {"detail": f"Request body over {MAX_BODY} bytes."})
                return
        authorization = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), "")
        t0 = time.perf_counter()
        try:
            res = await anyio.to_thread.run_sync(self.submit, bytes(raw), authorization)
            status: int = 200
        except Exception as exc:
            refusal = database_refusal(exc)
            if refusal is None:
                raise
            res, status = {"detail": str(refusal)}, refusal.status
        timing = f"app;dur={(time.perf_counter() - t0) * 1000:.2f}".encode()  # body read -> committed
        extra = [(b"cache-control", b"no-store"), (b"server-timing", timing)]
        extra += [(k.lower().encode(), v.encode()) for k, v in _retry_after(status).items()]
        await self._json(send, status, res, extra=tuple(extra))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if sum(len(k) + len(v) for k, v in scope["headers"]) > MAX_HEADERS:
            await self._json(send, 431, {"detail": f"Request headers over {MAX_HEADERS} bytes."})
            return
        for k, v in scope["headers"]:
            if k == b"content-length" and (not v.isdigit() or int(v) > MAX_BODY):
                await self._json(send, 413, {"detail": f"Request body over {MAX_BODY} bytes."})
                return
        if scope["path"] == "/api/submissions":
            if scope["method"] != "POST":
                await self._json(send, 405, {"detail": "Use POST."}, extra=((b"allow", b"POST"),))
                return
            await self._submission(scope, receive, send)
            return
        api = scope["path"].startswith("/api/")
        why = _bad_query(scope)
        if why is not None:
            await self._json(
                send, 400, {"detail": f"Bad request: {why}."}, extra=((b"cache-control", b"no-store"),)
            )
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in _RAW_HEADERS if k not in have]
                if api and b"cache-control" not in have:  # images say how they may be cached
                    extra.append((b"cache-control", b"no-store"))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def bind(host: str = "127.0.0.1", port: int = 8000) -> socket.socket:
    """A TCP socket bound to ``host:port``, ready for :func:`serve`.

    Raises
    ------
    InvalidParameterError
        If the port is in use or the address is not this machine's: one line naming both and the fix.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(
        socket.SOL_SOCKET, socket.SO_REUSEADDR, 1
    )  # what uvicorn does: a restart may reuse the port
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:
        sock.close()
        why = getattr(exc, "strerror", None) or str(exc)
        raise InvalidParameterError(
            f"Cannot listen on {host}:{port}: {why} (another server may be using it). "
            "Choose another port=, or stop the other server."
        ) from exc
    return sock


def serve(
    url: str | ReaderStore, *, host: str = "127.0.0.1", port: int = 8000, sock: socket.socket | None = None
) -> None:
    """Run the study's server with uvicorn until interrupted (binds 127.0.0.1 unless told otherwise).

    Parameters
    ----------
    url : str or ReaderStore
        The study database's URL, or the opened store.
    host, port : str, int
        Where to listen when ``sock`` is not given.
    sock : socket.socket, optional
        A socket from :func:`bind` (so that a busy port is reported before anything else).

    Raises
    ------
    KeyboardInterrupt
        After a clean shutdown on SIGINT (Ctrl-C); on SIGTERM the signal is raised again once the server
        has stopped, so the process ends as its own handler says (the CLI: exit 143).
    """
    _require_web()
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise CxrevalError("The reader study server needs uvicorn: pip install 'cxreval[reader]'.") from exc
    sock = sock if sock is not None else bind(host, port)
    app = create_app(url)
    server = _server_class(uvicorn)(uvicorn.Config(app, log_level="warning", access_log=False))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        st = getattr(app, "store", None)
        if st is not None:
            st.close()
        if getattr(app, "cache", None) is not None:
            app.cache.close()
        if getattr(app, "jobs", None) is not None:
            app.jobs.close()
    if signal.SIGTERM in server.caught:
        signal.raise_signal(signal.SIGTERM)
    if server.caught:
        raise KeyboardInterrupt


def _server_class(uvicorn: Any) -> Any:
    """uvicorn's server, recording the signals that stopped it instead of re-raising them inside the event
    loop (where asyncio swallows them and the process would exit 0 after Ctrl-C)."""

    class _Server(uvicorn.Server):
        def __init__(self, config: Any) -> None:
            super().__init__(config)
            self.caught: list[int] = []

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.caught.append(sig)
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            old = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in old.items():
                    signal.signal(sig, handler)

    return _Server
