"""The torch ceilings both benchmarks measure beside the engine's kernels, in the same run:
cuBLAS/cuDNN with TF32 off, the framework's own softmax, layer_norm and mv, and a copy."""

from __future__ import annotations

import statistics

CEILING_NAMES = {"sgemm": "torch.matmul fp32 (cuBLAS, TF32 off)", "softmax": "torch.softmax",
                 "conv1d": "F.conv1d (cuDNN, TF32 off)", "sobel": "replicate pad + conv2d + sqrt",
                 "layernorm": "F.layer_norm", "gemv": "torch.mv",
                 "attention": "F.scaled_dot_product_attention fp32 (is_causal for MASK=2)",
                 "fft": "torch.fft.fft complex64 (cuFFT)", "fft2": "torch.fft.fft2 complex64 (cuFFT)"}


def load_torch():
    """torch with CUDA, or None: the ceilings are optional."""
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except Exception:
        return None


def time_torch(torch, fn, warmup: int = 5, reps: int = 9) -> float:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return float(statistics.median(times))


def torch_ceiling(torch, name: str, s: dict[str, int]) -> float | None:
    import torch.nn.functional as F

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    if name == "sgemm":
        a = torch.rand(s["M"], s["K"], device=dev) - 0.5
        b = torch.rand(s["K"], s["N"], device=dev) - 0.5
        return time_torch(torch, lambda: torch.matmul(a, b))
    if name == "softmax":
        x = torch.randn(s["ROWS"], s["COLS"], device=dev)
        return time_torch(torch, lambda: torch.softmax(x, dim=1))
    if name == "conv1d":
        x = torch.randn(1, 1, s["N"] + s["K"] - 1, device=dev)
        w = torch.randn(1, 1, s["K"], device=dev)
        return time_torch(torch, lambda: F.conv1d(x, w))
    if name == "sobel":
        img = torch.randn(1, 1, s["H"], s["W"], device=dev)
        k = torch.tensor([[[[-1.0, 0, 1], [-2, 0, 2], [-1, 0, 1]]],
                          [[[-1.0, -2, -1], [0, 0, 0], [1, 2, 1]]]], device=dev)

        def sobel():
            g = F.conv2d(F.pad(img, (1, 1, 1, 1), mode="replicate"), k)
            return torch.sqrt(g[:, 0] * g[:, 0] + g[:, 1] * g[:, 1])
        return time_torch(torch, sobel)
    if name == "layernorm":
        x = torch.randn(s["ROWS"], s["COLS"], device=dev)
        g, b = torch.rand(s["COLS"], device=dev) + 0.5, torch.rand(s["COLS"], device=dev) - 0.5
        return time_torch(torch, lambda: F.layer_norm(x, (s["COLS"],), g, b, 1e-5))
    if name == "gemv":
        a, x = torch.rand(s["M"], s["K"], device=dev) - 0.5, torch.rand(s["K"], device=dev) - 0.5
        return time_torch(torch, lambda: torch.mv(a, x))
    if name == "attention":
        q, k, v = (torch.randn(s["B"], s["H"], s["S"], s["D"], device=dev) for _ in range(3))
        causal = s.get("MASK", 1) == 2
        return time_torch(torch, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    if name == "fft":
        x = torch.randn(s["BATCH"], s["N"], dtype=torch.complex64, device=dev)
        return time_torch(torch, lambda: torch.fft.fft(x))
    if name == "fft2":
        x = torch.randn(s["H"], s["W"], dtype=torch.complex64, device=dev)
        return time_torch(torch, lambda: torch.fft.fft2(x))
    return None


def torch_copy_gbps(torch) -> float:
    x = torch.empty(128 << 20, device="cuda")  # 512 MiB
    y = torch.empty_like(x)
    ms = time_torch(torch, lambda: y.copy_(x))
    return 2 * x.numel() * 4 / (ms / 1e3) / 1e9
