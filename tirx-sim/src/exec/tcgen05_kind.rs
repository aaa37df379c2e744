//! The `.kind` of a `tcgen05.mma` (PTX ISA §9.7.16.10.1 "Matrix multiply and accumulate
//! kinds"; §9.7.16.2.1 "Matrix Shape"), its instruction descriptor and what one instruction
//! reads of each operand. Written from the ISA's tables, independently of tirx's encoder
//! (`tirx-ir/src/encode/tcgen05.rs`), so a wrong encoding shows as a wrong result here.
//!
//! **Kinds run here** (dense, no `.ws`): `kind::f16` (f16 or bf16 operands, K = 16),
//! `kind::tf32` (f32 operands read as tf32, K = 8), `kind::f8f6f4` with E4M3 / E5M2 (and the
//! 6-/4-bit types below) operands (K = 32; A and B may differ) and `kind::i8` (s8 / u8
//! operands, K = 32, an s32 D: the descriptor's dtype S32 = 2, atype/btype Unsigned 8b = 0,
//! Signed 8b = 1). One instruction always covers 32 bytes of each
//! operand row: 16 × 2, 8 × 4 or 32 × 1 bytes. The block-scaled `kind::mxf8f6f4` (E4M3 /
//! E5M2, `.scale_vec::1X`) and `kind::mxf4nvf4` (E2M1 packed two to a byte, K = 64 —
//! again 32 bytes a row —, `.scale_vec::2X` with UE8M0 or `::4X` with UE8M0 / UE4M3 factors)
//! have their own descriptor tables, decoded here; their scaling is `tcgen05_scale.rs`.
//! `kind::mxf4` (MXFP4: E2M1, two UE8M0 factors a row, the same descriptor table) runs as
//! `mxf4nvf4`'s 2X; `mxf4nvf4`'s K = 96 form is refused at decode with the reason. E2M1
//! nibbles of `mxf4nvf4` are read the lower K in the low nibble (little-endian sub-byte
//! packing, as 16-bit elements sit two to a 32-bit cell).
//!
//! **The 6- and 4-bit types of `kind::f8f6f4` / `kind::mxf8f6f4`** (codes E2M3 = 3,
//! E3M2 = 4, E2M1 = 5) are read from shared memory in the packing the ISA requires for those
//! kinds (PTX ISA §9.7.16, "Packing format used for matrix A and B by .kind::mxf8f6f4 in
//! shared memory"; the same groups as the TMA types `.b6x16_p32` / `.b4x16_p64` of §5.5.1):
//! every 16 consecutive K elements of a row packed contiguously into 12 (6-bit) or 8 (4-bit)
//! bytes of a 16-byte group, the rest padding (never read). Within a group element `i` sits
//! at bits `w·i .. w·i + w` of its little-endian bytes — the order a packed stream of `w`-bit
//! values has, and what the TMA's unpacking of a packed global row produces. One
//! instruction's K = 32 is still 32 bytes of a row: two groups. E3M2 (§5.2.3): 3 exponent
//! bits, bias 3, 2 fraction bits; E2M3: 2 exponent bits, bias 1, 3 fraction bits; neither has
//! an infinity or NaN. (A from tensor memory in these types is refused at issue.)
//!
//! **Instruction descriptor** (PTX ISA §9.7.16.4.2 "Instruction descriptor", the table for
//! `.kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8`): bits 0–1 the sparsity selector,
//! 2 sparsity — zero here; 3 saturate (`kind::i8` only: D clamps to the s32 range); 4–5 the
//! D type (F16 = 0 — `kind::f16` with f16 operands and `kind::f8f6f4`, one f16 in the low
//! half of each cell, §9.7.16.10.4.1 —, F32 = 1, S32 = 2 — `kind::i8` —); 6 reserved; 7–9 / 10–12 the A / B type — `kind::f16`: F16 = 0, BF16 = 1;
//! `kind::tf32`: TF32 = 2; `kind::f8f6f4`: E4M3 = 0, E5M2 = 1, E2M3 = 3, E3M2 = 4, E2M1 = 5;
//! 13 / 14 negate A / B; 15 / 16 transpose A / B (MN-major); 17–22 N >> 3; 23 reserved;
//! 24–28 M >> 4; 29 reserved; 30–31 the `.ws` shift (zero).
//!
//! **tf32** (PTX ISA §5.2.3 "Alternate Floating-Point Data Formats": the same range as f32,
//! at least 10 fraction bits, the internal layout implementation-defined): the tensor core
//! reads an f32 operand's sign, exponent and top 10 fraction bits and ignores the low 13 —
//! the emulator truncates each f32 to those 19 bits (a value already of tf32 precision, such
//! as one `cvt.rna.tf32.f32` produced, is read exactly).
//!
//! **E4M3 / E5M2** (§5.2.3): E5M2 is IEEE-like (5 exponent bits, bias 15, infinities and
//! NaNs at exponent 31); E4M3 has 4 exponent bits, bias 7, no infinity, and NaN only at
//! `0x7f` / `0xff` (exponent 15 with other fractions are normal numbers up to 448).

use super::float::{self, Rnd};

/// The `.kind` qualifier of a `tcgen05.mma`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `.kind::f16`.
    F16,
    /// `.kind::tf32`.
    Tf32,
    /// `.kind::f8f6f4`.
    F8f6f4,
    /// `.kind::i8`: s8 / u8 operands (A and B may differ), an s32 D, K = 32 (32 bytes a
    /// row); D (+)= Σ a·b in two's-complement 32-bit arithmetic (saturation, descriptor
    /// bit 3, is refused at decode).
    I8,
    /// `.kind::mxf8f6f4` with `.block_scale.scale_vec::1X` (PTX ISA §9.7.16.10.7 "Block
    /// Scaling"): E4M3 / E5M2 operands, one UE8M0 scale factor per row of A and per column of
    /// B for each K = 32 instruction.
    MxF8f6f4,
    /// `.kind::mxf4nvf4` with `.block_scale.scale_vec::2X` or `::4X` (the factors per row
    /// for one K = 64 instruction: 2 or 4; §9.7.16.10.7.1): E2M1 operands packed two to a
    /// byte, UE8M0 (2X, 4X) or UE4M3 (4X) factors. `from_modifier` gives 0 here; the decoder
    /// sets it from the scale-vector modifier.
    MxF4Nvf4(u32),
    /// `.kind::mxf4` with `.block_scale` (`.scale_vec::2X`, or `.block32`, its alias and its
    /// default; §9.7.16.10.7.1 Tables 54-55): MXFP4 — E2M1 operands as `kind::mxf4nvf4`'s,
    /// two UE8M0 factors a row for each K = 64 instruction, the descriptor of the same table
    /// (§9.7.16.4.2, "Instruction descriptor format for .kind::mxf4 and .kind::mxf4nvf4", the
    /// mxf4 column: UE8M0 = 1 the only scale type, data IDs 0 or 2).
    MxF4,
}

impl Kind {
    /// The kind a `tcgen05.mma` modifier names (`kind::f16` …), or `None`.
    pub fn from_modifier(m: &str) -> Option<Kind> {
        Some(match m {
            "kind::f16" => Kind::F16,
            "kind::tf32" => Kind::Tf32,
            "kind::f8f6f4" => Kind::F8f6f4,
            "kind::i8" => Kind::I8,
            "kind::mxf8f6f4" => Kind::MxF8f6f4,
            "kind::mxf4nvf4" => Kind::MxF4Nvf4(0),
            "kind::mxf4" => Kind::MxF4,
            _ => return None,
        })
    }

    /// K of one dense instruction (§9.7.16.2.1, Table "Various combinations of .kind and
    /// shapes").
    pub fn k(self) -> u32 {
        match self {
            Kind::F16 => 16,
            Kind::Tf32 => 8,
            Kind::F8f6f4 | Kind::MxF8f6f4 | Kind::I8 => 32,
            Kind::MxF4Nvf4(_) | Kind::MxF4 => 64,
        }
    }

    /// Scale factors per row of A (column of B) for one instruction: 1 (`scale_vec::1X`),
    /// 2 or 4; 0 for the unscaled kinds.
    pub fn scale_vec(self) -> u32 {
        match self {
            Kind::MxF8f6f4 => 1,
            Kind::MxF4Nvf4(v) => v,
            Kind::MxF4 => 2,
            _ => 0,
        }
    }

    /// Whether the kind is block-scaled (its MMA takes `[scale-A], [scale-B]`).
    pub fn scaled(self) -> bool {
        matches!(self, Kind::MxF8f6f4 | Kind::MxF4Nvf4(_) | Kind::MxF4)
    }
}

/// The element format of one operand, from the instruction descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// tf32, stored as an f32.
    Tf32,
    /// FP8 E4M3.
    E4m3,
    /// FP8 E5M2.
    E5m2,
    /// FP4 E2M1 (§5.2.3: 1 sign, 2 exponent bits with bias 1, 1 fraction bit; 0, 0.5, 1,
    /// 1.5, 2, 3, 4, 6 and their negatives), packed two to a byte, the lower K in the low
    /// nibble.
    E2m1,
    /// A signed 8-bit integer (`kind::i8`).
    S8,
    /// An unsigned 8-bit integer (`kind::i8`).
    U8,
    /// FP6 E3M2 in `kind::f8f6f4`'s padded shared-memory groups (16 in 16 bytes).
    E3m2,
    /// FP6 E2M3, likewise.
    E2m3,
    /// FP4 E2M1 in `kind::f8f6f4`'s padded groups (16 in the first 8 of 16 bytes) — not
    /// `mxf4nvf4`'s dense nibbles (`E2m1`).
    E2m1Padded,
}

impl Elem {
    /// Bits per element of a padded 16-element group (6 or 4), or `None` for the byte-aligned
    /// and dense-nibble formats.
    pub fn padded_bits(self) -> Option<u32> {
        match self {
            Elem::E3m2 | Elem::E2m3 => Some(6),
            Elem::E2m1Padded => Some(4),
            _ => None,
        }
    }

    /// Bytes one element takes in shared or tensor memory.
    pub fn bytes(self) -> u32 {
        match self {
            Elem::F16 | Elem::Bf16 => 2,
            Elem::Tf32 => 4,
            Elem::E4m3 | Elem::E5m2 => 1,
            // Two to a byte: `operand_rows` reads the nibble.
            Elem::E2m1 => 1,
            // One byte of footprint each (16 in a 16-byte group): `operand_rows` unpacks.
            Elem::E3m2 | Elem::E2m3 | Elem::E2m1Padded => 1,
            Elem::S8 | Elem::U8 => 1,
        }
    }

    /// The exact value of an element whose little-endian bytes, as an integer, are `bits`.
    pub fn value(self, bits: u32) -> f64 {
        match self {
            Elem::F16 => float::decode(u64::from(bits & 0xffff), float::F16),
            Elem::Bf16 => float::decode(u64::from(bits & 0xffff), float::BF16),
            Elem::Tf32 => f64::from(f32::from_bits(bits & !0x1fff)),
            Elem::E5m2 => float::decode(u64::from(bits & 0xff), E5M2),
            Elem::E4m3 => e4m3(bits as u8),
            Elem::E2m1 | Elem::E2m1Padded => e2m1(bits as u8),
            Elem::S8 => f64::from(bits as u8 as i8),
            Elem::U8 => f64::from(bits as u8),
            Elem::E3m2 => fp6(bits, 3, 2),
            Elem::E2m3 => fp6(bits, 2, 3),
        }
    }

    /// The element's format code in the descriptor's atype/btype field, per kind.
    fn decode(kind: Kind, code: u32) -> Result<Elem, String> {
        Ok(match (kind, code) {
            (Kind::F16, 0) => Elem::F16,
            (Kind::F16, 1) => Elem::Bf16,
            (Kind::Tf32, 2) => Elem::Tf32,
            (Kind::F8f6f4 | Kind::MxF8f6f4, 0) => Elem::E4m3,
            (Kind::F8f6f4 | Kind::MxF8f6f4, 1) => Elem::E5m2,
            // The kind::i8 column: Unsigned 8b = 0, Signed 8b = 1.
            (Kind::I8, 0) => Elem::U8,
            (Kind::I8, 1) => Elem::S8,
            (Kind::F8f6f4 | Kind::MxF8f6f4, 3) => Elem::E2m3,
            (Kind::F8f6f4 | Kind::MxF8f6f4, 4) => Elem::E3m2,
            (Kind::F8f6f4 | Kind::MxF8f6f4, 5) => Elem::E2m1Padded,
            (k, c) => return Err(format!("format code {c} is not a {k:?} operand type")),
        })
    }
}

/// The value of an E2M1 nibble (the low 4 bits of `b`): sign at bit 3, exponent at bits
/// 2-1 (bias 1, subnormal at 0), fraction at bit 0; no infinity or NaN.
fn e2m1(b: u8) -> f64 {
    let (neg, e, f) = (b & 8 != 0, i32::from((b >> 1) & 3), f64::from(b & 1));
    let mag = if e == 0 {
        f * 0.5
    } else {
        (2.0 + f) * 2f64.powi(e - 1 - 1)
    };
    if neg { -mag } else { mag }
}

/// The value of a 6-bit float (the low 6 bits of `b`): sign at bit 5, `e` exponent bits with
/// bias `2^(e−1) − 1`, `f` fraction bits, subnormal at exponent 0; no infinity or NaN.
fn fp6(b: u32, e: u32, f: u32) -> f64 {
    let neg = (b >> 5) & 1 == 1;
    let (ex, fr) = (
        ((b >> f) & ((1 << e) - 1)) as i32,
        f64::from(b & ((1 << f) - 1)),
    );
    let bias = (1 << (e - 1)) - 1;
    let one = f64::from(1u32 << f);
    let mag = if ex == 0 {
        fr * 2f64.powi(1 - bias - f as i32)
    } else {
        (one + fr) * 2f64.powi(ex - bias - f as i32)
    };
    if neg { -mag } else { mag }
}

/// The value of a UE4M3 scale factor: an unsigned E4M3 (bias 7, 3 fraction bits, NaN at
/// `0x7f`); a byte with bit 7 set is no UE4M3 (NaN).
pub fn ue4m3(b: u8) -> f64 {
    if b & 0x80 != 0 { f64::NAN } else { e4m3(b) }
}

/// FP8 E5M2: IEEE-like, 5 exponent and 2 fraction bits.
const E5M2: float::Format = float::Format { frac: 2, exp: 5 };

/// The value of an FP8 E4M3 byte: bias 7, subnormals at exponent 0, NaN at `S.1111.111`,
/// no infinities.
fn e4m3(b: u8) -> f64 {
    let (neg, e, f) = (b >> 7 == 1, i32::from((b >> 3) & 0xf), f64::from(b & 7));
    let mag = match (e, b & 0x7f) {
        (_, 0x7f) => f64::NAN,
        (0, _) => f * 2f64.powi(-6 - 3),
        _ => (8.0 + f) * 2f64.powi(e - 7 - 3),
    };
    if neg { -mag } else { mag }
}

/// Rounds `x` to the nearest E4M3 (ties to even, saturating at ±448) — for references.
pub fn to_e4m3(x: f64) -> u8 {
    (0..=0x7eu8)
        .chain(0x80..=0xfe)
        .min_by(|&p, &q| {
            let (dp, dq) = ((e4m3(p) - x).abs(), (e4m3(q) - x).abs());
            dp.total_cmp(&dq).then((p & 1).cmp(&(q & 1)))
        })
        .expect("non-empty")
}

/// Rounds `x` to the nearest E5M2 (ties to even) — for references.
pub fn to_e5m2(x: f64) -> u8 {
    float::round_to(x, E5M2, Rnd::Rn) as u8
}

/// A decoded instruction descriptor of a dense `kind::f16`, `kind::tf32` or `kind::f8f6f4`
/// MMA with an f32 accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstrDesc {
    /// M (64 or 128 for `cta_group::1`; the pair's M for `cta_group::2`).
    pub m: u32,
    /// N.
    pub n: u32,
    /// A's element format.
    pub a: Elem,
    /// B's element format.
    pub b: Elem,
    /// Negate A.
    pub neg_a: bool,
    /// Negate B.
    pub neg_b: bool,
    /// A MN-major.
    pub mn_a: bool,
    /// B MN-major.
    pub mn_b: bool,
    /// The block-scaled kinds' scale-factor data IDs (A's, B's): which byte of each
    /// 32-bit TMEM cell holds the scale factors (the first, with 2X / 4X); `None` for the
    /// other kinds.
    pub sf_ids: Option<(u32, u32)>,
    /// The factors are UE4M3 (`kind::mxf4nvf4`'s bit 23 = 0), not UE8M0.
    pub sf_ue4m3: bool,
    /// D is f16 (dtype F16 = 0: `kind::f16` with f16 operands, or `kind::f8f6f4`), one
    /// element in the low half of each 32-bit cell (§9.7.16.10.4.1); else f32 (or s32).
    pub d_f16: bool,
    /// `kind::i8` saturates D to the s32 range (bit 3, "Saturate for integer types").
    pub sat: bool,
}

/// Decodes the instruction descriptor `d` of a `kind` MMA, or says why it is refused.
pub fn decode_idesc(d: u32, kind: Kind) -> Result<InstrDesc, String> {
    if kind.scaled() {
        return decode_scaled(d, kind);
    }
    let f = |lo: u32, n: u32| (d >> lo) & ((1 << n) - 1);
    // Bit 3 saturates the integer kind's D; the float kinds' is 0 ("NA").
    let sat = f(3, 1) == 1;
    if f(0, 3) != 0 || f(30, 2) != 0 || (sat && kind != Kind::I8) {
        return Err(format!(
            "instruction descriptor {d:#x}: sparsity, shift or (outside kind::i8) saturation set"
        ));
    }
    if f(6, 1) != 0 || f(23, 1) != 0 || f(29, 1) != 0 {
        return Err(format!(
            "instruction descriptor {d:#x}: a reserved bit (6, 23 or 29) is set"
        ));
    }
    // The D type (bits 4-5): F16 = 0, F32 = 1, S32 = 2. kind::i8 takes S32 (and only it
    // does), kind::tf32 F32, kind::f16 and kind::f8f6f4 F16 or F32 (Table 42's dtype row).
    let (dtype, f16_ok) = (f(4, 2), matches!(kind, Kind::F16 | Kind::F8f6f4));
    let want_ok = match kind {
        Kind::I8 => dtype == 2,
        _ => dtype == 1 || (dtype == 0 && f16_ok),
    };
    if !want_ok {
        return Err(format!(
            "instruction descriptor {d:#x}: dtype {dtype} under {kind:?}; it takes {}",
            match kind {
                Kind::I8 => "the s32 accumulator (2) of kind::i8",
                Kind::F16 | Kind::F8f6f4 => "an f16 (0) or f32 (1) accumulator",
                _ => "an f32 accumulator (1)",
            }
        ));
    }
    let (a, b) = (
        operand_fmt(d, kind, 7, "A")?,
        operand_fmt(d, kind, 10, "B")?,
    );
    // Table 39: under kind::f16 an f16 D goes with f16 operands only (bf16 accumulates in f32).
    if dtype == 0 && kind == Kind::F16 && a != Elem::F16 {
        return Err(format!(
            "instruction descriptor {d:#x}: an f16 D (dtype 0) with {a:?} operands; kind::f16 \
             accumulates bf16 in f32 only"
        ));
    }
    // `kind::f16` and `kind::tf32` take one operand type; `kind::f8f6f4` may mix E4M3 and
    // E5M2 (the ISA lists atype and btype separately).
    if a != b && !matches!(kind, Kind::F8f6f4 | Kind::I8) {
        return Err(format!(
            "instruction descriptor {d:#x}: A is {a:?} but B is {b:?} under {kind:?}"
        ));
    }
    Ok(InstrDesc {
        m: f(24, 5) << 4,
        n: f(17, 6) << 3,
        a,
        b,
        neg_a: f(13, 1) == 1,
        neg_b: f(14, 1) == 1,
        mn_a: f(15, 1) == 1,
        mn_b: f(16, 1) == 1,
        sf_ids: None,
        sf_ue4m3: false,
        d_f16: dtype == 0,
        sat,
    })
}

/// The A or B format of descriptor `d` (the 3-bit field at `lo`) in `kind`'s column.
fn operand_fmt(d: u32, kind: Kind, lo: u32, which: &str) -> Result<Elem, String> {
    Elem::decode(kind, (d >> lo) & 7)
        .map_err(|e| format!("instruction descriptor {d:#x} ({kind:?}): {which} {e}"))
}

/// The descriptor of `kind::mxf8f6f4` (PTX ISA §9.7.16.4.2, the table "Instruction
/// descriptor format for .kind::mxf8f6f4"): bits 0–1 reserved, 2 sparsity, 3 reserved (all
/// zero here); 4–5 B's scale-factor data ID; 6 reserved; 7–9 / 10–12 atype / btype (E4M3 = 0,
/// E5M2 = 1, E2M3 = 3, E3M2 = 4, E2M1 = 5); 13 / 14 negate A / B; 15 / 16 transpose A / B;
/// 17–22 N >> 3; 23 the scale type (UE8M0 = 1, the only one of this kind); 24–26 reserved;
/// 27–28 M >> 7 (not M >> 4); 29–30 A's scale-factor data ID; 31 reserved. There is no
/// D-type field: D is f32.
fn decode_scaled(d: u32, kind: Kind) -> Result<InstrDesc, String> {
    // kind::mxf4 is mxf4nvf4's 2X (UE8M0, IDs 0 or 2) under the same table.
    if kind == Kind::MxF4 {
        return decode_mxf4nvf4(d, 2);
    }
    if let Kind::MxF4Nvf4(v) = kind {
        return decode_mxf4nvf4(d, v);
    }
    let f = |lo: u32, n: u32| (d >> lo) & ((1 << n) - 1);
    if f(0, 4) != 0 || f(6, 1) != 0 || f(24, 3) != 0 || f(31, 1) != 0 {
        return Err(format!(
            "instruction descriptor {d:#x} ({kind:?}): sparsity or a reserved bit (0-3, 6, \
             24-26, 31) is set"
        ));
    }
    if f(23, 1) != 1 {
        return Err(format!(
            "instruction descriptor {d:#x} ({kind:?}): bit 23 (scale type) must be UE8M0 = 1"
        ));
    }
    Ok(InstrDesc {
        m: f(27, 2) << 7,
        n: f(17, 6) << 3,
        a: operand_fmt(d, kind, 7, "A")?,
        b: operand_fmt(d, kind, 10, "B")?,
        neg_a: f(13, 1) == 1,
        neg_b: f(14, 1) == 1,
        mn_a: f(15, 1) == 1,
        mn_b: f(16, 1) == 1,
        sf_ids: Some((f(29, 2), f(4, 2))),
        sf_ue4m3: false,
        d_f16: false,
        sat: false,
    })
}

/// The descriptor of `kind::mxf4nvf4` with `v` factors a row (PTX ISA §9.7.16.4.2, the table
/// "Instruction descriptor format for .kind::mxf4 and .kind::mxf4nvf4"): bits 0–1, 3, 6, 12
/// and 24–26 reserved, 2 sparsity (all zero here); 4–5 B's data ID (0 or 2); 7–9 atype and
/// 10–11 btype, E2M1 = 1 the only code; 13 / 14 negate; 15 / 16 transpose, 0 only (K-major);
/// 17–22 N >> 3; 23 the scale type, UE4M3 = 0 or UE8M0 = 1; 27–28 M >> 7; 29–30 A's data ID
/// (0 or 2); 31 the K dimension, dense K = 64 = 0 (K = 96 is refused here). The scale
/// vector's rules (§9.7.16.10.7.1): 2X takes UE8M0 and IDs 0 or 2; 4X takes both types and
/// ID 0 (its four factors fill the cell).
fn decode_mxf4nvf4(d: u32, v: u32) -> Result<InstrDesc, String> {
    let f = |lo: u32, n: u32| (d >> lo) & ((1 << n) - 1);
    let bad = |what: String| {
        Err(format!(
            "instruction descriptor {d:#x} (kind::mxf4nvf4): {what}"
        ))
    };
    if f(0, 4) != 0 || f(6, 1) != 0 || f(12, 1) != 0 || f(24, 3) != 0 {
        return bad("sparsity or a reserved bit (0-3, 6, 12, 24-26) is set".into());
    }
    if f(31, 1) != 0 {
        return bad("bit 31 asks for K = 96, which is not emulated".into());
    }
    if f(7, 3) != 1 || f(10, 2) != 1 {
        return bad(format!(
            "atype {} / btype {}: E2M1 = 1 is the kind's only operand type",
            f(7, 3),
            f(10, 2)
        ));
    }
    if f(15, 2) != 0 {
        return bad("a transpose bit is set: the kind reads K-major operands only".into());
    }
    let ue4m3 = f(23, 1) == 0;
    let (ida, idb) = (f(29, 2), f(4, 2));
    let ids_ok = |id: u32| if v == 4 { id == 0 } else { id == 0 || id == 2 };
    if ue4m3 && v != 4 {
        return bad(format!(
            "UE4M3 factors (bit 23 = 0) need .scale_vec::4X, not {v}X"
        ));
    }
    if !ids_ok(ida) || !ids_ok(idb) {
        return bad(format!(
            "scale-factor data IDs A {ida}, B {idb}: .scale_vec::{v}X takes {}",
            if v == 4 { "0" } else { "0 or 2" }
        ));
    }
    Ok(InstrDesc {
        m: f(27, 2) << 7,
        n: f(17, 6) << 3,
        a: Elem::E2m1,
        b: Elem::E2m1,
        neg_a: f(13, 1) == 1,
        neg_b: f(14, 1) == 1,
        mn_a: false,
        mn_b: false,
        sf_ids: Some((ida, idb)),
        sf_ue4m3: ue4m3,
        d_f16: false,
        sat: false,
    })
}

/// The value of a UE8M0 scale factor (an unsigned 8-bit exponent, bias 127, no fraction:
/// 2^(e − 127); `0xff` is NaN) — the OCP MX format the ISA's `.ue8m0` names (§5.2.3).
pub fn ue8m0(e: u8) -> f64 {
    if e == 0xff {
        f64::NAN
    } else {
        2f64.powi(i32::from(e) - 127)
    }
}

/// The value of element `k` of a row whose bytes start at `bytes` (little-endian), negated
/// when asked, or `None` past the slice.
pub(crate) fn element(bytes: &[u8], e: Elem, neg: bool) -> Option<f64> {
    let w = e.bytes() as usize;
    let b = bytes.get(..w)?;
    let bits = b
        .iter()
        .rev()
        .fold(0u32, |acc, &x| (acc << 8) | u32::from(x));
    let v = e.value(bits);
    Some(if neg { -v } else { v })
}
