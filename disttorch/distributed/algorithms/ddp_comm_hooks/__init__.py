"""``torch.distributed.algorithms.ddp_comm_hooks``: DDP communication hooks under PyTorch's
module paths. ``default_hooks`` re-exports ``allreduce_hook``, the float16/bfloat16
compression hooks and their wrappers (they live beside DDP in
``disttorch.nn.parallel.comm_hooks``); ``powerSGD_hook`` holds PowerSGD
compression; ``post_localSGD_hook`` holds ``PostLocalSGDState``, whose hook disttorch does
not support."""
