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
//!   so a timed [`LtGemm::run`] is one `cublasLtMatmul` call, nothing else on the host.
//! - All work goes to the runtime's one stream.

use std::sync::Arc;

use cudarc::cublaslt::result::{self, CublasError};
use cudarc::cublaslt::sys;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use tirx::abi::ElemType;
use tirx::{Element, Runtime, RuntimeError, Tensor};

use super::BenchError;
use crate::registry::{BLayout, GemmTypes};

/// cuBLAS's name for an element type.
fn data_type(e: ElemType) -> sys::cudaDataType_t {
    match e {
        ElemType::Bf16 => sys::cudaDataType_t::CUDA_R_16BF,
        ElemType::F16 => sys::cudaDataType_t::CUDA_R_16F,
        ElemType::F32 => sys::cudaDataType_t::CUDA_R_32F,
    }
}

/// Workspace cuBLASLt may use: NVIDIA recommends 32 MiB on Hopper.
pub const WORKSPACE_BYTES: usize = 32 << 20;

/// What to tell a user whose machine lacks the library.
pub const MISSING: &str = "libcublasLt.so could not be loaded; it ships with the CUDA toolkit \
    (e.g. /usr/local/cuda/lib64): run with LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH";

/// A cuBLASLt handle and its workspace, on a runtime's stream.
pub struct CublasLt {
    handle: sys::cublasLtHandle_t,
    workspace: CudaSlice<u8>,
    stream: Arc<CudaStream>,
}

fn lt(what: &'static str) -> impl FnOnce(CublasError) -> BenchError {
    move |e| BenchError::Cublas(format!("{what}: {e}"))
}

impl CublasLt {
    /// Opens cuBLASLt on `rt`'s stream. [`BenchError::NoCublas`] when the library is missing.
    pub fn new(rt: &Runtime) -> Result<CublasLt, BenchError> {
        // SAFETY: only tries `dlopen` on the candidate library names; calls nothing in them.
        if !unsafe { sys::is_culib_present() } {
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
        (m, n, k): (usize, usize, usize),
        b_layout: BLayout,
        types: GemmTypes,
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
        // cublasOperation_t: CUBLAS_OP_N = 0, CUBLAS_OP_T = 1.
        for (attr, op) in [
            (
                sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                trans_a,
            ),
            (
                sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSB,
                0i32,
            ),
        ] {
            // SAFETY: `desc` is live; the attribute is an int32 cublasOperation_t.
            unsafe {
                result::set_matmul_desc_attribute(desc.0, attr, (&op as *const i32).cast(), 4)
            }
            .map_err(lt("cublasLtMatmulDescSetAttribute"))?;
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

struct Layout(sys::cublasLtMatrixLayout_t);
struct Desc(sys::cublasLtMatmulDesc_t);
struct Pref(sys::cublasLtMatmulPreference_t);

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
        let (m, n, k) = self.shape;
        if (A::ELEM, D::ELEM) != (self.types.input, self.types.output) {
            return Err(BenchError::Cublas(format!(
                "the plan is for {}, the tensors are {} -> {}",
                self.types,
                A::ELEM.name(),
                D::ELEM.name()
            )));
        }
        let views = [("a", a.shape(), a.strides(), [m, k])]
            .into_iter()
            .chain([("b", b.shape(), b.strides(), self.b_layout.b_shape(m, n, k))])
            .chain([("d", d.shape(), d.strides(), [m, n])])
            .chain(c.map(|c| ("c", c.shape(), c.strides(), [m, n])));
        for (name, shape, strides, want) in views {
            if shape != want || strides != [want[1], 1] {
                return Err(BenchError::Cublas(format!(
                    "tensor `{name}` is {shape:?} with strides {strides:?}; the cuBLASLt plan \
                     wants a contiguous {want:?}"
                )));
            }
        }
        let lt = self.lt;
        let s = &lt.stream;
        let (pa, _ra) = a.buffer().device_ptr(s);
        let (pb, _rb) = b.buffer().device_ptr(s);
        let c = c.map(|c| c.buffer().device_ptr(s));
        let (pd, _rd) = d.buffer_mut().device_ptr_mut(s);
        let pc = c.as_ref().map_or(pd, |(pc, _)| *pc);
        let (pw, _rw) = lt.workspace.device_ptr(s);
        // SAFETY: the descriptors describe exactly these buffers (shapes checked above, all
        // contiguous row-major), the workspace is WORKSPACE_BYTES long, and everything is
        // queued on the stream that owns the buffers.
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

fn lt_err(e: CublasError) -> BenchError {
    BenchError::Cublas(format!("cublasLtMatmul: {e}"))
}
