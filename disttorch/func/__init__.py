"""``disttorch.func``: ``functional_call`` (call a module with substitute parameters and
buffers) and the function transforms ``vmap``, ``grad``, ``grad_and_value``, ``vjp``,
``jvp``, ``linearize``, ``jacrev``, ``jacfwd`` and ``hessian``.

``vmap`` maps a function over a batch dimension by calling it once per slice and stacking
the results (PyTorch vectorises the function instead: same values, more Python calls here).
The derivative transforms run the autograd engine: reverse mode by backward passes, forward
mode (``jvp``, ``linearize``, ``jacfwd``) by the double-backward trick, one pass per input
element where PyTorch batches them. Differentiated arguments and outputs may be pytrees
(tuples, lists, dicts of tensors). Transforms compose (``jacfwd(jacrev(f))``,
``vmap(grad(f))``, ``grad(grad(f))``): a transform whose inputs carry an autograd graph
records its own backward passes so the outer one can differentiate through them.
``stack_module_state`` and ``replace_all_batch_norm_modules_`` prepare modules for ``vmap``
(ensembles); ``functionalize`` and ``debug_unwrap`` are identities here (``module_utils``).
``rearrange`` (einops patterns) is not provided.
"""

from ..nn.utils.stateless import functional_call
from .jacobians import hessian, jacfwd, jacrev
from .module_utils import debug_unwrap, functionalize, replace_all_batch_norm_modules_, stack_module_state
from .products import jvp, linearize, vjp
from .transforms import grad, grad_and_value, vmap

__all__ = [
    "debug_unwrap",
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]
