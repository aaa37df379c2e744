//! [`Program`]: an entry of the PTX AST made ready to run, decoded once before any thread
//! starts.
//!
//! - Registers (PTX ISA §5.1.1 `.reg`; §5.4.1 `%r<N>` ranges) are numbered densely; each
//!   thread holds one 64-bit slot per register plus an "ever written" bit (two slots for a
//!   `.b128` register, low half first).
//! - Labels become instruction indices; `bra` targets are checked here.
//! - Symbols become addresses: a shared variable its offset in the CTA's shared window
//!   (static variables first, then the `.extern .shared` dynamic array at its alignment,
//!   §5.1.5), a kernel parameter its offset in the parameter buffer (§5.1.6.1: laid out in
//!   declaration order at each parameter's alignment).
//! - Each instruction becomes an [`Op`] (`decode.rs`); anything outside the supported subset
//!   is a [`SimError::Unsupported`] naming the opcode and line, before anything runs.

use std::collections::HashMap;

use super::decode;
use super::diag::{SimError, Space};
use super::mem::SMEM_BASE;
use crate::ptx::{self, AddrBase, ArrayLen, Entry, Module, Operand, StateSpace, Statement};

pub(crate) use super::ops::*;

/// A register index.
pub(crate) type Reg = u32;

/// A source operand, resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Val {
    /// A register.
    Reg(Reg),
    /// A constant's bits (integers as their 64-bit pattern, floats as f32/f64 bits).
    Imm(u64),
    /// A special register (§10).
    Sreg(Sreg),
    /// A symbol's address in a space (a shared variable, a parameter).
    Addr(Space, u64),
}

/// A special register (PTX ISA §10 "Special Registers").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    ClusterCtaRank,
    ClusterNctaRank,
    ClusterCtaid(u8),
    ClusterNctaid(u8),
    ClusterId(u8),
    NClusterId(u8),
    LaneMaskLt,
    LaneMaskEq,
}

/// A memory operand, resolved: `base + offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Addr {
    /// The base value (a register, or a symbol's address).
    pub base: Option<Val>,
    /// Byte offset.
    pub offset: i64,
}

/// One decoded instruction.
#[derive(Clone, Debug)]
pub(crate) struct Inst {
    /// What it does.
    pub op: Op,
    /// `@p` / `@!p`.
    pub guard: Option<(Reg, bool)>,
    /// Which lanes must execute it together.
    pub collective: Collective,
    /// Source line.
    pub line: u32,
    /// A `// tirx.check` note on the line before (`ptx/check.rs`).
    pub check: Option<Box<ptx::Check>>,
}

/// Lanes a warp-collective instruction needs at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Collective {
    /// None: lanes execute independently.
    No,
    /// The lanes of a `membermask` operand (`shfl.sync`, `vote.sync`, `elect.sync`).
    Mask(Val),
    /// Every non-exited lane of the warp (`.sync.aligned`).
    Warp,
}

/// A decoded entry.
#[derive(Clone, Debug)]
pub struct Program {
    /// The entry's name.
    pub name: String,
    pub(crate) insts: Vec<Inst>,
    pub(crate) reg_names: Vec<String>,
    /// The parameters: (offset, size) in the buffer, in order.
    pub(crate) params: Vec<(u32, u32)>,
    pub(crate) param_bytes: u32,
    /// Offset of the dynamic shared array.
    pub(crate) dyn_smem_base: u32,
    /// `.maxntid`/`.reqntid` x·y·z, if declared.
    pub(crate) max_threads: Option<u32>,
    /// `.reqnctapercluster`, if declared.
    pub(crate) req_cluster: Option<[u32; 3]>,
    /// `.maxnreg`, if declared.
    pub(crate) max_regs: Option<u32>,
}

/// Name tables the decoder reads.
pub(crate) struct Symbols {
    regs: HashMap<String, Reg>,
    vars: HashMap<String, (Space, u64)>,
    labels: HashMap<String, u32>,
}

impl Symbols {
    /// The register named `r`.
    pub(crate) fn reg(&self, r: &str, line: u32, instr: &str) -> Result<Reg, SimError> {
        self.regs
            .get(r)
            .copied()
            .ok_or_else(|| SimError::Unsupported {
                line,
                instr: instr.to_owned(),
                reason: format!("register `{r}` is not declared"),
            })
    }

    /// The instruction index of label `l`.
    pub(crate) fn label(&self, l: &str) -> Option<u32> {
        self.labels.get(l).copied()
    }

    /// A source operand.
    pub(crate) fn val(&self, o: &Operand, line: u32, instr: &str) -> Result<Val, SimError> {
        let bad = |what: &str| SimError::Unsupported {
            line,
            instr: instr.to_owned(),
            reason: what.to_owned(),
        };
        Ok(match o {
            Operand::Reg(r) => match sreg(r) {
                Some(s) => Val::Sreg(s),
                None if r.starts_with("%") && !self.regs.contains_key(r.as_str()) => {
                    return Err(bad(&format!("unknown register or special register `{r}`")));
                }
                None => Val::Reg(self.reg(r, line, instr)?),
            },
            Operand::Imm(i) => Val::Imm(*i as u64),
            Operand::F32(b) => Val::Imm(u64::from(*b)),
            Operand::F64(b) => Val::Imm(*b),
            Operand::Sym(s) => match self.vars.get(s.as_str()) {
                Some(&(space, a)) => Val::Addr(space, a),
                None => return Err(bad(&format!("unknown symbol `{s}`"))),
            },
            _ => return Err(bad("unexpected operand form")),
        })
    }

    /// A destination: a register or the sink `_`.
    pub(crate) fn dst(&self, o: &Operand, line: u32, instr: &str) -> Result<Option<Reg>, SimError> {
        match o {
            Operand::Sink => Ok(None),
            Operand::Reg(r) => Ok(Some(self.reg(r, line, instr)?)),
            _ => Err(SimError::Unsupported {
                line,
                instr: instr.to_owned(),
                reason: "destination is not a register".to_owned(),
            }),
        }
    }

    /// A memory operand `[base+off]`.
    pub(crate) fn addr(&self, o: &Operand, line: u32, instr: &str) -> Result<Addr, SimError> {
        let Operand::Mem(a) = o else {
            return Err(SimError::Unsupported {
                line,
                instr: instr.to_owned(),
                reason: "expected a `[address]` operand".to_owned(),
            });
        };
        let base = match &a.base {
            AddrBase::Reg(r) => Some(self.val(&Operand::Reg(r.clone()), line, instr)?),
            AddrBase::Sym(s) => Some(self.val(&Operand::Sym(s.clone()), line, instr)?),
            AddrBase::Absolute => None,
        };
        Ok(Addr {
            base,
            offset: a.offset,
        })
    }
}

fn sreg(name: &str) -> Option<Sreg> {
    let dim = |s: &str| match s {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    if let Some((base, c)) = name.split_once('.') {
        let d = dim(c)?;
        return Some(match base {
            "%tid" => Sreg::Tid(d),
            "%ntid" => Sreg::Ntid(d),
            "%ctaid" => Sreg::Ctaid(d),
            "%nctaid" => Sreg::Nctaid(d),
            "%cluster_ctaid" => Sreg::ClusterCtaid(d),
            "%cluster_nctaid" => Sreg::ClusterNctaid(d),
            "%clusterid" => Sreg::ClusterId(d),
            "%nclusterid" => Sreg::NClusterId(d),
            _ => return None,
        });
    }
    Some(match name {
        "%laneid" => Sreg::LaneId,
        "%warpid" => Sreg::WarpId,
        "%nwarpid" => Sreg::NWarpId,
        "%cluster_ctarank" => Sreg::ClusterCtaRank,
        "%cluster_nctarank" => Sreg::ClusterNctaRank,
        "%lanemask_lt" => Sreg::LaneMaskLt,
        "%lanemask_eq" => Sreg::LaneMaskEq,
        _ => return None,
    })
}

impl Program {
    /// Decodes entry `name` of `module`.
    pub fn new(module: &Module, name: &str) -> Result<Program, SimError> {
        let (entry, layout) = Layout::of(module, name)?;
        let mut insts = Vec::with_capacity(entry.instructions().count());
        for i in entry.instructions() {
            let mut d = decode::decode(i, &layout.syms)?;
            d.check = module
                .checks
                .iter()
                .find(|(l, _)| *l == i.line)
                .map(|(_, c)| Box::new(c.clone()));
            insts.push(d);
        }
        Self::finish(entry, name, insts, layout)
    }

    /// Every instruction of entry `name` the executor cannot run, each as its
    /// [`SimError::Unsupported`]: the executor's to-do list for a module (empty when
    /// [`Program::new`] succeeds).
    pub fn unsupported(module: &Module, name: &str) -> Result<Vec<SimError>, SimError> {
        let (entry, layout) = Layout::of(module, name)?;
        Ok(entry
            .instructions()
            .filter_map(|i| decode::decode(i, &layout.syms).err())
            .collect())
    }

    fn finish(entry: &Entry, name: &str, insts: Vec<Inst>, l: Layout) -> Result<Program, SimError> {
        let mut max_threads = None;
        let mut req_cluster = None;
        let mut max_regs = None;
        for d in &entry.directives {
            match d {
                ptx::Directive::MaxNtid(t) | ptx::Directive::ReqNtid(t) => {
                    max_threads = Some(t.iter().product())
                }
                ptx::Directive::ReqNctaPerCluster(c) => req_cluster = Some(*c),
                ptx::Directive::MaxNreg(n) => max_regs = Some(*n),
                _ => {}
            }
        }
        Ok(Program {
            name: name.to_owned(),
            insts,
            reg_names: l.reg_names,
            params: l.params,
            param_bytes: l.param_bytes,
            dyn_smem_base: l.dyn_smem_base,
            max_threads,
            req_cluster,
            max_regs,
        })
    }

    /// The number of instructions.
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }
}

/// An entry's names and storage: what decoding its instructions needs.
struct Layout {
    syms: Symbols,
    reg_names: Vec<String>,
    params: Vec<(u32, u32)>,
    param_bytes: u32,
    dyn_smem_base: u32,
}

impl Layout {
    fn of<'m>(module: &'m Module, name: &str) -> Result<(&'m Entry, Layout), SimError> {
        let entry = module
            .entry(name)
            .ok_or_else(|| SimError::NoEntry(name.to_owned()))?;
        let mut syms = Symbols {
            regs: HashMap::new(),
            vars: HashMap::new(),
            labels: HashMap::new(),
        };
        let reg_names = registers(entry, &mut syms.regs);
        let (params, param_bytes) = parameters(entry, &mut syms.vars);
        let dyn_smem_base = shared_layout(module, entry, &mut syms.vars)?;
        let mut n = 0u32;
        for s in &entry.body {
            match s {
                Statement::Label { name, .. } => {
                    syms.labels.insert(name.clone(), n);
                }
                Statement::Instr(_) => n += 1,
            }
        }
        let layout = Layout {
            syms,
            reg_names,
            params,
            param_bytes,
            dyn_smem_base,
        };
        Ok((entry, layout))
    }
}

fn registers(entry: &Entry, regs: &mut HashMap<String, Reg>) -> Vec<String> {
    let mut names = Vec::new();
    for d in &entry.regs {
        // A `.b128` register takes two slots: its low 64 bits, then its high 64 bits.
        let wide = d.ty == ptx::Type::B128;
        let mut add = |n: String| {
            regs.insert(n.clone(), names.len() as Reg);
            if wide {
                names.push(n.clone());
                names.push(format!("{n}.hi"));
            } else {
                names.push(n);
            }
        };
        match d.count {
            None => add(d.name.clone()),
            Some(c) => (0..c).for_each(|i| add(format!("{}{i}", d.name))),
        }
    }
    names
}

fn parameters(entry: &Entry, vars: &mut HashMap<String, (Space, u64)>) -> (Vec<(u32, u32)>, u32) {
    let mut out = Vec::new();
    let mut end = 0u32;
    for p in &entry.params {
        let size = p.size_bytes();
        let align = p.align.unwrap_or(p.ty.size_bytes()).max(1);
        let off = end.next_multiple_of(align);
        vars.insert(p.name.clone(), (Space::Param, u64::from(off)));
        out.push((off, size));
        end = off + size;
    }
    (out, end)
}

fn shared_layout(
    module: &Module,
    entry: &Entry,
    vars: &mut HashMap<String, (Space, u64)>,
) -> Result<u32, SimError> {
    let mut end = SMEM_BASE;
    let mut dynamic = None;
    let shared = module
        .globals
        .iter()
        .chain(&entry.shared)
        .filter(|v| v.space == StateSpace::Shared);
    for v in shared {
        let align = v.align.unwrap_or(v.ty.size_bytes()).max(1);
        match v.len {
            ArrayLen::Unsized => dynamic = Some((v.name.clone(), align)),
            ArrayLen::Scalar | ArrayLen::Sized(_) => {
                let n = match v.len {
                    ArrayLen::Sized(n) => n,
                    _ => 1,
                };
                let off = end.next_multiple_of(align);
                vars.insert(v.name.clone(), (Space::Shared, u64::from(off)));
                end = off + n * v.ty.size_bytes();
            }
        }
    }
    if let Some(v) = module
        .globals
        .iter()
        .find(|v| v.space != StateSpace::Shared)
    {
        return Err(SimError::Unsupported {
            line: v.line,
            instr: v.name.clone(),
            reason: "module-scope .global/.const variables".to_owned(),
        });
    }
    let Some((name, align)) = dynamic else {
        return Ok(end);
    };
    let dyn_base = end.next_multiple_of(align);
    vars.insert(name, (Space::Shared, u64::from(dyn_base)));
    Ok(dyn_base)
}
