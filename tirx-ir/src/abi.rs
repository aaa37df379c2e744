//! The kernel signature: the ABI shared by the compiler (which produces it) and the runtime
//! (which checks arguments against it and builds the launch parameter buffer).
//!
//! Invariants:
//! - `params` lists the PTX kernel parameters in declaration order; the PTX entry point takes
//!   exactly these, with the sizes and alignments `AbiParam::size_align` gives.
//! - Every `Tensor` named by an `AbiParam` is declared in `tensors`; every shape symbol used by a
//!   tensor, a `Dim` parameter or the grid is a symbol of some tensor's shape.
//! - The signature has a one-line-per-item text form (`Display`, parsed back by
//!   `Signature::parse`), embedded in the macro output and read by the runtime.

use std::fmt;

/// Element type of a tensor or of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// bfloat16.
    Bf16,
    /// IEEE half.
    F16,
    /// IEEE single.
    F32,
    /// FP8 E4M3 (PTX ISA §5.2.3 "Alternate Floating-Point Data Formats": 4 exponent bits,
    /// 3 fraction bits, no infinity, NaN `0x7f`/`0xff`): an MMA operand type
    /// (`tcgen05.mma.kind::f8f6f4`), moved as bytes.
    E4m3,
    /// FP8 E5M2 (§5.2.3: 5 exponent bits, 2 fraction bits, IEEE-like): an MMA operand type.
    E5m2,
    /// UE8M0, a block-scale factor (PTX ISA §5.2.3: 8 exponent bits, no sign, no fraction:
    /// the value 2^(e − 127), `0xff` NaN): the factors of `tcgen05.mma.kind::mxf8f6f4
    /// .block_scale` (§9.7.16.10.7), staged through shared memory into tensor memory by
    /// `tcgen05.cp`, moved as bytes.
    Ue8m0,
    /// Two FP4 E2M1 values packed in one byte (PTX ISA §5.2.3: 1 sign, 2 exponent bits with
    /// bias 1, 1 fraction bit: ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}); the element of the lower K
    /// index in bits 3-0, the next in bits 7-4 (the ISA's `.e2m1x2` packing: `cvt`'s
    /// Semantics, §9.7.9.21, put the second source `b` in `d[3:0]` and `cvt.f16x2.e2m1x2`
    /// takes bits 3-0 to the f16x2's lower half, its first element). An operand type of
    /// `tcgen05.mma.kind::mxf4nvf4.block_scale` (§9.7.16.10.7); a tile's or tensor's last
    /// dimension counts bytes (pairs), so a 128-byte row holds 256 values. Moved as bytes.
    E2m1x2,
    /// FP6 E3M2 (PTX ISA §5.2.3: 1 sign, 3 exponent bits with bias 3, 2 fraction bits; no
    /// infinity or NaN, the largest magnitude 28), an operand type of `tcgen05.mma
    /// .kind::f8f6f4` / `.kind::mxf8f6f4` only, stored in the ISA's shared-memory packing for
    /// those kinds (§9.7.16, "Packing format used for matrix A and B by .kind::mxf8f6f4 in
    /// shared memory", the TMA type `.b6x16_p32` of §5.5.1): each 16 consecutive K elements
    /// packed contiguously, element `i` in bits `6i..6i+6` of the group's little-endian
    /// 12 bytes, then 4 bytes of padding — one byte of footprint per element, so a tile's or
    /// tensor's last dimension counts elements (a multiple of 16). Moved as bytes.
    E3m2,
    /// FP6 E2M3 (§5.2.3: 1 sign, 2 exponent bits with bias 1, 3 fraction bits; no infinity
    /// or NaN, the largest magnitude 7.5): as `e3m2`, the same 16-in-16-bytes packing.
    E2m3,
    /// FP4 E2M1 as `kind::f8f6f4` / `kind::mxf8f6f4` read it (§5.2.3: the values of
    /// `e2m1x2`'s nibbles), in the ISA's shared-memory packing for those kinds (the TMA type
    /// `.b4x16_p64`): each 16 consecutive K elements in the group's first 8 bytes, element
    /// `i` in bits `4i..4i+4`, then 8 bytes of padding — one byte of footprint per element,
    /// the last dimension counting elements. (Dense `e2m1x2` is `kind::mxf4nvf4`'s form.)
    E2m1,
    /// UE4M3, NVFP4's block-scale factor (§5.2.3: an unsigned E4M3, bias 7, 3 fraction bits,
    /// `0x7f` NaN): the factors of `kind::mxf4nvf4.block_scale.scale_vec::4X`, one per 16
    /// elements; staged as `ue8m0` is. Moved as bytes.
    Ue4m3,
    /// 8-bit two's-complement signed integer (PTX `.s8`): an operand type of `tcgen05.mma
    /// .kind::i8` only (PTX ISA §9.7.16.10.1), in shared memory, K-major; accumulated into an
    /// `i32` tensor-memory tile (`.s32`). Moved as bytes.
    I8,
    /// 8-bit unsigned integer (PTX `.u8`): as `i8`, the other operand type of `kind::i8`.
    U8,
    /// 32-bit two's-complement signed integer (PTX `.s32`): token ids, class targets,
    /// offsets. A register tile of it takes integer arithmetic only (no float op without a
    /// `cast`); moved as 4-byte words.
    I32,
    /// 32-bit unsigned integer (PTX `.u32`): as `i32`, with logical shifts and unsigned
    /// division, comparisons, `min`/`max`.
    U32,
    /// 64-bit two's-complement signed integer (PTX `.s64`): offsets and addresses past 2³¹
    /// elements. As `i32`, in 64-bit registers (`.s64`), moved as 8-byte words.
    I64,
    /// 64-bit unsigned integer (PTX `.u64`): as `u32`, in 64-bit registers.
    U64,
}

impl ElemType {
    /// Size in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            ElemType::E4m3
            | ElemType::E5m2
            | ElemType::Ue8m0
            | ElemType::E2m1x2
            | ElemType::E3m2
            | ElemType::E2m3
            | ElemType::E2m1
            | ElemType::I8
            | ElemType::U8
            | ElemType::Ue4m3 => 1,
            ElemType::Bf16 | ElemType::F16 => 2,
            ElemType::F32 | ElemType::I32 | ElemType::U32 => 4,
            ElemType::I64 | ElemType::U64 => 8,
        }
    }
    /// The DSL / text spelling.
    pub fn name(self) -> &'static str {
        match self {
            ElemType::Bf16 => "bf16",
            ElemType::F16 => "f16",
            ElemType::F32 => "f32",
            ElemType::E4m3 => "e4m3",
            ElemType::E5m2 => "e5m2",
            ElemType::Ue8m0 => "ue8m0",
            ElemType::E2m1x2 => "e2m1x2",
            ElemType::E3m2 => "e3m2",
            ElemType::E2m3 => "e2m3",
            ElemType::E2m1 => "e2m1",
            ElemType::I8 => "i8",
            ElemType::U8 => "u8",
            ElemType::Ue4m3 => "ue4m3",
            ElemType::I32 => "i32",
            ElemType::U32 => "u32",
            ElemType::I64 => "i64",
            ElemType::U64 => "u64",
        }
    }
    /// Parses the DSL / text spelling.
    pub fn from_name(s: &str) -> Option<ElemType> {
        Some(match s {
            "bf16" => ElemType::Bf16,
            "f16" => ElemType::F16,
            "f32" => ElemType::F32,
            "e4m3" => ElemType::E4m3,
            "e5m2" => ElemType::E5m2,
            "ue8m0" => ElemType::Ue8m0,
            "e2m1x2" => ElemType::E2m1x2,
            "e3m2" => ElemType::E3m2,
            "e2m3" => ElemType::E2m3,
            "e2m1" => ElemType::E2m1,
            "i8" => ElemType::I8,
            "u8" => ElemType::U8,
            "ue4m3" => ElemType::Ue4m3,
            "i32" => ElemType::I32,
            "u32" => ElemType::U32,
            "i64" => ElemType::I64,
            "u64" => ElemType::U64,
            _ => return None,
        })
    }
    /// Whether it is an 8-bit floating-point type (an MMA operand only: no arithmetic on it
    /// in registers).
    pub fn is_fp8(self) -> bool {
        matches!(self, ElemType::E4m3 | ElemType::E5m2)
    }
    /// Whether it is a block-scale factor type (a `tcgen05.mma` scale operand only: in
    /// shared memory as `tcgen05.cp`'s source image, in tensor memory as the MMA reads it).
    pub fn is_scale(self) -> bool {
        matches!(self, ElemType::Ue8m0 | ElemType::Ue4m3)
    }
    /// Whether it is packed FP4 (`e2m1x2`: an operand of the block-scaled `kind::mxf4nvf4`
    /// MMA only, in shared memory; no arithmetic on it in registers).
    pub fn is_fp4(self) -> bool {
        matches!(self, ElemType::E2m1x2)
    }
    /// Whether it is one of `kind::f8f6f4`'s 6- or 4-bit types (`e3m2`, `e2m3`, `e2m1`) in
    /// the padded shared-memory packing: an MMA operand only, in shared memory, K-major.
    pub fn is_f6f4(self) -> bool {
        matches!(self, ElemType::E3m2 | ElemType::E2m3 | ElemType::E2m1)
    }
    /// The bits of one element of a padded `is_f6f4` type (6 or 4), else `None`.
    pub fn packed_bits(self) -> Option<u32> {
        match self {
            ElemType::E3m2 | ElemType::E2m3 => Some(6),
            ElemType::E2m1 => Some(4),
            _ => None,
        }
    }
    /// Whether it is an 8-bit integer (`i8`, `u8`): a `kind::i8` MMA operand only, in shared
    /// memory, K-major.
    pub fn is_int8(self) -> bool {
        matches!(self, ElemType::I8 | ElemType::U8)
    }
    /// Whether it is a 32- or 64-bit integer (`i32`, `u32`, `i64`, `u64`): register tiles and
    /// global tensors only, integer arithmetic only.
    pub fn is_int(self) -> bool {
        matches!(
            self,
            ElemType::I32 | ElemType::U32 | ElemType::I64 | ElemType::U64
        )
    }
    /// Whether it is a 64-bit integer (`i64`, `u64`).
    pub fn is_int64(self) -> bool {
        matches!(self, ElemType::I64 | ElemType::U64)
    }
}

/// Shared-memory swizzle mode of a layout (and of the TMA box that writes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Swizzle {
    /// No swizzle (interleave none).
    None,
    /// 32-byte swizzle.
    B32,
    /// 64-byte swizzle.
    B64,
    /// 128-byte swizzle.
    B128,
}

impl Swizzle {
    /// Span in bytes of one swizzle row (the largest inner box extent TMA accepts with it),
    /// or `None` when unswizzled.
    pub fn span_bytes(self) -> Option<u32> {
        match self {
            Swizzle::None => None,
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            Swizzle::B128 => Some(128),
        }
    }
    /// Alignment in bytes the shared-memory buffer needs for the pattern to repeat from its
    /// base (8 rows of the span; 1024 B for 128B swizzle).
    pub fn align_bytes(self) -> u32 {
        match self {
            Swizzle::None => 128,
            Swizzle::B32 => 256,
            Swizzle::B64 => 512,
            Swizzle::B128 => 1024,
        }
    }
    /// The DSL / text spelling.
    pub fn name(self) -> &'static str {
        match self {
            Swizzle::None => "none",
            Swizzle::B32 => "B32",
            Swizzle::B64 => "B64",
            Swizzle::B128 => "B128",
        }
    }
    /// Parses the DSL / text spelling.
    pub fn from_name(s: &str) -> Option<Swizzle> {
        Some(match s {
            "none" | "None" => Swizzle::None,
            "B32" => Swizzle::B32,
            "B64" => Swizzle::B64,
            "B128" => Swizzle::B128,
            _ => return None,
        })
    }
}

/// A global tensor argument of the kernel: its element type and its shape as symbols,
/// outermost dimension first (row-major: the last dimension is contiguous).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorDecl {
    /// Parameter name in the user's function.
    pub name: String,
    /// Element type.
    pub elem: ElemType,
    /// Shape symbols, outermost first (e.g. `["M", "K"]`).
    pub shape: Vec<String>,
}

/// One PTX kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbiParam {
    /// A `CUtensorMap` (128 bytes, 64-byte aligned, passed by value) for `tensor`, with the box
    /// the kernel loads or stores, innermost dimension first as the TMA encoder takes it.
    TensorMap {
        /// The tensor it describes.
        tensor: String,
        /// Box extents in elements, innermost first.
        box_dims: Vec<u32>,
        /// Swizzle the box is written with.
        swizzle: Swizzle,
    },
    /// The tensor's base address (`u64`).
    Pointer {
        /// The tensor.
        tensor: String,
    },
    /// The tensor's stride of dimension `dim` (outermost = 0), in elements, as `u64`.
    Stride {
        /// The tensor.
        tensor: String,
        /// Dimension index, outermost first.
        dim: usize,
    },
    /// A shape symbol's runtime value, as `u32`.
    Dim {
        /// The symbol (e.g. `"M"`).
        symbol: String,
    },
    /// A scalar kernel argument (one of [`Signature::scalars`]): `.f32`, `.s32`, `.u32`, `.s64` or `.u64` as
    /// [`Signature::scalar_types`] says.
    Scalar {
        /// The argument's name in the user's function.
        name: String,
    },
}

impl AbiParam {
    /// The PTX parameter name: `p_<tensor>_tmap_<inner box>x<outer box…>`, `p_<tensor>_ptr`, `p_<tensor>_stride<dim>`,
    /// `p_dim_<symbol>`, `p_s_<scalar>`. Lowering and the PTX writer both use this function.
    pub fn ptx_name(&self) -> String {
        match self {
            AbiParam::TensorMap {
                tensor, box_dims, ..
            } => {
                let dims: Vec<String> = box_dims.iter().map(|d| d.to_string()).collect();
                format!("p_{tensor}_tmap_{}", dims.join("x"))
            }
            AbiParam::Pointer { tensor } => format!("p_{tensor}_ptr"),
            AbiParam::Stride { tensor, dim } => format!("p_{tensor}_stride{dim}"),
            AbiParam::Dim { symbol } => format!("p_dim_{symbol}"),
            AbiParam::Scalar { name } => format!("p_s_{name}"),
        }
    }
    /// (size, alignment) in bytes of the parameter in the launch buffer of `sig`'s kernel (a
    /// scalar's size is its type's: 8 for `i64`/`u64`, [`Signature::scalar_types`]).
    pub fn size_align(&self, sig: &Signature) -> (usize, usize) {
        match self {
            AbiParam::TensorMap { .. } => (128, 64),
            AbiParam::Pointer { .. } | AbiParam::Stride { .. } => (8, 8),
            AbiParam::Scalar { name } if sig.int_scalar(name).is_some_and(|e| e.is_int64()) => {
                (8, 8)
            }
            AbiParam::Dim { .. } | AbiParam::Scalar { .. } => (4, 4),
        }
    }
}

/// An integer expression over shape symbols and the device's SM count, used for the grid and
/// for the shape checks of [`ShapeCheck`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymExpr {
    /// A constant.
    Const(u64),
    /// A shape symbol.
    Sym(String),
    /// The number of streaming multiprocessors of the device launched on (`SMS` in a kernel's
    /// grid): persistent kernels size their grid by it.
    Sms,
    /// Ceiling division.
    CeilDiv(Box<SymExpr>, Box<SymExpr>),
    /// Floor division.
    Div(Box<SymExpr>, Box<SymExpr>),
    /// Product.
    Mul(Box<SymExpr>, Box<SymExpr>),
    /// Sum.
    Add(Box<SymExpr>, Box<SymExpr>),
    /// Difference (no value when it would be negative).
    Sub(Box<SymExpr>, Box<SymExpr>),
    /// Remainder.
    Rem(Box<SymExpr>, Box<SymExpr>),
}

impl SymExpr {
    /// Evaluates on a device with `sms` multiprocessors, `lookup` giving each symbol's value;
    /// `None` if a symbol is unknown, a division by zero happens, a product or sum overflows or
    /// a difference is negative.
    pub fn eval(&self, sms: u64, lookup: &dyn Fn(&str) -> Option<u64>) -> Option<u64> {
        let both = |a: &SymExpr, b: &SymExpr| Some((a.eval(sms, lookup)?, b.eval(sms, lookup)?));
        match self {
            SymExpr::Const(c) => Some(*c),
            SymExpr::Sym(s) => lookup(s),
            SymExpr::Sms => Some(sms),
            SymExpr::CeilDiv(a, b) => {
                let (a, b) = both(a, b)?;
                if b == 0 { None } else { Some(a.div_ceil(b)) }
            }
            SymExpr::Div(a, b) => {
                let (a, b) = both(a, b)?;
                a.checked_div(b)
            }
            SymExpr::Mul(a, b) => {
                let (a, b) = both(a, b)?;
                a.checked_mul(b)
            }
            SymExpr::Add(a, b) => {
                let (a, b) = both(a, b)?;
                a.checked_add(b)
            }
            SymExpr::Sub(a, b) => {
                let (a, b) = both(a, b)?;
                a.checked_sub(b)
            }
            SymExpr::Rem(a, b) => {
                let (a, b) = both(a, b)?;
                a.checked_rem(b)
            }
        }
    }

    /// The shape symbols it mentions, each once, in first-use order.
    pub fn symbols(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_symbols(&mut out);
        out
    }

    fn collect_symbols<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            SymExpr::Const(_) | SymExpr::Sms => {}
            SymExpr::Sym(s) => {
                if !out.contains(&s.as_str()) {
                    out.push(s);
                }
            }
            SymExpr::CeilDiv(a, b)
            | SymExpr::Div(a, b)
            | SymExpr::Mul(a, b)
            | SymExpr::Add(a, b)
            | SymExpr::Sub(a, b)
            | SymExpr::Rem(a, b) => {
                a.collect_symbols(out);
                b.collect_symbols(out);
            }
        }
    }
}

impl fmt::Display for SymExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymExpr::Const(c) => write!(f, "{c}"),
            SymExpr::Sym(s) => write!(f, "{s}"),
            SymExpr::Sms => write!(f, "sms()"),
            SymExpr::CeilDiv(a, b) => write!(f, "cdiv({a}, {b})"),
            SymExpr::Div(a, b) => write!(f, "div({a}, {b})"),
            SymExpr::Mul(a, b) => write!(f, "mul({a}, {b})"),
            SymExpr::Add(a, b) => write!(f, "add({a}, {b})"),
            SymExpr::Sub(a, b) => write!(f, "sub({a}, {b})"),
            SymExpr::Rem(a, b) => write!(f, "rem({a}, {b})"),
        }
    }
}

/// A comparison of a [`ShapeCheck`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Every comparison, in a fixed order.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];
    /// `eq`, `ne`, `lt`, `le`, `gt`, `ge` (the text form's spelling).
    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }
    /// Whether `a op b` holds.
    pub fn holds(self, a: u64, b: u64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// A kernel's `static_assert` over shape symbols (`static_assert(D % 64 == 0)`), with the
/// config's constants folded: checked by the launch planner before any launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeCheck {
    /// The condition as the user wrote it (`D % 64 == 0`), for the error.
    pub text: String,
    /// The left side.
    pub lhs: SymExpr,
    /// The comparison.
    pub op: CmpOp,
    /// The right side.
    pub rhs: SymExpr,
}

impl ShapeCheck {
    /// Whether it holds with `lookup` giving each shape symbol's value; `None` if a side
    /// cannot be evaluated (an unknown symbol, a division by zero, an overflow or a negative
    /// difference).
    pub fn holds(&self, lookup: &dyn Fn(&str) -> Option<u64>) -> Option<bool> {
        let a = self.lhs.eval(0, lookup)?;
        let b = self.rhs.eval(0, lookup)?;
        Some(self.op.holds(a, b))
    }
}

/// Compilation target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// Hopper with the arch-specific features (wgmma, setmaxnreg).
    Sm90a,
    /// Datacenter Blackwell with the arch-specific features (tcgen05, TMEM, setmaxnreg).
    Sm100a,
}

impl Target {
    /// Every target, in a fixed order.
    pub const ALL: [Target; 2] = [Target::Sm90a, Target::Sm100a];
    /// `sm_90a` / `sm_100a`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Sm90a => "sm_90a",
            Target::Sm100a => "sm_100a",
        }
    }
    /// Parses `sm_90a` / `sm_100a`. Other names give an explanation of why not.
    pub fn from_name(s: &str) -> Result<Target, String> {
        match s {
            "sm_90a" => Ok(Target::Sm90a),
            "sm_100a" => Ok(Target::Sm100a),
            "sm_90" => Err("`sm_90` lacks wgmma and setmaxnreg; write `sm_90a`".into()),
            "sm_100" => Err("`sm_100` lacks tcgen05; write `sm_100a`".into()),
            "sm_120" | "sm_120a" | "sm_121" | "sm_121a" => Err(format!(
                "`{s}` (consumer Blackwell) has no tcgen05 or tensor memory; tirx targets `sm_90a` and `sm_100a`"
            )),
            _ => Err(format!(
                "unknown target `{s}`; tirx targets `sm_90a` and `sm_100a`"
            )),
        }
    }
    /// Whether the target has tcgen05 and tensor memory.
    pub fn has_tcgen05(self) -> bool {
        matches!(self, Target::Sm100a)
    }
    /// Whether the target has wgmma.
    pub fn has_wgmma(self) -> bool {
        matches!(self, Target::Sm90a)
    }
}

/// Shared memory a CTA may use at most on both targets (227 KB; CUDA C Programming Guide,
/// compute capability 9.0 and 10.0 tables).
pub const MAX_SMEM_BYTES: u32 = 227 * 1024;

/// The kernel signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// PTX entry name (the user's function name plus config and target).
    pub entry: String,
    /// Target.
    pub target: Target,
    /// Global tensors, in the user's parameter order.
    pub tensors: Vec<TensorDecl>,
    /// Scalar arguments, in the user's parameter order; the launch passes them in this order,
    /// after the tensors.
    pub scalars: Vec<String>,
    /// The type of each of [`Signature::scalars`], index for index: `F32`, `I32`, `U32`,
    /// `I64` or `U64` (the launch refuses a value of another type).
    pub scalar_types: Vec<ElemType>,
    /// PTX parameters in order.
    pub params: Vec<AbiParam>,
    /// Threads per CTA (x only).
    pub threads: u32,
    /// Cluster dimensions.
    pub cluster: [u32; 3],
    /// Grid dimensions, in CTAs, as expressions over shape symbols.
    pub grid: [SymExpr; 3],
    /// The kernel's `static_assert`s over shape symbols, checked at launch (a tensor's fixed
    /// extent is a literal in its [`TensorDecl::shape`] instead).
    pub checks: Vec<ShapeCheck>,
    /// Dynamic shared memory in bytes.
    pub smem_bytes: u32,
    /// Tensor-memory columns allocated (0 on Hopper).
    pub tmem_cols: u32,
}

impl Signature {
    /// The type of integer scalar argument `name` (`I32`, `U32`, `I64` or `U64`), or `None`
    /// when `name` is not an integer scalar (an `f32` one, a shape symbol).
    pub fn int_scalar(&self, name: &str) -> Option<ElemType> {
        let i = self.scalars.iter().position(|s| s == name)?;
        self.scalar_types.get(i).copied().filter(|e| e.is_int())
    }
}

pub use crate::encode::Major;

/// The value of one config entry (`configs(name = (BM = 128, TA = f16, …))`), as the artifact
/// carries it: an integer constant, an element type, or an operand majorness (`k`/`mn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConfigValue {
    /// An integer constant (`BM = 128`).
    Int(i64),
    /// An element type (`TA = f16`).
    Elem(ElemType),
    /// An operand majorness (`MB = mn`).
    Major(Major),
}

impl fmt::Display for ConfigValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigValue::Int(v) => write!(f, "{v}"),
            ConfigValue::Elem(e) => write!(f, "{}", e.name()),
            ConfigValue::Major(m) => write!(f, "{}", m.name()),
        }
    }
}
