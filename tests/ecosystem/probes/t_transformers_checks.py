# library: transformers
"""Models whose forward calls transformers' torch_compilable_check (torch._check_with, _check_tensor_all_with): BART, T5 and mBART sequence classification (with the eos error), Gemma 3, LLaVA forward and generate."""

import torch
from transformers import (
    BartConfig,
    BartForSequenceClassification,
    CLIPVisionConfig,
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    LlamaConfig,
    LlavaConfig,
    LlavaForConditionalGeneration,
    MBartConfig,
    MBartForSequenceClassification,
    T5Config,
    T5ForSequenceClassification,
    set_seed,
)

torch.set_num_threads(1)


def f(x):
    return f"{float(x):.5f}"


set_seed(0)
ids = torch.randint(4, 60, (2, 9), generator=torch.Generator().manual_seed(0))
ids[:, -1] = 2
bart = BartForSequenceClassification(
    BartConfig(
        vocab_size=64,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
        num_labels=3,
        pad_token_id=1,
        eos_token_id=2,
        bos_token_id=0,
    )
)
o = bart(input_ids=ids, labels=torch.tensor([0, 2]))
o.loss.backward()
print("bart cls", f(o.loss), [f(v) for v in o.logits.flatten()])
set_seed(1)
ids_t5 = ids.clone()
ids_t5[:, -1] = 1
t5 = T5ForSequenceClassification(
    T5Config(
        vocab_size=64,
        d_model=32,
        d_kv=8,
        d_ff=32,
        num_layers=1,
        num_heads=4,
        num_labels=2,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
)
o = t5(input_ids=ids_t5, labels=torch.tensor([0, 1]))
print("t5 cls", f(o.loss), [f(v) for v in o.logits.flatten()])
try:
    bad = ids.clone()
    bad[0, -1] = 5
    bart(input_ids=bad)
except Exception as e:
    print("bart error", type(e).__name__, e)
set_seed(2)
mb = MBartForSequenceClassification(
    MBartConfig(
        vocab_size=64,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
        num_labels=2,
        pad_token_id=1,
        eos_token_id=2,
    )
)
print("mbart", f(mb(input_ids=ids).logits.sum()))
set_seed(3)
g3 = Gemma3ForCausalLM(
    Gemma3TextConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=8,
        sliding_window=4,
        layer_types=["sliding_attention", "full_attention"],
    )
).eval()
print("gemma3", f(g3(ids).logits.sum()), g3.generate(ids, max_new_tokens=3, do_sample=False)[:, 9:].tolist())
set_seed(4)
vc = CLIPVisionConfig(
    hidden_size=32,
    intermediate_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    image_size=16,
    patch_size=8,
    projection_dim=16,
)
tc = LlamaConfig(
    vocab_size=64,
    hidden_size=32,
    intermediate_size=48,
    num_hidden_layers=1,
    num_attention_heads=4,
    num_key_value_heads=2,
)
lv = LlavaForConditionalGeneration(
    LlavaConfig(
        vision_config=vc,
        text_config=tc,
        image_token_id=63,
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
        projector_hidden_act="gelu",
    )
).eval()
seq = torch.cat([torch.full((1, 4), 63), torch.randint(3, 60, (1, 5))], 1)
o = lv(input_ids=seq, pixel_values=torch.randn(1, 3, 16, 16))
print("llava", tuple(o.logits.shape), f(o.logits.sum()))
print(
    "llava gen",
    lv.generate(input_ids=seq, pixel_values=torch.randn(1, 3, 16, 16), max_new_tokens=3, do_sample=False)[
        :, 9:
    ].tolist(),
)
print("transformers ok")
