"""``torch.distributed.algorithms._checkpoint``: the ``checkpoint_wrapper`` submodule."""
