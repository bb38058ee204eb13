"""The sharding rules, one file per family of ops (mirrors PyTorch's
``torch.distributed.tensor._ops``): pointwise ops, matrix products (linear, matmul, mm,
bmm), embedding, reductions (sum, mean), views (view, reshape, squeeze, unsqueeze,
transpose, permute, split, narrow, view_as_complex, view_as_real), softmax, and cross-entropy of class-sharded logits (``loss_parallel``). Each rule is registered under the names of the ``Function`` classes it covers."""

from . import _embedding, _loss, _matrix, _reductions, _views  # noqa: F401  (register their rules)
from ._pointwise import pointwise_rule_for

__all__ = ["pointwise_rule_for"]
