//! Scalar values: register types, virtual registers, special registers, operators and
//! expressions (`Expr`). Re-exported from `ir` (see its module docs for the phases).

use crate::arena::Handle;

/// Scalar (register) types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// Predicate.
    Pred,
    /// 8-bit untyped (two FP4 values: `cvt.rn.satfinite.e2m1x2.f32`'s destination).
    B8,
    /// 16-bit untyped (holds a bf16/f16).
    B16,
    /// 32-bit unsigned.
    U32,
    /// 32-bit signed.
    S32,
    /// 64-bit unsigned (addresses, descriptors).
    U64,
    /// 64-bit signed (an `i64` register tile's elements).
    S64,
    /// 32-bit float.
    F32,
    /// 128-bit untyped (a cluster-launch-control response, PTX ISA §9.7.13.18).
    B128,
}

impl ScalarType {
    /// PTX type suffix (`u32`, `pred`, …).
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Pred => "pred",
            ScalarType::B8 => "b8",
            ScalarType::B16 => "b16",
            ScalarType::U32 => "u32",
            ScalarType::S32 => "s32",
            ScalarType::U64 => "u64",
            ScalarType::S64 => "s64",
            ScalarType::F32 => "f32",
            ScalarType::B128 => "b128",
        }
    }
    /// Parses a PTX type suffix.
    pub fn from_name(s: &str) -> Option<ScalarType> {
        Some(match s {
            "pred" => ScalarType::Pred,
            "b8" => ScalarType::B8,
            "b16" => ScalarType::B16,
            "u32" => ScalarType::U32,
            "s32" => ScalarType::S32,
            "u64" => ScalarType::U64,
            "s64" => ScalarType::S64,
            "f32" => ScalarType::F32,
            "b128" => ScalarType::B128,
            _ => return None,
        })
    }
}

/// A virtual register.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// The user's name, or a compiler-chosen hint; printed in the declaration only.
    pub name: String,
    /// Type.
    pub ty: ScalarType,
}

/// Special registers and derived thread coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// `%tid.x`.
    TidX,
    /// `%ctaid.{x,y,z}`.
    CtaId(u8),
    /// `%nctaid.{x,y,z}`.
    NCtaId(u8),
    /// `%cluster_ctarank`.
    ClusterCtaRank,
    /// Warp index within the CTA (`%tid.x / 32`).
    WarpId,
    /// Lane index (`%tid.x % 32`).
    LaneId,
    /// Base address of dynamic shared memory in the shared window.
    SmemBase,
}

impl Special {
    /// Text spelling.
    pub fn name(self) -> &'static str {
        match self {
            Special::TidX => "tid.x",
            Special::CtaId(0) => "ctaid.x",
            Special::CtaId(1) => "ctaid.y",
            Special::CtaId(_) => "ctaid.z",
            Special::NCtaId(0) => "nctaid.x",
            Special::NCtaId(1) => "nctaid.y",
            Special::NCtaId(_) => "nctaid.z",
            Special::ClusterCtaRank => "cluster_ctarank",
            Special::WarpId => "warp_id",
            Special::LaneId => "lane_id",
            Special::SmemBase => "smem_base",
        }
    }
    /// Every special, for parsing.
    pub const ALL: [Special; 11] = [
        Special::TidX,
        Special::CtaId(0),
        Special::CtaId(1),
        Special::CtaId(2),
        Special::NCtaId(0),
        Special::NCtaId(1),
        Special::NCtaId(2),
        Special::ClusterCtaRank,
        Special::WarpId,
        Special::LaneId,
        Special::SmemBase,
    ];
}

/// Binary operators on scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integer: truncating)
    Div,
    /// `%`
    Rem,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// Ceiling division.
    CeilDiv,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

/// Comparisons (produce a predicate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A scalar expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// Integer or predicate constant (predicates: 0/1).
    Imm(i64, ScalarType),
    /// A variable.
    Var(Handle<Var>),
    /// A runtime shape symbol (kernel parameter `Dim`), or an integer scalar argument of the
    /// kernel (parameter `Scalar`), as a `u32`.
    Dim(String),
    /// A special register.
    Special(Special),
    /// Binary operation; both sides have the result type.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// Comparison; a predicate.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// Logical not of a predicate.
    Not(Box<Expr>),
    /// Logical and of predicates.
    AndP(Box<Expr>, Box<Expr>),
}

impl Expr {
    /// `u32` immediate.
    pub fn u32(v: u32) -> Expr {
        Expr::Imm(v as i64, ScalarType::U32)
    }
    /// Builds `lhs op rhs`.
    pub fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Bin(op, Box::new(lhs), Box::new(rhs))
    }
    /// Builds `lhs cmp rhs`.
    pub fn cmp(op: CmpOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Cmp(op, Box::new(lhs), Box::new(rhs))
    }
    /// Whether the expression is an atom (allowed in the `Ptx` phase).
    pub fn is_atom(&self) -> bool {
        matches!(self, Expr::Imm(..) | Expr::Var(_))
    }
}
