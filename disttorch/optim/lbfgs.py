"""L-BFGS: limited-memory quasi-Newton steps over all parameters as one flat vector,
with an optional strong-Wolfe line search (as ``torch.optim.LBFGS``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ._checks import check_lr
from .optimizer import Optimizer, _dense_grad, _scalar

__all__ = ["LBFGS"]


def _cubic_interpolate(
    x1: float, f1: float, g1: float, x2: float, f2: float, g2: float, bounds: tuple | None = None
) -> float:
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to ``bounds``
    (default: the interval between the points); its midpoint when the cubic has none."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = float(np.sqrt(d2_square))
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


def _strong_wolfe(
    obj_func: Callable,
    t: float,
    d: np.ndarray,
    f: float,
    g: np.ndarray,
    gtd: float,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple:
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions: bracket, then zoom by
    cubic interpolation. Returns ``(f_new, g_new, t, evaluations)``."""
    d_norm = float(np.abs(d).max())
    g = g.copy()
    f_new, g_new = obj_func(t, d)
    evals = 1
    gtd_new = float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list = []
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = (
            t,
            _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)),
        )
        f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bf, bg = [0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low, high = (0, 1) if bf[0] <= bf[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = (
                    max(bracket) - eps
                    if abs(t - max(bracket)) < abs(t - min(bracket))
                    else min(bracket) + eps
                )
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bf[low]:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = bracket[low], bf[low], bg[low], bgtd[low]
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new.copy(), gtd_new
    return bf[low], bg[low], bracket[low], evals


def _array(v: Any) -> Any:
    return v._data if isinstance(v, Tensor) else v


def _tensor0(v: float, dtype: np.dtype) -> Tensor:
    """A 0-d tensor of ``dtype`` holding ``v``."""
    return Tensor._make(np.asarray(v, dtype=dtype))


class LBFGS(Optimizer):
    """L-BFGS, as ``torch.optim.LBFGS``: ``step(closure)`` runs up to ``max_iter`` iterations
    (``max_eval`` closure calls, default ``max_iter * 5 // 4``), each a two-loop-recursion
    direction from the last ``history_size`` curvature pairs and a step of ``lr`` (the first
    scaled by ``min(1, 1 / |g|_1)``), or a strong-Wolfe line search with
    ``line_search_fn="strong_wolfe"``. It stops early when ``max|g| <= tolerance_grad`` or the
    step or loss change falls under ``tolerance_change``. Only one parameter group.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        super().__init__(
            params,
            {
                "lr": lr,
                "max_iter": max_iter,
                "max_eval": max_eval,
                "tolerance_grad": tolerance_grad,
                "tolerance_change": tolerance_change,
                "history_size": history_size,
                "line_search_fn": line_search_fn,
            },
        )
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self) -> np.ndarray:
        return np.concatenate(
            [
                np.zeros(p._data.size, p._data.dtype) if p.grad is None else np.ravel(_dense_grad(p.grad, p))
                for p in self._params
            ]
        )

    def _add_grad(self, step_size: float, update: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += (step_size * update[offset : offset + n]).reshape(p._data.shape).astype(p._data.dtype)
            p._bump_version()
            offset += n

    def _directional_evaluate(self, closure: Callable, x: list, t: float, d: np.ndarray) -> tuple:
        """The loss and flat gradient at ``x + t d``; the parameters are ``x`` again after."""
        self._add_grad(t, d)
        with enable_grad():
            loss = closure()
        loss = float(loss)  # (in step's no_grad: PyTorch's reads it without the requires-grad warning)
        grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, grad

    def _set_param(self, values: list) -> None:
        for p, v in zip(self._params, values):
            p._data[...] = v
            p._bump_version()

    @no_grad()
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run one L-BFGS optimisation; ``closure`` clears the gradients, computes the loss,
        calls ``backward`` and returns the loss (run with grad mode on, the rest under
        ``no_grad`` as PyTorch's). Returns the loss of the first evaluation."""
        if closure is None:
            raise RuntimeError("LBFGS requires a closure that reevaluates the model and returns the loss")
        group = self.param_groups[0]
        lr, max_iter, max_eval = _scalar(group["lr"]), group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]

        def evaluate() -> tuple:
            with enable_grad():
                loss = closure()
            return loss, float(loss), self._gather_flat_grad()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss, loss, flat_grad = evaluate()
        current_evals = 1
        state["func_evals"] += 1
        if np.abs(flat_grad).max() <= tol_grad:
            return orig_loss

        d, t = _array(state.get("d")), state.get("t")
        t = None if t is None else _scalar(t)
        old_dirs = [_array(v) for v in state.get("old_dirs") or []]
        old_stps = [_array(v) for v in state.get("old_stps") or []]
        ro = [_scalar(v) for v in state.get("ro") or []]
        h_diag = state.get("H_diag", 1)
        h_diag = h_diag if isinstance(h_diag, int) else _scalar(h_diag)  # 1 until a curvature pair
        al = [None if v is None else _scalar(v) for v in state.get("al") or [None] * history_size]
        prev_flat_grad = _array(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y @ s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y @ y)
                state.setdefault(
                    "al", None
                )  # (PyTorch's state holds it from the second iteration on, in this place)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = float(old_stps[i] @ q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = float(old_dirs[i] @ r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(np.abs(flat_grad).sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float(flat_grad @ d)
            if gtd > -tol_change:
                break
            ls_evals = 0
            if group["line_search_fn"] == "strong_wolfe":
                x_init = [p._data.copy() for p in self._params]
                obj_func = functools.partial(self._directional_evaluate, closure, x_init)
                loss, flat_grad, t, ls_evals = _strong_wolfe(
                    obj_func, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tol_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    _, loss, flat_grad = evaluate()
                    opt_cond = np.abs(flat_grad).max() <= tol_grad
                    ls_evals = 1
            current_evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break

        state["d"] = None if d is None else Tensor._make(d)
        state["t"] = t
        state["old_dirs"] = [Tensor._make(v) for v in old_dirs]
        state["old_stps"] = [Tensor._make(v) for v in old_stps]
        # scratch and curvature scalars as 0-d tensors of the parameters' dtype, as PyTorch's
        # state holds them, so that state dicts move between the two libraries either way
        state["ro"] = [_tensor0(v, flat_grad.dtype) for v in ro]
        state["H_diag"] = h_diag if isinstance(h_diag, int) else _tensor0(h_diag, flat_grad.dtype)
        if "al" in state:
            state["al"] = [None if v is None else _tensor0(v, flat_grad.dtype) for v in al]
        state["prev_flat_grad"] = None if prev_flat_grad is None else Tensor._make(prev_flat_grad)
        state["prev_loss"] = prev_loss
        return orig_loss
