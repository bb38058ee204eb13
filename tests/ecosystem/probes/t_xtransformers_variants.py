# library: x-transformers
"""x-transformers' attention and feed-forward variants as its README shows them: alibi and T5 relative position biases, dynamic position bias, rotary with xpos, RMSNorm/ScaleNorm, GLU feed-forwards, memory key/values and memory tokens, talking heads, sandwich norm, residual attention, macaron, layer dropout-free shift tokens, flash attention (PyTorch's scaled_dot_product_attention), qk-norm; ContinuousTransformerWrapper regression, ViTransformerWrapper classification, NonAutoregressiveWrapper-free XL recurrence (return_mems), return_intermediates, a DPO-free AutoregressiveWrapper with top-k/top-p filtering under a seed, each with a backward; torch.export of a rotary decoder (x-transformers' default() asks callable() of a tensor, einops picks its backend by isinstance: both failed before the fix)."""

import importlib.metadata
import warnings

import torch
from x_transformers import (
    AutoregressiveWrapper,
    ContinuousTransformerWrapper,
    Decoder,
    Encoder,
    TransformerWrapper,
    ViTransformerWrapper,
)
from x_transformers.autoregressive_wrapper import top_k, top_p

warnings.filterwarnings("ignore")
torch.manual_seed(0)
torch.set_num_threads(1)


def s(t):
    return "%.4f" % float(t.detach().abs().sum())


tokens = torch.randint(0, 50, (2, 12))
mask = torch.ones(2, 12, dtype=torch.bool)
mask[1, 9:] = False
for name, kw in [
    ("alibi", dict(alibi_pos_bias=True, alibi_num_heads=2)),
    ("t5 rel", dict(rel_pos_bias=True)),
    ("dynamic pos", dict(dynamic_pos_bias=True, dynamic_pos_bias_log_distance=True)),
    ("rotary xpos", dict(rotary_xpos=True)),
    ("rmsnorm glu", dict(use_rmsnorm=True, ff_glu=True, ff_swish=True)),
    ("scalenorm", dict(use_scalenorm=True)),
    ("mem kv", dict(attn_num_mem_kv=3)),
    ("talking heads", dict(attn_pre_talking_heads=True, attn_post_talking_heads=True)),
    ("sandwich", dict(sandwich_norm=True)),
    ("residual attn", dict(residual_attn=True)),
    ("macaron", dict(macaron=True)),
    ("shift tokens", dict(shift_tokens=1)),
    ("flash", dict(attn_flash=True)),
    ("qk norm", dict(attn_qk_norm=True, attn_qk_norm_dim_scale=True)),
    ("gate values", dict(attn_gate_values=True, attn_head_scale=True)),
]:
    torch.manual_seed(0)
    m = TransformerWrapper(
        num_tokens=50,
        max_seq_len=16,
        attn_layers=Decoder(dim=16, depth=2, heads=4, **kw),
        num_memory_tokens=2 if name == "mem kv" else 0,
    )
    logits = m(tokens, mask=mask)
    logits[mask].logsumexp(-1).sum().backward()
    g = sum(float(p.grad.abs().sum()) for p in m.parameters() if p.grad is not None)
    print("variant", name, tuple(logits.shape), s(logits[mask]), "%.3f" % g)

torch.manual_seed(0)
cont = ContinuousTransformerWrapper(
    dim_in=5, dim_out=3, max_seq_len=16, attn_layers=Encoder(dim=16, depth=2, heads=2, rotary_pos_emb=True)
)
opt = torch.optim.AdamW(cont.parameters(), lr=3e-3)
x = torch.randn(4, 10, 5)
y = torch.randn(4, 10, 3)
losses = []
for _ in range(3):
    loss = torch.nn.functional.mse_loss(cont(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append("%.5f" % loss.item())
print("continuous", losses)

torch.manual_seed(0)
vit = ViTransformerWrapper(
    image_size=16, patch_size=4, num_classes=5, attn_layers=Encoder(dim=16, depth=2, heads=2)
)
img = torch.randn(3, 3, 16, 16)
out = vit(img)
torch.nn.functional.cross_entropy(out, torch.tensor([0, 3, 4])).backward()
emb = vit(img, return_embeddings=True)
print("vit", tuple(out.shape), s(out), tuple(emb.shape))

torch.manual_seed(0)
xl = TransformerWrapper(
    num_tokens=50,
    max_seq_len=8,
    max_mem_len=8,
    attn_layers=Decoder(dim=16, depth=2, heads=2, rel_pos_bias=True),
)
seg1, seg2 = tokens[:, :6], tokens[:, 6:]
l1, mems = xl(seg1, return_mems=True)
l2, mems2 = xl(seg2, mems=mems, return_mems=True)
print("xl", tuple(l1.shape), tuple(l2.shape), len(mems), tuple(mems2[0].shape), s(l2))
logits, inter = xl(seg1, return_intermediates=True)
print(
    "intermediates",
    len(inter.hiddens),
    len(inter.attn_intermediates),
    tuple(inter.attn_intermediates[0].pre_softmax_attn.shape),
)

torch.manual_seed(0)
ar = AutoregressiveWrapper(
    TransformerWrapper(
        num_tokens=50, max_seq_len=24, attn_layers=Decoder(dim=16, depth=1, heads=2, rotary_pos_emb=True)
    )
)
loss = ar(torch.randint(0, 50, (2, 10)))
loss.backward()
print("ar loss", "%.5f" % loss.item())
logits = torch.randn(2, 50)
print(
    "filters",
    int(torch.isfinite(top_k(logits, frac_num_tokens=0.1)).sum()),
    int(torch.isfinite(top_p(logits, thres=0.9)).sum()),
)
torch.manual_seed(3)
print(
    "sample topk",
    ar.generate(tokens[:, :3], seq_len=5, filter_logits_fn=top_k, filter_kwargs=dict(k=5)).tolist(),
)
torch.manual_seed(3)
print("sample topp", ar.generate(tokens[:, :3], seq_len=5, filter_logits_fn=top_p, temperature=0.7).tolist())
torch.manual_seed(0)
dec = TransformerWrapper(
    num_tokens=50, max_seq_len=16, attn_layers=Decoder(dim=16, depth=1, heads=2, rotary_pos_emb=True)
).eval()
ep = torch.export.export(dec, (tokens,))
with torch.no_grad():
    print(
        "export",
        tuple(ep.graph_signature.user_inputs),
        torch.allclose(ep.module()(tokens), dec(tokens), atol=1e-5),
    )
print("x_transformers", importlib.metadata.version("x-transformers"), "ok")
