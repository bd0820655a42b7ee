"""EM of the latent-class model on cells of identical studies, vectorised over weight rows (private).

A *cell* is a set of studies with the same reader labels, the same score bin and the same anchor state; the
likelihood depends on a study only through its cell, so EM runs on the ``(B, n_cells)`` cell weights instead
of the ``(B, n_studies)`` study weights (``B`` rows: the data, or bootstrap replicates fitted at once).

Two models of the score given the truth share the reader part (conditionally independent readers with a
sensitivity and specificity each):

- ``bins`` (generative, Zhou, Castelluccio & Zhou 2005): ``T ~ Bernoulli(π)``, the score's bin given ``T`` a free
  multinomial ``F1`` / ``F0`` with a Dirichlet(1 + α) prior; cell log-weights ``log π F1[bin]`` and
  ``log (1 - π) F0[bin]``.
- ``spline`` (the semiparametric density-ratio model): ``P(T = 1 | score) = expit(h(z) · β)``, ``h`` a natural
  cubic spline basis of the score's normal score ``z``, i.e. ``log f1 / f0`` smooth in ``z`` with ``f0`` free;
  a ridge ``λ/2 |β|²`` on the non-constant terms; the M-step is one Newton step of the weighted logistic
  regression (responses: the posteriors).

The reader part is either conditionally independent of the score (a sensitivity and specificity per reader) or,
with ``dependent=True`` (the ``'dependent'`` score model), each reader's sensitivity and specificity a logistic
function of the score's standardised normal score ``z`` within the class:
``logit Se_r(z) = logit Se_r + a_r z``, ``logit Sp_r(z) = logit Sp_r + b_r z`` (two slopes per reader, a ridge
``λ/2 (a_r² + b_r²)``; the M-step is one Newton step of each reader's two weighted logistic regressions).

Everything here trusts its inputs (checked in :mod:`cxreval.latent._fitting`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._cells import Cells, bin_sums, bin_z, cell_weights, make_cells, reader_at_cells, reader_sums, to_cells
from ._shared_effect import shared_effect_log_lik

__all__ = [
    "Cells",
    "EMState",
    "make_cells",
    "cell_weights",
    "run_em",
    "reader_log_ratio",
    "accuracy_at",
    "marginal_accuracy",
    "bin_z",
    "EPS",
    "GROUP_PRIOR",
]

#: Sensitivities, specificities and the prevalence are kept in ``[EPS, 1 - EPS]`` (so that ``log`` stays finite
#: for exact readers; a posterior then rounds to 0 or 1 within 1e-20).
EPS = 1e-9
#: Dirichlet pseudo-count per joint label pattern of a declared group of dependent readers, in each class.
GROUP_PRIOR = 0.5


@dataclass(frozen=True)
class EMState:
    """Parameters, posteriors and bookkeeping of an EM run with ``B`` weight rows.

    ``sensitivity``, ``specificity`` (B, n_readers); ``prevalence`` (B,): ``π`` (bins) or the weighted mean
    posterior (spline); ``f1``, ``f0`` (B, n_bins): the score bins' probabilities given the truth (fitted, or
    implied by the posteriors for the spline); ``beta`` (B, d) or None; ``posterior`` (B, n_cells);
    ``objective`` (B,), the final penalised log-likelihood; ``trace`` (n_iter + 1, B) its value after each
    E-step; ``n_iter``; ``converged`` (B,). With score-dependent readers: ``se_slope``, ``sp_slope`` (B,
    n_readers), and ``sensitivity`` / ``specificity`` are the values at ``z = 0`` (the class-weighted averages
    are :func:`marginal_accuracy`). With declared groups of dependent readers: ``group1``, ``group0`` (B,
    n_categories), each group's joint label patterns' probabilities given ``T = 1`` and ``T = 0``.
    """

    sensitivity: np.ndarray
    specificity: np.ndarray
    prevalence: np.ndarray
    f1: np.ndarray
    f0: np.ndarray
    beta: np.ndarray | None
    posterior: np.ndarray
    objective: np.ndarray
    trace: np.ndarray
    n_iter: int
    converged: np.ndarray
    se_slope: np.ndarray | None = None
    sp_slope: np.ndarray | None = None
    group1: np.ndarray | None = None
    group0: np.ndarray | None = None


def accuracy_at(
    cells: Cells, se: np.ndarray, sp: np.ndarray, se_slope: np.ndarray, sp_slope: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each reader's sensitivity and specificity at each bin's score, (B, n_bins, n_readers)."""
    from scipy.special import expit, logit

    z = bin_z(cells)[None, :, None]
    lo, hi = EPS, 1 - EPS
    se_k = np.clip(expit(logit(se)[:, None, :] + se_slope[:, None, :] * z), lo, hi)
    sp_k = np.clip(expit(logit(sp)[:, None, :] + sp_slope[:, None, :] * z), lo, hi)
    return se_k, sp_k


def reader_log_ratio(
    cells: Cells,
    se: np.ndarray,
    sp: np.ndarray,
    se_slope: np.ndarray | None = None,
    sp_slope: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``log P(reader labels | T=1)`` and ``| T=0``, each (B, n_cells); score-dependent with the slopes (the
    logarithms are taken per bin, then read at each cell)."""
    if se_slope is None or sp_slope is None:
        r1 = np.log(se) @ cells.positive.T + np.log1p(-se) @ cells.negative.T
        r0 = np.log1p(-sp) @ cells.positive.T + np.log(sp) @ cells.negative.T
        return r1, r0
    se_k, sp_k = accuracy_at(cells, se, sp, se_slope, sp_slope)
    l1 = np.concatenate([np.log(se_k), np.log1p(-se_k)], axis=2)
    l0 = np.concatenate([np.log1p(-sp_k), np.log(sp_k)], axis=2)
    return reader_at_cells(cells, l1), reader_at_cells(cells, l0)


def marginal_accuracy(cells: Cells, w: np.ndarray, state: EMState) -> tuple[np.ndarray, np.ndarray]:
    """Each reader's sensitivity and specificity averaged over the scores of its fitted class (weights ``w``
    (B, n_cells) times the posteriors): equal to ``state.sensitivity`` / ``specificity`` without slopes."""
    if state.se_slope is None or state.sp_slope is None:
        return state.sensitivity, state.specificity
    se_k, sp_k = accuracy_at(cells, state.sensitivity, state.specificity, state.se_slope, state.sp_slope)
    n_r = cells.positive.shape[1]
    q = reader_sums(cells, w * state.posterior)
    r = reader_sums(cells, w * (1 - state.posterior))
    q, r = q[:, :, :n_r] + q[:, :, n_r:], r[:, :, :n_r] + r[:, :, n_r:]
    with np.errstate(invalid="ignore", divide="ignore"):
        se = (q * se_k).sum(axis=1) / q.sum(axis=1)
        sp = (r * sp_k).sum(axis=1) / r.sum(axis=1)
    return np.where(np.isfinite(se), se, state.sensitivity), np.where(np.isfinite(sp), sp, state.specificity)


_PARAMS = ("se", "sp", "pi", "f1", "f0", "beta", "se_slope", "sp_slope", "group1", "group0")


@dataclass
class _Params:
    se: np.ndarray
    sp: np.ndarray
    pi: np.ndarray | None = None
    f1: np.ndarray | None = None
    f0: np.ndarray | None = None
    beta: np.ndarray | None = None
    se_slope: np.ndarray | None = None
    sp_slope: np.ndarray | None = None
    group1: np.ndarray | None = None
    group0: np.ndarray | None = None

    def take(self, rows: np.ndarray) -> _Params:
        def pick(v: np.ndarray | None) -> np.ndarray | None:
            return None if v is None else v[rows]

        return _Params(
            self.se[rows],
            self.sp[rows],
            pick(self.pi),
            pick(self.f1),
            pick(self.f0),
            pick(self.beta),
            pick(self.se_slope),
            pick(self.sp_slope),
            pick(self.group1),
            pick(self.group0),
        )

    def put(self, rows: np.ndarray, other: _Params) -> None:
        for name in _PARAMS:
            mine = getattr(self, name)
            if mine is not None:
                mine[rows] = getattr(other, name)


@dataclass(frozen=True)
class _Settings:
    prior: float
    ridge: float
    fixed: np.ndarray
    fixed_se: np.ndarray
    fixed_sp: np.ndarray
    slope_ridge: float = 1.0
    correlation: float = 0.0
    #: (R, 4) Beta prior pseudo-counts per reader, ``(a - 1, b - 1)`` of the sensitivity then of the
    #: specificity (zeros: no prior); the EM then finds the posterior mode (MAP)
    accuracy_prior: np.ndarray | None = None

    def prior_counts(self, r: int) -> np.ndarray:
        return np.zeros((r, 4)) if self.accuracy_prior is None else self.accuracy_prior


def _logistic_step(
    y: np.ndarray,
    n: np.ndarray,
    z: np.ndarray,
    p: np.ndarray,
    slope: np.ndarray,
    ridge: float,
    pseudo: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """One Newton step of the weighted logistic regression ``logit P = logit p + slope z`` per row and reader:
    ``y`` (B, C, R) the weights of the responses 1, ``n`` (B, C, R) the weights of all labels, ``z`` (C,);
    a ridge on the slope; ``pseudo``: a Beta prior's ``(a - 1, b - 1)`` (R,) on ``p`` (pseudo-responses at
    ``z = 0``; zeros without a prior). Returns the new ``(p, slope)``, each (B, R)."""
    from scipy.special import expit, logit

    a = logit(p)
    zz = z[None, :, None]
    m = expit(a[:, None, :] + slope[:, None, :] * zz)
    res = y - n * m
    v = n * m * (1 - m)
    g0 = res.sum(axis=1)
    g1 = (res * zz).sum(axis=1) - ridge * slope
    h00 = v.sum(axis=1) + 1e-9
    m0 = expit(a)  # the prior's pseudo-responses (zeros without one)
    g0 = g0 + pseudo[0] - (pseudo[0] + pseudo[1]) * m0
    h00 = h00 + (pseudo[0] + pseudo[1]) * m0 * (1 - m0)
    h01 = (v * zz).sum(axis=1)
    h11 = (v * zz * zz).sum(axis=1) + ridge
    det = h00 * h11 - h01**2
    da = (h11 * g0 - h01 * g1) / det
    db = (h00 * g1 - h01 * g0) / det
    # a step of at most 2 on the logit scale keeps a nearly separated reader from overshooting
    big = np.maximum(np.maximum(np.abs(da), np.abs(db)) / 2.0, 1.0)
    new_a = np.clip(a + da / big, logit(EPS), logit(1 - EPS))
    return expit(new_a), slope + db / big


def _score_logs(cells: Cells, p: _Params) -> tuple[np.ndarray, np.ndarray]:
    if p.beta is not None:
        assert cells.bin_basis is not None
        eta = p.beta @ cells.bin_basis.T
        # log expit(eta) (scipy's log_expit, a few times faster here); log expit(-eta) = log expit(eta) - eta
        log1 = np.minimum(eta, 0.0) - np.log1p(np.exp(-np.abs(eta)))
        return to_cells(cells, log1), to_cells(cells, log1 - eta)
    assert p.pi is not None and p.f1 is not None and p.f0 is not None
    return (
        np.log(p.pi)[:, None] + np.log(p.f1)[:, cells.bin],
        np.log1p(-p.pi)[:, None] + np.log(p.f0)[:, cells.bin],
    )


def _e_step(cells: Cells, w: np.ndarray, p: _Params, st: _Settings) -> tuple[np.ndarray, np.ndarray]:
    from scipy.special import expit

    s1, s0 = _score_logs(cells, p)
    if st.correlation and p.se_slope is not None and p.sp_slope is not None:
        se_k, sp_k = accuracy_at(cells, p.se, p.sp, p.se_slope, p.sp_slope)
        r1 = shared_effect_log_lik(cells, se_k, st.correlation)
        r0 = shared_effect_log_lik(cells, 1 - sp_k, st.correlation)
    elif st.correlation:
        r1 = shared_effect_log_lik(cells, p.se, st.correlation)
        r0 = shared_effect_log_lik(cells, 1 - p.sp, st.correlation)
    else:
        r1, r0 = reader_log_ratio(cells, p.se, p.sp, p.se_slope, p.sp_slope)
    if p.group1 is not None and p.group0 is not None and cells.group_onehot is not None:
        r1 = r1 + np.log(p.group1) @ cells.group_onehot.T
        r0 = r0 + np.log(p.group0) @ cells.group_onehot.T
    l1 = s1 + r1
    l0 = s0 + r0
    post = expit(l1 - l0)
    ll = np.logaddexp(l1, l0)
    known = cells.anchor >= 0
    if known.any():
        post[:, known] = cells.anchor[known].astype(float)
        ll[:, known] = np.where(cells.anchor[known] == 1, l1[:, known], l0[:, known])
    obj = (w * ll).sum(axis=1)
    if st.accuracy_prior is not None:
        c = st.accuracy_prior
        obj = obj + (
            np.log(p.se) @ c[:, 0]
            + np.log1p(-p.se) @ c[:, 1]
            + np.log(p.sp) @ c[:, 2]
            + np.log1p(-p.sp) @ c[:, 3]
        )
    if p.beta is not None:
        obj = obj - 0.5 * st.ridge * (p.beta[:, 1:] ** 2).sum(axis=1)
        if p.se_slope is not None and p.sp_slope is not None:
            obj = obj - 0.5 * st.slope_ridge * ((p.se_slope**2).sum(axis=1) + (p.sp_slope**2).sum(axis=1))
    elif st.prior > 0:
        assert p.f1 is not None and p.f0 is not None
        obj = obj + st.prior * (np.log(p.f1).sum(axis=1) + np.log(p.f0).sum(axis=1))
    return post, obj


def _m_step(cells: Cells, w: np.ndarray, post: np.ndarray, st: _Settings, previous: _Params) -> _Params:
    q = w * post
    r = w - q
    lab = cells.positive + cells.negative
    c = st.prior_counts(lab.shape[1])
    q_lab = q @ lab + c[:, 0] + c[:, 1]
    r_lab = r @ lab + c[:, 2] + c[:, 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        se = (q @ cells.positive + c[:, 0]) / q_lab
        sp = (r @ cells.negative + c[:, 2]) / r_lab
    se = np.clip(np.where(q_lab > 0, se, previous.se), EPS, 1 - EPS)
    sp = np.clip(np.where(r_lab > 0, sp, previous.sp), EPS, 1 - EPS)
    se_slope = sp_slope = None
    if previous.se_slope is not None and previous.sp_slope is not None:
        # the readers' logistic regressions on the score: their terms summed per bin (one z each)
        z, n_r = bin_z(cells), lab.shape[1]
        q_k = reader_sums(cells, q)
        r_k = reader_sums(cells, r)
        q_pos, r_neg = q_k[:, :, :n_r], r_k[:, :, n_r:]
        q_all, r_all = q_pos + q_k[:, :, n_r:], r_k[:, :, :n_r] + r_neg
        se, se_slope = _logistic_step(
            q_pos, q_all, z, previous.se, previous.se_slope, st.slope_ridge, (c[:, 0], c[:, 1])
        )
        sp, sp_slope = _logistic_step(
            r_neg, r_all, z, previous.sp, previous.sp_slope, st.slope_ridge, (c[:, 2], c[:, 3])
        )
        no1 = q_lab <= 0
        no0 = r_lab <= 0
        se, se_slope = np.where(no1, previous.se, se), np.where(no1, previous.se_slope, se_slope)
        sp, sp_slope = np.where(no0, previous.sp, sp), np.where(no0, previous.sp_slope, sp_slope)
        se_slope[:, st.fixed] = 0.0
        sp_slope[:, st.fixed] = 0.0
    se[:, st.fixed] = st.fixed_se[st.fixed]
    sp[:, st.fixed] = st.fixed_sp[st.fixed]
    g1 = g0 = None
    if previous.group1 is not None and cells.group_onehot is not None and cells.group_of is not None:
        g1, g0 = _group_step(cells, q, r)
    if previous.beta is not None:
        from scipy.special import expit

        assert cells.bin_basis is not None
        h = cells.bin_basis  # the logistic regression of the posteriors on the score, summed per bin
        q_bin, w_bin = bin_sums(cells, q), bin_sums(cells, w)
        beta = previous.beta
        m = expit(beta @ h.T)
        grad = (q_bin - w_bin * m) @ h
        grad[:, 1:] -= st.ridge * beta[:, 1:]
        d = h.shape[1]
        iu, ju = np.triu_indices(d)  # the Hessian's upper triangle, mirrored (symmetric)
        upper = (w_bin * m * (1 - m)) @ (h[:, iu] * h[:, ju])
        hess = np.empty((upper.shape[0], d, d))
        hess[:, iu, ju] = upper
        hess[:, ju, iu] = upper
        pen = np.full(d, st.ridge)
        pen[0] = 1e-12
        hess[:, np.arange(d), np.arange(d)] += pen
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        return _Params(se, sp, beta=beta + step, se_slope=se_slope, sp_slope=sp_slope, group1=g1, group0=g0)
    tot = w.sum(axis=1)
    pi = np.clip(q.sum(axis=1) / np.where(tot > 0, tot, 1.0), EPS, 1 - EPS)
    q_bin = bin_sums(cells, q) + st.prior
    r_bin = bin_sums(cells, r) + st.prior
    f1 = np.clip(q_bin / np.maximum(q_bin.sum(axis=1, keepdims=True), 1e-300), 1e-300, None)
    f0 = np.clip(r_bin / np.maximum(r_bin.sum(axis=1, keepdims=True), 1e-300), 1e-300, None)
    return _Params(se, sp, pi, f1, f0, group1=g1, group0=g0)


def _group_step(cells: Cells, q: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each group's joint label patterns' probabilities given the truth: posterior-weighted shares with a
    Dirichlet prior of :data:`GROUP_PRIOR` per pattern (a pattern never seen keeps a finite logarithm)."""
    assert cells.group_onehot is not None and cells.group_of is not None
    owner = np.eye(int(cells.group_of.max()) + 1)[cells.group_of]  # (n_categories, n_groups)
    out = []
    for x in (q, r):
        c = x @ cells.group_onehot + GROUP_PRIOR
        out.append(c / (c @ owner)[:, cells.group_of])
    return out[0], out[1]


#: The transformation of each parameter in which SQUAREM extrapolates (the others: as they are).
_LOGIT = ("se", "sp", "pi")
_LOG = ("f1", "f0", "group1", "group0")


def _free(name: str, x: np.ndarray) -> np.ndarray:
    from scipy.special import logit

    if name in _LOGIT:
        return logit(np.clip(x, EPS, 1 - EPS))
    return np.log(np.maximum(x, 1e-300)) if name in _LOG else x


def _bounded(cells: Cells, name: str, t: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_free` (probability vectors renormalised: the bins', or each group's patterns)."""
    from scipy.special import expit

    if name in _LOGIT:
        return np.clip(expit(t), EPS, 1 - EPS)
    if name not in _LOG:
        return t
    e = np.exp(t - t.max(axis=1, keepdims=True))
    if name in ("f1", "f0"):
        return np.clip(e / e.sum(axis=1, keepdims=True), 1e-300, None)
    assert cells.group_of is not None
    owner = np.eye(int(cells.group_of.max()) + 1)[cells.group_of]
    return e / (e @ owner)[:, cells.group_of]


def _extrapolate(
    cells: Cells, p0: _Params, p1: _Params, p2: _Params, step_max: np.ndarray
) -> tuple[_Params, np.ndarray]:
    """SQUAREM's step (Varadhan & Roland 2008, scheme S3) from two EM steps ``p0 -> p1 -> p2``, per row:
    ``θ0 + 2α r + α² v`` with ``r = θ1 - θ0``, ``v = θ2 - 2θ1 + θ0``, ``α = |r| / |v|`` within
    ``[1, step_max]`` (``α = 1`` gives ``θ2``), in the unconstrained parameters of :func:`_free`."""
    names = [n for n in _PARAMS if getattr(p0, n) is not None]
    t = {n: [_free(n, getattr(q, n)) for q in (p0, p1, p2)] for n in names}
    r = {n: t[n][1] - t[n][0] for n in names}
    v = {n: t[n][2] - 2 * t[n][1] + t[n][0] for n in names}
    sr = sum((r[n] ** 2).reshape(r[n].shape[0], -1).sum(axis=1) for n in names)
    sv = sum((v[n] ** 2).reshape(v[n].shape[0], -1).sum(axis=1) for n in names)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.clip(np.sqrt(sr / sv), 1.0, step_max)
    alpha = np.where(np.isfinite(alpha), alpha, 1.0)
    a = alpha.reshape(-1, 1)
    out = _Params(p0.se, p0.sp)
    for n in names:
        shape = (-1,) + (1,) * (t[n][0].ndim - 1)
        a_n = a.reshape(shape)
        setattr(out, n, _bounded(cells, n, t[n][0] + 2 * a_n * r[n] + a_n**2 * v[n]))
    return out, alpha


def _squarem_cycle(
    cells: Cells,
    w: np.ndarray,
    tot: np.ndarray,
    st: _Settings,
    tol: float,
    active: np.ndarray,
    params: _Params,
    post: np.ndarray,
    obj: np.ndarray,
    done: np.ndarray,
    step_max: np.ndarray,
) -> None:
    """One SQUAREM cycle of the ``active`` rows, in place: an EM step (a row whose objective rose by less than
    ``tol`` per unit of weight in it stops there, as plain EM would), a second, the extrapolated point kept
    where its objective is at least the second step's (else the second step, and the row's largest step
    back to 1; the objective never decreases)."""
    p0, wa = params.take(active), w[active]
    p1 = _m_step(cells, wa, post[active], st, p0)
    post1, obj1 = _e_step(cells, wa, p1, st)
    stop = np.abs(obj1 - obj[active]) / tot[active] < tol
    if stop.any():
        rows = np.flatnonzero(stop)
        params.put(active[rows], p1.take(rows))
        post[active[rows]], obj[active[rows]] = post1[rows], obj1[rows]
        done[active[rows]] = True
    go = np.flatnonzero(~stop)
    if go.size == 0:
        return
    act, wa, p0, p1 = active[go], wa[go], p0.take(go), p1.take(go)
    post1 = post1[go]
    p2 = _m_step(cells, wa, post1, st, p1)
    post2, obj2 = _e_step(cells, wa, p2, st)
    pe, alpha = _extrapolate(cells, p0, p1, p2, step_max[act])
    pe.se[:, st.fixed], pe.sp[:, st.fixed] = st.fixed_se[st.fixed], st.fixed_sp[st.fixed]
    post_e, obj_e = _e_step(cells, wa, pe, st)
    ok = np.isfinite(obj_e) & (obj_e >= obj2)
    keep, back = np.flatnonzero(ok), np.flatnonzero(~ok)
    params.put(act[keep], pe.take(keep))
    post[act[keep]], obj[act[keep]] = post_e[keep], obj_e[keep]
    params.put(act[back], p2.take(back))
    post[act[back]], obj[act[back]] = post2[back], obj2[back]
    step_max[act] = np.where(ok, np.where(alpha >= step_max[act], 4 * step_max[act], step_max[act]), 1.0)


def _initial(cells: Cells, w: np.ndarray, post: np.ndarray, st: _Settings, spline: bool) -> _Params:
    b = w.shape[0]
    r = cells.positive.shape[1]
    start = _Params(np.full((b, r), 0.5), np.full((b, r), 0.5))
    if cells.group_onehot is not None:
        start.group1 = start.group0 = np.ones((b, cells.group_onehot.shape[1]))
    if not spline:
        return _m_step(cells, w, post, st, start)
    assert cells.bin_basis is not None
    start.beta = np.zeros((b, cells.bin_basis.shape[1]))
    p = _m_step(cells, w, post, st, start)
    for _ in range(5):  # the logistic part to near convergence on the initial posteriors
        p.beta = _m_step(cells, w, post, st, p).beta
    return p


def run_em(
    cells: Cells,
    w: np.ndarray,
    init_posterior: np.ndarray,
    *,
    prior: float,
    ridge: float,
    fixed: np.ndarray,
    fixed_se: np.ndarray,
    fixed_sp: np.ndarray,
    max_iter: int,
    tol: float,
    spline: bool,
    init: dict[str, np.ndarray] | None = None,
    slope_ridge: float = 1.0,
    dependent: bool = False,
    correlation: float = 0.0,
    accuracy_prior: np.ndarray | None = None,
) -> EMState:
    """EM from initial posteriors ``init_posterior`` (B, n_cells), or from the parameters ``init`` (one row each:
    ``se``, ``sp`` and ``pi``, ``f1``, ``f0`` or ``beta``; with ``se_slope``, ``sp_slope`` the readers are
    score-dependent; ``group1``, ``group0`` with declared groups) copied to every row; ``correlation``: an
    assumed within-class correlation of the readers' latent errors through a shared study effect (a
    sensitivity analysis, :func:`~cxreval.latent._shared_effect.shared_effect_log_lik`). ``accuracy_prior``
    (R, 4): Beta prior pseudo-counts on the readers' accuracies (the EM then finds the posterior mode).
    ``dependent=True`` without ``init``: the conditionally independent spline model is fitted first and EM
    continues from it with the readers' slopes at 0.

    Accelerated by SQUAREM (:func:`_squarem_cycle`: two EM steps and an extrapolation per iteration, the
    objective never decreasing). Stops when every row's objective rose by less than ``tol`` per unit of weight
    in one EM step (or after ``max_iter`` iterations); a row that has converged keeps its parameters while the
    others continue.
    """
    st = _Settings(prior, ridge, fixed, fixed_se, fixed_sp, slope_ridge, correlation, accuracy_prior)
    b = w.shape[0]
    tot = np.maximum(w.sum(axis=1), 1e-300)
    if init is None and dependent:
        first = run_em(
            cells,
            w,
            init_posterior,
            prior=prior,
            ridge=ridge,
            fixed=fixed,
            fixed_se=fixed_se,
            fixed_sp=fixed_sp,
            max_iter=max_iter,
            tol=tol,
            spline=True,
            correlation=correlation,
            accuracy_prior=accuracy_prior,
        )
        params = _Params(
            first.sensitivity.copy(),
            first.specificity.copy(),
            beta=None if first.beta is None else first.beta.copy(),
            se_slope=np.zeros_like(first.sensitivity),
            sp_slope=np.zeros_like(first.specificity),
            group1=None if first.group1 is None else first.group1.copy(),
            group0=None if first.group0 is None else first.group0.copy(),
        )
    elif init is None:
        params = _initial(cells, w, init_posterior, st, spline)
    else:
        params = _Params(**{k: np.repeat(np.asarray(v)[None], b, axis=0) for k, v in init.items()})
    post, obj = _e_step(cells, w, params, st)
    trace = [obj.copy()]
    done = np.zeros(b, dtype=bool)
    step_max = np.ones(b)
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        active = np.flatnonzero(~done)
        _squarem_cycle(cells, w, tot, st, tol, active, params, post, obj, done, step_max)
        trace.append(obj.copy())
        if done.all():
            break
    q = w * post
    if spline:
        f1 = bin_sums(cells, q)
        f0 = bin_sums(cells, w - q)
        f1 = f1 / np.maximum(f1.sum(axis=1, keepdims=True), 1e-300)
        f0 = f0 / np.maximum(f0.sum(axis=1, keepdims=True), 1e-300)
        prev = q.sum(axis=1) / tot
    else:
        assert params.pi is not None and params.f1 is not None and params.f0 is not None
        f1, f0, prev = params.f1, params.f0, params.pi
    return EMState(
        params.se,
        params.sp,
        prev,
        f1,
        f0,
        params.beta,
        post,
        obj,
        np.array(trace),
        n_iter,
        done,
        params.se_slope,
        params.sp_slope,
        params.group1,
        params.group0,
    )
