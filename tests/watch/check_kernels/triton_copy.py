# A Triton TMA kernel (host-side descriptors) for `tmakit check` on the H100 (docs/check.md,
# "On the H100"): Triton compiles it through TRITON_PTXAS_PATH, which tmakit check points at
# tmakit-ptxas, so the cubin it loads is instrumented and each launch is checked.
# Expected under tmakit check: one launch checked, completed, no findings; "triton copy ok".
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def copy_kernel(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    out_desc.store([m, n], in_desc.load([m, n]))


x = torch.randn(256, 256, device="cuda", dtype=torch.float16)
y = torch.empty_like(x)
BM = BN = 64
copy_kernel[(256 // BM, 256 // BN)](TensorDescriptor.from_tensor(x, [BM, BN]),
                                   TensorDescriptor.from_tensor(y, [BM, BN]), BM, BN)
torch.cuda.synchronize()
assert torch.equal(x, y), "the copy differs"
print("triton copy ok")
