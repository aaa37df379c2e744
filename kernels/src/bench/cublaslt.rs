//! cuBLASLt as the bench's baseline: the same row-major GEMM D = A·Bᵀ (A M×K, B N×K, D M×N,
//! f32 accumulation and scale, `CUBLAS_COMPUTE_32F`) in the same element types (A/B and D
//! layouts typed `CUDA_R_16BF` / `CUDA_R_16F` / `CUDA_R_32F` accordingly) on the same
//! [`Tensor`]s our kernels use. cuBLASLt has no algorithm for some mixes (16-bit inputs of
//! one kind with a 16-bit D of the other); there the plan fails and the bench says so.
//!
//! cuBLAS is column-major. A row-major X (r×c, ld c) is the column-major Xᵀ (c×r, ld c), so
//! row-major D = A·Bᵀ is column-major Dᵀ (N×M, ld N) = B·Aᵀ: cuBLAS's "A" is our B buffer
//! (stored K×N, ld K) used transposed, its "B" is our A buffer (stored K×M, ld K) used as is,
//! and m = N, n = M, k = K.
//!
//! With B given K×N ("NN", [`BLayout::Nn`]): row-major D = A·B is column-major Dᵀ = Bᵀ·Aᵀ.
//! Our row-major B (K×N, ld N) is the column-major Bᵀ (N×K, ld N) — exactly the operand Dᵀ
//! needs first, so cuBLAS's "A" is our B buffer described as N×K with ld N and used as is
//! (`CUBLASLT_MATMUL_DESC_TRANSA` = `CUBLAS_OP_N`); its "B" (our A) and C are as for TN.
//! Transposition stays a layout description here too: no operand is copied.
//!
//! Fused epilogues ([`CublasLt::gemm_epilogue`], TN bf16 → bf16): cuBLASLt then computes
//! D = epi(A·Bᵀ + bias) itself, with `CUBLASLT_MATMUL_DESC_EPILOGUE` set to one of
//! [`LtEpilogue`] and the bias given by `CUBLASLT_MATMUL_DESC_BIAS_POINTER` (typed by
//! `CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE` = `CUDA_R_16BF`). cublasLt.h (CUDA 13), on
//! `CUBLASLT_EPILOGUE_BIAS`: "Apply (broadcast) bias from the bias vector. Bias vector length
//! must match matrix D rows, and it must be packed (such as stride between vector elements is
//! 1). Bias vector is broadcast to all columns and added before applying the final
//! postprocessing"; on `CUBLASLT_MATMUL_DESC_BIAS_POINTER`: "Bias vector length must match
//! matrix D rows count" (the same text in the cuBLAS documentation,
//! docs.nvidia.com/cuda/cublas, `cublasLtEpilogue_t` and `cublasLtMatmulDescAttributes_t`).
//! cuBLAS's D is our Dᵀ (N×M) under the mapping above, so its rows are our columns: the bias of
//! length N that our row-major D adds per column is exactly cuBLAS's per-row bias, and the
//! mapping needs no change. (Describing our D without the transposition, as M×N with a
//! row-major order, would have made cuBLAS's rows our rows, a bias of length M: wrong.) PyTorch
//! goes the same way: its cuBLASLt path of `addmm` takes the bias only when its length is
//! mat2's column count, the N of its row-major result (`aten/src/ATen/native/cuda/Blas.cpp`,
//! `addmm_out_cuda_impl`).
//!
//! GELU: cuBLAS documents `CUBLASLT_EPILOGUE_GELU` only as "x := GELU(x)". That it is the tanh
//! form is what PyTorch relies on: where it cannot use the epilogue it applies
//! `at::gelu_(result, "tanh")` in its place ("manually performing a post-GELU because we
//! weren't able to use the GELU epilogue above", same file), and `tests/gpu_epilogue.rs`
//! checks it on the H200 on pre-activations in [-4, -2.5], where the tanh form and the exact
//! x·Φ(x) differ by 7 to 60 bf16 units in the last place (2026-12-02, cuBLASLt 13.1: all 768
//! outputs nearer the tanh form, within 1.1% of it; `docs/perf/epilogue-h200-2026-12-02.md`).
//!
//! The enum values (`CUBLASLT_EPILOGUE_BIAS` = 4, `_RELU_BIAS` = 6 = RELU | BIAS, `_GELU_BIAS`
//! = 36 = GELU | BIAS; `CUBLASLT_MATMUL_DESC_EPILOGUE` = 7, `_BIAS_POINTER` = 8,
//! `_BIAS_DATA_TYPE` = 26) come from cudarc's bindings of that header (`cublaslt::sys`).
//!
//! The algorithm is the heuristic's first choice, as PyTorch takes it. Where a leading
//! dimension is not a multiple of 8 elements (16 bytes), e.g. N = 4097, that choice is a slow
//! kernel (≈95 TFLOP/s on an H200 at 4095×4097×4096): the baseline is what a user of
//! cuBLASLt gets, not the best cuBLASLt could do after timing its candidates.
//!
//! Invariants:
//! - Nothing here panics when `libcublasLt` is missing: cudarc's dynamic loading panics on the
//!   first call into a library it cannot open, so [`CublasLt::new`] asks
//!   `cublaslt::sys::is_culib_present` before any call, and every later call goes through a
//!   `CublasLt`, whose existence proves the library loaded.
//! - An [`LtGemm`] holds the descriptors and the algorithm chosen once by cuBLASLt's heuristic,
//!   so a timed [`LtGemm::run`] is one `cublasLtMatmul` call, nothing else on the host
//!   ([`LtGemm::run_epilogue`] also writes the bias address into the descriptor, a host-side
//!   store: `cublasLtMatmul` reads its descriptor when called, and PyTorch destroys its
//!   descriptors as soon as the call returns, before the kernel has run).
//! - A plan with an epilogue runs only through [`LtGemm::run_epilogue`], a plan without one
//!   only through [`LtGemm::run`] / [`LtGemm::run_scaled`]: an epilogue with no bias pointer
//!   would read address 0.
//! - All work goes to the runtime's one stream.

use std::sync::Arc;

use cudarc::cublaslt::result::{self, CublasError};
use cudarc::cublaslt::sys;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use half::bf16;
use tirx::abi::ElemType;
use tirx::{Element, Runtime, RuntimeError, Tensor};

use super::BenchError;
use crate::gemm::reference::BOperand;
use crate::gemm::request::GemmTypes;
use tirx::problem::BLayout;

/// cuBLAS's name for an element type.
pub(super) fn data_type(e: ElemType) -> sys::cudaDataType_t {
    match e {
        ElemType::Bf16 => sys::cudaDataType_t::CUDA_R_16BF,
        ElemType::F16 => sys::cudaDataType_t::CUDA_R_16F,
        ElemType::F32 => sys::cudaDataType_t::CUDA_R_32F,
        ElemType::E4m3 => sys::cudaDataType_t::CUDA_R_8F_E4M3,
        ElemType::E5m2 => sys::cudaDataType_t::CUDA_R_8F_E5M2,
        ElemType::Ue8m0 => sys::cudaDataType_t::CUDA_R_8F_UE8M0,
        ElemType::Ue4m3 => sys::cudaDataType_t::CUDA_R_8F_UE4M3,
        ElemType::E2m1x2 => sys::cudaDataType_t::CUDA_R_4F_E2M1,
        // cuBLASLt's FP6/FP4 types are packed; tirx's padded images are not theirs (no
        // cuBLASLt comparison runs on them).
        ElemType::E3m2 => sys::cudaDataType_t::CUDA_R_6F_E3M2,
        ElemType::E2m3 => sys::cudaDataType_t::CUDA_R_6F_E2M3,
        ElemType::E2m1 => sys::cudaDataType_t::CUDA_R_4F_E2M1,
        ElemType::I32 => sys::cudaDataType_t::CUDA_R_32I,
        ElemType::I8 => sys::cudaDataType_t::CUDA_R_8I,
        ElemType::U8 => sys::cudaDataType_t::CUDA_R_8U,
        ElemType::U32 => sys::cudaDataType_t::CUDA_R_32U,
        ElemType::I64 => sys::cudaDataType_t::CUDA_R_64I,
        ElemType::U64 => sys::cudaDataType_t::CUDA_R_64U,
    }
}

/// Workspace cuBLASLt may use: NVIDIA recommends 32 MiB on Hopper.
pub const WORKSPACE_BYTES: usize = 32 << 20;

/// What to tell a user whose machine lacks the library.
pub const MISSING: &str = "libcublasLt.so could not be loaded; it ships with the CUDA toolkit \
    (e.g. /usr/local/cuda/lib64): run with LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH";

/// A fused epilogue cuBLASLt runs after the product: the bias (length N, per column of our
/// row-major D; see the module docs) and an activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LtEpilogue {
    /// `CUBLASLT_EPILOGUE_BIAS`: D = A·Bᵀ + bias.
    Bias,
    /// `CUBLASLT_EPILOGUE_RELU_BIAS`: D = max(A·Bᵀ + bias, 0).
    ReluBias,
    /// `CUBLASLT_EPILOGUE_GELU_BIAS`: D = GELU(A·Bᵀ + bias), GELU in its tanh form.
    GeluBias,
}

impl LtEpilogue {
    /// Every epilogue.
    pub const ALL: [LtEpilogue; 3] = [LtEpilogue::Bias, LtEpilogue::ReluBias, LtEpilogue::GeluBias];

    fn sys(self) -> sys::cublasLtEpilogue_t {
        use sys::cublasLtEpilogue_t as E;
        match self {
            LtEpilogue::Bias => E::CUBLASLT_EPILOGUE_BIAS,
            LtEpilogue::ReluBias => E::CUBLASLT_EPILOGUE_RELU_BIAS,
            LtEpilogue::GeluBias => E::CUBLASLT_EPILOGUE_GELU_BIAS,
        }
    }

    /// The header's name, `CUBLASLT_EPILOGUE_GELU_BIAS`.
    pub fn name(self) -> &'static str {
        match self {
            LtEpilogue::Bias => "CUBLASLT_EPILOGUE_BIAS",
            LtEpilogue::ReluBias => "CUBLASLT_EPILOGUE_RELU_BIAS",
            LtEpilogue::GeluBias => "CUBLASLT_EPILOGUE_GELU_BIAS",
        }
    }
}

/// Sets a value attribute (an integer or enum) of a matmul descriptor.
fn set_desc_attr<T: Copy>(
    desc: &Desc,
    attr: sys::cublasLtMatmulDescAttributes_t,
    value: T,
) -> Result<(), BenchError> {
    // SAFETY: `desc` is live; cuBLASLt copies size_of::<T>() bytes from a live local, and
    // refuses a size other than the attribute's own (CUBLAS_STATUS_INVALID_VALUE). No pointer
    // attribute goes through here (those would be dereferenced later).
    unsafe {
        result::set_matmul_desc_attribute(desc.0, attr, (&value as *const T).cast(), size_of::<T>())
    }
    .map_err(lt("cublasLtMatmulDescSetAttribute"))
}

/// Whether cuBLASLt can be loaded (see the module invariants).
#[cfg(not(feature = "dynamic-linking"))]
fn cublaslt_present() -> bool {
    // SAFETY: only tries `dlopen` on the candidate library names; calls nothing in them.
    unsafe { sys::is_culib_present() }
}

/// Whether cuBLASLt can be loaded: always, with the `dynamic-linking` feature, since the
/// program links it.
#[cfg(feature = "dynamic-linking")]
fn cublaslt_present() -> bool {
    true
}

/// A cuBLASLt handle and its workspace, on a runtime's stream.
pub struct CublasLt {
    pub(super) handle: sys::cublasLtHandle_t,
    pub(super) workspace: CudaSlice<u8>,
    pub(super) stream: Arc<CudaStream>,
}

pub(super) fn lt(what: &'static str) -> impl FnOnce(CublasError) -> BenchError {
    move |e| BenchError::Cublas(format!("{what}: {e}"))
}

impl CublasLt {
    /// Opens cuBLASLt on `rt`'s stream. [`BenchError::NoCublas`] when the library is missing.
    pub fn new(rt: &Runtime) -> Result<CublasLt, BenchError> {
        if !cublaslt_present() {
            return Err(BenchError::NoCublas(MISSING.into()));
        }
        rt.context().bind_to_thread().map_err(RuntimeError::from)?;
        let workspace = rt
            .stream()
            .alloc_zeros::<u8>(WORKSPACE_BYTES)
            .map_err(RuntimeError::from)?;
        let handle = result::create_handle().map_err(lt("cublasLtCreate"))?;
        Ok(CublasLt {
            handle,
            workspace,
            stream: rt.stream().clone(),
        })
    }

    /// The library's version, e.g. 130000 for 13.0.0.
    pub fn version(&self) -> usize {
        // SAFETY: the library is loaded (see the module invariants); no arguments.
        unsafe { sys::cublasLtGetVersion() }
    }

    /// Prepares D = A·Bᵀ (B N×K, `BLayout::Tn`) or D = A·B (B K×N, `BLayout::Nn`) for M×N×K
    /// in `types`: descriptors, and the algorithm cuBLASLt's heuristic ranks first for them
    /// within [`WORKSPACE_BYTES`]; see the module docs for how each layout maps onto
    /// column-major cuBLAS.
    pub fn gemm(
        &self,
        shape: (usize, usize, usize),
        b_layout: BLayout,
        types: GemmTypes,
    ) -> Result<LtGemm<'_>, BenchError> {
        self.plan(shape, b_layout, types, None)
    }

    /// Prepares D = epi(A·Bᵀ + bias) for M×N×K, A, B (N×K), bias (N) and D in bf16, f32
    /// accumulation, cuBLASLt's own fused `epilogue`; run it with [`LtGemm::run_epilogue`].
    /// The heuristic chooses with the bias pointer still unset (null: maximally aligned, which
    /// every buffer of the runtime is up to 256 bytes).
    pub fn gemm_epilogue(
        &self,
        shape: (usize, usize, usize),
        epilogue: LtEpilogue,
    ) -> Result<LtGemm<'_>, BenchError> {
        self.plan(shape, BLayout::Tn, GemmTypes::BF16, Some(epilogue))
    }

    fn plan(
        &self,
        (m, n, k): (usize, usize, usize),
        b_layout: BLayout,
        types: GemmTypes,
        epilogue: Option<LtEpilogue>,
    ) -> Result<LtGemm<'_>, BenchError> {
        let (m64, n64, k64) = (m as u64, n as u64, k as u64);
        let layout = |elem, rows, cols, ld| {
            result::create_matrix_layout(data_type(elem), rows, cols, ld)
                .map(Layout)
                .map_err(lt("cublasLtMatrixLayoutCreate"))
        };
        // cuBLAS's A is our B: TN — stored K×N column-major (ld K), transposed; NN — stored
        // N×K column-major (ld N), as is. Its B is our A (K×M, ld K); C = D (N×M, ld N).
        let (a, trans_a) = match b_layout {
            BLayout::Tn => (layout(types.input, k64, n64, k as i64)?, 1i32),
            BLayout::Nn => (layout(types.input, n64, k64, n as i64)?, 0i32),
        };
        let b = layout(types.input, k64, m64, k as i64)?;
        let c = layout(types.output, n64, m64, n as i64)?;
        let desc = result::create_matmul_desc(
            sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            sys::cudaDataType_t::CUDA_R_32F,
        )
        .map(Desc)
        .map_err(lt("cublasLtMatmulDescCreate"))?;
        use sys::cublasLtMatmulDescAttributes_t as Attr;
        // cublasOperation_t (int32): CUBLAS_OP_N = 0, CUBLAS_OP_T = 1.
        set_desc_attr(&desc, Attr::CUBLASLT_MATMUL_DESC_TRANSA, trans_a)?;
        set_desc_attr(&desc, Attr::CUBLASLT_MATMUL_DESC_TRANSB, 0i32)?;
        if let Some(e) = epilogue {
            // cublasLtEpilogue_t as uint32; the bias type as int32 "based on cudaDataType"
            // (cublasLt.h; unset, it would default to D's type, bf16 here too).
            set_desc_attr(&desc, Attr::CUBLASLT_MATMUL_DESC_EPILOGUE, e.sys() as u32)?;
            set_desc_attr(
                &desc,
                Attr::CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                data_type(ElemType::Bf16) as i32,
            )?;
        }
        let pref = result::create_matmul_pref()
            .map(Pref)
            .map_err(lt("cublasLtMatmulPreferenceCreate"))?;
        let ws = WORKSPACE_BYTES;
        // SAFETY: `pref` is live; the attribute is a uint64 byte count.
        unsafe {
            result::set_matmul_pref_attribute(
                pref.0,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&ws as *const usize).cast(),
                size_of::<usize>(),
            )
        }
        .map_err(lt("cublasLtMatmulPreferenceSetAttribute"))?;
        // SAFETY: every descriptor is live and describes this problem.
        let heuristic = unsafe {
            result::get_matmul_algo_heuristic(self.handle, desc.0, a.0, b.0, c.0, c.0, pref.0)
        }
        .map_err(lt(
            "cublasLtMatmulAlgoGetHeuristic (no algorithm for this shape and these types)",
        ))?;
        Ok(LtGemm {
            lt: self,
            shape: (m, n, k),
            b_layout,
            types,
            desc,
            a,
            b,
            c,
            algo: heuristic.algo,
            epilogue,
        })
    }
}

impl Drop for CublasLt {
    fn drop(&mut self) {
        // SAFETY: the handle was created in `new` and is destroyed once; a failure to destroy
        // it at exit is not worth a panic.
        let _ = unsafe { result::destroy_handle(self.handle) };
    }
}

pub(super) struct Layout(pub(super) sys::cublasLtMatrixLayout_t);
pub(super) struct Desc(pub(super) sys::cublasLtMatmulDesc_t);
pub(super) struct Pref(pub(super) sys::cublasLtMatmulPreference_t);

impl Drop for Layout {
    fn drop(&mut self) {
        // SAFETY: created once in `gemm`, destroyed once here.
        let _ = unsafe { result::destroy_matrix_layout(self.0) };
    }
}
impl Drop for Desc {
    fn drop(&mut self) {
        // SAFETY: created once in `gemm`, destroyed once here.
        let _ = unsafe { result::destroy_matmul_desc(self.0) };
    }
}
impl Drop for Pref {
    fn drop(&mut self) {
        // SAFETY: created once in `gemm`, destroyed once here.
        let _ = unsafe { result::destroy_matmul_pref(self.0) };
    }
}

/// D = A·Bᵀ or D = A·B for one shape, ready to run.
pub struct LtGemm<'a> {
    lt: &'a CublasLt,
    shape: (usize, usize, usize),
    b_layout: BLayout,
    types: GemmTypes,
    desc: Desc,
    a: Layout,
    b: Layout,
    c: Layout,
    algo: sys::cublasLtMatmulAlgo_t,
    /// The fused epilogue the descriptor holds, if any.
    epilogue: Option<LtEpilogue>,
}

impl LtGemm<'_> {
    /// Queues D = A·op(B) on the stream (`a` M×K, `b` N×K or K×N by the layout, `d` M×N;
    /// shapes and element types checked first).
    pub fn run<A: Element, D: Element>(
        &self,
        a: &Tensor<A>,
        b: &Tensor<A>,
        d: &mut Tensor<D>,
    ) -> Result<(), BenchError> {
        self.run_scaled(1.0, a, b, 0.0, None, d)
    }

    /// Queues D = α·A·op(B) + β·C on the stream; `c` M×N in D's type (`None`: C is D itself,
    /// which cuBLASLt does not read where β = 0).
    #[allow(clippy::too_many_arguments)]
    pub fn run_scaled<A: Element, D: Element>(
        &self,
        alpha: f32,
        a: &Tensor<A>,
        b: &Tensor<A>,
        beta: f32,
        c: Option<&Tensor<D>>,
        d: &mut Tensor<D>,
    ) -> Result<(), BenchError> {
        if let Some(e) = self.epilogue {
            return Err(BenchError::Cublas(format!(
                "the plan holds the epilogue {}: run it with its bias (run_epilogue)",
                e.name()
            )));
        }
        let (m, n, _) = self.shape;
        self.check::<A, D>(a, b, d)?;
        if let Some(c) = c {
            check_view("c", c.shape(), c.strides(), [m, n])?;
        }
        let s = &self.lt.stream;
        let (pa, _ra) = a.buffer().device_ptr(s);
        let (pb, _rb) = b.buffer().device_ptr(s);
        let c = c.map(|c| c.buffer().device_ptr(s));
        let (pd, _rd) = d.buffer_mut().device_ptr_mut(s);
        let pc = c.as_ref().map_or(pd, |(pc, _)| *pc);
        // SAFETY: the pointers are the buffers of tensors just checked against the plan
        // (shapes, contiguity, element types), alive for the call; C is D or an M×N tensor.
        unsafe { self.matmul(alpha, beta, pa, pb, pc, pd) }
    }

    /// Queues D = epi(A·Bᵀ + bias) on the stream, the plan's fused epilogue
    /// ([`CublasLt::gemm_epilogue`]): `a` M×K, `b` N×K, `bias` N (added per column of `d`),
    /// `d` M×N, all contiguous bf16 (checked first).
    pub fn run_epilogue(
        &self,
        a: &Tensor<bf16>,
        b: &Tensor<bf16>,
        bias: &Tensor<bf16>,
        d: &mut Tensor<bf16>,
    ) -> Result<(), BenchError> {
        if self.epilogue.is_none() {
            return Err(BenchError::Cublas(
                "the plan has no epilogue: run it with run or run_scaled".into(),
            ));
        }
        let n = self.shape.1;
        self.check::<bf16, bf16>(a, b, d)?;
        if bias.shape() != [n] || bias.strides() != [1] {
            return Err(BenchError::Cublas(format!(
                "bias is {:?} with strides {:?}; the plan wants a contiguous [{n}]",
                bias.shape(),
                bias.strides()
            )));
        }
        let s = &self.lt.stream;
        let (pbias, _rbias) = bias.buffer().device_ptr(s);
        // The heuristic chose for an unset (null) pointer; 16 bytes is the widest vector load.
        if pbias % 16 != 0 {
            return Err(BenchError::Cublas(format!(
                "the bias starts at {pbias:#x}, not 16-byte aligned"
            )));
        }
        // SAFETY: `desc` is live; the attribute is a `const void *` to device memory, and
        // `pbias` is the address of N contiguous bf16 (checked above) that stay allocated while
        // the matmul queued below runs (the tensor outlives this call; freeing is stream-ordered).
        unsafe {
            result::set_matmul_desc_attribute(
                self.desc.0,
                sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                (&pbias as *const u64).cast(),
                size_of::<u64>(),
            )
        }
        .map_err(lt("cublasLtMatmulDescSetAttribute"))?;
        let (pa, _ra) = a.buffer().device_ptr(s);
        let (pb, _rb) = b.buffer().device_ptr(s);
        let (pd, _rd) = d.buffer_mut().device_ptr_mut(s);
        // SAFETY: as in `run_scaled`; C is D, not read (β = 0).
        unsafe { self.matmul(1.0, 0.0, pa, pb, pd, pd) }
    }

    /// Checks A, B and D against the plan: element types, shapes, contiguity.
    fn check<A: Element, D: Element>(
        &self,
        a: &Tensor<A>,
        b: &Tensor<A>,
        d: &Tensor<D>,
    ) -> Result<(), BenchError> {
        let (m, n, k) = self.shape;
        if (A::ELEM, D::ELEM) != (self.types.input, self.types.output) {
            return Err(BenchError::Cublas(format!(
                "the plan is for {}, the tensors are {} -> {}",
                self.types,
                A::ELEM.name(),
                D::ELEM.name()
            )));
        }
        check_view("a", a.shape(), a.strides(), [m, k])?;
        check_view("b", b.shape(), b.strides(), self.b_layout.b_shape(m, n, k))?;
        check_view("d", d.shape(), d.strides(), [m, n])
    }

    /// One `cublasLtMatmul` on the stream: cuBLAS's A is our B, its B our A (module docs).
    ///
    /// # Safety
    /// `pa`, `pb`, `pc`, `pd` must be the device addresses of contiguous tensors of the plan's
    /// shapes and element types (A, B, C = D's shape, D), allocated until the work completes.
    unsafe fn matmul(
        &self,
        alpha: f32,
        beta: f32,
        pa: u64,
        pb: u64,
        pc: u64,
        pd: u64,
    ) -> Result<(), BenchError> {
        let lt = self.lt;
        let s = &lt.stream;
        let (pw, _rw) = lt.workspace.device_ptr(s);
        // SAFETY: the descriptors describe exactly these buffers (the caller's contract), the
        // workspace is WORKSPACE_BYTES long, and everything is queued on the stream that owns
        // the buffers.
        unsafe {
            result::matmul(
                lt.handle,
                self.desc.0,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                pb as *const _, // cuBLAS's A: our B
                self.a.0,
                pa as *const _, // cuBLAS's B: our A
                self.b.0,
                pc as *const _,
                self.c.0,
                pd as *mut _,
                self.c.0,
                &self.algo,
                pw as *mut _,
                WORKSPACE_BYTES,
                s.cu_stream() as *mut _,
            )
        }
        .map_err(lt_err)
    }
}

/// A tensor must be contiguous row-major of shape `want`.
fn check_view(
    name: &str,
    shape: &[usize],
    strides: &[usize],
    want: [usize; 2],
) -> Result<(), BenchError> {
    if shape != want || strides != [want[1], 1] {
        return Err(BenchError::Cublas(format!(
            "tensor `{name}` is {shape:?} with strides {strides:?}; the cuBLASLt plan wants a \
             contiguous {want:?}"
        )));
    }
    Ok(())
}

pub(super) fn lt_err(e: CublasError) -> BenchError {
    BenchError::Cublas(format!("cublasLtMatmul: {e}"))
}
