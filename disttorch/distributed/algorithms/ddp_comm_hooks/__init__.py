"""``torch.distributed.algorithms.ddp_comm_hooks``: DDP communication hooks under PyTorch's
module paths. ``default_hooks`` re-exports ``allreduce_hook``, the float16/bfloat16
compression hooks and their wrappers (they live beside DDP in
``disttorch.nn.parallel.comm_hooks``); ``post_localSGD_hook`` and ``powerSGD_hook`` hold
``PostLocalSGDState`` and ``PowerSGDState``, whose hooks disttorch does not support."""
