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

use super::tcgen05::Kind;
use super::{EncodeError, check_max};
use crate::abi::ElemType;

/// The descriptor of one dense, K-major `kind::mxf8f6f4` MMA with UE8M0 scale factors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScaledDesc {
    /// A element type (E4M3 or E5M2).
    pub a: ElemType,
    /// B element type (E4M3 or E5M2).
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
        let code = |t: ElemType| match t {
            ElemType::E4m3 => Ok(0u32),
            ElemType::E5m2 => Ok(1),
            other => Err(EncodeError::Types(format!(
                "kind::mxf8f6f4 takes e4m3 or e5m2 operands, not {}",
                other.name()
            ))),
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

#[cfg(test)]
mod tests {
    use super::*;

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
