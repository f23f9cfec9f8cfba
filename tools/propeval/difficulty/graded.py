"""The graded model's weighted score table, and the damped Newton machinery that fits it.

:class:`GradedModel` lays the observations out dense (layers of items x models arrays) and gives
the negative log posterior, its modified Newton step over every parameter at once (through the
Schur complement of the item blocks), and per-item refits with the abilities held fixed (the
bootstrap's). The 2PL is the same model with two categories and its one threshold fixed at 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

N_CATEGORIES = 6  # fact scores 0-5
GAP_PRIOR_SD = 1.0  # log gaps between thresholds ~ N(0, 1): gaps of about one logit
MAX_NEWTON = 200


def thresholds(delta: Any) -> tuple[Any, Any]:
    """Ordered, centred thresholds tau_1..tau_5 from 4 log gaps, and d tau / d delta (5 x 4)."""
    import numpy as np

    u = np.concatenate([[0.0], np.exp(delta)])
    lower = np.tril(np.ones((N_CATEGORIES - 1, N_CATEGORIES - 1)))
    centred = lower - lower.mean(axis=0, keepdims=True)
    tau = centred @ u
    return tau, centred[:, 1:] * np.exp(delta)[None, :]


class GradedModel:
    """The weighted score table of the graded model, laid out dense: layers of items x models arrays.

    An observation in category ``c`` has probability ``S_c - S_{c+1}`` with
    ``S_k = sigmoid(a_j * (theta_i - b_j - tau_k))``, ``S_0 = 1`` and ``S_K+1 = 0``: it touches the
    thresholds below and above it only, so each costs two sigmoids, not K. A cell whose runs fall in
    several categories has one observation per category, one per layer; with one run per cell there
    is one layer.
    """

    def __init__(self, cats: Any, w: Any, n_bounds: int, free_tau: bool, sd: tuple[float, float, float]) -> None:
        import numpy as np

        self.n_items, self.n_models, _ = cats.shape
        self.n_bounds, self.free_tau, self.sd = n_bounds, free_tau, sd
        weight = cats * w[:, :, None]
        present = weight > 0
        rank = np.cumsum(present, axis=2) - 1
        n, m, k = self.n_items, self.n_models, n_bounds
        items = np.repeat(np.arange(n), m)
        models = np.tile(np.arange(m), n)
        self.layers = []
        for layer in range(int(present.sum(axis=2).max(initial=0))):
            sel = present & (rank == layer)
            cat = np.argmax(sel, axis=2)
            wt = np.where(sel.any(axis=2), np.take_along_axis(weight, cat[:, :, None], axis=2)[:, :, 0], 0.0)
            flat = cat.ravel()
            self.layers.append(
                {
                    "cat": cat,
                    "wt": wt,
                    "has_lo": cat > 0,
                    "has_hi": cat < k,
                    "at_item": items * (k + 1) + flat,
                    "at_model": models * (k + 1) + flat,
                }
            )

    def reweighted(self, counts: Any) -> GradedModel:
        """The same table with model ``i``'s observations weighted ``counts[i]``; models at 0 left out.

        For :meth:`fit_items` only (the threshold sums of :meth:`newton` are not carried over).
        """
        drawn = counts > 0
        out = object.__new__(GradedModel)
        out.n_items, out.n_models = self.n_items, int(drawn.sum())
        out.n_bounds, out.free_tau, out.sd = self.n_bounds, self.free_tau, self.sd
        out.layers = [
            {
                "cat": layer["cat"][:, drawn],
                "wt": layer["wt"][:, drawn] * counts[drawn],
                "has_lo": layer["has_lo"][:, drawn],
                "has_hi": layer["has_hi"][:, drawn],
            }
            for layer in self.layers
        ]
        return out

    def _unpack(self, x: Any) -> tuple[Any, Any, Any, Any]:
        m, n = self.n_models, self.n_items
        return x[:m], x[m : m + n], x[m + n : m + 2 * n], x[m + 2 * n :]

    def _tau(self, delta: Any) -> tuple[Any, Any]:
        import numpy as np

        if self.free_tau:
            return thresholds(delta)
        return np.zeros(self.n_bounds), np.zeros((self.n_bounds, 0))

    def _prior(self, x: Any) -> float:
        theta, b, la, delta = self._unpack(x)
        sd = self.sd
        value = float(theta @ theta) / (2 * sd[0] ** 2) + float(b @ b) / (2 * sd[1] ** 2)
        return value + float(la @ la) / (2 * sd[2] ** 2) + float(delta @ delta) / (2 * GAP_PRIOR_SD**2)

    def _layer(self, layer: dict[str, Any], a: Any, u: Any, tau_ext: Any) -> tuple[Any, ...]:
        import numpy as np
        from scipy.special import expit

        cat = layer["cat"]
        z_lo = a * (u - tau_ext[cat])
        z_hi = a * (u - tau_ext[cat + 1])
        s_lo = np.where(layer["has_lo"], expit(z_lo), 1.0)
        s_hi = np.where(layer["has_hi"], expit(z_hi), 0.0)
        # Without a lower threshold, 1 - S_hi from expit(-z) keeps its precision near 0.
        p = np.maximum(np.where(layer["has_lo"], s_lo - s_hi, expit(-z_hi)), 1e-12)
        return z_lo, z_hi, s_lo, s_hi, p

    def _derivs(self, layer: dict[str, Any], a: Any, u: Any, tau_ext: Any) -> tuple[Any, ...]:
        """Per observation: z below and above, p, d nll / d z and the 2 x 2 d2 nll / d z2."""
        z_lo, z_hi, s_lo, s_hi, p = self._layer(layer, a, u, tau_ext)
        wp = layer["wt"] / p
        q_lo, q_hi = s_lo * (1 - s_lo), s_hi * (1 - s_hi)  # 0 where the threshold is a placeholder
        d_lo, d_hi = -wp * q_lo, wp * q_hi
        h_ll = wp * (q_lo * q_lo / p - q_lo * (1 - 2 * s_lo))
        h_hh = wp * (q_hi * q_hi / p + q_hi * (1 - 2 * s_hi))
        h_lh = -wp * q_lo * q_hi / p
        return z_lo, z_hi, p, d_lo, d_hi, h_ll, h_hh, h_lh

    def fit_items(self, theta: Any, tau: Any, b: Any, la: Any, gtol: float) -> tuple[Any, Any]:
        """Each item's (b, log a) MAP with the abilities and thresholds held fixed, from (b, la).

        Items are independent once the abilities and thresholds are fixed, so this is damped Newton
        on 2 x 2 systems, batched over the items not yet converged. The derivatives at a full step
        are computed with its value, so an accepted step costs one pass.
        """
        import numpy as np

        b, la = b.astype(float), la.astype(float)
        tau_ext = np.concatenate([[0.0], tau, [0.0]])
        active = np.arange(self.n_items)
        terms = np.array(self._item_terms(active, theta, tau_ext, b, la))  # rows: f, g_b, g_l, a_bb, a_bl, a_ll
        for _ in range(MAX_NEWTON):
            keep = np.maximum(np.abs(terms[1]), np.abs(terms[2])) > gtol
            active, terms = active[keep], terms[:, keep]
            if active.size == 0:
                break
            f, g_b, g_l, a_bb, a_bl, a_ll = terms
            low = (a_bb + a_ll) / 2 - np.sqrt(((a_bb - a_ll) / 2) ** 2 + a_bl**2)
            lift = np.where(low < 1e-6, 2 * np.abs(low) + 1e-6, 0.0)
            a_bb, a_ll = a_bb + lift, a_ll + lift
            det = a_bb * a_ll - a_bl**2
            d_b = -(a_ll * g_b - a_bl * g_l) / det
            d_l = -(-a_bl * g_b + a_bb * g_l) / det
            # No item moves more than 1 logit in one step: far from the optimum a logistic tail is flat.
            scale = np.minimum(1.0, 1.0 / np.maximum(np.abs(d_b), np.abs(d_l)))
            d_b, d_l = d_b * scale, d_l * scale
            slope = g_b * d_b + g_l * d_l
            trial = np.array(self._item_terms(active, theta, tau_ext, b[active] + d_b, la[active] + d_l))
            ok = trial[0] <= f + 1e-4 * slope
            b[active[ok]] += d_b[ok]
            la[active[ok]] += d_l[ok]
            terms[:, ok] = trial[:, ok]
            # A full Newton step (no eigenvalue lifted) this small leaves an error of about its square,
            # as Newton converges quadratically: below the gradient tolerance's own precision.
            settled = ok & (lift == 0) & (np.maximum(np.abs(d_b), np.abs(d_l)) <= math.sqrt(gtol) / 3)
            todo = np.flatnonzero(~ok)
            alpha = 0.5
            while todo.size and alpha > 1e-12:
                rows = active[todo]
                nb, nl = b[rows] + alpha * d_b[todo], la[rows] + alpha * d_l[todo]
                f_new = self._item_terms(rows, theta, tau_ext, nb, nl, value_only=True)[0]
                good = f_new <= f[todo] + 1e-4 * alpha * slope[todo]
                b[rows[good]], la[rows[good]] = nb[good], nl[good]
                moved = todo[good]
                if moved.size:
                    terms[:, moved] = np.array(
                        self._item_terms(active[moved], theta, tau_ext, b[active[moved]], la[active[moved]])
                    )
                todo = todo[~good]
                alpha /= 2
            settled[todo] = True  # no descent left at rounding level: as good as it gets
            active, terms = active[~settled], terms[:, ~settled]
        return b, la

    def _item_terms(
        self, rows: Any, theta: Any, tau_ext: Any, b: Any, la: Any, value_only: bool = False
    ) -> tuple[Any, ...]:
        """Per item in ``rows``: value, gradient and Hessian of its negative log posterior (fixed abilities)."""
        import numpy as np

        sd = self.sd
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.exp(la)[:, None]
            u = theta[None, :] - b[:, None]
            f = b * b / (2 * sd[1] ** 2) + la * la / (2 * sd[2] ** 2)
            g_b, g_l = b / sd[1] ** 2, la / sd[2] ** 2
            a_bb, a_bl, a_ll = (
                np.full(len(rows), 1 / sd[1] ** 2),
                np.zeros(len(rows)),
                np.full(len(rows), 1 / sd[2] ** 2),
            )
            every = len(rows) == self.n_items  # all rows, in order: no copies
            for full in self.layers:
                layer = full if every else {key: full[key][rows] for key in ("cat", "wt", "has_lo", "has_hi")}
                if value_only:
                    f = f - (layer["wt"] * np.log(self._layer(layer, a, u, tau_ext)[-1])).sum(axis=1)
                    continue
                z_lo, z_hi, p, d_lo, d_hi, h_ll, h_hh, h_lh = self._derivs(layer, a, u, tau_ext)
                f = f - (layer["wt"] * np.log(p)).sum(axis=1)
                d1 = d_lo + d_hi
                hz_lo, hz_hi = h_ll * z_lo + h_lh * z_hi, h_lh * z_lo + h_hh * z_hi
                g_b = g_b - (a * d1).sum(axis=1)
                g_l = g_l + (z_lo * d_lo + z_hi * d_hi).sum(axis=1)
                a_bb = a_bb + (a * a * (h_ll + 2 * h_lh + h_hh)).sum(axis=1)
                a_bl = a_bl - (a * (hz_lo + hz_hi + d1)).sum(axis=1)
                a_ll = a_ll + (z_lo * (hz_lo + d_lo) + z_hi * (hz_hi + d_hi)).sum(axis=1)
        f = np.where(np.isfinite(f), f, np.inf)
        return f, g_b, g_l, a_bb, a_bl, a_ll

    def value(self, x: Any) -> float:
        """The negative log posterior at ``x`` (inf where a trial step overflows)."""
        import numpy as np

        theta, b, la, delta = self._unpack(x)
        tau_ext = np.concatenate([[0.0], self._tau(delta)[0], [0.0]])
        value = self._prior(x)
        with np.errstate(over="ignore", invalid="ignore"):
            a, u = np.exp(la)[:, None], theta[None, :] - b[:, None]
            for layer in self.layers:
                p = self._layer(layer, a, u, tau_ext)[-1]
                value -= float(np.sum(layer["wt"] * np.log(p)))
        return value if math.isfinite(value) else math.inf

    def newton(self, x: Any) -> tuple[float, Any, Any]:
        """The value, gradient and modified Newton step at ``x``, in the parameter layout."""
        import numpy as np

        m, sd = self.n_models, self.sd
        theta, b, la, delta = self._unpack(x)
        tau, dtau = self._tau(delta)
        tau_ext = np.concatenate([[0.0], tau, [0.0]])
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.exp(la)
            if not np.all(np.isfinite(a)):
                return math.inf, np.zeros_like(x), np.zeros_like(x)
            s = self._sums(self._prior(x), a, theta[None, :] - b[:, None], tau_ext)
        if not math.isfinite(s.value):
            return math.inf, np.zeros_like(x), np.zeros_like(x)
        g_theta = s.g_z.sum(axis=0) + theta / sd[0] ** 2
        g_b = -s.g_z.sum(axis=1) + b / sd[1] ** 2
        g_la = s.g_la + la / sd[2] ** 2
        a_bb = s.h_bb.sum(axis=1) + 1 / sd[1] ** 2
        a_bl = -s.h_tla.sum(axis=1)
        a_ll = s.h_lala + 1 / sd[2] ** 2
        glob = np.diag(s.h_bb.sum(axis=0) + 1 / sd[0] ** 2)
        eb, el, gg = -s.h_bb, s.h_tla, g_theta
        if self.free_tau:
            h_td = s.h_theta_tau @ dtau
            # tau(delta) is not linear: d2 tau_k / d delta_m2 is dtau[k, m]
            h_dd = dtau.T @ s.h_tt @ dtau + np.diag(s.g_tau @ dtau) + np.eye(len(delta)) / GAP_PRIOR_SD**2
            glob = np.block([[glob, h_td], [h_td.T, h_dd]])
            eb = np.concatenate([eb, s.e_btau @ dtau], axis=1)
            el = np.concatenate([el, s.e_latau @ dtau], axis=1)
            gg = np.concatenate([gg, s.g_tau @ dtau + delta / GAP_PRIOR_SD**2])

        # Make each item block positive definite: lift its smallest eigenvalue to |itself| + 1e-6.
        low = (a_bb + a_ll) / 2 - np.sqrt(((a_bb - a_ll) / 2) ** 2 + a_bl**2)
        lift = np.where(low < 1e-6, 2 * np.abs(low) + 1e-6, 0.0)
        a_bb, a_ll = a_bb + lift, a_ll + lift
        det = a_bb * a_ll - a_bl**2
        i_bb, i_bl, i_ll = a_ll / det, -a_bl / det, a_bb / det
        f_b = i_bb[:, None] * eb + i_bl[:, None] * el  # A^-1 E, per item
        f_l = i_bl[:, None] * eb + i_ll[:, None] * el
        y_b, y_l = i_bb * g_b + i_bl * g_la, i_bl * g_b + i_ll * g_la  # A^-1 g, per item
        schur = glob - eb.T @ f_b - el.T @ f_l
        rhs = -(gg - eb.T @ y_b - el.T @ y_l)
        if not (np.all(np.isfinite(schur)) and np.all(np.isfinite(rhs))):
            return math.inf, np.zeros_like(x), np.zeros_like(x)  # a trial step too far: the line search backs off
        vals, vecs = np.linalg.eigh((schur + schur.T) / 2)
        vals = np.where(vals < 1e-6, np.abs(vals) + 1e-6, vals)
        d_glob = vecs @ ((vecs.T @ rhs) / vals)
        d_b, d_l = -(y_b + f_b @ d_glob), -(y_l + f_l @ d_glob)
        grad = np.concatenate([g_theta, g_b, g_la, gg[m:]])
        step = np.concatenate([d_glob[:m], d_b, d_l, d_glob[m:]])
        return s.value, grad, step

    def _sums(self, prior: float, a: Any, u: Any, tau_ext: Any) -> _Sums:
        """The negative log posterior and its derivatives, summed over the observation layers.

        ``a`` holds the items' discriminations, ``u`` (items x models) ``theta_i - b_j``.
        """
        import numpy as np

        n, m, k = self.n_items, self.n_models, self.n_bounds
        nt = k + 1
        s = _Sums(
            value=prior,
            g_z=np.zeros((n, m)),
            g_la=np.zeros(n),
            h_bb=np.zeros((n, m)),
            h_tla=np.zeros((n, m)),
            h_lala=np.zeros(n),
            g_tau=np.zeros(k),
            h_tt=np.zeros((k, k)),
            h_theta_tau=np.zeros((m, k)),
            e_btau=np.zeros((n, k)),
            e_latau=np.zeros((n, k)),
        )
        for layer in self.layers:
            z_lo, z_hi, p, d_lo, d_hi, h_ll, h_hh, h_lh = self._derivs(layer, a[:, None], u, tau_ext)
            s.value -= float(np.sum(layer["wt"] * np.log(p)))
            d1 = d_lo + d_hi
            v_lo, v_hi = h_ll + h_lh, h_lh + h_hh
            hz_lo, hz_hi = h_ll * z_lo + h_lh * z_hi, h_lh * z_lo + h_hh * z_hi
            s.g_z += a[:, None] * d1
            s.g_la += (z_lo * d_lo + z_hi * d_hi).sum(axis=1)
            s.h_bb += (a * a)[:, None] * (v_lo + v_hi)
            s.h_tla += a[:, None] * (hz_lo + hz_hi + d1)
            s.h_lala += (z_lo * (hz_lo + d_lo) + z_hi * (hz_hi + d_hi)).sum(axis=1)
            if not self.free_tau:
                continue
            # Sum onto the threshold below (index cat - 1) and above (index cat) each observation.
            cat = layer["cat"]

            def lo_hi(at: str, lo: Any, hi: Any, rows: int, layer: dict[str, Any] = layer) -> Any:
                lo_sum = np.bincount(layer[at], weights=lo.ravel(), minlength=rows * nt).reshape(rows, nt)
                hi_sum = np.bincount(layer[at], weights=hi.ravel(), minlength=rows * nt).reshape(rows, nt)
                return lo_sum[:, 1:] + hi_sum[:, :k]

            a2 = (a * a)[:, None]
            by_model = lo_hi("at_model", -a[:, None] * d_lo, -a[:, None] * d_hi, m)
            s.g_tau += by_model.sum(axis=0)
            s.h_tt += np.diag(lo_hi("at_model", a2 * h_ll, a2 * h_hh, m).sum(axis=0))
            off = np.bincount(cat.ravel(), weights=(a2 * h_lh).ravel(), minlength=nt)[1:k]
            s.h_tt += np.diag(off, 1) + np.diag(off, -1)
            s.h_theta_tau -= lo_hi("at_model", a2 * v_lo, a2 * v_hi, m)
            s.e_btau += lo_hi("at_item", a2 * v_lo, a2 * v_hi, n)
            s.e_latau += lo_hi("at_item", -a[:, None] * (hz_lo + d_lo), -a[:, None] * (hz_hi + d_hi), n)
        return s


@dataclass
class _Sums:
    """What :meth:`GradedModel._sums` adds up: the value, then derivatives per cell or per item.

    The threshold terms (``g_tau`` onwards) stay zero unless the thresholds are free.
    """

    value: float
    g_z: Any  # d nll / d theta_i, per cell (minus d / d b_j)
    g_la: Any  # d nll / d log a_j
    h_bb: Any  # d2 / d b2 = d2 / d theta2 = - d2 / d theta d b, per cell
    h_tla: Any  # d2 / d theta d log a = - d2 / d b d log a, per cell
    h_lala: Any  # d2 / d log a2, per item
    g_tau: Any  # d nll / d tau
    h_tt: Any  # d2 / d tau2
    h_theta_tau: Any  # d2 / d theta d tau, per model
    e_btau: Any  # d2 / d b d tau, per item
    e_latau: Any  # d2 / d log a d tau, per item
