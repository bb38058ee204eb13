"""``disttorch.func``: ``functional_call`` (call a module with substitute parameters and
buffers) and the function transforms ``vmap``, ``grad``, ``grad_and_value``, ``vjp``,
``jvp``, ``linearize``, ``jacrev``, ``jacfwd`` and ``hessian``.

``vmap`` runs the function once, on batched tensors that carry the batch dimension, with a
batching rule per operation (``_batched``, ``_batch_rules*``; an operation without one runs
once per slice). The derivative transforms run the autograd engine: reverse mode by backward
passes, forward mode (``jvp``, ``linearize``, ``jacfwd``) by the double-backward trick; inside
``vmap`` they differentiate the whole batch in one pass, and ``jacrev``/``jacfwd`` are
``vmap`` over ``vjp``/``jvp`` as in PyTorch. Differentiated arguments and outputs may be pytrees
(tuples, lists, dicts of tensors). Transforms compose (``jacfwd(jacrev(f))``,
``vmap(grad(f))``, ``grad(grad(f))``): a transform whose inputs carry an autograd graph
records its own backward passes so the outer one can differentiate through them.
``stack_module_state`` and ``replace_all_batch_norm_modules_`` prepare modules for ``vmap``
(ensembles); ``functionalize`` is an identity here and ``debug_unwrap`` returns the tensor
under ``vmap``'s wrappers (``module_utils``).
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
