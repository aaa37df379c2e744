//! Blackwell `tcgen05.mma`: the 64-bit shared-memory descriptor, the 32-bit instruction
//! descriptor of `.kind::f16` / `.kind::tf32` / `.kind::f8f6f4` (the block-scaled
//! `.kind::mxf8f6f4` is `tcgen05_scaled.rs`), and Tensor Memory addresses.
//!
//! Shared-memory descriptor — PTX ISA 9.x §9.7.16.4.1 "Shared Memory Descriptor", Table 40:
//!
//! | bits  | width | field                                                          |
//! |-------|-------|----------------------------------------------------------------|
//! | 0-13  | 14    | matrix-descriptor-encode(matrix start address)                 |
//! | 16-29 | 14    | matrix-descriptor-encode(LBO, relative offset or absolute addr)|
//! | 32-45 | 14    | matrix-descriptor-encode(SBO)                                  |
//! | 46-48 | 3     | fixed constant 0b001                                           |
//! | 49-51 | 3     | matrix base offset                                             |
//! | 52    | 1     | leading dimension stride mode: 0 relative, 1 absolute          |
//! | 53-60 | 8     | fixed constant 0                                               |
//! | 61-63 | 3     | swizzle: 0 none, 1 128B with 32B atomic, 2 128B, 4 64B, 6 32B  |
//!
//! (3, 5, 7 are invalid swizzle values.) CUTLASS's `UMMA::SmemDescriptor`
//! (`cute/arch/mma_sm100_desc.hpp`) agrees, calling bits 46-47 a 2-bit `version_` = 1.
//!
//! Instruction descriptor — PTX ISA 9.x §9.7.16.4.2 "Instruction descriptor", the table
//! "Instruction descriptor format for .kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8"
//! (Table 42 in ISA 9.0; Table 45 from 9.1, where the section is §9.7.17.4.2):
//!
//! | bits  | field                                   | f16 kind          | tf32 kind | f8f6f4 kind             |
//! |-------|-----------------------------------------|-------------------|-----------|-------------------------|
//! | 0-1   | sparsity selector                       | 0 (dense)         | 0         | 0                       |
//! | 2     | sparsity: dense 0 / sparse 1            | 0                 | 0         | 0                       |
//! | 3     | saturate (integer kinds only)           | 0                 | 0         | 0                       |
//! | 4-5   | dtype (D)                               | F16 = 0, F32 = 1  | F32 = 1   | F16 = 0, F32 = 1        |
//! | 6     | reserved                                | 0                 | 0         | 0                       |
//! | 7-9   | atype (A)                               | F16 = 0, BF16 = 1 | TF32 = 2  | E4M3 = 0, E5M2 = 1, E2M3 = 3, E3M2 = 4, E2M1 = 5 |
//! | 10-12 | btype (B)                               | F16 = 0, BF16 = 1 | TF32 = 2  | as atype                |
//! | 13    | negate A                                | 0                 | 0         | 0                       |
//! | 14    | negate B                                | 0                 | 0         | 0                       |
//! | 15    | transpose A (0 = K-major, 1 = M-major)  |                   |           |                         |
//! | 16    | transpose B (0 = K-major, 1 = N-major)  |                   |           |                         |
//! | 17-22 | N >> 3                                  |                   |           |                         |
//! | 23    | reserved                                | 0                 | 0         | 0                       |
//! | 24-28 | M >> 4                                  |                   |           |                         |
//! | 29    | reserved                                | 0                 | 0         | 0                       |
//! | 30-31 | max shift (`.ws` only)                  | 0                 | 0         | 0                       |
//!
//! K per dense instruction (§9.7.16.2.1 "Matrix Shape", the table "Various combinations of
//! .kind and shapes"): 16 for `kind::f16`, 8 for `kind::tf32`, 32 for `kind::f8f6f4` — 32
//! bytes of each operand row for all three. M and N are constrained alike for the three
//! kinds: `cta_group::1` M = 64 or 128 with N a multiple of 8 up to 256; `cta_group::2`
//! M = 128 or 256 with N a multiple of 16 up to 256.
//!
//! CUTLASS's `UMMA::InstrDescriptor` (same file) puts `m_dim_` at bits [24, 29) after a 1-bit
//! gap at 23, confirming the M position.
//!
//! Tensor Memory address — PTX ISA 9.x §9.7.16.1.1 "Tensor Memory Addressing": lane index in
//! bits 31-16, column index in bits 15-0.

use super::{AccType, EncodeError, Major, check_max, matrix_descriptor_encode};
use crate::abi::{ElemType, Swizzle};

/// Bit 3 of the instruction descriptor, "Saturate for integer types" (Table 42: `kind::i8`
/// only; "0 (NA)" for the float kinds): the s32 D clamps to [-2^31, 2^31 - 1] instead of
/// wrapping.
pub const SATURATE: u32 = 1 << 3;

/// Mask of the start-address field (bits 0-13) of the shared-memory descriptor.
pub const START_ADDR_MASK: u64 = 0x3FFF;

/// Lanes (rows) of Tensor Memory per CTA.
pub const TMEM_LANES: u32 = 128;

/// 32-bit columns of Tensor Memory per CTA.
pub const TMEM_COLUMNS: u32 = 512;

/// Swizzle mode of a `tcgen05` shared-memory descriptor (bits 61-63).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SwizzleMode {
    /// No swizzling (code 0).
    None,
    /// 128-byte swizzle with 32-byte atomicity (code 1).
    B128Atom32B,
    /// 128-byte swizzle, 16-byte atomicity (code 2).
    B128,
    /// 64-byte swizzle (code 4).
    B64,
    /// 32-byte swizzle (code 6).
    B32,
}

impl SwizzleMode {
    /// The 3-bit code of bits 61-63 (Table 40).
    pub fn code(self) -> u64 {
        match self {
            SwizzleMode::None => 0,
            SwizzleMode::B128Atom32B => 1,
            SwizzleMode::B128 => 2,
            SwizzleMode::B64 => 4,
            SwizzleMode::B32 => 6,
        }
    }
}

impl From<Swizzle> for SwizzleMode {
    /// The layout's swizzle, with TMA's default 16-byte atomicity.
    fn from(sw: Swizzle) -> Self {
        match sw {
            Swizzle::None => SwizzleMode::None,
            Swizzle::B32 => SwizzleMode::B32,
            Swizzle::B64 => SwizzleMode::B64,
            Swizzle::B128 => SwizzleMode::B128,
        }
    }
}

/// How the LBO field is read (bit 52; PTX ISA §9.7.16.3.1 "Leading Dimension Stride").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LboMode {
    /// LBO is a byte offset relative to the start address (bit 52 = 0); the usual mode.
    Relative,
    /// LBO is the absolute shared address of the second chunk (bit 52 = 1); only for a 48-byte
    /// K tile, and supported on sm_103a only (§9.7.16.4.1.1 "Target ISA Note").
    Absolute,
}

/// A `tcgen05.mma` shared-memory descriptor, in bytes (before encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SmemDesc {
    /// Shared-memory byte address of the operand tile; 16-byte aligned, below 256 KiB.
    pub start_addr: u32,
    /// Leading dimension stride in bytes (or absolute address, see [`LboMode`]): unused for
    /// swizzled K-major tiles ("assumed to be 1", i.e. 16 bytes). 16-byte aligned.
    pub lbo: u32,
    /// Stride dimension byte offset: distance between 8-row groups (1024 B for a K-major
    /// 128B-swizzled tile written by TMA). 16-byte aligned.
    pub sbo: u32,
    /// Matrix base offset (0-7): 0 when the swizzle pattern starts at the mode's repeat
    /// boundary (Table 41: 1024/512/256 B), else `(pattern start address >> 7) & 7`.
    pub base_offset: u8,
    /// How LBO is read.
    pub lbo_mode: LboMode,
    /// Swizzle mode the tile was written with.
    pub swizzle: SwizzleMode,
}

impl SmemDesc {
    /// Encodes the 64-bit descriptor.
    ///
    /// Errors: start address, LBO or SBO not 16-byte aligned or ≥ 256 KiB, base offset > 7.
    pub fn encode(&self) -> Result<u64, EncodeError> {
        let start = matrix_descriptor_encode("start address", self.start_addr)?;
        Ok(self.const_bits()? | start)
    }

    /// Every field but the start address, encoded.
    fn const_bits(&self) -> Result<u64, EncodeError> {
        let lbo = matrix_descriptor_encode("leading dimension byte offset", self.lbo)?;
        let sbo = matrix_descriptor_encode("stride dimension byte offset", self.sbo)?;
        check_max("base offset", u64::from(self.base_offset), 7)?;
        let lbo_mode = match self.lbo_mode {
            LboMode::Relative => 0u64,
            LboMode::Absolute => 1,
        };
        Ok((lbo << 16)
            | (sbo << 32)
            | (0b001 << 46)
            | (u64::from(self.base_offset) << 49)
            | (lbo_mode << 52)
            | (self.swizzle.code() << 61))
    }
}

/// The shared-memory descriptor with start address 0.
///
/// Contract with generated code (as for `wgmma::desc_const_part`): the descriptor of an operand
/// at shared address `addr` is `desc_const_part(..) | ((addr >> 4) & START_ADDR_MASK)`; bits
/// 0-13 of the constant are zero, so OR and ADD agree, provided `addr` is 16-byte aligned and
/// below 256 KiB.
pub fn desc_const_part(
    lbo: u32,
    sbo: u32,
    base_offset: u8,
    lbo_mode: LboMode,
    swizzle: SwizzleMode,
) -> Result<u64, EncodeError> {
    SmemDesc {
        start_addr: 0,
        lbo,
        sbo,
        base_offset,
        lbo_mode,
        swizzle,
    }
    .const_bits()
}

/// The `.kind` of a `tcgen05.mma`, decided by the operand types (PTX ISA §9.7.16.10.1
/// "Matrix multiply and accumulate kinds").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `.kind::f16`: f16 or bf16 operands, K = 16 per instruction (dense).
    F16,
    /// `.kind::tf32`: tf32 operands (stored as f32), K = 8 per instruction (dense).
    Tf32,
    /// `.kind::i8`: signed or unsigned 8-bit integer operands (A and B may differ), an s32
    /// accumulator, K = 32 per instruction (dense).
    I8,
    /// `.kind::f8f6f4`: E4M3, E5M2, E3M2, E2M3 or E2M1 operands (A and B may differ; the 6-
    /// and 4-bit ones in the padded shared-memory packing, one byte of footprint each), K = 32
    /// per instruction (dense).
    F8f6f4,
}

impl Kind {
    /// The PTX qualifier.
    pub fn ptx(self) -> &'static str {
        match self {
            Kind::F16 => ".kind::f16",
            Kind::Tf32 => ".kind::tf32",
            Kind::F8f6f4 => ".kind::f8f6f4",
            Kind::I8 => ".kind::i8",
        }
    }
    /// K of one dense instruction (32 bytes of each operand row).
    pub fn k(self) -> u32 {
        match self {
            Kind::F16 => 16,
            Kind::Tf32 => 8,
            Kind::F8f6f4 | Kind::I8 => 32,
        }
    }
    /// The kind operands of element type `t` select, if any.
    pub fn of(t: ElemType) -> Option<Kind> {
        match t {
            ElemType::F16 | ElemType::Bf16 => Some(Kind::F16),
            ElemType::F32 => Some(Kind::Tf32),
            // The 6- and 4-bit types in the kind's padded shared-memory packing.
            ElemType::E4m3 | ElemType::E5m2 => Some(Kind::F8f6f4),
            ElemType::E3m2 | ElemType::E2m3 | ElemType::E2m1 => Some(Kind::F8f6f4),
            // Scale factors are no operand; packed FP4 is an operand of the block-scaled
            // `kind::mxf4nvf4` only (`encode::tcgen05_scaled`), never of an unscaled kind here.
            ElemType::Ue8m0 | ElemType::Ue4m3 | ElemType::E2m1x2 => None,
            ElemType::I8 | ElemType::U8 => Some(Kind::I8),
            // 32-bit integers are no MMA operand (`kind::i8` takes 8-bit integers).
            ElemType::I32 | ElemType::U32 | ElemType::I64 | ElemType::U64 => None,
        }
    }
}

/// The instruction descriptor of a dense `tcgen05.mma.cta_group::1` of `.kind::f16` or
/// `.kind::tf32`, without negation, saturation or `.ws` shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InstrDesc {
    /// Accumulator (D) type.
    pub d: AccType,
    /// A element type (`F32` means tf32 operands).
    pub a: ElemType,
    /// B element type (equal to `a`, except that `kind::f8f6f4` takes E4M3 × E5M2).
    pub b: ElemType,
    /// Which dimension of A is contiguous in shared memory.
    pub a_major: Major,
    /// Which dimension of B is contiguous in shared memory.
    pub b_major: Major,
    /// Rows of D (64 or 128 for one CTA).
    pub m: u32,
    /// Columns of D (a multiple of 8 in 8..=256).
    pub n: u32,
}

/// The 3-bit atype/btype code of the descriptor table for `t`, given the kind.
fn operand_code(kind: Kind, t: ElemType) -> u32 {
    match (kind, t) {
        (Kind::Tf32, _) => 2,
        (Kind::F16, ElemType::Bf16) => 1,
        (Kind::F16, _) => 0,
        (Kind::F8f6f4, t) => f8f6f4_code(t),
        // The kind::i8 column: Unsigned 8b = 0, Signed 8b = 1.
        (Kind::I8, t) => u32::from(t == ElemType::I8),
    }
}

/// The atype/btype code of an operand of `kind::f8f6f4` (and of `kind::mxf8f6f4`, whose
/// descriptor table lists the same codes): E4M3 = 0, E5M2 = 1, E2M3 = 3, E3M2 = 4, E2M1 = 5
/// (PTX ISA §9.7.16.4.2; 2 is unused).
pub fn f8f6f4_code(t: ElemType) -> u32 {
    match t {
        ElemType::E5m2 => 1,
        ElemType::E2m3 => 3,
        ElemType::E3m2 => 4,
        ElemType::E2m1 => 5,
        _ => 0,
    }
}

impl InstrDesc {
    /// The `.kind` these operand and accumulator types select.
    ///
    /// Errors ([`EncodeError::Types`]): A and B of different kinds, or of one kind that takes
    /// one type (f16 × bf16); a type no `tcgen05` kind handled here takes; an f16 accumulator
    /// with bf16 or tf32 operands (PTX ISA §9.7.16.2.1 "Matrix Shape": dtype `.f16` only with
    /// `.f16` operands under `kind::f16`; `kind::tf32` accumulates in `.f32`).
    pub fn kind(&self) -> Result<Kind, EncodeError> {
        let (Some(ka), Some(kb)) = (Kind::of(self.a), Kind::of(self.b)) else {
            // Packed FP4's only kind here is block-scaled (`kind::mxf4nvf4`, §9.7.16.10.7).
            let fp4 = if self.a.is_fp4() || self.b.is_fp4() {
                "; packed FP4 (e2m1x2) is multiplied block-scaled only: give `scale_a` and \
                 `scale_b` (kind::mxf4nvf4)"
            } else {
                ""
            };
            return Err(EncodeError::Types(format!(
                "no tcgen05 kind takes {} × {} operands{fp4}",
                self.a.name(),
                self.b.name()
            )));
        };
        // `kind::f8f6f4` and `kind::i8` list atype and btype separately: E4M3 × E5M2 and
        // s8 × u8 are one MMA each.
        if ka != kb || (self.a != self.b && !matches!(ka, Kind::F8f6f4 | Kind::I8)) {
            return Err(EncodeError::Types(format!(
                "A is {} ({}) but B is {} ({}); one tcgen05.mma has one kind{}",
                self.a.name(),
                ka.ptx().trim_start_matches('.'),
                self.b.name(),
                kb.ptx().trim_start_matches('.'),
                if ka == kb {
                    ", and kind::f16 one operand type"
                } else {
                    ""
                }
            )));
        }
        // `kind::i8` accumulates in s32 and only it does (§9.7.16.2.1, the kind table).
        if (ka == Kind::I8) != (self.d == AccType::S32) {
            return Err(EncodeError::Types(if ka == Kind::I8 {
                format!(
                    "kind::i8 ({} × {}) accumulates in s32: declare the accumulator \
                     tmem::<i32>",
                    self.a.name(),
                    self.b.name()
                )
            } else {
                format!(
                    "an i32 accumulator takes 8-bit integer operands (kind::i8), not {} × {}",
                    self.a.name(),
                    self.b.name()
                )
            }));
        }
        if self.d == AccType::F16 && !(self.a == ElemType::F16 || ka == Kind::F8f6f4) {
            return Err(EncodeError::Types(format!(
                "an f16 accumulator needs f16 or 8-bit operands, not {}",
                self.a.name()
            )));
        }
        Ok(ka)
    }

    /// Checks M and N for a dense single-CTA MMA (PTX ISA §9.7.16.2.1, Table 39: kinds f16
    /// and tf32, no `.ws`, CTA group 1: M ∈ {64, 128}, N ∈ {8, 16, …, 256}).
    pub fn check_shape(&self) -> Result<(), EncodeError> {
        if self.m != 64 && self.m != 128 {
            return Err(EncodeError::Shape(format!(
                "tcgen05.mma.cta_group::1 has M = 64 or 128, not M = {}",
                self.m
            )));
        }
        if self.n < 8 || self.n > 256 || !self.n.is_multiple_of(8) {
            return Err(EncodeError::Shape(format!(
                "tcgen05.mma N must be a multiple of 8 in 8..=256, not N = {}",
                self.n
            )));
        }
        Ok(())
    }

    /// Checks M and N for the CTA pair's dense MMA (`cta_group::2`, PTX ISA §9.7.16.2.1,
    /// Table 39): `m` is the pair's M; M = 256 with N ∈ {16, 32, …, 256}, or M = 128 with
    /// N ∈ {32, 64, …, 256}.
    pub fn check_shape_pair(&self) -> Result<(), EncodeError> {
        let step = match self.m {
            256 => 16,
            128 => 32,
            m => {
                return Err(EncodeError::Shape(format!(
                    "tcgen05.mma.cta_group::2 has M = 128 or 256 across the pair, not M = {m}"
                )));
            }
        };
        if self.n < step || self.n > 256 || !self.n.is_multiple_of(step) {
            return Err(EncodeError::Shape(format!(
                "tcgen05.mma.cta_group::2 with M = {} needs N a multiple of {step} up to 256, \
                 not N = {}",
                self.m, self.n
            )));
        }
        Ok(())
    }

    /// Encodes the 32-bit instruction descriptor (Table 42), after checking types and shape.
    pub fn encode(&self) -> Result<u32, EncodeError> {
        self.encode_group(false)
    }

    /// Encodes the descriptor of the CTA pair's MMA (`cta_group::2`): the same fields, with
    /// `m` the pair's M (bits 24-28 hold M >> 4 = 16 for M = 256).
    pub fn encode_pair(&self) -> Result<u32, EncodeError> {
        self.encode_group(true)
    }

    fn encode_group(&self, pair: bool) -> Result<u32, EncodeError> {
        let kind = self.kind()?;
        if pair {
            self.check_shape_pair()?;
        } else {
            self.check_shape()?;
        }
        // The dtype field: F16 = 0, F32 = 1, S32 = 2 (§9.7.16.4.2).
        let dtype = match self.d {
            AccType::F16 => 0u32,
            AccType::F32 => 1,
            AccType::S32 => 2,
        };
        let major = |m: Major| match m {
            Major::K => 0u32,
            Major::MN => 1,
        };
        Ok((dtype << 4)
            | (operand_code(kind, self.a) << 7)
            | (operand_code(kind, self.b) << 10)
            | (major(self.a_major) << 15)
            | (major(self.b_major) << 16)
            | ((self.n >> 3) << 17)
            | ((self.m >> 4) << 24))
    }
}

/// The Tensor Memory address of `lane` (bits 31-16) and 32-bit `column` (bits 15-0)
/// (PTX ISA §9.7.16.1.1 "Tensor Memory Addressing").
///
/// The caller guarantees `lane < 128` and `column < 512` (checked in debug builds); use
/// [`checked_tmem_addr`] where the values are not known to be in range. Adding a lane or column
/// offset to an address from `tcgen05.alloc` is `base + tmem_addr(dl, dc)`.
pub fn tmem_addr(lane: u32, column: u32) -> u32 {
    debug_assert!(
        lane < TMEM_LANES && column < TMEM_COLUMNS,
        "TMEM ({lane}, {column})"
    );
    (lane << 16) | column
}

/// [`tmem_addr`] with range checks: lane below 128, column below 512.
pub fn checked_tmem_addr(lane: u32, column: u32) -> Result<u32, EncodeError> {
    check_max("TMEM lane", u64::from(lane), u64::from(TMEM_LANES - 1))?;
    check_max(
        "TMEM column",
        u64::from(column),
        u64::from(TMEM_COLUMNS - 1),
    )?;
    Ok(tmem_addr(lane, column))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::wgmma::kmajor_desc_fields;

    fn bf16_kmajor(m: u32, n: u32) -> InstrDesc {
        InstrDesc {
            d: AccType::F32,
            a: ElemType::Bf16,
            b: ElemType::Bf16,
            a_major: Major::K,
            b_major: Major::K,
            m,
            n,
        }
    }

    #[test]
    fn instr_desc_of_the_cta_pair() {
        // The pair's M = 256 is M >> 4 = 16 in bits 24-28 (Table 42); N = 64 is 8 << 17.
        let want = (1 << 4) | (1 << 7) | (1 << 10) | (8 << 17) | (16 << 24);
        assert_eq!(bf16_kmajor(256, 64).encode_pair().unwrap(), want);
        // One CTA has no M = 256; the pair has M = 128 or 256 with its own N steps.
        assert!(bf16_kmajor(256, 64).encode().is_err());
        assert!(bf16_kmajor(64, 64).encode_pair().is_err());
        assert!(bf16_kmajor(256, 24).encode_pair().is_err());
        assert!(bf16_kmajor(256, 48).encode_pair().is_ok());
        assert!(bf16_kmajor(128, 48).encode_pair().is_err());
        assert!(bf16_kmajor(128, 64).encode_pair().is_ok());
    }

    #[test]
    fn instr_desc_bf16_f32_m128_n256_kmajor() {
        // dtype F32 = 1     << 4  = 0x0000_0010
        // atype BF16 = 1    << 7  = 0x0000_0080
        // btype BF16 = 1    << 10 = 0x0000_0400
        // transpose A/B = 0 (K-major)
        // N >> 3 = 32       << 17 = 0x0040_0000
        // M >> 4 = 8        << 24 = 0x0800_0000
        // Public cross-check: pyptx's test `test_make_instr_desc_f16bf16_f32` (m=128, n=256,
        // bf16, K-major) expects 0x08400490, and a Julia port's tests cite the same golden.
        assert_eq!(bf16_kmajor(128, 256).encode(), Ok(0x0840_0490));
    }

    #[test]
    fn instr_desc_other_types() {
        let f16 = InstrDesc {
            a: ElemType::F16,
            b: ElemType::F16,
            ..bf16_kmajor(128, 256)
        };
        // F32 acc (0x10), F16 A/B (code 0): 0x10 | 0x40_0000 | 0x800_0000. pyptx: 0x08400010.
        assert_eq!(f16.encode(), Ok(0x0840_0010));
        let tf32 = InstrDesc {
            a: ElemType::F32,
            b: ElemType::F32,
            ..bf16_kmajor(128, 256)
        };
        // TF32 = 2: 2 << 7 = 0x100, 2 << 10 = 0x800; 0x10 | 0x900 | 0x0840_0000. pyptx: 0x08400910.
        assert_eq!(tf32.kind(), Ok(Kind::Tf32));
        assert_eq!(tf32.encode(), Ok(0x0840_0910));
        // M = 64, N = 8, f16 x f16 -> f16, both MN-major:
        // dtype 0; atype/btype 0; transpose A 1 << 15 = 0x8000; transpose B 1 << 16 = 0x1_0000;
        // N >> 3 = 1 << 17 = 0x2_0000; M >> 4 = 4 << 24 = 0x0400_0000.
        let small = InstrDesc {
            d: AccType::F16,
            a: ElemType::F16,
            b: ElemType::F16,
            a_major: Major::MN,
            b_major: Major::MN,
            m: 64,
            n: 8,
        };
        assert_eq!(small.encode(), Ok(0x0403_8000));
        // M = 128, N = 8 is legal for the SS form (Table 39: steps of 8 for M = 64 and 128).
        assert_eq!(bf16_kmajor(128, 8).encode(), Ok(0x0802_0490));
    }

    #[test]
    fn instr_desc_errors() {
        for m in [0, 32, 96, 256] {
            assert!(
                matches!(bf16_kmajor(m, 128).encode(), Err(EncodeError::Shape(_))),
                "M = {m}"
            );
        }
        for n in [0, 4, 12, 260, 264, 512] {
            assert!(
                matches!(bf16_kmajor(128, n).encode(), Err(EncodeError::Shape(_))),
                "N = {n}"
            );
        }
        let f16_acc_bf16 = InstrDesc {
            d: AccType::F16,
            ..bf16_kmajor(128, 128)
        };
        assert!(matches!(f16_acc_bf16.encode(), Err(EncodeError::Types(_))));
        let mixed = InstrDesc {
            b: ElemType::F16,
            ..bf16_kmajor(128, 128)
        };
        assert!(matches!(mixed.encode(), Err(EncodeError::Types(_))));
        let tf32_f16_acc = InstrDesc {
            d: AccType::F16,
            a: ElemType::F32,
            b: ElemType::F32,
            ..bf16_kmajor(128, 128)
        };
        assert!(matches!(tf32_f16_acc.encode(), Err(EncodeError::Types(_))));
    }

    #[test]
    fn smem_desc_kmajor_sw128_bf16_at_0x400() {
        let (lbo, sbo) = kmajor_desc_fields(Swizzle::B128, 2).unwrap();
        let d = SmemDesc {
            start_addr: 0x400,
            lbo,
            sbo,
            base_offset: 0,
            lbo_mode: LboMode::Relative,
            swizzle: Swizzle::B128.into(),
        };
        // start   0x400 >> 4 = 0x40           -> 0x0000_0000_0000_0040
        // LBO     16 >> 4 = 1 << 16           -> 0x0000_0000_0001_0000
        // SBO     1024 >> 4 = 0x40 << 32      -> 0x0000_0040_0000_0000
        // fixed   0b001 << 46                 -> 0x0000_4000_0000_0000
        // base 0, LBO mode 0
        // swizzle 128B = 2 << 61              -> 0x4000_0000_0000_0000
        assert_eq!(d.encode(), Ok(0x4000_4040_0001_0040));
        let c = desc_const_part(lbo, sbo, 0, LboMode::Relative, SwizzleMode::B128).unwrap();
        assert_eq!(c, 0x4000_4040_0001_0000);
        assert_eq!(c | ((0x400 >> 4) & START_ADDR_MASK), 0x4000_4040_0001_0040);
    }

    #[test]
    fn smem_desc_fields_in_place() {
        let d = |swizzle, base_offset, lbo_mode| {
            SmemDesc {
                start_addr: 0,
                lbo: 0,
                sbo: 0,
                base_offset,
                lbo_mode,
                swizzle,
            }
            .encode()
        };
        let fixed = 1u64 << 46; // 0x0000_4000_0000_0000
        assert_eq!(d(SwizzleMode::None, 0, LboMode::Relative), Ok(fixed));
        assert_eq!(
            d(SwizzleMode::B128Atom32B, 0, LboMode::Relative),
            Ok(0x2000_4000_0000_0000)
        );
        assert_eq!(
            d(SwizzleMode::B128, 0, LboMode::Relative),
            Ok(0x4000_4000_0000_0000)
        );
        assert_eq!(
            d(SwizzleMode::B64, 0, LboMode::Relative),
            Ok(0x8000_4000_0000_0000)
        );
        assert_eq!(
            d(SwizzleMode::B32, 0, LboMode::Relative),
            Ok(0xC000_4000_0000_0000)
        );
        // base 7 << 49 = 0x000E_0000_0000_0000; absolute LBO 1 << 52 = 0x0010_0000_0000_0000.
        assert_eq!(
            d(SwizzleMode::None, 7, LboMode::Absolute),
            Ok(0x001E_4000_0000_0000)
        );
        // All 14-bit fields full: none may bleed into bits 14-15, 30-31 or the constant.
        let full = SmemDesc {
            start_addr: 0x3FFF0,
            lbo: 0x3FFF0,
            sbo: 0x3FFF0,
            base_offset: 0,
            lbo_mode: LboMode::Relative,
            swizzle: SwizzleMode::None,
        };
        assert_eq!(full.encode(), Ok(0x0000_7FFF_3FFF_3FFF));
    }

    #[test]
    fn smem_desc_errors() {
        let ok = SmemDesc {
            start_addr: 0x400,
            lbo: 16,
            sbo: 1024,
            base_offset: 0,
            lbo_mode: LboMode::Relative,
            swizzle: SwizzleMode::B128,
        };
        assert!(matches!(
            SmemDesc {
                start_addr: 0x401,
                ..ok
            }
            .encode(),
            Err(EncodeError::Misaligned {
                field: "start address",
                ..
            })
        ));
        assert!(matches!(
            SmemDesc {
                sbo: 0x4_0000,
                ..ok
            }
            .encode(),
            Err(EncodeError::Overflow {
                field: "stride dimension byte offset",
                ..
            })
        ));
        assert!(matches!(
            SmemDesc {
                base_offset: 8,
                ..ok
            }
            .encode(),
            Err(EncodeError::Overflow {
                field: "base offset",
                ..
            })
        ));
    }

    #[test]
    fn tmem_addresses() {
        assert_eq!(tmem_addr(0, 0), 0);
        // lane 32 << 16 = 0x0020_0000, column 5.
        assert_eq!(tmem_addr(32, 5), 0x0020_0005);
        // lane 127 << 16 = 0x007F_0000, column 511 = 0x1FF.
        assert_eq!(checked_tmem_addr(127, 511), Ok(0x007F_01FF));
        assert!(matches!(
            checked_tmem_addr(128, 0),
            Err(EncodeError::Overflow {
                field: "TMEM lane",
                ..
            })
        ));
        assert!(matches!(
            checked_tmem_addr(0, 512),
            Err(EncodeError::Overflow {
                field: "TMEM column",
                ..
            })
        ));
    }

    /// `kind::f8f6f4` (the table's f8f6f4 column): E4M3 = 0 and E5M2 = 1 in atype (bits 7-9)
    /// and btype (10-12), A and B may differ; the same M/N fields as the other kinds.
    #[test]
    fn instr_desc_f8f6f4() {
        let mixed = InstrDesc {
            a: ElemType::E4m3,
            b: ElemType::E5m2,
            ..bf16_kmajor(128, 128)
        };
        // dtype F32 1 << 4 = 0x10; atype E4M3 0; btype E5M2 1 << 10 = 0x400;
        // N >> 3 = 16 << 17 = 0x20_0000; M >> 4 = 8 << 24 = 0x0800_0000.
        assert_eq!(mixed.kind(), Ok(Kind::F8f6f4));
        assert_eq!(mixed.encode(), Ok(0x0820_0410));
        // E5M2 × E5M2, M = 64, N = 8: 0x10 | 1 << 7 = 0x80 | 0x400 | 1 << 17 | 4 << 24.
        let small = InstrDesc {
            a: ElemType::E5m2,
            b: ElemType::E5m2,
            ..bf16_kmajor(64, 8)
        };
        assert_eq!(small.encode(), Ok(0x0402_0490));
        // The pair: M = 256 (16 << 24), N = 32 (4 << 17), E4M3 × E4M3.
        let pair = InstrDesc {
            a: ElemType::E4m3,
            b: ElemType::E4m3,
            ..bf16_kmajor(256, 32)
        };
        assert_eq!(pair.encode_pair(), Ok(0x10 | (4 << 17) | (16 << 24)));
        // An f16 accumulator is legal with 8-bit operands (dtype F16 = 0).
        let f16_acc = InstrDesc {
            d: AccType::F16,
            ..mixed
        };
        assert_eq!(f16_acc.encode(), Ok(0x0820_0400));
        // FP8 with bf16, FP8 with tf32: two kinds in one MMA.
        for other in [ElemType::Bf16, ElemType::F32] {
            let e = InstrDesc { b: other, ..mixed }.encode().unwrap_err();
            assert!(e.to_string().contains("one kind"), "{e}");
        }
        assert_eq!(Kind::F8f6f4.k(), 32);
        assert_eq!(Kind::F8f6f4.ptx(), ".kind::f8f6f4");
    }

    /// `kind::i8` (PTX ISA §9.7.16.4.2, the i8 column: dtype S32 = 2; atype / btype
    /// Unsigned 8b = 0, Signed 8b = 1, A and B may differ; K = 32): the s32 accumulator goes
    /// with it and only with it.
    #[test]
    fn instr_desc_i8() {
        let s8u8 = InstrDesc {
            d: AccType::S32,
            a: ElemType::I8,
            b: ElemType::U8,
            ..bf16_kmajor(128, 64)
        };
        // S32 2 << 4 = 0x20; A S8 1 << 7 = 0x80; B U8 0; N 8 << 17; M 8 << 24.
        assert_eq!(s8u8.kind(), Ok(Kind::I8));
        assert_eq!(s8u8.encode(), Ok(0x0810_00a0));
        let u8s8 = InstrDesc {
            a: ElemType::U8,
            b: ElemType::I8,
            ..s8u8
        };
        assert_eq!(u8s8.encode(), Ok(0x0810_0420));
        assert_eq!(Kind::I8.k(), 32);
        assert_eq!(Kind::I8.ptx(), ".kind::i8");
        // kind::i8 with an f32 accumulator, f16 operands with an s32 one, i8 × e4m3.
        let e = InstrDesc {
            d: AccType::F32,
            ..s8u8
        }
        .encode()
        .unwrap_err();
        assert!(e.to_string().contains("accumulates in s32"), "{e}");
        let e = InstrDesc {
            d: AccType::S32,
            ..bf16_kmajor(128, 64)
        }
        .encode()
        .unwrap_err();
        assert!(e.to_string().contains("kind::i8"), "{e}");
        let e = InstrDesc {
            b: ElemType::E4m3,
            ..s8u8
        }
        .encode()
        .unwrap_err();
        assert!(e.to_string().contains("one kind"), "{e}");
    }

    /// The kind's 6- and 4-bit types, each code of the table (PTX ISA §9.7.16.4.2, the
    /// f8f6f4 column: E2M3 = 3, E3M2 = 4, E2M1 = 5), mixed with each other and with FP8; an
    /// f16 accumulator is legal for all of the kind's types (§9.7.16.2.1, the `.kind::f8f6f4`
    /// row: dtype `.f16` or `.f32`).
    #[test]
    fn instr_desc_f8f6f4_six_and_four_bit() {
        use ElemType::{E2m1, E2m3, E3m2, E4m3, E5m2};
        let at = |a, b| InstrDesc {
            a,
            b,
            ..bf16_kmajor(128, 64)
        };
        // F32 D 0x10, N 64 >> 3 = 8 << 17 = 0x10_0000, M 128 >> 4 = 8 << 24 = 0x0800_0000.
        let base = 0x0810_0010u32;
        for (a, b, codes) in [
            (E2m3, E2m3, (3 << 7) | (3 << 10)),
            (E3m2, E3m2, (4 << 7) | (4 << 10)),
            (E2m1, E2m1, (5 << 7) | (5 << 10)),
            (E3m2, E2m1, (4 << 7) | (5 << 10)),
            (E2m1, E4m3, 5 << 7),
            (E5m2, E2m3, (1 << 7) | (3 << 10)),
        ] {
            assert_eq!(at(a, b).kind(), Ok(Kind::F8f6f4), "{a:?} x {b:?}");
            assert_eq!(at(a, b).encode(), Ok(base | codes), "{a:?} x {b:?}");
        }
        let f16_acc = InstrDesc {
            d: AccType::F16,
            ..at(E2m1, E3m2)
        };
        assert_eq!(f16_acc.encode(), Ok((base & !0x30) | (5 << 7) | (4 << 10)));
        // FP6 with bf16: two kinds.
        let e = at(E3m2, ElemType::Bf16).encode().unwrap_err();
        assert!(e.to_string().contains("one kind"), "{e}");
        assert_eq!(f8f6f4_code(E4m3), 0);
    }

    /// The 8-bit and tf32 K-major layouts have the 16-bit one's descriptor (the layout is
    /// defined in 16-byte units, PTX ISA §9.7.16.4.1 "Shared Memory Descriptor"): an E4M3
    /// `[128, 128]` tile (128-byte rows) at 0x800, and its K-steps of 32 elements (32 bytes,
    /// 2 units of the start field each).
    #[test]
    fn smem_desc_kmajor_sw128_8bit_and_tf32() {
        for bytes in [1, 4] {
            let (lbo, sbo) = kmajor_desc_fields(Swizzle::B128, bytes).unwrap();
            assert_eq!((lbo, sbo), (16, 1024), "{bytes}-byte elements");
        }
        let c = desc_const_part(16, 1024, 0, LboMode::Relative, SwizzleMode::B128).unwrap();
        // start 0x800 >> 4 = 0x80; LBO 1 << 16; SBO 0x40 << 32; 0b001 << 46; 2 << 61.
        let at = |addr: u32| c | u64::from(addr >> 4);
        assert_eq!(at(0x800), 0x4000_4040_0001_0080);
        // K-step 3 of 32 E4M3 (or 8 tf32) elements: 96 bytes on, start field + 6.
        assert_eq!(at(0x800 + 3 * 32), 0x4000_4040_0001_0086);
    }

    #[test]
    fn kinds() {
        assert_eq!(bf16_kmajor(128, 256).kind(), Ok(Kind::F16));
        assert_eq!(Kind::F16.ptx(), ".kind::f16");
        assert_eq!(Kind::Tf32.k(), 8);
        assert_eq!(Kind::F16.k(), 16);
    }
}
