"""``disttorch.distributed.nn.api`` (mirrors ``torch.distributed.nn.api``): ``remote_module``."""
