//! cuBLASLt's FP8 GEMM as the baseline of `tirx bench gemm --in e4m3`: row-major D = s ⊙ A·Bᵀ
//! with A (M×K) and B (N×K) in E4M3 or E5M2, D in bf16, f16 or f32, f32 compute and scale
//! type, mapped onto column-major cuBLAS exactly as the 16-bit plan ([`super::cublaslt`]'s
//! module docs: cuBLAS's A is our B used transposed, its B our A) — which is also the only
//! FP8 layout cuBLASLt takes on Hopper ("TN": A transposed, B not; cuBLAS documentation,
//! `cublasLtMatmul`, FP8 requirements).
//!
//! Scales, by device pointer (`CUBLASLT_MATMUL_DESC_A_SCALE_POINTER` = 17, `_B_SCALE_POINTER`
//! = 18, cudarc's bindings of cublasLt.h, CUDA 13):
//! - per tensor ([`LtScales::Tensor`]): one f32 each (`CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F`,
//!   the default mode), D = scale_A·scale_B·(A·B);
//! - row-wise ([`LtScales::Rows`]): `CUBLASLT_MATMUL_DESC_{A,B}_SCALE_MODE` (31, 32) =
//!   `CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F` (3): one f32 per row of op(A) and per column
//!   of op(B), in cuBLAS's terms — with the mapping above, cuBLAS's A scale vector is ours
//!   per row of B (`sb`, length N), its B scale vector ours per row of A (`sa`, length M).
//!   Where the heuristic finds no algorithm (older libraries), the plan fails and the bench
//!   says so;
//! - block-wise ([`LtScales::Blocks`], the DeepSeek-V3 recipe, cuBLASLt 12.9+ on Hopper): our
//!   B's scales per 128×128 block as cuBLAS's A scales (`CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F`,
//!   5) and our A's per 1×128 block as its B scales (`_VEC128_32F`, 4), in the layouts
//!   `torch._scaled_mm` hands cuBLASLt for this recipe (PyTorch `ScaledBlas.cpp`,
//!   `_scaled_block1x128_block128x128`): A's scales K-block-major, `[KB, M]` with M
//!   contiguous (ours `[M, KB]` transposed), B's `[NB, KB']` with KB' = KB rounded up to a
//!   multiple of 4 (ours with each row padded). No fast accumulation here: cuBLASLt promotes
//!   per block as our kernel does (`gemm/fp8_block.rs`). The bench checks cuBLASLt's D
//!   against the f64 reference like ours, so a layout cuBLASLt reads otherwise shows as its
//!   check failing.
//!
//! Accumulation (per-tensor and row-wise), the plan's `fast_accum`:
//! `CUBLASLT_MATMUL_DESC_FAST_ACCUM` (25) = 1, the tensor core's own FP8 accumulation with no
//! promotion to CUDA-core f32 — what our fast configs do (`gemm/fp8.rs`), so both do the same
//! arithmetic (PyTorch: `torch._scaled_mm(..., use_fast_accum=True)`); = 0, cuBLASLt's
//! promoted accumulation (torch's default, `use_fast_accum=False`), the peer of our
//! `promoted*` configs (`Fp8Accum::Promoted`).

use cudarc::cublaslt::result;
use cudarc::cublaslt::sys;
use cudarc::driver::{DevicePtr, DevicePtrMut};
use tirx::abi::ElemType;
use tirx::{Element, Tensor};

use super::BenchError;
use super::cublaslt::{CublasLt, Desc, Layout, Pref, WORKSPACE_BYTES, data_type, lt, lt_err};

/// How cuBLASLt scales its FP8 product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LtScales {
    /// One f32 per tensor.
    Tensor,
    /// One f32 per row of A and per row of B (per column of D).
    Rows,
    /// One f32 per 1×128 block of A and per 128×128 block of B, in cuBLASLt's layouts
    /// ([`LtScales::block_shapes`]).
    Blocks,
}

impl LtScales {
    /// The shapes of cuBLASLt's block scale tensors for M×N×K: A's `[KB, M]` (our `[M, KB]`
    /// transposed) and B's `[NB, KB']`, KB' = KB rounded up to a multiple of 4.
    pub fn block_shapes((m, n, k): (usize, usize, usize)) -> ([usize; 2], [usize; 2]) {
        let kb = k.div_ceil(128);
        ([kb, m], [n.div_ceil(128), kb.div_ceil(4) * 4])
    }
}

/// An FP8 GEMM plan: descriptors and the heuristic's first algorithm.
pub struct LtFp8<'a> {
    lt: &'a CublasLt,
    shape: (usize, usize, usize),
    input: ElemType,
    output: ElemType,
    scales: LtScales,
    desc: Desc,
    a: Layout,
    b: Layout,
    c: Layout,
    algo: sys::cublasLtMatmulAlgo_t,
}

impl CublasLt {
    /// Plans D = s ⊙ A·Bᵀ for M×N×K, A and B of `input` (E4M3/E5M2), D of `output`, with
    /// fast accumulation or not (per-tensor and row-wise; block scales always promote).
    pub fn gemm_fp8(
        &self,
        (m, n, k): (usize, usize, usize),
        input: ElemType,
        output: ElemType,
        scales: LtScales,
        fast_accum: bool,
    ) -> Result<LtFp8<'_>, BenchError> {
        let layout = |elem, rows: usize, cols: usize, ld: usize| {
            result::create_matrix_layout(data_type(elem), rows as u64, cols as u64, ld as i64)
                .map(Layout)
                .map_err(lt("cublasLtMatrixLayoutCreate"))
        };
        let a = layout(input, k, n, k)?;
        let b = layout(input, k, m, k)?;
        let c = layout(output, n, m, n)?;
        let desc = result::create_matmul_desc(
            sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            sys::cudaDataType_t::CUDA_R_32F,
        )
        .map(Desc)
        .map_err(lt("cublasLtMatmulDescCreate"))?;
        use sys::cublasLtMatmulDescAttributes_t as Attr;
        desc.set(Attr::CUBLASLT_MATMUL_DESC_TRANSA, 1i32)?;
        desc.set(Attr::CUBLASLT_MATMUL_DESC_TRANSB, 0i32)?;
        use sys::cublasLtMatmulMatrixScale_t as Scale;
        match scales {
            LtScales::Tensor => {
                desc.set(Attr::CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accum as i8)?
            }
            LtScales::Rows => {
                desc.set(Attr::CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast_accum as i8)?;
                let mode = Scale::CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F as u32;
                desc.set(Attr::CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode)?;
                desc.set(Attr::CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode)?;
            }
            LtScales::Blocks => {
                // cuBLAS's A is our B (128×128 blocks), its B our A (1×128 blocks).
                let (a, b) = (
                    Scale::CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F as u32,
                    Scale::CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F as u32,
                );
                desc.set(Attr::CUBLASLT_MATMUL_DESC_A_SCALE_MODE, a)?;
                desc.set(Attr::CUBLASLT_MATMUL_DESC_B_SCALE_MODE, b)?;
            }
        }
        if scales != LtScales::Tensor {
            // The heuristic refuses a vector or block scale mode whose scale pointers are not
            // set yet (cuBLASLt 13.1's log: "The scaling mode for A scale (BLK128x128_32F)
            // requires a custom pointer for A scale"; measured on an H100, 2026-12-06): it
            // is given the workspace's address, which it does not read; `run` sets the real
            // scales before each matmul.
            let (pw, _rw) = self.workspace.device_ptr(&self.stream);
            // SAFETY: a live device allocation; nothing is queued with it as the scales.
            unsafe {
                desc.set_pointer(Attr::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, pw)?;
                desc.set_pointer(Attr::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, pw)?;
            }
        }
        let pref = Pref::with_workspace()?;
        // SAFETY: every descriptor is live and describes this problem.
        let heuristic = unsafe {
            result::get_matmul_algo_heuristic(self.handle, desc.0, a.0, b.0, c.0, c.0, pref.0)
        }
        .map_err(lt(
            "cublasLtMatmulAlgoGetHeuristic (no FP8 algorithm for this shape, types and scales)",
        ))?;
        Ok(LtFp8 {
            lt: self,
            shape: (m, n, k),
            input,
            output,
            scales,
            desc,
            a,
            b,
            c,
            algo: heuristic.algo,
        })
    }
}

impl LtFp8<'_> {
    /// Queues D = s ⊙ A·Bᵀ: `a` M×K, `b` N×K, `d` M×N; `sa`, `sb` the f32 scales on the
    /// device — one element each ([`LtScales::Tensor`]), M and N ([`LtScales::Rows`]), or
    /// the block scales in cuBLASLt's layouts ([`LtScales::block_shapes`]).
    /// Shapes and types checked first.
    pub fn run<A: Element, D: Element>(
        &self,
        a: &Tensor<A>,
        b: &Tensor<A>,
        (sa, sb): (&Tensor<f32>, &Tensor<f32>),
        d: &mut Tensor<D>,
    ) -> Result<(), BenchError> {
        let (m, n, k) = self.shape;
        let want = |name: &str, got: &[usize], want: &[usize]| {
            if got == want {
                Ok(())
            } else {
                Err(BenchError::Cublas(format!(
                    "`{name}` is {got:?}; the FP8 plan wants {want:?}"
                )))
            }
        };
        if (A::ELEM, D::ELEM) != (self.input, self.output) {
            return Err(BenchError::Cublas(format!(
                "the plan is for {} -> {}, the tensors are {} -> {}",
                self.input.name(),
                self.output.name(),
                A::ELEM.name(),
                D::ELEM.name()
            )));
        }
        want("a", a.shape(), &[m, k])?;
        want("b", b.shape(), &[n, k])?;
        want("d", d.shape(), &[m, n])?;
        match self.scales {
            LtScales::Tensor => {
                want("sa", sa.shape(), &[1])?;
                want("sb", sb.shape(), &[1])?;
            }
            LtScales::Rows => {
                want("sa", sa.shape(), &[m])?;
                want("sb", sb.shape(), &[n])?;
            }
            LtScales::Blocks => {
                let (la, lb) = LtScales::block_shapes((m, n, k));
                want("sa", sa.shape(), &la)?;
                want("sb", sb.shape(), &lb)?;
            }
        }
        let s = &self.lt.stream;
        let (pa, _ra) = a.buffer().device_ptr(s);
        let (pb, _rb) = b.buffer().device_ptr(s);
        let (psa, _rsa) = sa.buffer().device_ptr(s);
        let (psb, _rsb) = sb.buffer().device_ptr(s);
        let (pd, _rd) = d.buffer_mut().device_ptr_mut(s);
        use sys::cublasLtMatmulDescAttributes_t as Attr;
        // cuBLAS's A is our B, its B our A (module docs). SAFETY (of `set_pointer`): the
        // addresses are of f32 buffers of the lengths checked above, alive until the queued
        // matmul has run (the tensors outlive this call; freeing is stream-ordered).
        unsafe {
            self.desc
                .set_pointer(Attr::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, psb)?;
            self.desc
                .set_pointer(Attr::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, psa)?;
        }
        let (alpha, beta) = (1f32, 0f32);
        let (pw, _rw) = self.lt.workspace.device_ptr(s);
        // SAFETY: the descriptors describe exactly these buffers (checked above), C is D and
        // not read (β = 0), the workspace is WORKSPACE_BYTES long, and everything is queued on
        // the stream that owns the buffers.
        unsafe {
            result::matmul(
                self.lt.handle,
                self.desc.0,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                pb as *const _,
                self.a.0,
                pa as *const _,
                self.b.0,
                pd as *const _,
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

impl Desc {
    /// Sets a value attribute (an integer or enum) of the matmul descriptor.
    fn set<T: Copy>(
        &self,
        attr: sys::cublasLtMatmulDescAttributes_t,
        value: T,
    ) -> Result<(), BenchError> {
        // SAFETY: the descriptor is live; cuBLASLt copies size_of::<T>() bytes from a live
        // local and refuses a size other than the attribute's own. No pointer attribute goes
        // through here.
        unsafe {
            result::set_matmul_desc_attribute(
                self.0,
                attr,
                (&value as *const T).cast(),
                size_of::<T>(),
            )
        }
        .map_err(lt("cublasLtMatmulDescSetAttribute"))
    }

    /// Sets a device-pointer attribute (`const void *`) of the matmul descriptor.
    ///
    /// # Safety
    /// `ptr` must be a device address of the data the attribute names, allocated until every
    /// matmul queued with this descriptor has run.
    unsafe fn set_pointer(
        &self,
        attr: sys::cublasLtMatmulDescAttributes_t,
        ptr: u64,
    ) -> Result<(), BenchError> {
        // SAFETY: the descriptor is live; the attribute is an 8-byte pointer, copied from a
        // live local; what it points to is the caller's contract.
        unsafe {
            result::set_matmul_desc_attribute(
                self.0,
                attr,
                (&ptr as *const u64).cast(),
                size_of::<u64>(),
            )
        }
        .map_err(lt("cublasLtMatmulDescSetAttribute"))
    }
}

impl Pref {
    /// A preference allowing [`WORKSPACE_BYTES`] of workspace.
    fn with_workspace() -> Result<Pref, BenchError> {
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
        Ok(pref)
    }
}
