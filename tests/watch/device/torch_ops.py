"""PyTorch operations run one per process under `tmakit watch` (scripts/watch-device.sh),
to find which of them build tensor maps on the host.  python3 torch_ops.py NAME | list"""
import sys

import torch
import torch.nn.functional as F

dev = "cuda"


def run(name):
    if name == "matmul-bf16":
        a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
        (a @ a).sum().item()
    elif name == "matmul-fp16":
        a = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
        (a @ a).sum().item()
    elif name == "scaled-mm-fp8":
        a = torch.randn(4096, 4096, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(4096, 4096, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=dev)
        torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16).sum().item()
    elif name == "sdpa-flash-bf16":
        q = torch.randn(8, 16, 2048, 128, device=dev, dtype=torch.bfloat16)
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
            F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().item()
    elif name == "sdpa-cudnn-bf16":
        q = torch.randn(8, 16, 2048, 128, device=dev, dtype=torch.bfloat16)
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().item()
    elif name == "grouped-mm-bf16":
        a = torch.randn(4 * 512, 1024, device=dev, dtype=torch.bfloat16)
        b = torch.randn(4, 1024, 2048, device=dev, dtype=torch.bfloat16).transpose(-2, -1).contiguous().transpose(-2, -1)
        offs = torch.arange(512, 4 * 512 + 1, 512, device=dev, dtype=torch.int32)
        torch._grouped_mm(a, b, offs=offs).sum().item()
    elif name == "conv2d-bf16":
        x = torch.randn(32, 256, 56, 56, device=dev, dtype=torch.bfloat16)
        w = torch.randn(256, 256, 3, 3, device=dev, dtype=torch.bfloat16)
        F.conv2d(x, w, padding=1).sum().item()
    elif name == "compile-matmul":
        f = torch.compile(lambda a, b: torch.relu(a @ b), mode="max-autotune-no-cudagraphs")
        a = torch.randn(2048, 2048, device=dev, dtype=torch.bfloat16)
        f(a, a).sum().item()
    else:
        raise SystemExit(f"unknown op {name}")
    torch.cuda.synchronize()
    print(f"{name}: done")


OPS = ["matmul-bf16", "matmul-fp16", "scaled-mm-fp8", "sdpa-flash-bf16", "sdpa-cudnn-bf16", "grouped-mm-bf16",
       "conv2d-bf16", "compile-matmul"]

if __name__ == "__main__":
    if sys.argv[1] == "list":
        print("\n".join(OPS))
    else:
        try:
            run(sys.argv[1])
        except BaseException as e:
            print(f"{sys.argv[1]}: {type(e).__name__}: {' '.join(str(e).split())[:200]}")
