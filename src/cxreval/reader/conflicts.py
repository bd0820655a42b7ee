"""What a resolver reads: the conflicts of a study, the decisions standing on them and the adjudicated
readers' labels, from the derived ``conflicts`` and ``latest`` tables (mixed into
:class:`~cxreval.reader.store.ReaderStore`)."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .derived import Adjudicated
from .payloads import Reader

__all__: list[str] = []


class AdjudicationView(NamedTuple):
    """What :meth:`ConflictReads.adjudication_view` returns."""

    mine: dict[str, Any] | None
    conflicts: dict[str, Any]
    labels: dict[str, dict[str, Any]]
    decisions: dict[str, dict[str, Any]]


class ConflictRows(NamedTuple):
    """What :meth:`ConflictReads.conflict_rows` returns: a study's conflicts and the decisions standing on them."""

    conflicts: dict[str, dict[str, str]]
    decisions: dict[str, dict[str, Any]]


class ConflictReads:
    """The resolver's reads of :class:`~cxreval.reader.store.ReaderStore` (which gives ``sa``, ``t``,
    ``spec``, ``read`` and ``_mine``)."""

    sa: Any
    t: Any
    spec: Any
    read: Any
    _mine: Any

    def adjudication_view(self, reader: Reader, study_id: str) -> AdjudicationView:
        """``(mine, conflicts of the study, {reader: payload} of its two readers, decisions)`` for a
        resolver's item, on one connection (three primary-key reads); ``decisions`` is ``{finding: {label,
        by, seq}}`` of the conflicts already decided for their current pair of states (``seq``: what a
        decision names as ``seen`` to replace it)."""

        def view(conn: Any) -> Any:
            conflicts, decided = self.conflict_rows(conn, study_id)
            return AdjudicationView(
                self._mine(conn, reader, "adjudication", study_id),
                conflicts,
                self._labels_of(conn, study_id),
                decided,
            )

        return self.read(view)

    def conflict_rows(self, conn: Any, study_id: str) -> ConflictRows:
        """``({finding: {reader_a: state, reader_b: state}}, {finding: {label, by, by_id, seq}})`` of one study:
        its conflicts in the study's finding order and the decisions standing on them (one indexed read)."""
        adj = Adjudicated.of(self.spec)
        if adj is None:
            return ConflictRows({}, {})
        a, b = adj.readers
        ct, r = self.t["conflicts"], self.t["readers"]
        rows = conn.execute(
            self.sa.select(
                ct.c.finding,
                ct.c.state_a,
                ct.c.state_b,
                ct.c.resolution,
                ct.c.resolved_by,
                ct.c.resolved_seq,
                r.c.name,
            )
            .select_from(ct.outerjoin(r, ct.c.resolved_by == r.c.id))
            .where(ct.c.study_id == study_id)
        ).all()
        order = {f: k for k, f in enumerate(self.spec.findings)}
        rows = sorted(rows, key=lambda x: order.get(x[0], 0))
        return ConflictRows(
            {f: {a: sa_, b: sb_} for f, sa_, sb_, *_ in rows},
            {
                f: {"label": res, "by": name, "by_id": by, "seq": seq}
                for f, _a, _b, res, by, seq, name in rows
                if res is not None
            },
        )

    def labels_of(self, study_id: str) -> dict[str, dict[str, Any]]:
        """The adjudicated readers' latest payloads of a study (``{reader: payload}``), for the resolver."""
        return self.read(lambda conn: self._labels_of(conn, study_id))

    def _labels_of(self, conn: Any, study_id: str) -> dict[str, dict[str, Any]]:
        adj = Adjudicated.of(self.spec)
        if adj is None:
            return {}
        sa, lt, r = self.sa, self.t["latest"], self.t["readers"]
        rows = conn.execute(
            sa.select(r.c.name, lt.c.payload)
            .join(r, lt.c.reader_id == r.c.id)
            .where(r.c.name.in_(adj.readers), lt.c.task == adj.task, lt.c.item == adj.item_of(study_id))
        ).all()
        return {str(n): json.loads(p) for n, p in rows}

    # -- queues and conflicts -----------------------------------------------------------------------
    def conflicts(self, study_id: str | None = None) -> dict[str, dict[str, dict[str, str]]]:
        """``{study_id: {finding: {reader_a: state, reader_b: state}}}`` where the two adjudicated readers
        both labelled a finding and disagree (adjudication task only); of one study when given."""
        return self.read(lambda conn: self._conflicts(conn, study_id))

    def _conflicts(self, conn: Any, study_id: str | None) -> dict[str, dict[str, dict[str, str]]]:
        adj = Adjudicated.of(self.spec)
        if adj is None:
            return {}
        a, b = adj.readers
        ct = self.t["conflicts"]
        q = self.sa.select(ct.c.study_id, ct.c.finding, ct.c.state_a, ct.c.state_b)
        if study_id is not None:
            q = q.where(ct.c.study_id == study_id)
        order = {f: k for k, f in enumerate(self.spec.findings)}
        out: dict[str, dict[str, dict[str, str]]] = {}
        for sid, f, sa_, sb_ in conn.execute(q.order_by(ct.c.study_id)):
            out.setdefault(sid, {})[f] = {a: sa_, b: sb_}
        return {sid: dict(sorted(fs.items(), key=lambda kv: order.get(kv[0], 0))) for sid, fs in out.items()}

    def _open_conflicts(self, conn: Any) -> dict[str, bool]:
        """``{study_id: fully resolved}`` of every study in conflict (one grouped read of ``conflicts``)."""
        sa, ct = self.sa, self.t["conflicts"]
        n_open = sa.func.sum(sa.case((ct.c.resolution.is_(None), 1), else_=0))
        rows = conn.execute(
            sa.select(ct.c.study_id, n_open).group_by(ct.c.study_id)
        ).all()  # one fetch, not a row each
        return {sid: not int(k) for sid, k in rows}
