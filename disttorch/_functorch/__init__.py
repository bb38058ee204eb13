"""``functorch``, the package PyTorch merged into ``torch.func``: under the alias ``import
functorch`` (and ``torch._functorch``) is this package. Its transforms are ``torch.func``'s,
each warning once per call as PyTorch's deprecated wrappers do (:mod:`.deprecated`), and
``make_functional``/``make_functional_with_buffers``/``combine_state_for_ensemble`` turn
modules into functions of their parameters (:mod:`.make_functional`).
"""

from ..version import __version__
from .deprecated import (
    combine_state_for_ensemble,
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    make_functional,
    make_functional_with_buffers,
    vjp,
    vmap,
)
from .make_functional import FunctionalModule, FunctionalModuleWithBuffers

__all__ = [
    "FunctionalModule",
    "FunctionalModuleWithBuffers",
    "__version__",
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
