"""Q17: which operator nn.MultiheadAttention really runs: a profiler trace."""

# --8<-- [start:trace]
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

device = "cuda" if torch.cuda.is_available() else "cpu"

NATIVE = "aten::_native_multi_head_attention"  # the fast path's fused op
SDPA = "aten::scaled_dot_product_attention"


def ops_in_trace(run):
    """Names of all operators the profiler saw while run() executed."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    return {event.name for event in prof.events()}


torch.manual_seed(0)
mha = nn.MultiheadAttention(64, num_heads=8, batch_first=True).to(device)
x = torch.randn(2, 10, 64).to(device)

a = ops_in_trace(
    lambda: mha(x, x, x)
)  # defaults: train mode, need_weights=True
b = ops_in_trace(lambda: mha(x, x, x, need_weights=False))
mha.eval()
with torch.inference_mode():  # or torch.no_grad()
    c = ops_in_trace(lambda: mha(x, x, x))  # query is key is value

cases = {
    "(a) default: train, need_weights=True": a,
    "(b) train, need_weights=False": b,
    "(c) eval, inference_mode, x is x is x": c,
}
for name, ops in cases.items():
    print(f"{name:<39} native MHA: {NATIVE in ops!s:<5}  SDPA: {SDPA in ops}")
# --8<-- [end:trace]
