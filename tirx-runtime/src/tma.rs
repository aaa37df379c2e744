//! TMA descriptors: validation of a tiled box against a tensor (pure) and encoding through
//! `cuTensorMapEncodeTiled` (CUDA Driver API §6.30, "Tensor Map Object Management").
//!
//! Invariants:
//! - [`validate_tiled`] accepts exactly what the encoder is documented to accept for our fixed
//!   options (interleave none, element strides 1), so a validated tensor encodes unless the
//!   driver itself fails; the checks run first because the driver answers only
//!   `CUDA_ERROR_INVALID_VALUE`.
//! - [`TmaEncoding`] lists dimensions innermost first, as the driver takes them; tirx shapes and
//!   strides are outermost first everywhere else.
//! - The encoded [`TensorMap`] is the 128-byte, 128-aligned CUDA 13 `CUtensorMap`; the kernel
//!   takes it by value as `.param .align 64 .b8 [128]` (DESIGN.md §6).

use cudarc::driver::sys;
use tirx_ir::abi::{ElemType, Swizzle};

use crate::device::Runtime;
use crate::error::{RuntimeError, TmaReason};
use crate::plan::TensorMeta;

/// Largest box extent per dimension.
pub const MAX_BOX_EXTENT: u32 = 256;
/// Largest tensor rank a tiled descriptor takes.
pub const MAX_RANK: usize = 5;

/// An encoded TMA descriptor (`CUtensorMap`, 128 bytes).
#[derive(Clone, Copy, Debug)]
pub struct TensorMap(pub sys::CUtensorMap);

impl TensorMap {
    /// The descriptor's 128 bytes, as passed in the kernel's parameter buffer.
    pub fn as_bytes(&self) -> [u8; 128] {
        let mut out = [0u8; 128];
        for (chunk, word) in out.chunks_exact_mut(8).zip(self.0.opaque.iter()) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        out
    }
}

/// The arguments of `cuTensorMapEncodeTiled` other than the fixed options, innermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmaEncoding {
    /// `globalDim`: extents, innermost first.
    pub dims: Vec<u64>,
    /// `globalStrides`: strides in bytes of dimensions 1.. (innermost first; the innermost
    /// stride is implied by the element size).
    pub strides_bytes: Vec<u64>,
    /// `boxDim`, innermost first.
    pub box_dims: Vec<u32>,
    /// `elementStrides`: all 1.
    pub element_strides: Vec<u32>,
}

/// Checks that `meta` with a box of `box_dims` (innermost first) and `swizzle` is a valid tiled
/// TMA descriptor, naming `tensor` in the error.
pub fn validate_tiled(
    tensor: &str,
    meta: &TensorMeta,
    box_dims: &[u32],
    swizzle: Swizzle,
) -> Result<(), RuntimeError> {
    let box_err = |reason| RuntimeError::TmaBox {
        tensor: tensor.to_string(),
        reason,
    };
    let rank = meta.shape.len();
    if !(1..=MAX_RANK).contains(&rank) || meta.strides.len() != rank {
        return Err(box_err(TmaReason::Rank { rank }));
    }
    if box_dims.len() != rank {
        return Err(box_err(TmaReason::BoxRank {
            box_rank: box_dims.len(),
            rank,
        }));
    }
    if let Some((dim, &extent)) = box_dims
        .iter()
        .enumerate()
        .find(|(_, e)| !(1..=MAX_BOX_EXTENT).contains(e))
    {
        return Err(box_err(TmaReason::BoxExtent { dim, extent }));
    }
    let elem_bytes = meta.elem.bytes();
    let inner_bytes = box_dims[0] * elem_bytes;
    if !inner_bytes.is_multiple_of(16) {
        return Err(box_err(TmaReason::InnerBoxNotMultipleOf16 {
            bytes: inner_bytes,
        }));
    }
    if let Some(span) = swizzle.span_bytes()
        && inner_bytes > span
    {
        return Err(box_err(TmaReason::InnerBoxExceedsSwizzle {
            bytes: inner_bytes,
            swizzle,
            span,
        }));
    }
    if let Some((dim, &extent)) = meta
        .shape
        .iter()
        .enumerate()
        .find(|(_, e)| **e == 0 || **e as u64 > 1 << 32)
    {
        return Err(box_err(TmaReason::Extent {
            dim,
            extent: extent as u64,
        }));
    }
    if !meta.addr.is_multiple_of(16) {
        return Err(RuntimeError::BaseMisaligned {
            tensor: tensor.to_string(),
            addr: meta.addr,
            align: 16,
        });
    }
    if meta.strides[rank - 1] != 1 {
        return Err(RuntimeError::NotContiguous {
            tensor: tensor.to_string(),
            stride: meta.strides[rank - 1] as u64,
        });
    }
    for (dim, &stride) in meta.strides[..rank - 1].iter().enumerate() {
        let stride_bytes = stride as u64 * u64::from(elem_bytes);
        if !stride_bytes.is_multiple_of(16) {
            return Err(RuntimeError::StrideMisaligned {
                tensor: tensor.to_string(),
                dim,
                stride_bytes,
            });
        }
        if stride_bytes >= 1 << 40 {
            return Err(box_err(TmaReason::StrideTooLarge { dim, stride_bytes }));
        }
    }
    Ok(())
}

/// The encoder's arguments for a validated tensor and box (see [`validate_tiled`]).
pub fn tiled_encoding(meta: &TensorMeta, box_dims: &[u32]) -> TmaEncoding {
    let elem_bytes = u64::from(meta.elem.bytes());
    let rank = meta.shape.len();
    TmaEncoding {
        dims: meta.shape.iter().rev().map(|&e| e as u64).collect(),
        strides_bytes: meta.strides[..rank.saturating_sub(1)]
            .iter()
            .rev()
            .map(|&s| s as u64 * elem_bytes)
            .collect(),
        box_dims: box_dims.to_vec(),
        element_strides: vec![1; rank],
    }
}

fn data_type(elem: ElemType) -> sys::CUtensorMapDataType {
    match elem {
        ElemType::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        ElemType::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        ElemType::F32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        // 8-bit floats move as bytes (no FP8 data type is needed to copy them).
        // The padded 6-/4-bit images too: global memory holds the image the MMA reads (the
        // unpacking TMA types `16U6_ALIGN16B` / `16U4_ALIGN16B` are not used).
        ElemType::E4m3
        | ElemType::E5m2
        | ElemType::Ue8m0
        | ElemType::E2m1x2
        | ElemType::Ue4m3
        | ElemType::E3m2
        | ElemType::E2m3
        | ElemType::E2m1
        | ElemType::I8
        | ElemType::U8 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        ElemType::I32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_INT32,
        ElemType::U32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT32,
        ElemType::I64 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_INT64,
        ElemType::U64 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT64,
    }
}

fn swizzle_mode(swizzle: Swizzle) -> sys::CUtensorMapSwizzle {
    match swizzle {
        Swizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        Swizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        Swizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        Swizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
    }
}

impl Runtime {
    /// Encodes a tiled TMA descriptor for `meta` (named `tensor` in errors) with a box of
    /// `box_dims_inner_first` and `swizzle`: interleave none, element strides 1, L2 promotion
    /// 256 B, out-of-bounds elements read as zero. Validates first ([`validate_tiled`]).
    ///
    /// A method of [`Runtime`] because it calls the driver, which a `Runtime` proves is loaded.
    pub fn encode_tiled(
        &self,
        tensor: &str,
        meta: &TensorMeta,
        box_dims_inner_first: &[u32],
        swizzle: Swizzle,
    ) -> Result<TensorMap, RuntimeError> {
        validate_tiled(tensor, meta, box_dims_inner_first, swizzle)?;
        let enc = tiled_encoding(meta, box_dims_inner_first);
        let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
        // SAFETY: the driver is loaded (a `Runtime` exists); every array holds `rank` entries
        // (`rank - 1` for the strides) as the call requires, and `map` is a properly aligned
        // CUtensorMap the driver writes in full on success.
        let map = unsafe {
            sys::cuTensorMapEncodeTiled(
                map.as_mut_ptr(),
                data_type(meta.elem),
                enc.dims.len() as u32,
                meta.addr as *mut std::ffi::c_void,
                enc.dims.as_ptr(),
                enc.strides_bytes.as_ptr(),
                enc.box_dims.as_ptr(),
                enc.element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle_mode(swizzle),
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
            .result()?;
            map.assume_init()
        };
        Ok(TensorMap(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bf16(shape: &[usize]) -> TensorMeta {
        TensorMeta::row_major(ElemType::Bf16, shape, 0x7f00_0000_0000)
    }

    fn reason(r: Result<(), RuntimeError>) -> TmaReason {
        match r {
            Err(RuntimeError::TmaBox { reason, .. }) => reason,
            other => panic!("expected a TmaBox error, got {other:?}"),
        }
    }

    #[test]
    fn accepts_the_gemm_boxes() {
        let a = bf16(&[4096, 4096]);
        validate_tiled("a", &a, &[64, 128], Swizzle::B128).unwrap();
        validate_tiled("a", &a, &[8, 256], Swizzle::None).unwrap();
        let f = TensorMeta::row_major(ElemType::F32, &[128, 32], 0x1000);
        validate_tiled("f", &f, &[32, 128], Swizzle::B128).unwrap();
    }

    #[test]
    fn rejects_rank_and_box_rank() {
        let t = bf16(&[2, 2, 2, 2, 2, 8]);
        assert_eq!(
            reason(validate_tiled("t", &t, &[8; 6], Swizzle::None)),
            TmaReason::Rank { rank: 6 }
        );
        let a = bf16(&[64, 64]);
        assert_eq!(
            reason(validate_tiled("a", &a, &[64], Swizzle::None)),
            TmaReason::BoxRank {
                box_rank: 1,
                rank: 2
            }
        );
    }

    #[test]
    fn rejects_box_extent_over_256_and_zero() {
        let a = bf16(&[1024, 1024]);
        assert_eq!(
            reason(validate_tiled("a", &a, &[64, 257], Swizzle::B128)),
            TmaReason::BoxExtent {
                dim: 1,
                extent: 257
            }
        );
        assert_eq!(
            reason(validate_tiled("a", &a, &[0, 8], Swizzle::None)),
            TmaReason::BoxExtent { dim: 0, extent: 0 }
        );
    }

    #[test]
    fn rejects_inner_box_wider_than_swizzle() {
        // 128 bf16 = 256 B under 128B swizzle: the encoder's own rejection (DESIGN.md §6).
        let a = bf16(&[1024, 1024]);
        let err = validate_tiled("a", &a, &[128, 64], Swizzle::B128);
        assert_eq!(
            reason(err),
            TmaReason::InnerBoxExceedsSwizzle {
                bytes: 256,
                swizzle: Swizzle::B128,
                span: 128
            }
        );
        let err = validate_tiled("a", &a, &[32, 64], Swizzle::B32).unwrap_err();
        assert_eq!(
            err.to_string(),
            "TMA descriptor for tensor `a`: the inner box row is 64 bytes, wider than the B32 \
             swizzle span of 32 bytes"
        );
    }

    #[test]
    fn rejects_inner_box_not_multiple_of_16_bytes() {
        let a = bf16(&[64, 64]);
        assert_eq!(
            reason(validate_tiled("a", &a, &[4, 8], Swizzle::None)),
            TmaReason::InnerBoxNotMultipleOf16 { bytes: 8 }
        );
    }

    #[test]
    fn rejects_misaligned_base_and_strides() {
        let mut a = bf16(&[64, 64]);
        a.addr += 8;
        assert!(matches!(
            validate_tiled("a", &a, &[64, 64], Swizzle::B128),
            Err(RuntimeError::BaseMisaligned { addr, align: 16, .. }) if addr % 16 == 8
        ));
        // 100 bf16 rows: 200 bytes, not a multiple of 16.
        let mut p = bf16(&[64, 100]);
        p.strides = vec![100, 1];
        let err = validate_tiled("p", &p, &[64, 64], Swizzle::B128).unwrap_err();
        assert!(matches!(
            err,
            RuntimeError::StrideMisaligned {
                dim: 0,
                stride_bytes: 200,
                ..
            }
        ));
        assert!(
            err.to_string()
                .contains("tensor `p` dim 0 has a stride of 200 bytes")
        );
        // Padded to 104: 208 bytes, fine.
        p.strides = vec![104, 1];
        validate_tiled("p", &p, &[64, 64], Swizzle::B128).unwrap();
    }

    #[test]
    fn rejects_non_contiguous_and_huge_strides() {
        let mut a = bf16(&[64, 64]);
        a.strides = vec![128, 2];
        assert!(matches!(
            validate_tiled("a", &a, &[64, 64], Swizzle::B128),
            Err(RuntimeError::NotContiguous { stride: 2, .. })
        ));
        a.strides = vec![1 << 40, 1];
        assert_eq!(
            reason(validate_tiled("a", &a, &[64, 64], Swizzle::B128)),
            TmaReason::StrideTooLarge {
                dim: 0,
                stride_bytes: 1 << 41
            }
        );
    }

    #[test]
    fn encoding_is_innermost_first_in_bytes() {
        let mut m = TensorMeta::row_major(ElemType::F16, &[3, 40, 72], 0x2000);
        m.strides = vec![40 * 80, 80, 1];
        validate_tiled("m", &m, &[64, 32, 1], Swizzle::B128).unwrap();
        let enc = tiled_encoding(&m, &[64, 32, 1]);
        assert_eq!(enc.dims, vec![72, 40, 3]);
        assert_eq!(enc.strides_bytes, vec![160, 40 * 80 * 2]);
        assert_eq!(enc.box_dims, vec![64, 32, 1]);
        assert_eq!(enc.element_strides, vec![1, 1, 1]);
    }

    #[test]
    fn tensor_map_is_the_cuda13_layout() {
        assert_eq!(std::mem::size_of::<sys::CUtensorMap>(), 128);
        assert_eq!(std::mem::align_of::<sys::CUtensorMap>(), 128);
        let mut raw = sys::CUtensorMap { opaque: [0; 16] };
        raw.opaque[1] = 0x0102_0304_0506_0708;
        let bytes = TensorMap(raw).as_bytes();
        assert_eq!(&bytes[8..16], &0x0102_0304_0506_0708u64.to_ne_bytes());
    }
}
