//! The PTX AST: what [`super::parse`] produces and the executor will run.
//!
//! The shapes follow the PTX ISA: a module is its header directives (§11.1 "PTX Module
//! Directives": `.version`, `.target`, `.address_size`), module-scope variables (§5 "State
//! Spaces, Types, and Variables") and kernel entries (§11.2 "Specifying Kernel Entry Points
//! and Functions": `.entry` with its `.param` list; §11.4 "Performance-Tuning Directives").
//! An entry's body is a flat list of labels and instructions (§4.3 "Statements"; §9.7
//! "Instructions"), its `.reg` and `.shared` declarations lifted out beside it.
//!
//! Instructions are not typed one by one: an [`Opcode`] is the ISA's instruction name
//! (`wgmma.mma_async`, `mbarrier.try_wait`, `add`) plus its `.modifiers` in order, and the
//! executor matches on both. Every node carries the 1-based source line it came from.

use std::fmt;

pub use super::opcode::Opcode;

/// One parsed PTX module.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// `.version major.minor`.
    pub version: Version,
    /// `.target sm_90a[, …]`: the target names, in order.
    pub target: Vec<String>,
    /// `.address_size 32|64`, if declared.
    pub address_size: Option<u32>,
    /// Module-scope variables (`.extern .shared .align 1024 .b8 tirx_smem[];`).
    pub globals: Vec<VarDecl>,
    /// The kernel entries, in order.
    pub kernels: Vec<Entry>,
    /// `// tirx.check` notes, each with the line of the instruction it describes
    /// (`check.rs`).
    pub checks: Vec<(u32, super::check::Check)>,
}

impl Module {
    /// The entry named `name`.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.kernels.iter().find(|e| e.name == name)
    }
}

/// A PTX ISA version (§11.1.1 `.version`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

/// One `.entry` (§11.2.1): a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The entry's name.
    pub name: String,
    /// Declared `.visible` (§11.6.3).
    pub visible: bool,
    /// The `.param` list, in order (§5.1.6.1 kernel parameters).
    pub params: Vec<Param>,
    /// Performance-tuning directives between the parameter list and the body (§11.4).
    pub directives: Vec<Directive>,
    /// `.reg` declarations, in order; a range `%r<10>` is one declaration (§5.1.1).
    pub regs: Vec<RegDecl>,
    /// `.shared` variables declared inside the body (§5.1.5).
    pub shared: Vec<VarDecl>,
    /// Labels and instructions, in order.
    pub body: Vec<Statement>,
    /// Line of the `.entry` directive.
    pub line: u32,
}

impl Entry {
    /// The instructions of the body, without the labels.
    pub fn instructions(&self) -> impl Iterator<Item = &Instr> {
        self.body.iter().filter_map(|s| match s {
            Statement::Instr(i) => Some(i),
            Statement::Label { .. } => None,
        })
    }
}

/// One kernel parameter: `.param [.align A] .type name[[N]]` (§5.1.6.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Element type.
    pub ty: Type,
    /// `.align A`, if given.
    pub align: Option<u32>,
    /// `[N]`: an array of `N` elements (a tensor map is `.align 64 .b8 name[128]`).
    pub array: Option<u32>,
    /// Source line.
    pub line: u32,
}

impl Param {
    /// Size in bytes: the element size times the array length.
    pub fn size_bytes(&self) -> u32 {
        self.ty.size_bytes().saturating_mul(self.array.unwrap_or(1))
    }
}

/// A performance-tuning directive (§11.4); a missing `y`/`z` extent reads as 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Directive {
    /// `.maxntid x[, y[, z]]` (§11.4.2).
    MaxNtid([u32; 3]),
    /// `.reqntid x[, y[, z]]` (§11.4.3).
    ReqNtid([u32; 3]),
    /// `.reqnctapercluster x[, y[, z]]` (§11.5.2).
    ReqNctaPerCluster([u32; 3]),
    /// `.maxnreg n` (§11.4.1).
    MaxNreg(u32),
    /// `.minnctapersm n` (§11.4.4).
    MinNctaPerSm(u32),
    /// `.maxclusterrank n` (§11.5.3).
    MaxClusterRank(u32),
    /// `.explicitcluster` (§11.5.1).
    ExplicitCluster,
}

/// `.reg .type name` or a range `.reg .type name<N>` (§5.1.1, §5.4.1 "Parameterized
/// Variable Names": `%r<10>` declares `%r0` … `%r9`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegDecl {
    /// Register type.
    pub ty: Type,
    /// The name, or the range's prefix.
    pub name: String,
    /// `Some(N)` for a range of `N` registers.
    pub count: Option<u32>,
    /// Source line.
    pub line: u32,
}

/// The state space of a variable (§5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateSpace {
    /// `.shared` (§5.1.5).
    Shared,
    /// `.global` (§5.1.4).
    Global,
    /// `.const` (§5.1.3).
    Const,
}

/// Linkage of a module-scope variable (§11.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    /// None written.
    None,
    /// `.extern`.
    Extern,
    /// `.visible`.
    Visible,
    /// `.weak`.
    Weak,
}

/// The length part of a variable declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayLen {
    /// A scalar.
    Scalar,
    /// `name[]`: unsized (an `.extern .shared` one is the dynamic shared memory, §5.1.5).
    Unsized,
    /// `name[N]`.
    Sized(u32),
}

/// A variable: `[linkage] .space [.align A] .type name[[N]];` (§5.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarDecl {
    /// Linkage.
    pub linkage: Linkage,
    /// State space.
    pub space: StateSpace,
    /// `.align A`, if given.
    pub align: Option<u32>,
    /// Element type.
    pub ty: Type,
    /// Name.
    pub name: String,
    /// Array length.
    pub len: ArrayLen,
    /// Source line.
    pub line: u32,
}

/// A fundamental type (§5.2.2), plus `.pred` (§5.2.4 predicates).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Type {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    Tf32,
    F32,
    F64,
    Pred,
    /// Two OCP FP8 E4M3 values in 16 bits (`cvt`'s packed destination, §9.7.9.21).
    E4m3x2,
    /// Two OCP FP8 E5M2 values in 16 bits.
    E5m2x2,
    /// Two OCP FP4 E2M1 values in 8 bits (`cvt`'s packed destination, §9.7.9.21; sm_100a+).
    E2m1x2,
}

/// Every type with its spelling, in declaration order: the one table `name`/`from_name` read.
const TYPES: [(Type, &str, u32); 24] = [
    (Type::B8, "b8", 1),
    (Type::B16, "b16", 2),
    (Type::B32, "b32", 4),
    (Type::B64, "b64", 8),
    (Type::B128, "b128", 16),
    (Type::U8, "u8", 1),
    (Type::U16, "u16", 2),
    (Type::U32, "u32", 4),
    (Type::U64, "u64", 8),
    (Type::S8, "s8", 1),
    (Type::S16, "s16", 2),
    (Type::S32, "s32", 4),
    (Type::S64, "s64", 8),
    (Type::F16, "f16", 2),
    (Type::F16x2, "f16x2", 4),
    (Type::Bf16, "bf16", 2),
    (Type::Bf16x2, "bf16x2", 4),
    (Type::Tf32, "tf32", 4),
    (Type::F32, "f32", 4),
    (Type::F64, "f64", 8),
    // A predicate has no memory size; 1 keeps `size_bytes` total.
    (Type::Pred, "pred", 1),
    (Type::E4m3x2, "e4m3x2", 2),
    (Type::E5m2x2, "e5m2x2", 2),
    (Type::E2m1x2, "e2m1x2", 1),
];

// `TYPES` lists the variants in declaration order, so a variant indexes its own row.
const _: () = {
    let mut i = 0;
    while i < TYPES.len() {
        assert!(TYPES[i].0 as usize == i);
        i += 1;
    }
};

impl Type {
    /// The type spelled `name` (without the dot).
    pub fn from_name(name: &str) -> Option<Type> {
        TYPES.iter().find(|t| t.1 == name).map(|t| t.0)
    }

    /// Its spelling, without the dot.
    pub fn name(self) -> &'static str {
        TYPES[self as usize].1
    }

    /// Size in bytes (the executor asks on every instruction: an index, not a search).
    pub fn size_bytes(self) -> u32 {
        TYPES[self as usize].2
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".{}", self.name())
    }
}

/// One statement of a body (§4.3).
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `name:` (§4.4 identifiers used as labels).
    Label {
        /// The label, without the colon.
        name: String,
        /// Source line.
        line: u32,
    },
    /// An instruction.
    Instr(Instr),
}

/// One instruction: `[@[!]%p] opcode operands;` (§9.7; guards §9.3 "Predicated Execution").
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    /// The guard predicate, if any.
    pub pred: Option<Guard>,
    /// Name and modifiers.
    pub opcode: Opcode,
    /// Operands, destinations first as written.
    pub operands: Vec<Operand>,
    /// Source line.
    pub line: u32,
}

/// `@%p` or `@!%p`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    /// The predicate register.
    pub reg: String,
    /// `@!`: the instruction runs when the predicate is false.
    pub negated: bool,
}

/// An operand (§6 "Instruction Operands", §6.4 operand types).
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register, special registers with their component (`%r12`, `%tid.x`).
    Reg(String),
    /// A negated predicate `!%p` (§9.7.7 logic operands).
    NotReg(String),
    /// The sink `_` (§6.4, "bit bucket").
    Sink,
    /// A symbol: a variable, parameter or label name.
    Sym(String),
    /// An integer constant, as its 64-bit pattern read as signed (`-1024`, `4294967295`).
    Imm(i64),
    /// `0fXXXXXXXX`: f32 bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float: f64 bits.
    F64(u64),
    /// `a|b`: the two outputs of `setp`/`elect.sync` (§9.7.7.1, §9.7.13.12).
    Pair(Box<Operand>, Box<Operand>),
    /// `{a, b, …}` (§6.4.2 vector operands).
    Vector(Vec<Operand>),
    /// `[base]`, `[base+off]` (§6.4.1 addresses as operands).
    Mem(Address),
    /// `[map, {c0, c1, …}]`: a tensor map and coordinates (§9.7.9.25 `cp.async.bulk.tensor`).
    Tensor {
        /// The tensor map's address.
        map: Box<Operand>,
        /// The coordinates, innermost first.
        coords: Vec<Operand>,
    },
}

/// A memory address `[base+offset]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Address {
    /// The base.
    pub base: AddrBase,
    /// Byte offset (signed; `[r+-4]` is -4).
    pub offset: i64,
}

/// What an address is relative to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddrBase {
    /// A register.
    Reg(String),
    /// A variable or parameter.
    Sym(String),
    /// None: `[offset]` is an absolute address.
    Absolute,
}
