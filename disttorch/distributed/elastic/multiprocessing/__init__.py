"""``torch.distributed.elastic.multiprocessing``: the ``errors`` submodule."""
