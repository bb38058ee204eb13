# library: transformers
"""torch.export.export of transformers models (failed before the fix: wrapper() takes 3 positional arguments) (their forwards are wrapped by decorators taking *args/**kwargs, slice position buffers by the input's length and return ModelOutput dataclasses, registered pytree nodes): BERT sequence classification with and without an attention mask, GPT-2 and a Llama-style decoder (RoPE, grouped-query attention) with use_cache=False (a constant input, as PyTorch lists it); the exported module's outputs (their type and values) against the eager model's, its user inputs, a second call on other values of the same shapes, save/load of the program."""

import io

import torch
import transformers
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    set_seed,
)

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()


def check(name, model, args, kwargs=None, again=None):
    model.eval()
    kwargs = kwargs or {}
    with torch.no_grad():
        ep = torch.export.export(model, args, kwargs)
        want = model(*args, **kwargs)
        got = ep.module()(*args, **kwargs)
    key = "logits" if "logits" in want else "last_hidden_state"
    print(
        name,
        type(got).__name__,
        sorted(k for k in got.keys() if got[k] is not None),
        tuple(ep.graph_signature.user_inputs),
        "same",
        bool(torch.allclose(got[key], want[key], atol=1e-5)),
        "%.5f" % float(got[key].abs().sum()),
    )
    if again is not None:
        with torch.no_grad():
            print(
                name,
                "other values",
                bool(
                    torch.allclose(
                        ep.module()(*again, **kwargs)[key], model(*again, **kwargs)[key], atol=1e-5
                    )
                ),
            )
    return ep


set_seed(0)
ids = torch.randint(3, 50, (2, 9))
mask = torch.ones_like(ids)
mask[1, 6:] = 0
bert = BertForSequenceClassification(
    BertConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=32,
        num_labels=3,
    )
)
ep = check("bert", bert, (ids,), again=(torch.randint(3, 50, (2, 9)),))
check("bert masked", bert, (ids,), {"attention_mask": mask})
buf = io.BytesIO()
torch.export.save(ep, buf)
buf.seek(0)
loaded = torch.export.load(buf)
with torch.no_grad():
    print("bert reloaded", bool(torch.allclose(loaded.module()(ids).logits, bert(ids).logits, atol=1e-6)))
set_seed(0)
check(
    "gpt2",
    GPT2LMHeadModel(GPT2Config(vocab_size=50, n_embd=32, n_layer=2, n_head=4, n_positions=32)),
    (ids,),
    {"use_cache": False},
    again=(torch.randint(3, 50, (2, 9)),),
)
set_seed(0)
llama = LlamaForCausalLM(
    LlamaConfig(
        vocab_size=50,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
)
check("llama", llama, (ids,), {"use_cache": False})
print("transformers", transformers.__version__, "ok")
