"""tirx kernels on PyTorch tensors.

Each function reads its tensors through DLPack (or ``__cuda_array_interface__``) without
linking libtorch, checks them — device, dtype, layout, shapes: every misuse raises a
``tirx.TirxError`` before anything runs — allocates the outputs with ``torch.empty`` (so
PyTorch's caching allocator owns them; pass ``out=`` to give your own), and launches the
kernel tirx's host dispatcher chooses for these tensors on this GPU, on PyTorch's current
stream, in the device's primary context (PyTorch's).

    import torch, tirx
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
    y = tirx.gemm(a, w.t())            # a @ w.t(), the TN kernels
    print(tirx.explain(tirx.gemm, a, w.t()))

There is no autograd: inputs that require grad are read detached, outputs track no gradient.
torch is optional at import: without it, pass every output as ``out=`` (any DLPack or
``__cuda_array_interface__`` object) and the stream as ``stream=`` (0: the legacy default).
"""

from . import _tirx
from ._tirx import ArgumentError, NoGpuError, NoKernelFitsError, TirxError

try:  # torch allocates outputs and names the current stream; everything else works without it.
    import torch as _torch
except ImportError:  # pragma: no cover - exercised on CI, which has no torch
    _torch = None
_raw_stream = getattr(getattr(_torch, "_C", None), "_cuda_getCurrentRawStream", None)

__all__ = [
    "gemm",
    "gemm_fp8",
    "gemm_block_scaled",
    "attention",
    "softmax",
    "rms_norm",
    "layer_norm",
    "silu_mul",
    "list_kernels",
    "explain",
    "last_choice",
    "device",
    "TirxError",
    "ArgumentError",
    "NoGpuError",
    "NoKernelFitsError",
]

_last = None


def last_choice():
    """The ``kernel/config`` the last call ran (``None`` before the first)."""
    return _last


def device(ordinal=0):
    """``(True, "NVIDIA H200 (sm_90a)")`` when tirx can run on GPU ``ordinal``, else ``(False, why)``."""
    return _tirx.device(ordinal)


def list_kernels():
    """Every compiled kernel variant: dicts of ``kernel``, ``config``, ``target``, ``problem``, ``consts``."""
    return _tirx.list_kernels()


# ``isinstance(t, _Tensor)``: a torch tensor (never, without torch); read once, since a short
# call asks it of every tensor (issue #32).
_Tensor = _torch.Tensor if _torch is not None else ()


def _is_torch(t):
    return isinstance(t, _Tensor)


def _d(t):
    """A torch tensor without autograd (DLPack refuses tensors that require grad; tirx has no
    backward, so outputs never track gradients); anything else unchanged."""
    if isinstance(t, _Tensor) and t.requires_grad:
        return t.detach()
    return t


def _streams(t, stream):
    """The stream to launch on — ``stream`` if given, else torch's current stream on ``t``'s
    GPU — and the ``stream=`` for DLPack producers: on torch's current stream the data is
    already ordered before the launch, so torch is told not to synchronize (-1)."""
    st, ds = _stream_pair(t, stream)
    return dict(stream=st) if ds is None else dict(stream=st, dlpack_stream=ds)


def _stream_pair(t, stream):
    """``_streams`` as ``(stream, dlpack_stream)`` (``None``: the binding's default), for the
    short calls, which pass them by name instead of building a dict (issue #32)."""
    if stream is not None:
        return int(stream), None
    if isinstance(t, _Tensor) and t.is_cuda:
        if _raw_stream is not None:  # `_current_stream`, without its call
            return _raw_stream(t.get_device()), -1
        return _current_stream(t), -1
    return 0, None


def _current_stream(t):
    """torch's current stream on ``t``'s GPU as a ``CUstream`` value. ``torch.cuda.current_stream``
    builds a Stream object (about 9 µs on the H200); torch's raw getter, which its own compiler
    uses, returns the handle directly — taken when this torch has it."""
    if _raw_stream is not None:
        return _raw_stream(t.get_device())
    return _torch.cuda.current_stream(t.device).cuda_stream


def _torch_out(*ts):
    """Whether every given tensor is a torch tensor on a CUDA device: then outputs are allocated
    before the one call that checks and launches (a refusal still raises before anything runs,
    the fresh output unused); otherwise the call is checked first."""
    return all(_is_torch(t) and t.is_cuda for t in ts if t is not None)


def _empty(like, op, shape, dtype=None):
    if not _is_torch(like):
        raise ArgumentError(
            f"tirx.{op} allocates its output with torch, which is not available for a "
            f"{type(like).__name__}: pass out= (shape {list(shape)})"
        )
    return _torch.empty(tuple(shape), dtype=dtype or like.dtype, device=like.device)


def _done(label):
    global _last
    _last = label


def _dtype_name(dtype):
    if dtype is None:
        return None
    return str(dtype)


def gemm(a, b, *, bias=None, activation=None, residual=None, alpha=1.0, beta=0.0, c=None,
         out_dtype=None, out=None, stream=None, _explain=None):
    """``a @ b`` (``a`` [M, K], ``b`` [K, N]) on tirx's GEMM kernels.

    ``b`` row-major runs the NN kernels; the transpose of a row-major [N, K] (a Linear's
    ``weight.t()``) the TN kernels. Epilogues: ``bias`` [N] with ``activation`` ``None``,
    ``"relu"``, ``"gelu"`` (tanh form) or ``"silu"`` (TN only): ``act(a @ b + bias)``, and with
    ``residual`` [M, N] ``act(a @ b + bias) + residual`` (TN on Hopper; without ``bias``,
    ``a @ b + residual``); or ``alpha * (a @ b) + beta * c``. Inputs bf16 or f16; ``out_dtype`` bf16, f16 or f32
    (default: ``a``'s).
    """
    global _last
    a, b, c, bias, residual, out = _d(a), _d(b), _d(c), _d(bias), _d(residual), _d(out)
    st, ds = _stream_pair(a, stream)
    kw = dict(c=c, bias=bias, activation=activation, residual=residual, alpha=float(alpha),
              beta=float(beta), out_dtype=_dtype_name(out_dtype), stream=st,
              dlpack_stream=ds)
    if _explain is not None:
        return _tirx.gemm(a, b, out, explain=_explain, **kw)
    if out is None:
        fast = _torch_out(a, b) and a.dim() == 2 and b.dim() == 2 and (
            out_dtype is None or isinstance(out_dtype, _torch.dtype))
        if not fast:
            _tirx.gemm(a, b, None, explain="check", **kw)
        out = _empty(a, "gemm", (a.shape[0], b.shape[1]), out_dtype or a.dtype)
    _last = _tirx.gemm(a, b, out, **kw)
    return out


def _scale_value(s):
    """A per-tensor scale as a float: Python numbers as they are, a one-element tensor read
    with ``.item()`` (a device synchronization for a CUDA tensor: pass floats to avoid it);
    anything else (row-wise and block-wise scales) unchanged."""
    if isinstance(s, (int, float)):
        return float(s)
    if _is_torch(s) and s.numel() == 1 and s.dim() <= 1:
        return float(s.item())
    return s


def gemm_fp8(a, b, scale_a=1.0, scale_b=1.0, *, out_dtype=None, out=None, use_fast_accum=False,
             stream=None, _explain=None):
    """``torch._scaled_mm``'s ``s ⊙ (a @ b)`` on tirx's FP8 GEMM kernels.

    ``a`` [M, K] row-major and ``b`` [K, N] the transpose of a row-major [N, K] (a Linear's
    ``weight.t()``), both ``torch.float8_e4m3fn`` or both ``torch.float8_e5m2``; K a multiple
    of 16. Scales (float32), told apart by their shapes: per-tensor (floats, or tensors of
    shape [] or [1], read with ``.item()``), row-wise (``scale_a`` [M, 1], ``scale_b`` [1, N]:
    ``out[i, j] = scale_a[i] * scale_b[j] * (a @ b)[i, j]``) or block-wise, DeepSeek-V3's
    (``scale_a`` [M, cdiv(K, 128)] per 1×128 block of ``a``, ``scale_b``
    [cdiv(N, 128), cdiv(K, 128)] per 128×128 block of the [N, K] weight; ``scale_a`` either
    row-major or MN-major with strides (1, M4), M4 = 4·cdiv(M, 4), DeepGEMM's TMA-aligned
    layout, which the scale-warp-free ``gemm_sm90_fp8_block_mn`` takes). ``out_dtype``
    bf16 (default), f16 or f32. At K ≤ 128 a block-wise ``scale_a`` is [M, 1] like a
    row-wise one; ``scale_b``'s shape tells them apart.

    ``use_fast_accum`` is ``torch._scaled_mm``'s, with its default: ``False`` runs only kernels
    that add the tensor core's FP8 partial sums into an f32 accumulator every 128 of K (torch's
    numerics; about 1.3e-4 relative error at K = 4096 with an f32 output), ``True`` the fastest
    kernel, whose tensor-core accumulator may run over all of K (fewer bits than f32: about
    1.3e-3 there) — faster by what the promotion costs. Block-wise scales always promote.
    """
    a, b, out = _d(a), _d(b), _d(out)
    scale_a, scale_b = _d(scale_a), _d(scale_b)
    kw = dict(out_dtype=_dtype_name(out_dtype), use_fast_accum=bool(use_fast_accum),
              **_streams(a, stream))
    if _explain is not None:
        return _tirx.gemm_fp8(a, b, scale_a, scale_b, out, explain=_explain, **kw)
    # A one-element scale tensor is read on the host (`.item()`) only after the call is
    # checked (a wrong dtype or device raises first); other producers are checked before the
    # output is allocated.
    reads = any(_is_torch(s) and s.numel() == 1 for s in (scale_a, scale_b))
    if reads or (out is None and not _torch_out(a, b)):
        _tirx.gemm_fp8(a, b, scale_a, scale_b, out, explain="check", **kw)
    scale_a, scale_b = _scale_value(scale_a), _scale_value(scale_b)
    if out is None:
        out = _empty(a, "gemm_fp8", (a.shape[0], b.shape[1]),
                     out_dtype or getattr(_torch, "bfloat16", None))
    _done(_tirx.gemm_fp8(a, b, scale_a, scale_b, out, **kw))
    return out


def gemm_block_scaled(a, b, sfa, sfb, *, out_dtype=None, out=None, stream=None, _explain=None):
    """Blackwell's block-scaled ``(a·sfa) @ (b·sfb)`` (``tcgen05.mma … .block_scale``).

    MXFP8: ``a`` [M, K] and ``b`` [K, N] (the transpose of a row-major [N, K]) in
    ``torch.float8_e4m3fn``, factors ``torch.float8_e8m0fnu`` (one per 32 values of a row).
    NVFP4: ``torch.float4_e2m1fn_x2`` (K counts bytes, two values each), UE4M3 factors given as
    ``torch.float8_e4m3fn`` (one per 16 values). ``sfa`` / ``sfb``: the factor matrices in
    ``tirx::runtime::scale_image``'s layout, [ceil(rows/128)·32, ceil(factors/4)·16].
    ``out_dtype`` bf16 (default). Only sm_100a kernels take it: on a Hopper GPU this raises
    ``NoKernelFitsError`` whose table names sm_100a.
    """
    a, b, out = _d(a), _d(b), _d(out)
    kw = dict(out_dtype=_dtype_name(out_dtype), **_streams(a, stream))
    if _explain is not None:
        return _tirx.gemm_block_scaled(a, b, sfa, sfb, out, explain=_explain, **kw)
    if out is None:
        if not _torch_out(a, b):
            _tirx.gemm_block_scaled(a, b, sfa, sfb, None, explain="check", **kw)
        out = _empty(a, "gemm_block_scaled", (a.shape[0], b.shape[1]),
                     out_dtype or getattr(_torch, "bfloat16", None))
    _done(_tirx.gemm_block_scaled(a, b, sfa, sfb, out, **kw))
    return out


def attention(q, k, v, *, causal=False, scale=None, return_lse=False, out=None, lse=None,
              stream=None, _explain=None):
    """Attention forward on flash-attention's layout: ``q`` [B, S, HQ, D], ``k``
    [B, SK, HK, D], ``v`` [B, SK, HK, DV] (grouped-query when HK divides HQ), bf16 or f16.

    V's head dim DV is its own: DV = D, or MLA-style (D, DV) = (192, 128), which only the
    Blackwell kernel serves (the Hopper kernels have one head dim: on an H200 such a call
    raises ``NoKernelFitsError`` saying so). ``causal`` masks bottom-right aligned (query i
    sees keys up to i + SK - S); ``scale`` defaults to 1/sqrt(D). Returns ``out``
    [B, S, HQ, DV], and with ``return_lse`` also the log-sum-exp [B, HQ, S] f32 (natural log).
    From SDPA's [B, H, S, D] layout, pass ``x.transpose(1, 2).contiguous()``.
    """
    q, k, v, out, lse = _d(q), _d(k), _d(v), _d(out), _d(lse)
    kw = dict(causal=bool(causal), scale=None if scale is None else float(scale),
              **_streams(q, stream))
    if _explain is not None:
        return _tirx.attention(q, k, v, out, lse, explain=_explain, **kw)
    if out is None or lse is None:
        if not (_torch_out(q, k, v) and q.dim() == 4):
            _tirx.attention(q, k, v, out, lse, explain="check", **kw)
        b, s, hq, _hd = q.shape
        if out is None:
            out = _empty(q, "attention", (b, s, hq, v.shape[3]))
        if lse is None:
            lse = _empty(q, "attention", (b, hq, s), _torch.float32 if _torch else None)
    _done(_tirx.attention(q, k, v, out, lse, **kw))
    return (out, lse) if return_lse else out


def _row(op, x, out, stream, explain, weight=None, bias=None, eps=1e-6):
    global _last
    x, out, weight, bias = _d(x), _d(out), _d(weight), _d(bias)
    st, ds = _stream_pair(x, stream)
    if explain is not None:
        return _tirx.row(op, x, out, weight=weight, bias=bias, eps=eps, stream=st,
                         dlpack_stream=ds, explain=explain)
    if out is None:
        if not _torch_out(x):
            _tirx.row(op, x, None, weight=weight, bias=bias, eps=eps, stream=st,
                      dlpack_stream=ds, explain="check")
        out = _empty(x, op, x.shape)
    _last = _tirx.row(op, x, out, weight=weight, bias=bias, eps=eps, stream=st,
                      dlpack_stream=ds)
    return out


def softmax(x, *, out=None, stream=None, _explain=None):
    """Softmax over the last dimension of a bf16 tensor."""
    return _row("softmax", x, out, stream, _explain)


def rms_norm(x, weight, eps=1e-6, *, out=None, stream=None, _explain=None):
    """RMSNorm over the last dimension: ``x / sqrt(mean(x²) + eps) * weight`` (bf16)."""
    return _row("rms_norm", x, out, stream, _explain, weight=weight, eps=float(eps))


def layer_norm(x, weight, bias, eps=1e-5, *, out=None, stream=None, _explain=None):
    """LayerNorm over the last dimension with ``weight`` and ``bias`` (bf16)."""
    return _row("layer_norm", x, out, stream, _explain, weight=weight, bias=bias, eps=float(eps))


def silu_mul(x, g, *, out=None, stream=None, _explain=None):
    """``silu(x) * g`` elementwise (bf16): the gate of a SwiGLU MLP."""
    x, g, out = _d(x), _d(g), _d(out)
    st = _streams(x, stream)
    if _explain is not None:
        return _tirx.silu_mul(x, g, out, explain=_explain, **st)
    if out is None:
        if not _torch_out(x, g):
            _tirx.silu_mul(x, g, None, explain="check", **st)
        out = _empty(x, "silu_mul", x.shape)
    _done(_tirx.silu_mul(x, g, out, **st))
    return out


_OPS = {
    "gemm": gemm,
    "gemm_fp8": gemm_fp8,
    "gemm_block_scaled": gemm_block_scaled,
    "attention": attention,
    "softmax": softmax,
    "rms_norm": rms_norm,
    "layer_norm": layer_norm,
    "silu_mul": silu_mul,
}


def explain(op, *args, device=None, **kwargs):
    """What tirx would run for ``op(*args, **kwargs)``: the problem, the choice, and every
    candidate kernel with why it was accepted or refused. Nothing is launched and no output is
    allocated. ``device``: ``None`` for the tensors' GPU, or a described ``"h200"`` /
    ``"b200"`` (works without a GPU). ``op`` is one of tirx's functions or its name.
    """
    fn = _OPS.get(op) if isinstance(op, str) else (op if op in _OPS.values() else None)
    if fn is None:
        raise ArgumentError(f"tirx.explain: {op!r} is not one of {', '.join(_OPS)}")
    return fn(*args, _explain=device or "this", **kwargs)
