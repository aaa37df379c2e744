//! Hopper `wgmma.mma_async`: the 64-bit shared-memory matrix descriptor, the LBO/SBO of a
//! K-major or an MN-major operand tile written by TMA, and the legal instruction shapes.
//!
//! Descriptor layout — PTX ISA 9.x §9.7.15.5.1.2.2 "Matrix Descriptor Format" (wgmma section):
//!
//! | bits  | width | field                                                        |
//! |-------|-------|--------------------------------------------------------------|
//! | 0-13  | 14    | matrix-descriptor-encode(matrix start address)               |
//! | 16-29 | 14    | matrix-descriptor-encode(leading dimension byte offset, LBO) |
//! | 32-45 | 14    | matrix-descriptor-encode(stride dimension byte offset, SBO)  |
//! | 49-51 | 3     | matrix base offset (not valid with no-swizzle)               |
//! | 62-63 | 2     | swizzle: 0 none, 1 = 128B, 2 = 64B, 3 = 32B                  |
//!
//! with `matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4`; all other bits are zero. The same
//! positions appear in CUTLASS's `GmmaDescriptor` (`cute/arch/mma_sm90_desc.hpp`, whose
//! `LayoutType` is `INTERLEAVE = 0, B128 = 1, B64 = 2, B32 = 3`).
//!
//! Invariants: [`SmemDesc`] holds byte values; encoding divides by 16 and refuses values that are
//! misaligned or do not fit (≥ 256 KiB), instead of letting them wrap as the hardware would.

use super::{EncodeError, check_max, matrix_descriptor_encode};
use crate::abi::{ElemType, Swizzle};

/// Mask of the start-address field (bits 0-13), in which generated code places the runtime
/// `(smem_addr >> 4)` of an operand (see [`desc_const_part`]).
pub const START_ADDR_MASK: u64 = 0x3FFF;

/// A `wgmma` shared-memory matrix descriptor, in bytes (before encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SmemDesc {
    /// Shared-memory (`.shared::cta` window) byte address of the operand tile; 16-byte aligned,
    /// below 256 KiB.
    pub start_addr: u32,
    /// Leading dimension byte offset: K-major no-swizzle — distance between the two core
    /// matrices adjacent in K; K-major swizzled — unused, conventionally 16 (encodes as 1);
    /// MN-major — see PTX ISA §9.7.15.5.1.2 "Shared Memory Matrix Layout". 16-byte aligned.
    pub lbo: u32,
    /// Stride dimension byte offset: the distance between consecutive groups of 8 rows (core
    /// matrices adjacent in M or N) for K-major tiles. 16-byte aligned.
    pub sbo: u32,
    /// Matrix base offset (0-7): 0 when the swizzle pattern starts at the mode's repeat boundary
    /// (1024/512/256 B for 128B/64B/32B), else `(pattern start address >> 7) & 7`.
    pub base_offset: u8,
    /// Swizzle mode the tile was written with (must match the TMA box's).
    pub swizzle: Swizzle,
}

/// The 2-bit swizzle code of bits 62-63 (PTX ISA §9.7.15.5.1.2.2).
pub fn swizzle_code(sw: Swizzle) -> u64 {
    match sw {
        Swizzle::None => 0,
        Swizzle::B128 => 1,
        Swizzle::B64 => 2,
        Swizzle::B32 => 3,
    }
}

impl SmemDesc {
    /// Encodes the 64-bit descriptor.
    ///
    /// Errors: start address, LBO or SBO not 16-byte aligned ([`EncodeError::Misaligned`]) or
    /// ≥ 256 KiB, base offset > 7 ([`EncodeError::Overflow`]), or a non-zero base offset without
    /// swizzle ([`EncodeError::Unsupported`]: the ISA defines it for swizzled modes only).
    pub fn encode_wgmma(&self) -> Result<u64, EncodeError> {
        let start = matrix_descriptor_encode("start address", self.start_addr)?;
        Ok(self.const_bits()? | start)
    }

    /// Every field but the start address, encoded.
    fn const_bits(&self) -> Result<u64, EncodeError> {
        let lbo = matrix_descriptor_encode("leading dimension byte offset", self.lbo)?;
        let sbo = matrix_descriptor_encode("stride dimension byte offset", self.sbo)?;
        check_max("base offset", u64::from(self.base_offset), 7)?;
        if self.base_offset != 0 && self.swizzle == Swizzle::None {
            return Err(EncodeError::Unsupported(
                "a wgmma base offset is only defined for swizzled layouts".into(),
            ));
        }
        Ok((lbo << 16)
            | (sbo << 32)
            | (u64::from(self.base_offset) << 49)
            | (swizzle_code(self.swizzle) << 62))
    }
}

/// The descriptor with start address 0: everything known at compile time.
///
/// Contract with generated code: the full descriptor of an operand at shared address `addr` is
/// `desc_const_part(..) | ((addr >> 4) & START_ADDR_MASK)` — bits 0-13 of the constant are zero,
/// so OR and ADD give the same result. The caller guarantees what [`SmemDesc::encode_wgmma`]
/// checks: `addr` is 16-byte aligned and below 256 KiB (so `addr >> 4` fits in 14 bits and does
/// not carry into the LBO field). Advancing an operand by `d` bytes along K inside one swizzle
/// atom is likewise `desc + (d >> 4)`, as CUTLASS's `DescriptorIterator` does, under the same
/// no-carry condition.
pub fn desc_const_part(
    lbo: u32,
    sbo: u32,
    base_offset: u8,
    swizzle: Swizzle,
) -> Result<u64, EncodeError> {
    SmemDesc {
        start_addr: 0,
        lbo,
        sbo,
        base_offset,
        swizzle,
    }
    .const_bits()
}

/// (LBO, SBO) in bytes for a K-major operand tile laid out the way TMA writes a box with
/// `swizzle`: rows of `span` bytes (`swizzle.span_bytes()`, the box's inner extent), one M/N row
/// after another, so 8 consecutive rows form one swizzle atom.
///
/// - SBO = 8 rows × span: the distance between core-matrix groups adjacent in M/N (1024 B for
///   128B swizzle).
/// - LBO = 16 (encoded 1): K-major swizzled layouts do not use it; the ISA says it is "assumed
///   to be 1" (PTX ISA §9.7.16.3.1.1, the tcgen05 statement of the same layout rule), and
///   CUTLASS's `make_gmma_desc<Major::K>` (`cute/atom/mma_traits_sm90_gmma.hpp`) derives it as
///   the stride 1 (in 16-byte units) of the canonical layout `Swizzle<3,4,3> o ((8,n),2):((8,SBO),1)`.
///   For K-major SW128 bf16 that function yields leading_byte_offset 1 and stride_byte_offset 64
///   (= 1024 B), the values this returns.
///
/// The result is the same for every element size (the layout is defined in 16-byte units and
/// one MMA K-step is 32 bytes, which every span covers); `elem_bytes` is checked to be an
/// operand size the MMAs take (1, 2 or 4).
///
/// Errors: [`EncodeError::Unsupported`] without swizzle — a TMA box written without swizzle is
/// not in core-matrix order unless its inner extent is 16 bytes, and its LBO then depends on the
/// tile's row count, which this function does not take.
pub fn kmajor_desc_fields(swizzle: Swizzle, elem_bytes: u32) -> Result<(u32, u32), EncodeError> {
    if !matches!(elem_bytes, 1 | 2 | 4) {
        return Err(EncodeError::Types(format!(
            "{elem_bytes}-byte MMA operands"
        )));
    }
    match swizzle.span_bytes() {
        Some(span) => Ok((16, 8 * span)),
        None => Err(EncodeError::Unsupported(
            "K-major operand without swizzle: LBO depends on the tile's rows; use a swizzled layout"
                .into(),
        )),
    }
}

/// (LBO, SBO) in bytes for an MN-major (transposed, `imm-trans = 1`) 16-bit operand tile laid
/// out as `[MN/atom chunks][k_rows][atom]`: each chunk is one TMA box of `atom` MN-elements
/// (one swizzle span: 64 bf16/f16 for 128B) by `k_rows` K-rows, rows of `span` bytes, chunks
/// one after another.
///
/// PTX ISA 9.x §9.7.15.5.1.2.1 "Majorness supported by strides", for matrices normalized to
/// 128-bit elements:
/// - §9.7.15.5.1.2.1.1 Leading Dimension Byte Offset, MN-major swizzled: "offset from the
///   first (swizzle-byte-size/16) rows to the next (swizzle-byte-size/16) rows" — a "row" of
///   the normalized MN-major matrix is one 16-byte unit along MN, so (span/16) of them make one
///   span of MN elements: LBO is the distance between chunks adjacent in MN,
///   `k_rows × span` bytes here.
/// - §9.7.15.5.1.2.1.2 Stride Dimension Byte Offset, MN-major swizzled: "offset from the first
///   8 columns to the next 8 columns" — columns run along K, so SBO is the distance between
///   groups of 8 K-rows: `8 × span` (1024 B for 128B swizzle, one swizzle atom).
///
/// CUTLASS states the same canonical form for `make_gmma_desc<Major::MN>`
/// (`cute/atom/mma_traits_sm90_gmma.hpp`): for B128, in 16-byte units,
/// `Swizzle<3,4,3> o ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))` — `m` (atoms along MN) strided by
/// LBO, `k` (8-row groups along K) strided by SBO.
///
/// Errors: [`EncodeError::Types`] for operands other than 16-bit (the transpose exists only for
/// the `.f16`/`.bf16` variants, PTX ISA §9.7.15.5.2 "wgmma.mma_async" description);
/// [`EncodeError::Unsupported`] without swizzle (the interleaved MN-major form has a different
/// atom, not produced here) or when `k_rows` is not a whole number of 8-row groups.
pub fn mn_major_desc_fields(
    swizzle: Swizzle,
    elem_bytes: u32,
    k_rows: u32,
) -> Result<(u32, u32), EncodeError> {
    if elem_bytes != 2 {
        return Err(EncodeError::Types(format!(
            "{elem_bytes}-byte MN-major operands (wgmma transposes f16/bf16 only)"
        )));
    }
    let Some(span) = swizzle.span_bytes() else {
        return Err(EncodeError::Unsupported(
            "MN-major operand without swizzle: use a swizzled layout".into(),
        ));
    };
    if k_rows == 0 || !k_rows.is_multiple_of(8) {
        return Err(EncodeError::Unsupported(format!(
            "MN-major operand with {k_rows} K-rows per chunk: a multiple of 8 is needed"
        )));
    }
    Ok((k_rows * span, 8 * span))
}

/// Bytes the start address of an MN-major operand advances per `k` elements of K: `k` rows of
/// one swizzle span each (K-rows are the outer dimension of a chunk). For bf16 with 128B
/// swizzle and one wgmma K-step of 16, 16 × 128 = 2048 B = two 1024-byte 8-row groups, so the
/// start stays on a swizzle-atom boundary and the base offset stays 0 (PTX ISA
/// §9.7.15.5.1.2.2, "matrix base offset").
pub fn mn_major_k_advance(swizzle: Swizzle, k: u32) -> Option<u32> {
    swizzle.span_bytes().map(|span| k * span)
}

/// A `wgmma.mma_async` shape that does not exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WgmmaShapeError {
    /// No dense variant takes operands of this type.
    #[error("wgmma has no dense {} variant here", .0.name())]
    Elem(ElemType),
    /// M other than 64.
    #[error("wgmma has M = 64 only, not M = {0}")]
    M(u32),
    /// K other than the operand type's.
    #[error("wgmma with {} operands has K = {want}, not K = {k}", .elem.name())]
    K {
        /// The operands' type.
        elem: ElemType,
        /// Its K.
        want: u32,
        /// The K asked for.
        k: u32,
    },
    /// N outside the multiples of 8 in 8..=256.
    #[error("wgmma N must be a multiple of 8 in 8..=256, not N = {0}")]
    N(u32),
}

/// K of one `wgmma.mma_async` for dense operands of type `a` (PTX ISA §9.7.15.5.2, the
/// `.shape` list of each type): 16 for `.f16`/`.bf16`, 8 for `.tf32`, 32 for `.e4m3`/`.e5m2` —
/// always 32 bytes of an operand row.
pub fn wgmma_k(a: ElemType) -> Option<u32> {
    Some(match a {
        ElemType::F16 | ElemType::Bf16 => 16,
        ElemType::F32 => 8,
        ElemType::E4m3 | ElemType::E5m2 => 32,
        // Scale factors, FP6/FP4 and integers are no wgmma operand type here.
        ElemType::Ue8m0
        | ElemType::Ue4m3
        | ElemType::E2m1x2
        | ElemType::E3m2
        | ElemType::E2m3
        | ElemType::E2m1
        | ElemType::I8
        | ElemType::U8
        | ElemType::I32
        | ElemType::U32
        | ElemType::I64
        | ElemType::U64 => {
            return None;
        }
    })
}

/// Checks a `wgmma.mma_async` shape `m64nNkK` for dense A/B of element type `a`
/// (PTX ISA §9.7.15.5.2 "wgmma.mma_async", `.shape` lists; §9.7.15.2 "Matrix Shape"):
/// M = 64 always; K = 16 for `.f16`/`.bf16`, K = 8 for `.tf32` (written `ElemType::F32` here),
/// K = 32 for `.e4m3`/`.e5m2` (the FP8 shapes `.m64nNk32`); N a multiple of 8 in 8..=256.
pub fn wgmma_shape_ok(m: u32, n: u32, k: u32, a: ElemType) -> Result<(), WgmmaShapeError> {
    let want_k = wgmma_k(a).ok_or(WgmmaShapeError::Elem(a))?;
    if m != 64 {
        return Err(WgmmaShapeError::M(m));
    }
    if k != want_k {
        return Err(WgmmaShapeError::K {
            elem: a,
            want: want_k,
            k,
        });
    }
    if n == 0 || n > 256 || !n.is_multiple_of(8) {
        return Err(WgmmaShapeError::N(n));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmajor_sw128_bf16_at_0x400() {
        let (lbo, sbo) = kmajor_desc_fields(Swizzle::B128, 2).unwrap();
        assert_eq!((lbo, sbo), (16, 1024));
        let desc = SmemDesc {
            start_addr: 0x400,
            lbo,
            sbo,
            base_offset: 0,
            swizzle: Swizzle::B128,
        };
        // start   0x400 >> 4 = 0x40                       -> 0x0000_0000_0000_0040
        // LBO     16 >> 4 = 1, << 16                      -> 0x0000_0000_0001_0000
        // SBO     1024 >> 4 = 0x40, << 32                 -> 0x0000_0040_0000_0000
        // base    0 << 49                                 -> 0
        // swizzle 128B = 1, << 62                         -> 0x4000_0000_0000_0000
        // This is also the value CuTe prints for a K-major SW128 16-bit tile at 0x400
        // (`GmmaDescriptor: 0x4000004000010040`, start_addr 0x0040, leading_off 1,
        // stride_off 64, layout_type B128), quoted in public CuTe walk-throughs of
        // `make_gmma_desc` and in a recorded H100 run of an MLIR nvgpu TMA+WGMMA example.
        assert_eq!(desc.encode_wgmma(), Ok(0x4000_0040_0001_0040));
    }

    #[test]
    fn const_part_plus_runtime_address() {
        let c = desc_const_part(16, 1024, 0, Swizzle::B128).unwrap();
        assert_eq!(c, 0x4000_0040_0001_0000);
        assert_eq!(c & START_ADDR_MASK, 0);
        for addr in [0u32, 0x400, 0x1_2340, 0x3FFF0] {
            let full = SmemDesc {
                start_addr: addr,
                lbo: 16,
                sbo: 1024,
                base_offset: 0,
                swizzle: Swizzle::B128,
            };
            let runtime = (u64::from(addr) >> 4) & START_ADDR_MASK;
            assert_eq!(full.encode_wgmma(), Ok(c | runtime));
            assert_eq!(full.encode_wgmma(), Ok(c + runtime));
        }
    }

    #[test]
    fn every_field_at_its_maximum_stays_in_place() {
        let desc = SmemDesc {
            start_addr: 0x3FFF0,
            lbo: 0x3FFF0,
            sbo: 0x3FFF0,
            base_offset: 7,
            swizzle: Swizzle::B32,
        };
        // 0x3FFF           bits  0-13 -> 0x0000_0000_0000_3FFF
        // 0x3FFF << 16     bits 16-29 -> 0x0000_0000_3FFF_0000
        // 0x3FFF << 32     bits 32-45 -> 0x0000_3FFF_0000_0000
        // 7 << 49          bits 49-51 -> 0x000E_0000_0000_0000
        // 3 (32B) << 62    bits 62-63 -> 0xC000_0000_0000_0000
        assert_eq!(desc.encode_wgmma(), Ok(0xC00E_3FFF_3FFF_3FFF));
    }

    #[test]
    fn swizzle_codes() {
        let d = |swizzle| {
            SmemDesc {
                start_addr: 0,
                lbo: 0,
                sbo: 0,
                base_offset: 0,
                swizzle,
            }
            .encode_wgmma()
        };
        assert_eq!(d(Swizzle::None), Ok(0));
        assert_eq!(d(Swizzle::B128), Ok(1 << 62)); // 0x4000_0000_0000_0000
        assert_eq!(d(Swizzle::B64), Ok(2 << 62)); // 0x8000_0000_0000_0000
        assert_eq!(d(Swizzle::B32), Ok(3 << 62)); // 0xC000_0000_0000_0000
    }

    #[test]
    fn kmajor_fields_per_swizzle() {
        assert_eq!(kmajor_desc_fields(Swizzle::B64, 2), Ok((16, 512)));
        assert_eq!(kmajor_desc_fields(Swizzle::B32, 4), Ok((16, 256)));
        assert_eq!(kmajor_desc_fields(Swizzle::B128, 1), Ok((16, 1024)));
        assert!(matches!(
            kmajor_desc_fields(Swizzle::None, 2),
            Err(EncodeError::Unsupported(_))
        ));
        assert!(matches!(
            kmajor_desc_fields(Swizzle::B128, 8),
            Err(EncodeError::Types(_))
        ));
    }

    #[test]
    fn errors() {
        let ok = SmemDesc {
            start_addr: 0x400,
            lbo: 16,
            sbo: 1024,
            base_offset: 0,
            swizzle: Swizzle::B128,
        };
        let misaligned = SmemDesc {
            start_addr: 0x408,
            ..ok
        };
        assert!(matches!(
            misaligned.encode_wgmma(),
            Err(EncodeError::Misaligned {
                field: "start address",
                value: 0x408,
                align: 16
            })
        ));
        let too_far = SmemDesc {
            start_addr: 0x4_0000,
            ..ok
        };
        assert!(matches!(
            too_far.encode_wgmma(),
            Err(EncodeError::Overflow {
                field: "start address",
                ..
            })
        ));
        let big_sbo = SmemDesc {
            sbo: 0x4_0000,
            ..ok
        };
        assert!(matches!(
            big_sbo.encode_wgmma(),
            Err(EncodeError::Overflow {
                field: "stride dimension byte offset",
                ..
            })
        ));
        let odd_lbo = SmemDesc { lbo: 8, ..ok };
        assert!(matches!(
            odd_lbo.encode_wgmma(),
            Err(EncodeError::Misaligned {
                field: "leading dimension byte offset",
                ..
            })
        ));
        let base = SmemDesc {
            base_offset: 8,
            ..ok
        };
        assert!(matches!(
            base.encode_wgmma(),
            Err(EncodeError::Overflow {
                field: "base offset",
                ..
            })
        ));
        let base_unswizzled = SmemDesc {
            base_offset: 1,
            swizzle: Swizzle::None,
            ..ok
        };
        assert!(matches!(
            base_unswizzled.encode_wgmma(),
            Err(EncodeError::Unsupported(_))
        ));
        assert!(desc_const_part(16, 1024, 0, Swizzle::B128).is_ok());
        assert!(desc_const_part(16, 1025, 0, Swizzle::B128).is_err());
    }

    #[test]
    fn base_offset_field() {
        // A 128B tile whose pattern starts at 0x480 ((0x480 >> 7) & 7 = 1).
        let d = SmemDesc {
            start_addr: 0x480,
            lbo: 16,
            sbo: 1024,
            base_offset: 1,
            swizzle: Swizzle::B128,
        };
        // 0x480 >> 4 = 0x48; base 1 << 49 = 0x0002_0000_0000_0000.
        assert_eq!(d.encode_wgmma(), Ok(0x4002_0040_0001_0048));
    }

    #[test]
    fn shapes() {
        assert_eq!(wgmma_shape_ok(64, 256, 16, ElemType::Bf16), Ok(()));
        assert_eq!(wgmma_shape_ok(64, 8, 16, ElemType::F16), Ok(()));
        assert_eq!(wgmma_shape_ok(64, 136, 16, ElemType::F16), Ok(()));
        assert_eq!(wgmma_shape_ok(64, 128, 8, ElemType::F32), Ok(()));
        assert_eq!(
            wgmma_shape_ok(128, 128, 16, ElemType::Bf16),
            Err(WgmmaShapeError::M(128))
        );
        assert!(wgmma_shape_ok(64, 0, 16, ElemType::Bf16).is_err());
        assert!(wgmma_shape_ok(64, 264, 16, ElemType::Bf16).is_err());
        assert!(wgmma_shape_ok(64, 12, 16, ElemType::Bf16).is_err());
        assert!(wgmma_shape_ok(64, 128, 8, ElemType::Bf16).is_err());
        assert!(wgmma_shape_ok(64, 128, 16, ElemType::F32).is_err());
        // FP8: `.m64nNk32` only (§9.7.15.5.2).
        assert_eq!(wgmma_shape_ok(64, 256, 32, ElemType::E4m3), Ok(()));
        assert_eq!(wgmma_shape_ok(64, 8, 32, ElemType::E5m2), Ok(()));
        assert_eq!(
            wgmma_shape_ok(64, 128, 16, ElemType::E4m3),
            Err(WgmmaShapeError::K {
                elem: ElemType::E4m3,
                want: 32,
                k: 16
            })
        );
    }

    #[test]
    fn mn_major_sw128_bf16() {
        // B given K×N, N-major: chunks of 64 N-columns (128 B) × 64 K-rows, one after another.
        // LBO = the next chunk along N = 64 rows × 128 B = 8192 B; SBO = the next 8 K-rows =
        // 8 × 128 B = 1024 B (PTX ISA §9.7.15.5.1.2.1.1 / .2, MN-major swizzled rows).
        let (lbo, sbo) = mn_major_desc_fields(Swizzle::B128, 2, 64).unwrap();
        assert_eq!((lbo, sbo), (8192, 1024));
        let desc = SmemDesc {
            start_addr: 0x8000,
            lbo,
            sbo,
            base_offset: 0,
            swizzle: Swizzle::B128,
        };
        // start   0x8000 >> 4 = 0x800                     -> 0x0000_0000_0000_0800
        // LBO     8192 >> 4 = 0x200, << 16                -> 0x0000_0000_0200_0000
        // SBO     1024 >> 4 = 0x40, << 32                 -> 0x0000_0040_0000_0000
        // swizzle 128B = 1, << 62                         -> 0x4000_0000_0000_0000
        assert_eq!(desc.encode_wgmma(), Ok(0x4000_0040_0200_0800));
        // BK = 32: chunks of 32 rows, LBO 4096.
        assert_eq!(mn_major_desc_fields(Swizzle::B128, 2, 32), Ok((4096, 1024)));
        // 64B swizzle: 32-element chunks, rows of 64 B.
        assert_eq!(mn_major_desc_fields(Swizzle::B64, 2, 64), Ok((4096, 512)));
    }

    #[test]
    fn mn_major_refusals() {
        assert!(matches!(
            mn_major_desc_fields(Swizzle::B128, 4, 64),
            Err(EncodeError::Types(_))
        ));
        assert!(matches!(
            mn_major_desc_fields(Swizzle::B128, 1, 64),
            Err(EncodeError::Types(_))
        ));
        assert!(matches!(
            mn_major_desc_fields(Swizzle::None, 2, 64),
            Err(EncodeError::Unsupported(_))
        ));
        assert!(matches!(
            mn_major_desc_fields(Swizzle::B128, 2, 12),
            Err(EncodeError::Unsupported(_))
        ));
    }

    /// The address sequence of one MN-major operand over a K tile, checked against the ISA's
    /// layout element by element: element (n, k) of a `[chunks][BK][64]` bf16 tile sits at
    /// `chunk(n) × LBO + (k / 8) × SBO + (k % 8) × 128 + (n % 64) × 2` before the swizzle
    /// (the canonical MN-major SW128 form of §9.7.15.5.1.2), and the tile TMA writes puts it at
    /// `(n / 64) × BK × 128 + k × 128 + (n % 64) × 2` (row-major `[chunks][BK][64]`). Both
    /// apply the same 128B swizzle to the same address bits, so comparing unswizzled offsets
    /// suffices — provided every descriptor start is 1024-aligned (base offset 0), which the
    /// loop also checks. Each K-step of 16 moves the start by `mn_major_k_advance`.
    #[test]
    fn mn_major_k_steps_cover_the_tma_tile() {
        const BK: u32 = 64;
        const CHUNKS: u32 = 4; // N = 256
        let (lbo, sbo) = mn_major_desc_fields(Swizzle::B128, 2, BK).unwrap();
        let step = mn_major_k_advance(Swizzle::B128, 16).unwrap();
        assert_eq!(step, 2048);
        let base = 0x1_0000u32; // a 1024-aligned stage
        let mut seen = std::collections::BTreeSet::new();
        for kk in 0..BK / 16 {
            let start = base + kk * step;
            assert_eq!(start % 1024, 0, "K-step {kk} starts mid-atom");
            // The descriptor's address field advances by step / 16 with no carry into LBO.
            let d0 = desc_const_part(lbo, sbo, 0, Swizzle::B128).unwrap() | u64::from(base >> 4);
            let dk = desc_const_part(lbo, sbo, 0, Swizzle::B128).unwrap() | u64::from(start >> 4);
            assert_eq!(dk, d0 + u64::from(kk * step / 16));
            for n in 0..CHUNKS * 64 {
                for k in 0..16 {
                    let by_desc =
                        start + (n / 64) * lbo + (k / 8) * sbo + (k % 8) * 128 + (n % 64) * 2;
                    let kg = kk * 16 + k;
                    let by_tma = base + (n / 64) * BK * 128 + kg * 128 + (n % 64) * 2;
                    assert_eq!(by_desc, by_tma, "n {n} k {kg}");
                    assert!(seen.insert(by_tma));
                }
            }
        }
        // Every element of the tile was read exactly once.
        assert_eq!(seen.len() as u32, CHUNKS * 64 * BK);
    }
}
