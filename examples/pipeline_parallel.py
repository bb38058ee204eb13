"""Pipeline parallelism: a small transformer cut into two stages, one per rank.

In the style of PyTorch's pipelining tutorial. Every rank builds the whole model from the
same seed, then keeps only its part: rank 0 the embedding and the first half of the layers,
rank 1 the second half, the norm and the output layer. ``PipelineStage`` wraps the part;
a schedule (``Schedule1F1B``, or ``ScheduleGPipe`` with ``--gpipe``) cuts each batch into
microbatches that flow through the stages: activations forward, gradients backward, over
point-to-point messages. The last rank prints the loss of every step.

    disttorch-launch --as-torch --nproc 2 examples/pipeline_parallel.py
    python -m disttorch.as_torch -m torch.distributed.run --nproc_per_node 2 examples/pipeline_parallel.py
    python -m torch.distributed.run --nproc_per_node 2 examples/pipeline_parallel.py   (PyTorch)

The losses are the same under PyTorch and disttorch (same seeds, same numbers).
"""

import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

VOCAB, DIM, HEADS, LAYERS, SEQ = 64, 32, 4, 4, 16


class Transformer(nn.Module):
    """Embedding, ``LAYERS`` encoder layers (a ``ModuleDict``, so a stage can delete the
    layers it does not run and keep the others' names), norm, output."""

    def __init__(self) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleDict(
            {
                str(i): nn.TransformerEncoderLayer(DIM, HEADS, 64, dropout=0.0, batch_first=True)
                for i in range(LAYERS)
            }
        )
        self.norm = nn.LayerNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(tokens) if self.tok_embeddings is not None else tokens
        for layer in self.layers.values():
            h = layer(h)
        h = self.norm(h) if self.norm is not None else h
        return self.output(h) if self.output is not None else h


def stage_part(model: Transformer, stage: int) -> Transformer:
    """Keep what stage ``stage`` of two runs."""
    if stage == 0:
        for i in range(LAYERS // 2, LAYERS):
            del model.layers[str(i)]
        model.norm = model.output = None
    else:
        for i in range(LAYERS // 2):
            del model.layers[str(i)]
        model.tok_embeddings = None
    return model


def tokenwise_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpipe", action="store_true", help="ScheduleGPipe instead of Schedule1F1B")
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 2, "this example cuts the model into two stages: run it on 2 ranks"
    torch.manual_seed(0)
    part = stage_part(Transformer(), rank)
    stage = PipelineStage(part, rank, world, torch.device("cpu"))
    schedule_class = ScheduleGPipe if args.gpipe else Schedule1F1B
    schedule = schedule_class(stage, n_microbatches=4, loss_fn=tokenwise_loss)
    optimizer = torch.optim.SGD(part.parameters(), lr=0.1)

    for step in range(args.steps):
        tokens = torch.randint(0, VOCAB, (8, SEQ))  # every rank draws the same batch
        targets = torch.roll(tokens, -1, dims=1)  # predict the next token
        optimizer.zero_grad()
        if rank == 0:
            schedule.step(tokens)
        else:
            losses = []
            schedule.step(target=targets, losses=losses)
            print(f"step {step} loss {torch.stack(losses).mean().item():.5f}")
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
