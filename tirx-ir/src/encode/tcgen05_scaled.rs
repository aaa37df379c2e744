//! The instruction descriptor of the block-scaled `tcgen05.mma` of `.kind::mxf8f6f4` (PTX ISA
//! §9.7.16.4.2 "Instruction descriptor", the table "Instruction descriptor format for
//! .kind::mxf8f6f4" — Table 43 in ISA 9.0, Table 46 from 9.1 where the section is
//! §9.7.17.4.2), and what the kind allows (§9.7.16.2.1 "Matrix Shape"; §9.7.16.10.7 "Block
//! Scaling"):
//!
//! | bits  | field                                        | values                                   |
//! |-------|----------------------------------------------|------------------------------------------|
//! | 0-1   | reserved                                     | 0                                        |
//! | 2     | sparsity                                     | dense 0                                  |
//! | 3     | reserved                                     | 0                                        |
//! | 4-5   | matrix B scale-factor data ID                | 0-3 (the byte of the TMEM cell)          |
//! | 6     | reserved                                     | 0                                        |
//! | 7-9   | atype                                        | E4M3 = 0, E5M2 = 1, E2M3 = 3, E3M2 = 4, E2M1 = 5 |
//! | 10-12 | btype                                        | as atype                                 |
//! | 13-14 | negate A / B                                 | 0                                        |
//! | 15-16 | transpose A / B                              | 0 = K-major                              |
//! | 17-22 | N >> 3                                       |                                          |
//! | 23    | scale matrix type (scale_A and scale_B)      | UE8M0 = 1                                |
//! | 24-26 | reserved                                     | 0                                        |
//! | 27-28 | M >> 7 (not M >> 4 as in the other table)    |                                          |
//! | 29-30 | matrix A scale-factor data ID                | 0-3                                      |
//! | 31    | reserved                                     | 0                                        |
//!
//! No D-type field: D is f32. Shapes (dense, no `.ws`): `cta_group::1` M = 128 with N a
//! multiple of 8 up to 256; `cta_group::2` M = 128 or 256 with N a multiple of 16 up to 256;
//! K = 32. The scale vector size is `.scale_vec::1X` (one factor per 32 K-elements of a row),
//! the only one `kind::mxf8f6f4` takes (§9.7.16.10.7.1, "Valid combinations of
//! scale_vectorsize and shapes").
//!
//! [`Mxf4Desc`] is `kind::mxf4nvf4`'s descriptor (its own table: E2M1 operands, a two-bit
//! btype, the scale type UE4M3 = 0 / UE8M0 = 1, data IDs 0 or 2, the K-dimension bit 31), for
//! `.scale_vec::2X` (UE8M0) and `::4X` (UE8M0 or UE4M3): `tcgen05::mma` on `e2m1x2`
//! operands issues it (`dispatch::mma::block_scale`).

use super::tcgen05::Kind;
use super::{EncodeError, check_max};
use crate::abi::ElemType;

/// The descriptor of one dense, K-major `kind::mxf8f6f4` MMA with UE8M0 scale factors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScaledDesc {
    /// A element type (E4M3, E5M2, E3M2, E2M3 or E2M1).
    pub a: ElemType,
    /// B element type (as A's).
    pub b: ElemType,
    /// M (the pair's M with `cta_group::2`).
    pub m: u32,
    /// N.
    pub n: u32,
    /// Which byte of each TMEM cell holds A's scale factors (0-3).
    pub sfa_id: u32,
    /// Which byte of each TMEM cell holds B's scale factors (0-3).
    pub sfb_id: u32,
}

impl ScaledDesc {
    /// Encodes the descriptor of a `cta_group::1` (`pair` false) or `cta_group::2` MMA.
    ///
    /// Errors: an operand type other than E4M3/E5M2 ([`EncodeError::Types`]), M or N outside
    /// the kind's shapes ([`EncodeError::Shape`]), a data ID over 3.
    pub fn encode(&self, pair: bool) -> Result<u32, EncodeError> {
        // The kind's operand types are kind::f8f6f4's, with its codes and its padded
        // shared-memory packing for the 6- and 4-bit ones.
        let code = |t: ElemType| {
            if t.is_fp8() || t.is_f6f4() {
                Ok(super::tcgen05::f8f6f4_code(t))
            } else {
                Err(EncodeError::Types(format!(
                    "kind::mxf8f6f4 takes e4m3, e5m2, e3m2, e2m3 or e2m1 operands, not {}",
                    t.name()
                )))
            }
        };
        let (ca, cb) = (code(self.a)?, code(self.b)?);
        let (ms, step): (&[u32], u32) = if pair { (&[128, 256], 16) } else { (&[128], 8) };
        if !ms.contains(&self.m) {
            return Err(EncodeError::Shape(format!(
                "tcgen05.mma.cta_group::{}.kind::mxf8f6f4 has M = {ms:?}, not M = {}",
                if pair { 2 } else { 1 },
                self.m
            )));
        }
        if self.n < step || self.n > 256 || !self.n.is_multiple_of(step) {
            return Err(EncodeError::Shape(format!(
                "kind::mxf8f6f4 needs N a multiple of {step} up to 256, not N = {}",
                self.n
            )));
        }
        check_max("scale factor A data ID", u64::from(self.sfa_id), 3)?;
        check_max("scale factor B data ID", u64::from(self.sfb_id), 3)?;
        Ok((self.sfb_id << 4)
            | (ca << 7)
            | (cb << 10)
            | ((self.n >> 3) << 17)
            | (1 << 23)
            | ((self.m >> 7) << 27)
            | (self.sfa_id << 29))
    }

    /// K of one instruction: 32, as `kind::f8f6f4`.
    pub fn k() -> u32 {
        Kind::F8f6f4.k()
    }
}

/// The scale-factor type of a block-scaled MMA (the descriptor's bit 23, "Scale Matrix
/// Type, for both scale_A / scale_B").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleType {
    /// UE8M0 (code 1): a power of two, the MX formats' scale.
    Ue8m0,
    /// UE4M3 (code 0): an unsigned E4M3, NVFP4's scale (`kind::mxf4nvf4` only).
    Ue4m3,
}

/// The scale vector size of `kind::mxf4nvf4` (PTX ISA §9.7.16.10.7.1, "Valid combinations
/// of scale_vectorsize and shapes"): factors per row of A (column of B) for one instruction's
/// K = 64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleVec {
    /// `.scale_vec::2X` (`.block32`): two factors, one per 32 K; UE8M0 only.
    X2,
    /// `.scale_vec::4X` (`.block16`): four factors, one per 16 K; UE8M0 or UE4M3.
    X4,
}

impl ScaleVec {
    /// The PTX modifier.
    pub fn ptx(self) -> &'static str {
        match self {
            ScaleVec::X2 => ".scale_vec::2X",
            ScaleVec::X4 => ".scale_vec::4X",
        }
    }
    /// Factors per row for one instruction.
    pub fn factors(self) -> u32 {
        match self {
            ScaleVec::X2 => 2,
            ScaleVec::X4 => 4,
        }
    }
}

/// The descriptor of one dense, K-major `kind::mxf4nvf4` MMA (PTX ISA §9.7.16.4.2, the table
/// "Instruction descriptor format for .kind::mxf4 and .kind::mxf4nvf4" — Table 44 in ISA 9.0,
/// Table 47 from 9.1): E2M1 operands (packed two to a byte, K = 64 per instruction: 32 bytes
/// of each row).
///
/// | bits  | field                                   | values                            |
/// |-------|-----------------------------------------|-----------------------------------|
/// | 0-1, 3, 6, 12, 24-26 | reserved                 | 0                                 |
/// | 2     | sparsity                                | dense 0                           |
/// | 4-5   | matrix B scale-factor data ID           | 0 or 2                            |
/// | 7-9   | atype                                   | E2M1 = 1                          |
/// | 10-11 | btype (two bits in this table)          | E2M1 = 1                          |
/// | 13-16 | negate / transpose A, B                 | 0 (K-major only for this kind)    |
/// | 17-22 | N >> 3                                  |                                   |
/// | 23    | scale matrix type                       | UE4M3 = 0, UE8M0 = 1              |
/// | 27-28 | M >> 7                                  |                                   |
/// | 29-30 | matrix A scale-factor data ID           | 0 or 2                            |
/// | 31    | K dimension                             | dense K = 64: 0 (K = 96: 1)       |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mxf4Desc {
    /// M (the pair's M with `cta_group::2`).
    pub m: u32,
    /// N.
    pub n: u32,
    /// The factors' type.
    pub scale: ScaleType,
    /// Factors per row per instruction.
    pub vec: ScaleVec,
    /// A's data ID: the first byte of each TMEM cell its factors take (0 or 2 with 2X; 0
    /// with 4X, which takes all four bytes).
    pub sfa_id: u32,
    /// B's data ID, as A's.
    pub sfb_id: u32,
}

impl Mxf4Desc {
    /// Encodes the descriptor of a `cta_group::1` (`pair` false) or `cta_group::2` MMA.
    ///
    /// Errors: UE4M3 factors with `.scale_vec::2X` ([`EncodeError::Types`]: 2X takes UE8M0
    /// only), M or N outside the kind's shapes ([`EncodeError::Shape`], as for
    /// `kind::mxf8f6f4`), a data ID other than 0 or 2, or other than 0 with 4X.
    pub fn encode(&self, pair: bool) -> Result<u32, EncodeError> {
        if self.scale == ScaleType::Ue4m3 && self.vec == ScaleVec::X2 {
            return Err(EncodeError::Types(
                "kind::mxf4nvf4 .scale_vec::2X takes UE8M0 factors; UE4M3 needs .scale_vec::4X"
                    .into(),
            ));
        }
        // The shapes are mxf8f6f4's (the same M, N table rows); checked through it.
        ScaledDesc {
            a: ElemType::E4m3,
            b: ElemType::E4m3,
            m: self.m,
            n: self.n,
            sfa_id: 0,
            sfb_id: 0,
        }
        .encode(pair)
        .map_err(|e| match e {
            EncodeError::Shape(s) => EncodeError::Shape(s.replace("mxf8f6f4", "mxf4nvf4")),
            other => other,
        })?;
        let legal: &[u32] = match self.vec {
            ScaleVec::X2 => &[0, 2],
            ScaleVec::X4 => &[0],
        };
        for (which, id) in [("A", self.sfa_id), ("B", self.sfb_id)] {
            if !legal.contains(&id) {
                return Err(EncodeError::Shape(format!(
                    "kind::mxf4nvf4{} takes scale factor {which} data ID {legal:?}, not {id}",
                    self.vec.ptx()
                )));
            }
        }
        let ue8m0 = u32::from(self.scale == ScaleType::Ue8m0);
        Ok((self.sfb_id << 4)
            | (1 << 7)
            | (1 << 10)
            | ((self.n >> 3) << 17)
            | (ue8m0 << 23)
            | ((self.m >> 7) << 27)
            | (self.sfa_id << 29))
    }

    /// K of one dense instruction: 64 E2M1 elements (32 bytes of each row).
    pub fn k() -> u32 {
        64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nvfp4(n: u32) -> Mxf4Desc {
        Mxf4Desc {
            m: 128,
            n,
            scale: ScaleType::Ue4m3,
            vec: ScaleVec::X4,
            sfa_id: 0,
            sfb_id: 0,
        }
    }

    /// Table 47's fields: atype E2M1 = 1 at 7-9 (0x80), btype E2M1 = 1 at 10-11 (0x400),
    /// N / 8 at 17-22, UE4M3 = 0 / UE8M0 = 1 at 23, M / 128 at 27-28, IDs at 29-30 / 4-5,
    /// K = 64 (bit 31 clear).
    #[test]
    fn mxf4nvf4_fields_in_place() {
        // NVFP4: UE4M3, 4X, N = 128 (16 << 17 = 0x20_0000), M = 128 (1 << 27).
        assert_eq!(nvfp4(128).encode(false), Ok(0x0820_0480));
        // MXFP4 through mxf4nvf4: UE8M0 (1 << 23), 2X, IDs 2 (A: 2 << 29, B: 2 << 4), N = 256.
        let mx = Mxf4Desc {
            scale: ScaleType::Ue8m0,
            vec: ScaleVec::X2,
            sfa_id: 2,
            sfb_id: 2,
            ..nvfp4(256)
        };
        assert_eq!(
            mx.encode(false),
            Ok(0x4000_0000 | 0x0880_0000 | 0x40_0000 | 0x20 | 0x480)
        );
        // The pair's M = 256: 2 << 27.
        assert_eq!(
            Mxf4Desc {
                m: 256,
                ..nvfp4(32)
            }
            .encode(true),
            Ok(0x1000_0000 | (4 << 17) | 0x480)
        );
        assert_eq!(Mxf4Desc::k(), 64);
        assert_eq!(ScaleVec::X4.ptx(), ".scale_vec::4X");
    }

    #[test]
    fn what_mxf4nvf4_refuses() {
        // UE4M3 with 2X; an ID of 2 with 4X; an ID of 1 with 2X; M = 64; N = 264.
        let two_x = Mxf4Desc {
            vec: ScaleVec::X2,
            ..nvfp4(64)
        };
        assert!(matches!(two_x.encode(false), Err(EncodeError::Types(_))));
        let id2 = Mxf4Desc {
            sfa_id: 2,
            ..nvfp4(64)
        };
        assert!(matches!(id2.encode(false), Err(EncodeError::Shape(_))));
        let id1 = Mxf4Desc {
            scale: ScaleType::Ue8m0,
            sfb_id: 1,
            ..two_x
        };
        assert!(matches!(id1.encode(false), Err(EncodeError::Shape(_))));
        assert!(matches!(
            Mxf4Desc { m: 64, ..nvfp4(64) }.encode(false),
            Err(EncodeError::Shape(_))
        ));
        let e = nvfp4(264).encode(false).unwrap_err();
        assert!(e.to_string().contains("mxf4nvf4"), "{e}");
    }

    fn e4m3_e5m2(m: u32, n: u32) -> ScaledDesc {
        ScaledDesc {
            a: ElemType::E4m3,
            b: ElemType::E5m2,
            m,
            n,
            sfa_id: 2,
            sfb_id: 1,
        }
    }

    #[test]
    fn fields_in_place() {
        // B ID 1 << 4 = 0x10; atype E4M3 0; btype E5M2 1 << 10 = 0x400; N 64 >> 3 = 8 << 17
        // = 0x10_0000; UE8M0 1 << 23 = 0x80_0000; M 128 >> 7 = 1 << 27 = 0x800_0000; A ID
        // 2 << 29 = 0x4000_0000.
        assert_eq!(e4m3_e5m2(128, 64).encode(false), Ok(0x4890_0410));
        // The pair's M = 256: 2 << 27 = 0x1000_0000; N 256 >> 3 = 32 << 17 = 0x40_0000.
        assert_eq!(e4m3_e5m2(256, 256).encode(true), Ok(0x50c0_0410));
        // E5M2 × E4M3, IDs 3 / 0: 1 << 7 = 0x80 and 3 << 29 = 0x6000_0000.
        let d = ScaledDesc {
            a: ElemType::E5m2,
            b: ElemType::E4m3,
            sfa_id: 3,
            sfb_id: 0,
            ..e4m3_e5m2(128, 8)
        };
        assert_eq!(d.encode(false), Ok(0x6882_0080));
        assert_eq!(ScaledDesc::k(), 32);
        // The 6- and 4-bit codes of the table: E2M3 = 3, E3M2 = 4, E2M1 = 5 at 7-9 / 10-12.
        for (a, b, bits) in [
            (ElemType::E2m3, ElemType::E3m2, (3 << 7) | (4 << 10)),
            (ElemType::E2m1, ElemType::E2m1, (5 << 7) | (5 << 10)),
            (ElemType::E3m2, ElemType::E4m3, 4 << 7),
        ] {
            let d = ScaledDesc {
                a,
                b,
                sfa_id: 0,
                sfb_id: 0,
                ..e4m3_e5m2(128, 64)
            };
            assert_eq!(
                d.encode(false),
                Ok(bits | (8 << 17) | (1 << 23) | (1 << 27))
            );
        }
    }

    #[test]
    fn what_the_kind_refuses() {
        // M = 64 has no block-scaled form; the pair's N steps by 16; N ≤ 256.
        assert!(matches!(
            e4m3_e5m2(64, 64).encode(false),
            Err(EncodeError::Shape(_))
        ));
        assert!(matches!(
            e4m3_e5m2(256, 64).encode(false),
            Err(EncodeError::Shape(_))
        ));
        assert!(matches!(
            e4m3_e5m2(256, 24).encode(true),
            Err(EncodeError::Shape(_))
        ));
        assert!(matches!(
            e4m3_e5m2(128, 264).encode(false),
            Err(EncodeError::Shape(_))
        ));
        let bf16 = ScaledDesc {
            a: ElemType::Bf16,
            ..e4m3_e5m2(128, 64)
        };
        assert!(matches!(bf16.encode(false), Err(EncodeError::Types(_))));
        let id4 = ScaledDesc {
            sfa_id: 4,
            ..e4m3_e5m2(128, 64)
        };
        assert!(matches!(
            id4.encode(false),
            Err(EncodeError::Overflow { .. })
        ));
    }
}
