"""``torch.distributed.algorithms.ddp_comm_hooks``: DDP communication hooks under PyTorch's
module paths. ``default_hooks`` re-exports ``allreduce_hook`` and ``fp16_compress_hook``
(they live beside DDP in ``disttorch.nn.parallel.comm_hooks``); ``post_localSGD_hook``
holds ``PostLocalSGDState``, whose hook disttorch does not support."""
