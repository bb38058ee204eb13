# library: transformers
"""transformers' gradient checkpointing with use_reentrant=True, in training mode (dropout replayed): a RoBERTa masked LM and a T5 v1.1 seq2seq model, whose layers pass None arguments (encoder_hidden_states, masks) positionally to torch.utils.checkpoint; losses, gradient norms and two AdamW steps, as without checkpointing."""

import torch
import transformers
from transformers import RobertaConfig, RobertaForMaskedLM, T5Config, T5ForConditionalGeneration

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()


def train(name, model, batch):
    torch.manual_seed(1)
    model.train()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(2):
        out = model(**batch)
        out.loss.backward()
        norms = [p.grad.norm().item() for p in model.parameters() if p.grad is not None]
        print(
            name, step, "loss", round(out.loss.item(), 4), "grads", len(norms), "norm", round(sum(norms), 3)
        )
        opt.step()
        opt.zero_grad()


torch.manual_seed(0)
roberta = RobertaForMaskedLM(
    RobertaConfig(
        vocab_size=60,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=48,
        max_position_embeddings=40,
    )
)
ids = torch.randint(3, 60, (2, 12))
labels = torch.full_like(ids, -100)
labels[:, 3:6] = ids[:, 3:6]
train("roberta", roberta, {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels})

torch.manual_seed(0)
t5 = T5ForConditionalGeneration(
    T5Config(
        vocab_size=50,
        d_model=32,
        d_kv=8,
        d_ff=48,
        num_layers=2,
        num_heads=4,
        feed_forward_proj="gated-gelu",
        decoder_start_token_id=0,
    )
)
src = torch.randint(2, 50, (2, 9))
tgt = torch.randint(2, 50, (2, 7))
train("t5", t5, {"input_ids": src, "attention_mask": torch.ones_like(src), "labels": tgt})
