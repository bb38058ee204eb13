"""``functorch.<api>``: ``torch.func``'s transform, after PyTorch's ``FutureWarning`` that the
``functorch`` name is deprecated (pointing at the caller's line)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .. import func
from . import make_functional as _modules

__all__ = [
    "combine_state_for_ensemble",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "make_functional",
    "make_functional_with_buffers",
    "vjp",
    "vmap",
]


def _deprecated(impl: Callable, new_api: str | None = None) -> Callable:
    name = impl.__name__
    text = (
        f"We've integrated functorch into PyTorch. As the final step of the integration, "
        f"`functorch.{name}` is deprecated as of PyTorch 2.0 and will be deleted in a future version "
        f"of PyTorch >= 2.3. Please use `{new_api or 'torch.func.' + name}` instead; see the PyTorch "
        "2.0 release notes and/or the `torch.func` migration guide for more details "
        "https://pytorch.org/docs/main/func.migrating.html"
    )

    @functools.wraps(impl)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(text, FutureWarning, stacklevel=2)
        return impl(*args, **kwargs)

    return wrapper


vmap = _deprecated(func.vmap, "torch.vmap")
grad = _deprecated(func.grad)
grad_and_value = _deprecated(func.grad_and_value)
vjp = _deprecated(func.vjp)
jvp = _deprecated(func.jvp)
jacrev = _deprecated(func.jacrev)
jacfwd = _deprecated(func.jacfwd)
hessian = _deprecated(func.hessian)
functionalize = _deprecated(func.functionalize)
make_functional = _deprecated(_modules.make_functional, "torch.func.functional_call")
make_functional_with_buffers = _deprecated(
    _modules.make_functional_with_buffers, "torch.func.functional_call"
)
combine_state_for_ensemble = _deprecated(_modules.combine_state_for_ensemble, "torch.func.stack_module_state")
