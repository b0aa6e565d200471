"""KV cache bytes of MHA, GQA, MQA and MLA, from the shapes and from tensors."""

# ruff: noqa: E402  (each section imports what it uses: it runs alone)

# --8<-- [start:bytes]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def cache_numbers(kind, H, d_k, G=None, d_c=None, d_r=None):
    """Numbers cached per token and layer: K and V, or MLA's latent."""
    if kind == "MHA":  # H heads of K and of V
        return 2 * H * d_k
    if kind == "GQA":  # G groups of K/V heads
        return 2 * G * d_k
    if kind == "MQA":  # one K/V head shared by all H query heads
        return 2 * 1 * d_k
    if kind == "MLA":  # one latent c of width d_c, one RoPE key of width d_r
        return d_c + d_r
    raise ValueError(f"unknown kind {kind!r}")


# a large model's attention: 128 heads of width 128 (as DeepSeek-V2)
H, d_k, G, d_c, d_r = 128, 128, 8, 512, 64
mha = cache_numbers("MHA", H, d_k)
for kind in ["MHA", "GQA", "MQA", "MLA"]:
    n_numbers = cache_numbers(kind, H, d_k, G=G, d_c=d_c, d_r=d_r)
    fewer = f", {mha / n_numbers:.3g}x fewer than MHA" if kind != "MHA" else ""
    print(f"{kind}: {n_numbers:>6,} numbers per token and layer{fewer}")
mla = cache_numbers("MLA", H, d_k, d_c=d_c, d_r=d_r)
print(f"MLA caches as much as GQA with G = {mla / (2 * d_k):g}")
# --8<-- [end:bytes]

if __name__ == "__main__":
    # --8<-- [start:gqa]
    # requires torch >= 2.5: enable_gqa
    import torch
    import torch.nn.functional as F

    device = "cuda" if torch.cuda.is_available() else "cpu"

    torch.manual_seed(0)
    B, L, d_model, H, d_k = 3, 10, 128, 8, 16
    x = torch.randn(B, L, d_model).to(device)  # (B, L, d_model)
    w_q = torch.randn(d_model, H * d_k).to(device) / d_model**0.5
    q = (x @ w_q).view(B, L, H, d_k).transpose(1, 2)  # (B, H, L, d_k)
    groups = [H, 2, 1]  # MHA, GQA with 2 groups, MQA
    for G in groups:
        w_kv = torch.randn(d_model, 2 * G * d_k).to(device) / d_model**0.5
        k, v = (x @ w_kv).view(B, L, 2 * G, d_k).transpose(1, 2).chunk(2, dim=1)
        cache = [k, v]  # what a KV cache keeps: G heads of K and of V
        real = sum(t.numel() * t.element_size() for t in cache)
        formula = 2 * B * G * L * d_k * 4  # float32: 4 bytes a number
        out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        copies = F.scaled_dot_product_attention(  # every query head its K, V
            q,
            k.repeat_interleave(H // G, dim=1),
            v.repeat_interleave(H // G, dim=1),
        )
        diff = (out - copies).abs().max()
        print(
            f"G={G}: cache {real:>6,} bytes (formula {formula:>6,}), "
            f"max |enable_gqa - copies| = {diff:.6f}"
        )
    # --8<-- [end:gqa]
