"""disttorch.distributed: process groups, collectives and the rendezvous store (mirrors torch.distributed)."""
