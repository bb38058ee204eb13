"""``disttorch.func``: ``functional_call`` (call a module with substitute parameters and
buffers) and the function transforms ``vmap``, ``grad`` and ``grad_and_value``.

``vmap`` maps a function over a batch dimension by calling it once per slice and stacking
the results (PyTorch vectorises the function instead: same values, more Python calls here).
``grad`` and ``grad_and_value`` differentiate through the autograd engine. ``jacrev``,
``jacfwd``, ``hessian``, ``jvp`` and ``vjp`` are not provided.
"""

from ..nn.utils.stateless import functional_call
from .transforms import grad, grad_and_value, vmap

__all__ = ["functional_call", "grad", "grad_and_value", "vmap"]
