"""``torch.distributed.elastic``: what training scripts import from PyTorch's elastic agent.

``disttorch-launch`` (and ``torchrun`` through the alias) is the agent here; scripts reach
for ``multiprocessing.errors.record`` to have a worker's error reported to it.
"""
