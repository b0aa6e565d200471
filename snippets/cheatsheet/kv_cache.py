"""The cheat sheet's KV-cache sizes of MHA, GQA, MQA and MLA for one model."""

# --8<-- [start:bytes]
# one large model's attention (as DeepSeek-V2): 60 layers, 128 heads of
# width 128; GQA with 8 groups; MLA's latent 512 wide, its RoPE key 64
layers, H, d_k, G, d_c, d_r = 60, 128, 128, 8, 512, 64
L, B, nbytes = 4096, 1, 2  # 4,096 tokens, one sequence, bfloat16

per_token = {  # numbers cached per token and layer
    "MHA": 2 * H * d_k,  # K and V of every head
    "GQA": 2 * G * d_k,  # K and V of every group
    "MQA": 2 * 1 * d_k,  # one K and V head for all heads
    "MLA": d_c + d_r,  # the latent c and the RoPE key
}
for kind, n in per_token.items():
    total = n * layers * L * B * nbytes
    mib = total / 2**20
    print(f"{kind}: {n:>6,} numbers per token and layer, {mib:>6,.0f} MiB")
# --8<-- [end:bytes]
