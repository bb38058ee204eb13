"""``torch.library.opcheck``: check that a custom operator keeps the promises its registration
makes, as PyTorch's four tests do, each on fresh copies of the sample arguments:

- ``test_schema``: arguments outside ``mutates_args`` are left unchanged, and no output is an
  input or shares memory with one (or with another output);
- ``test_autograd_registration``: how the gradient is registered (always by
  ``register_autograd`` here, so it passes);
- ``test_faketensor``: a fake implementation is registered (unless the operator returns
  nothing) and gives outputs of the real outputs' shapes and dtypes;
- ``test_aot_dispatch_dynamic``: the outputs again (not aliased; a fake implementation
  registered), and, where an input requires grad, a backward through them (which raises
  without ``register_autograd``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._tensor import Tensor

__all__ = ["DEFAULT_TEST_UTILS", "OpCheckError", "run"]

DEFAULT_TEST_UTILS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_dynamic",
)


class OpCheckError(Exception):
    """One of :func:`opcheck`'s tests failed (the failure is its ``__cause__``)."""


def _fresh(value: Any) -> Any:
    """A copy of a sample argument: tensors cloned (a leaf that requires grad stays one)."""
    if isinstance(value, Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_fresh(v) for v in value)
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    return value


def _tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _aliasing_error(op: Any) -> RuntimeError:
    short = op._name.split("::")[1]
    return RuntimeError(
        f"{short} (with implementation in {__name__}): The output of this custom operator (1) must not "
        "also be an input to this custom operator and (2) may not alias any inputs to this custom "
        "operator or other returns. The most common way to trigger this error is if we have y = "
        "custom_op(x) and y and x are the same Tensor. Please instead return a clone of the "
        "offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to not "
        "return y."
    )


def _run(op: Any, args: tuple, kwargs: dict, *, mutation: bool) -> Any:
    """Run ``op``; raise where an output aliases an input or another output, and (with
    ``mutation``) where it changed an argument outside ``mutates_args``."""
    bound = op._bind(args, kwargs)
    before = {name: [t._data.copy() for t in _tensors(v)] for name, v in bound.items()}
    out = op(*args, **kwargs)
    for name, value in bound.items() if mutation and op._mutates != "unknown" else ():
        if name in op._mutates:
            continue
        for t, old in zip(_tensors(value), before[name]):
            if not np.array_equal(t._data, old, equal_nan=True):
                raise RuntimeError(f"Argument {name} is not defined as mutable but was mutated")
    outs, ins = _tensors(out), _tensors(tuple(bound.values()))
    for i, o in enumerate(outs):
        if any(o is t or np.shares_memory(o._data, t._data) for t in ins + outs[:i]):
            raise _aliasing_error(op)
    return out


def _test_schema(op: Any, args: tuple, kwargs: dict) -> None:
    _run(op, _fresh(args), _fresh(kwargs), mutation=True)


def _require_fake(op: Any, real: Any) -> None:
    """Raise PyTorch's error for an operator that returns something but has no fake impl."""
    if op._fake is None and real is not None:  # an operator that only mutates needs none
        short = op._name.split("::")[1]
        raise RuntimeError(
            f"There was no fake impl registered for {op!r}. This is necessary for torch.compile/"
            f"export/fx tracing to work. Please use `{short}.register_fake` to add an fake impl."
        )


def _test_faketensor(op: Any, args: tuple, kwargs: dict) -> None:
    real = op(*_fresh(args), **_fresh(kwargs))
    _require_fake(op, real)
    if op._fake is None:
        return
    real, fake = _tensors(real), _tensors(op._fake(*_fresh(args), **_fresh(kwargs)))
    where = f"When comparing the output of {op._name.replace('::', '.')}.default on FakeTensor and concrete Tensors"
    if len(real) != len(fake):
        raise RuntimeError(f"{where}, found {len(fake)} fake outputs and {len(real)} real ones")
    for r, f in zip(real, fake):
        if r.shape != f.shape:
            raise RuntimeError(
                f"{where}, found mismatched tensor metadata: Shapes {r.shape} and {f.shape} are not equal!"
            )
        if r.dtype != f.dtype:
            raise RuntimeError(
                f"{where}, found mismatched tensor metadata: Dtypes {r.dtype} and {f.dtype} are not equal!"
            )


def _test_aot_dispatch_dynamic(op: Any, args: tuple, kwargs: dict) -> None:
    from .autograd import grad

    args, kwargs = _fresh(args), _fresh(kwargs)
    out = _run(op, args, kwargs, mutation=False)
    _require_fake(op, out)  # the trace runs on fake tensors
    leaves = [t for t in _tensors((args, tuple(kwargs.values()))) if t.requires_grad]
    outs = [o for o in _tensors(out) if o.requires_grad]
    if leaves and outs:
        grad(outs, leaves, [o.detach() * 0 + 1 for o in outs], allow_unused=True)


_TESTS: dict[str, Callable[[Any, tuple, dict], Any]] = {
    "test_schema": _test_schema,
    "test_autograd_registration": lambda op, args, kwargs: None,
    "test_faketensor": _test_faketensor,
    "test_aot_dispatch_dynamic": _test_aot_dispatch_dynamic,
}


def run(
    op: Any, args: tuple, kwargs: dict | None, test_utils: str | Sequence[str], raise_exception: bool
) -> dict[str, Any]:
    """``torch.library.opcheck`` on the registered operator ``op`` (see that function)."""
    kwargs = {} if kwargs is None else kwargs
    names = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    unknown = [n for n in names if n not in _TESTS]
    if unknown:
        raise ValueError(f"opcheck: unknown test_utils {unknown}; expected some of {list(_TESTS)}")
    results: dict[str, Any] = {}
    for name in names:
        try:
            _TESTS[name](op, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as e:
            if raise_exception:
                raise OpCheckError(
                    f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)"
                ) from e
            results[name] = e
    return results
