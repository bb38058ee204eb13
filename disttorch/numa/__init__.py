"""``torch.numa``: the NUMA-binding settings torchrun's launch configuration takes (``binding``)."""
