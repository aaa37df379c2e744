"""The tirx binding without a GPU (and without torch): argument parsing, DLPack and
``__cuda_array_interface__`` read from numpy and hand-made producers, every refusal and its
message, the no-GPU error, ``explain`` on described devices, ``list_kernels``.

"CUDA tensors" here are descriptions only: a DLPack capsule built with ctypes (device type
kDLCUDA) or an array-interface dict, pointing at an address nothing reads — every check runs
before a driver call, so nothing dereferences them. Run: ``python -m unittest discover -s
tirx-py/tests`` with the wheel installed (``cargo xtask test`` does).
"""

import ctypes
import unittest

import numpy as np

import tirx

# DLPack (dlpack.h) as ctypes structures.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_uint32 * 2),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# float8: DLPack 1.1's kDLFloat8_e4m3fn (10) and kDLFloat8_e5m2 (12).
_DTYPES = {"bf16": (4, 16), "f16": (2, 16), "f32": (2, 32), "f64": (2, 64), "i32": (0, 32),
           "e4m3": (10, 8), "e5m2": (12, 8), "e8m0": (14, 8)}
_ADDR = 0x7F0000000000  # 256-byte aligned, never read


class FakeCuda:
    """A CUDA tensor as DLPack describes it (device type kDLCUDA), backed by nothing."""

    def __init__(self, shape, dtype="bf16", strides=None, device=0, addr=_ADDR, versioned=None,
                 null_strides=False, byte_offset=0):
        self.shape = tuple(shape)
        self._keep = []
        n = len(shape)
        self._shape = (ctypes.c_int64 * n)(*shape)
        if strides is None:
            strides = [1] * n
            for i in range(n - 2, -1, -1):
                strides[i] = strides[i + 1] * shape[i + 1]
        self._strides = (ctypes.c_int64 * n)(*strides)
        code, bits = _DTYPES[dtype]
        strides_ptr = ctypes.POINTER(ctypes.c_int64)() if null_strides else self._strides
        tensor = _DLTensor(addr, _DLDevice(2, device), n, _DLDataType(code, bits, 1),
                           self._shape, strides_ptr, byte_offset)
        # versioned: DLPack >= 1.0's struct and capsule name, with this (major, minor).
        self._versioned = versioned
        if versioned is None:
            self._managed = _DLManagedTensor(tensor, None, None)
        else:
            self._managed = _DLManagedTensorVersioned((ctypes.c_uint32 * 2)(*versioned), None, None, 0, tensor)
        self.streams = []

    def __dlpack_device__(self):
        return (2, self._managed.dl_tensor.device.device_id)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        # No destructor: the struct lives in this object, which outlives the call.
        name = b"dltensor" if self._versioned is None else b"dltensor_versioned"
        return _PyCapsule_New(ctypes.addressof(self._managed), name, None)

    def t(self):
        s = list(self._strides)
        return FakeCuda(self.shape[::-1], self._dtype_name(), strides=s[::-1])

    def _dtype_name(self):
        d = self._managed.dl_tensor.dtype
        return {v: k for k, v in _DTYPES.items()}[(d.code, d.bits)]


class FakeCai:
    """A CUDA array through ``__cuda_array_interface__`` (version 3)."""

    def __init__(self, shape, typestr="<f2", strides=None, addr=_ADDR):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (addr, False),
            "strides": strides,
            "version": 3,
        }


def gpu_present():
    return tirx.device(0)[0]


def _msg(ctx):
    return str(ctx.exception)


class Parsing(unittest.TestCase):
    def test_numpy_dlpack_is_read_and_refused_as_cpu(self):
        x = np.zeros((4, 8), dtype=np.float32)
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.softmax(x, out=x)
        self.assertEqual(_msg(e), "`x` is on cpu; tirx kernels run on CUDA tensors (move it with `.cuda()`)")

    def test_not_a_tensor(self):
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.softmax([1.0, 2.0], out=FakeCuda((2,)))
        self.assertIn("`x` is a list, not a tensor", _msg(e))

    def test_dlpack_stream_is_passed_to_the_producer(self):
        x = FakeCuda((8, 64))
        tirx.explain("softmax", x, device="h200", stream=1234)
        self.assertEqual(x.streams, [1234])
        y = FakeCuda((8, 64))
        tirx.explain("softmax", y, device="h200")
        self.assertEqual(y.streams, [1], "stream 0 (legacy default) is DLPack's 1")
        # On the producer's own current stream (torch's, as the Python layer knows): -1, no sync.
        z = FakeCuda((8, 64))
        tirx._tirx.row("softmax", z, None, stream=77, dlpack_stream=-1, explain="h200")
        self.assertEqual(z.streams, [-1])

    def test_dlpack_versioned_null_strides_and_offset(self):
        # DLPack 1.x capsule; strides NULL means compact row-major; byte_offset moves the base.
        a = FakeCuda((128, 64), versioned=(1, 1), null_strides=True, byte_offset=8)
        b = FakeCuda((64, 256), versioned=(1, 0))
        text = tirx.explain(tirx.gemm, a, b, device="h200")
        self.assertIn("gemm nn plain, bf16 -> bf16, 128x256x64", text)
        # The base 8 bytes past a 256-byte boundary: TMA (16-byte bases) refuses, so A's
        # offset was read.
        self.assertIn("is not 16-byte aligned", text)
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.explain(tirx.gemm, FakeCuda((128, 64), versioned=(2, 0)), b, device="h200")
        self.assertIn("DLPack version 2.0 is not 1.x", _msg(e))

    def test_cuda_array_interface(self):
        a = FakeCai((128, 64), "<f2")
        b = FakeCai((64, 256), "<f2")
        text = tirx.explain(tirx.gemm, a, b, device="h200")
        self.assertIn("problem: gemm nn plain, f16 -> f16, 128x256x64", text)
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.explain(tirx.gemm, FakeCai((128, 64), "<f8"), b, device="h200")
        self.assertEqual(_msg(e), "`a` has dtype <f8; tirx.gemm takes torch.bfloat16 or torch.float16")
        # Strides in bytes: a transposed [256, 64] f16 is [64, 256] with strides (2, 128).
        bt = FakeCai((64, 256), "<f2", strides=(2, 128))
        self.assertIn("gemm tn plain", tirx.explain(tirx.gemm, a, bt, device="h200"))
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.explain(tirx.gemm, a, FakeCai((64, 256), "<f2", strides=(3, 128)), device="h200")
        self.assertIn("not a whole number of 2-byte elements", _msg(e))

    def test_list_kernels(self):
        ks = tirx.list_kernels()
        self.assertTrue(any(k["problem"] == "attention" for k in ks))
        self.assertTrue(any(k["kernel"] == "silu_mul" for k in ks))
        self.assertTrue(all(k["target"] in ("sm_90a", "sm_100a") for k in ks))
        self.assertTrue(any("BM" in k["consts"] for k in ks))


class Refusals(unittest.TestCase):
    """Every misuse, before any driver call: the same messages with or without a GPU."""

    def test_gemm(self):
        a = FakeCuda((128, 64))
        cases = [
            (dict(b=FakeCuda((63, 256))), "K disagrees (64 vs 63)"),
            (dict(b=FakeCuda((64, 256), "f32")), "`b` has dtype torch.float32; tirx.gemm takes torch.bfloat16 (the dtype of `a`)"),
            (dict(b=FakeCuda((64, 256), strides=(512, 2))), "`b` (shape [64, 256], strides [512, 2]) is not contiguous"),
            (dict(b=FakeCuda((64, 256), device=1)), "`b` is on cuda:1 but `a` is on cuda:0"),
            (dict(b=FakeCuda((64, 256)), activation="tanh"), "activation \"tanh\""),
            (dict(b=FakeCuda((64, 256)), activation="relu"), "pass `bias=`"),
            (dict(b=FakeCuda((64, 256)), beta=1.0), "no `c` was given"),
            (dict(b=FakeCuda((64, 256)), bias=FakeCuda((256,)), alpha=2.0), "no kernel fuses a bias with alpha/beta/c"),
            (dict(b=FakeCuda((64, 256)), bias=FakeCuda((255,))), "it must be a contiguous [N] = [256]"),
            (dict(b=FakeCuda((64, 256)), out=FakeCuda((128, 255))), "`out` has shape [128, 255]"),
            (dict(b=FakeCuda((64, 256)), out=FakeCuda((128, 256), "f64")), "`out` has dtype float64"),
            (dict(b=FakeCuda((64, 256)), out_dtype="int8"), "out_dtype \"int8\""),
            (dict(b=FakeCuda((64,))), "`b` has shape [64]; it must be [K, N]"),
        ]
        for kw, want in cases:
            b = kw.pop("b")
            with self.subTest(want=want):
                with self.assertRaises(tirx.ArgumentError) as e:
                    tirx.gemm(a, b, stream=0, **kw)
                self.assertIn(want, _msg(e))

    def test_rows(self):
        x = FakeCuda((16, 1000))
        w = FakeCuda((1000,))
        cases = [
            (lambda: tirx.softmax(FakeCuda((16, 1000), "f32"), out=x), "`x` has dtype torch.float32; tirx.softmax takes torch.bfloat16"),
            (lambda: tirx.rms_norm(x, FakeCuda((999,)), out=x), "`weight` has shape [999]"),
            (lambda: tirx.rms_norm(x, FakeCuda((1000,), "f16"), out=x), "`weight` has dtype torch.float16"),
            (lambda: tirx.layer_norm(x, w, None, out=x), "tirx.layer_norm: needs `bias`"),
            (lambda: tirx.softmax(FakeCuda((16, 1000), strides=(1, 16)), out=x), "is not contiguous"),
            (lambda: tirx.softmax(FakeCuda((2, 8, 1000), strides=(16000, 2000, 1)), out=FakeCuda((2, 8, 1000))), "`x` (shape [2, 8, 1000], strides [16000, 2000, 1]) is not contiguous"),
            (lambda: tirx.softmax(x, out=FakeCuda((16, 999))), "`out` has shape [16, 999]"),
            (lambda: tirx.silu_mul(x, FakeCuda((16, 999)), out=x), "`g` has shape [16, 999]; x has [16, 1000]"),
            (lambda: tirx.silu_mul(x, x, out=FakeCuda((16, 1000), "f16")), "`out` has dtype torch.float16"),
        ]
        for call, want in cases:
            with self.subTest(want=want):
                with self.assertRaises(tirx.ArgumentError) as e:
                    call()
                self.assertIn(want, _msg(e))

    def test_attention(self):
        q = FakeCuda((2, 128, 8, 64))
        k = FakeCuda((2, 256, 2, 64))
        o, l = FakeCuda((2, 128, 8, 64)), FakeCuda((2, 8, 128), "f32")
        cases = [
            (dict(k=FakeCuda((2, 256, 3, 64)), v=FakeCuda((2, 256, 3, 64))), "8 query heads over 3 K/V heads"),
            (dict(v=FakeCuda((2, 255, 2, 64))), "`k` is [B, SK, HK, D] = [2, 256, 2, 64] but `v` is [B, SK, HK, DV] = [2, 255, 2, 64]: B, SK and HK must agree"),
            (dict(v=FakeCuda((2, 256, 2, 32))), "`out` has shape [2, 128, 8, 64]; it must be [B, S, HQ, DV] = [2, 128, 8, 32]"),
            (dict(k=FakeCuda((2, 256, 2, 128)), v=FakeCuda((2, 256, 2, 128))), "B and D must agree"),
            (dict(q=FakeCuda((2, 128, 8, 64), strides=(65536, 64, 8192, 1))), "heads and head dims packed"),
            (dict(v=FakeCuda((2, 256, 2, 64), "f16")), "`v` has dtype torch.float16; tirx.attention takes torch.bfloat16 (the dtype of `q`)"),
            (dict(lse=FakeCuda((2, 8, 128), "bf16")), "`lse` has dtype torch.bfloat16; tirx.attention takes torch.float32"),
            (dict(lse=FakeCuda((2, 128, 8), "f32")), "`lse` has shape [2, 128, 8]; it must be [B, HQ, S] = [2, 8, 128]"),
            (dict(q=FakeCuda((2, 128, 512))), "`q` has shape [2, 128, 512]; it must be [B, S, HQ, D]"),
        ]
        for kw, want in cases:
            args = dict(q=q, k=k, v=k, out=o, lse=l)
            args.update(kw)
            with self.subTest(want=want):
                with self.assertRaises(tirx.ArgumentError) as e:
                    tirx.attention(args.pop("q"), args.pop("k"), args.pop("v"), stream=0, **args)
                self.assertIn(want, _msg(e))

    def test_outputs_need_torch_or_out(self):
        try:
            import torch  # noqa: F401
            self.skipTest("torch is installed: it allocates the outputs")
        except ImportError:
            pass
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.softmax(FakeCuda((4, 64)))
        self.assertIn("tirx.softmax allocates its output with torch", _msg(e))
        self.assertIn("pass out= (shape [4, 64])", _msg(e))
        # Attention's output has V's head dim.
        q, v = FakeCuda((1, 100, 4, 192)), FakeCuda((1, 100, 4, 128))
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.attention(q, q, v)
        self.assertIn("tirx.attention allocates its output with torch", _msg(e))
        self.assertIn("pass out= (shape [1, 100, 4, 128])", _msg(e))

    def test_explain_needs_a_known_op_and_device(self):
        with self.assertRaises(tirx.ArgumentError):
            tirx.explain("conv2d", FakeCuda((4, 64)))
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.explain("softmax", FakeCuda((4, 64)), device="a100")
        self.assertIn("device \"a100\"", _msg(e))


@unittest.skipIf(gpu_present(), "a GPU is here: the GPU script checks launches")
class NoGpu(unittest.TestCase):
    def test_the_no_gpu_error(self):
        x = FakeCuda((16, 1000))
        with self.assertRaises(tirx.NoGpuError) as e:
            tirx.softmax(x, out=FakeCuda((16, 1000)))
        self.assertTrue(
            _msg(e).startswith("no CUDA driver: libcuda.so could not be loaded")
            or _msg(e).startswith("no GPU with ordinal 0"),
            _msg(e),
        )
        self.assertIsInstance(e.exception, tirx.TirxError)
        self.assertIsInstance(e.exception, RuntimeError)
        ok, why = tirx.device(0)
        self.assertFalse(ok)
        self.assertEqual(why, _msg(e))

    def test_array_interface_pointer_needs_the_driver(self):
        a, b, d = FakeCai((128, 64)), FakeCai((64, 256)), FakeCai((128, 256))
        with self.assertRaises(tirx.NoGpuError):
            tirx.gemm(a, b, out=d, stream=0)

    def test_explain_this_device_needs_a_gpu(self):
        with self.assertRaises(tirx.NoGpuError):
            tirx.explain("softmax", FakeCuda((16, 1000)))


class Explain(unittest.TestCase):
    def test_gemm_choice_and_table(self):
        a = FakeCuda((4096, 4096))
        w = FakeCuda((8192, 4096))
        text = tirx.explain(tirx.gemm, a, w.t(), device="h200")
        self.assertIn("problem: gemm tn plain, bf16 -> bf16, 4096x8192x4096", text)
        self.assertIn("device: NVIDIA H200 (sm_90a, 132 SMs)", text)
        self.assertRegex(text, r"chosen: gemm_sm90\w*/\w+")
        self.assertIn("accepted, cost", text)
        self.assertIn("refused: compiled for sm_100a", text)
        self.assertNotIn("softmax", text, "other families are left out")
        b200 = tirx.explain(tirx.gemm, a, w.t(), device="b200")
        self.assertRegex(b200, r"chosen: gemm_sm100\w*/\w+")

    def test_fused_and_scaled_epilogues(self):
        a, w = FakeCuda((512, 256)), FakeCuda((1024, 256))
        text = tirx.explain(tirx.gemm, a, w.t(), bias=FakeCuda((1024,)), activation="silu", device="h200")
        self.assertIn("gemm tn bias-silu", text)
        self.assertRegex(text, r"chosen: \w+/\w+")
        text = tirx.explain(tirx.gemm, a, w.t(), alpha=0.5, beta=2.0, c=FakeCuda((512, 1024)), device="h200")
        self.assertIn("gemm tn scaled", text)

    def test_residual_epilogue(self):
        a, w, r = FakeCuda((512, 256)), FakeCuda((1024, 256)), FakeCuda((512, 1024))
        text = tirx.explain(tirx.gemm, a, w.t(), bias=FakeCuda((1024,)), activation="gelu",
                            residual=r, device="h200")
        self.assertIn("gemm tn bias-gelu-residual", text)
        self.assertIn("chosen: gemm_sm90_bias_act_res/gelu", text)
        # Without a bias the residual is c with alpha = beta = 1.
        text = tirx.explain(tirx.gemm, a, w.t(), residual=r, device="h200")
        self.assertIn("gemm tn scaled", text)

    def test_hopper_only_op_elsewhere(self):
        x = FakeCuda((16, 4096))
        text = tirx.explain("rms_norm", x, FakeCuda((4096,)), device="b200")
        self.assertIn("chosen: none", text)
        self.assertIn("refused: compiled for sm_90a", text)
        self.assertIn("chosen: rmsnorm", tirx.explain("rms_norm", x, FakeCuda((4096,)), device="h200"))

    def test_attention_head_dim_of_v(self):
        # MLA-style: Q/K head dim 192, V (and O) 128, taken from v's shape.
        q, k, v = FakeCuda((1, 1000, 16, 192)), FakeCuda((1, 1000, 16, 192)), FakeCuda((1, 1000, 16, 128))
        text = tirx.explain(tirx.attention, q, k, v, device="b200")
        self.assertIn("attention full hd 192/128, bf16", text)
        self.assertIn("chosen: attention_sm100/fa4_d192_128", text)
        text = tirx.explain(tirx.attention, q, k, v, device="h200")
        self.assertIn("chosen: none", text)
        self.assertIn("has one head dim `D` for Q·Kᵀ and P·V, not Q/K 192 with V/O 128", text)

    def test_attention_and_silu_mul(self):
        q, k = FakeCuda((1, 2048, 16, 128)), FakeCuda((1, 2048, 4, 128))
        text = tirx.explain(tirx.attention, q, k, k, causal=True, device="h200")
        self.assertIn("attention causal hd 128, bf16, b 1 s 2048 sk 2048 heads 16/4", text)
        self.assertRegex(text, r"chosen: attention_sm90\w*/\w+")
        text = tirx.explain(tirx.silu_mul, FakeCuda((64, 11008)), FakeCuda((64, 11008)), device="h200")
        self.assertIn("chosen: silu_mul/", text)

    def test_unaligned_rows_are_refused_by_the_planner(self):
        # K = 1001 bf16: A's rows are 2002 bytes, not a multiple of 16: no TMA kernel takes it.
        a, b = FakeCuda((128, 1001)), FakeCuda((1001, 256))
        text = tirx.explain(tirx.gemm, a, b, device="h200")
        self.assertIn("launch refused: tensor `a` dim 0 has a stride of 2002 bytes", text)


class Fp8(unittest.TestCase):
    """``tirx.gemm_fp8`` (``torch._scaled_mm``'s form) on described FP8 tensors."""

    M, N, K = 256, 512, 1024

    def operands(self, dtype="e4m3", k=None):
        k = k or self.K
        # b: the [N, K] weight's transpose, as torch._scaled_mm takes it.
        return FakeCuda((self.M, k), dtype), FakeCuda((self.N, k), dtype).t()

    def test_each_scale_form_is_explained_on_the_h200(self):
        a, b = self.operands()
        m, n = self.M, self.N
        for sa, sb, problem in [
            (0.5, 2.0, "gemm tn scale-tensor"),
            (FakeCuda((), "f32"), FakeCuda((1,), "f32"), "gemm tn scale-tensor"),
            (FakeCuda((m, 1), "f32"), FakeCuda((1, n), "f32"), "gemm tn scale-rows"),
            (FakeCuda((m, 8), "f32"), FakeCuda((4, 8), "f32"), "gemm tn scale-blocks"),
        ]:
            text = tirx.explain("gemm_fp8", a, b, sa, sb, device="h200")
            self.assertIn(problem, text)
            self.assertIn("chosen: gemm_sm90_fp8", text)

    def test_use_fast_accum_chooses_the_accumulation(self):
        # torch's default (use_fast_accum=False): only kernels promoting every 128 of K into
        # f32, the problem named `promoted`; True: the fast kernels win, promoted ones refused
        # by nothing but ranked after them.
        a, b = self.operands()
        m, n = self.M, self.N
        for sa, sb in [(0.5, 2.0), (FakeCuda((m, 1), "f32"), FakeCuda((1, n), "f32"))]:
            text = tirx.explain("gemm_fp8", a, b, sa, sb, device="h200")
            self.assertIn(" promoted,", text)
            self.assertRegex(text, r"chosen: gemm_sm90_fp8\S*/promoted")
            self.assertIn("accumulates on the tensor core over all of K", text)
            fast = tirx.explain("gemm_fp8", a, b, sa, sb, use_fast_accum=True, device="h200")
            self.assertNotIn(" promoted,", fast)
            self.assertNotRegex(fast, r"chosen: \S*/promoted")

    def test_misuse_raises_before_any_driver_call(self):
        a, b = self.operands()
        m, n = self.M, self.N
        cases = [
            ((FakeCuda((m, self.K)), b, 1.0, 1.0),
             "`a` has dtype torch.bfloat16; tirx.gemm_fp8 takes torch.float8_e4m3fn or torch.float8_e5m2"),
            ((a, self.operands("e5m2")[1], 1.0, 1.0),
             "`b` has dtype torch.float8_e5m2; tirx.gemm_fp8 takes torch.float8_e4m3fn (the dtype of `a`)"),
            ((a, FakeCuda((self.K, n), "e4m3"), 1.0, 1.0), "torch._scaled_mm"),
            (self.operands(k=1000) + (1.0, 1.0), "K = 1000 is not a multiple of 16"),
            ((a, b, FakeCuda((m, 1), "f32"), FakeCuda((n, 1), "f32")),
             "`scale_a` has shape [256, 1] and `scale_b` [512, 1]"),
            ((a, b, FakeCuda((m, 1), "bf16"), FakeCuda((1, n), "f32")),
             "`scale_a` has dtype torch.bfloat16; tirx.gemm_fp8 takes torch.float32"),
            ((a, b, FakeCuda((m, 1), "f32", device=1), FakeCuda((1, n), "f32")),
             "`scale_a` is on cuda:1 but `a` is on cuda:0"),
            ((a, b, np.ones((m, 1), np.float32), FakeCuda((1, n), "f32")), "`scale_a` is on cpu"),
        ]
        for args, want in cases:
            with self.assertRaises(tirx.ArgumentError) as e:
                tirx.gemm_fp8(*args, out=FakeCuda((m, n)))
            self.assertIn(want, _msg(e))

    def test_per_tensor_scales_in_tensors_are_read_on_the_host(self):
        # Without torch the layer cannot read a described tensor: the binding refuses it.
        a, b = self.operands()
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.gemm_fp8(a, b, FakeCuda((1,), "f32"), 1.0, out=FakeCuda((self.M, self.N)))
        self.assertIn("per-tensor scales are launch parameters: pass them as floats", _msg(e))

    @unittest.skipIf(gpu_present(), "a GPU is present")
    def test_a_well_formed_call_needs_the_gpu(self):
        a, b = self.operands()
        with self.assertRaises(tirx.NoGpuError):
            tirx.gemm_fp8(a, b, 0.5, 2.0, out=FakeCuda((self.M, self.N)))


class BlockScaled(unittest.TestCase):
    """``tirx.gemm_block_scaled`` (MXFP8) on described tensors: Blackwell only."""

    def operands(self, sfa_shape=(64, 64), sf_dtype="e8m0"):
        m, n, k = 256, 256, 512  # 16 factors a row: images [64, 64]
        return (FakeCuda((m, k), "e4m3"), FakeCuda((n, k), "e4m3").t(),
                FakeCuda(sfa_shape, sf_dtype), FakeCuda((64, 64), sf_dtype))

    def test_chosen_on_a_b200_refused_on_an_h200_naming_sm_100a(self):
        text = tirx.explain("gemm_block_scaled", *self.operands(), device="b200")
        self.assertIn("chosen: gemm_sm100_block_scaled_prod/mxfp8", text)
        text = tirx.explain("gemm_block_scaled", *self.operands(), device="h200")
        self.assertIn("chosen: none", text)
        self.assertIn("refused: compiled for sm_100a", text)

    def test_misuse_raises_before_any_driver_call(self):
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.gemm_block_scaled(*self.operands(sf_dtype="e4m3"), out=FakeCuda((256, 256)))
        self.assertIn("`sfa` has dtype torch.float8_e4m3fn; tirx.gemm_block_scaled takes "
                      "torch.float8_e8m0fnu", _msg(e))
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx.gemm_block_scaled(*self.operands(sfa_shape=(64, 48)), out=FakeCuda((256, 256)))
        self.assertIn("sfa", _msg(e))


class _FakeTorchModule:
    """Stands in for ``torch`` in ``sys.modules``: what the binding's torch reader looks up."""

    class dtype_(str):
        def __str__(self):
            return "torch." + str.__str__(self)


class FakeTorchTensor(FakeCuda):
    """A CUDA ``torch.Tensor`` as the binding's fast reader sees it: ``data_ptr()``, ``shape``,
    ``stride()``, ``dtype``, ``is_cuda``, ``get_device()``; its DLPack export (inherited) records
    when it is used instead."""

    def __init__(self, shape, dtype="bfloat16", strides=None, device=0, is_cuda=True, neg=False,
                 addr=_ADDR):
        super().__init__(shape, "bf16", strides=strides, device=device, addr=addr)
        self._torch_strides = tuple(strides) if strides is not None else tuple(self._strides)
        self.dtype = _FakeTorchModule.dtype_(dtype)
        self.is_cuda = is_cuda
        self._neg = neg
        self._addr = addr

    def stride(self):
        return self._torch_strides

    def data_ptr(self):
        return self._addr

    def get_device(self):
        return self._managed.dl_tensor.device.device_id if self.is_cuda else -1

    def is_neg(self):
        return self._neg

    def is_conj(self):
        return False


class TorchFields(unittest.TestCase):
    """A CUDA torch tensor on torch's current stream (``dlpack_stream=-1``) is read from its own
    fields, not exported through DLPack (issue #34: ~5 µs per tensor on the H200)."""

    def setUp(self):
        import sys
        import types

        self.saved = sys.modules.get("torch")
        fake = types.ModuleType("torch")
        fake.Tensor = FakeTorchTensor
        sys.modules["torch"] = fake

    def tearDown(self):
        import sys

        if self.saved is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = self.saved

    def gemm_text(self, a, b, **kw):
        return tirx._tirx.gemm(a, b, None, stream=5, explain="h200", **kw)

    def test_fields_are_read_without_dlpack(self):
        a, w = FakeTorchTensor((512, 256)), FakeTorchTensor((1024, 256))
        b = FakeTorchTensor((256, 1024), strides=(1, 256))  # w.t()
        text = self.gemm_text(a, b, dlpack_stream=-1)
        self.assertIn("problem: gemm tn plain, bf16 -> bf16, 512x1024x256", text)
        self.assertEqual((a.streams, b.streams), ([], []), "no DLPack export")
        # Another stream than torch's current one: DLPack, which lets torch order the data.
        self.gemm_text(a, b)
        self.assertEqual((a.streams, b.streams), ([5], [5]))
        del w

    def test_what_the_fields_say_is_checked(self):
        a = FakeTorchTensor((512, 256), dtype="float64")
        with self.assertRaises(tirx.ArgumentError) as e:
            self.gemm_text(a, FakeTorchTensor((256, 1024), strides=(1, 256)), dlpack_stream=-1)
        self.assertIn("float64", _msg(e))
        self.assertEqual(a.streams, [])
        x = FakeTorchTensor((8, 64), device=1)
        with self.assertRaises(tirx.ArgumentError) as e:
            tirx._tirx.row("softmax", x, FakeTorchTensor((8, 64)), stream=5, dlpack_stream=-1)
        self.assertIn("cuda:1", _msg(e))

    def test_views_torch_will_not_export_and_cpu_tensors_go_through_dlpack(self):
        for t in (FakeTorchTensor((8, 64), neg=True), FakeTorchTensor((8, 64), is_cuda=False)):
            tirx._tirx.row("softmax", t, None, stream=5, dlpack_stream=-1, explain="h200")
            self.assertEqual(t.streams, [-1])

    def test_a_module_named_torch_without_tensor_is_ignored(self):
        import sys

        sys.modules["torch"] = object()
        x = FakeCuda((8, 64))
        tirx._tirx.row("softmax", x, None, stream=5, dlpack_stream=-1, explain="h200")
        self.assertEqual(x.streams, [-1])


if __name__ == "__main__":
    unittest.main()
