"""``functorch.experimental``: what PyTorch keeps there, from ``torch.func`` (and
:mod:`.control_flow`'s ``cond`` and ``map``)."""

from ...func import functionalize, hessian, jacfwd, jvp
from ...func.module_utils import replace_all_batch_norm_modules_

__all__ = ["functionalize", "hessian", "jacfwd", "jvp", "replace_all_batch_norm_modules_"]
