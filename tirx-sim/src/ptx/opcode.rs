//! [`Opcode`]: an instruction's name as the PTX ISA gives it (§9.7 "Instructions", one
//! section per name) and the `.modifiers` that follow, in order.
//!
//! A dotted mnemonic does not say where the name ends: `mbarrier.try_wait.parity.shared::cta.b64`
//! is the instruction `mbarrier.try_wait` with modifiers `parity`, `shared::cta`, `b64`, while
//! `add.u32` is `add` with `u32`. [`NAMES`] lists the ISA's instruction names (those of §9.7
//! that tirx emits or is likely to, and their neighbours); the name of a mnemonic is its
//! longest prefix of whole parts found there. A mnemonic with no listed prefix takes its
//! first part as the name and is marked unknown, so the parser accepts it and the executor
//! can refuse it by name and line.

use std::fmt;

/// An instruction's name and modifiers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode {
    /// The ISA's instruction name: `add`, `wgmma.mma_async`, `cp.async.bulk.tensor`.
    pub base: String,
    /// The remaining dotted parts, without dots, in order: `["parity", "shared::cta", "b64"]`.
    pub modifiers: Vec<String>,
}

/// The instruction names of PTX ISA §9.7 that have more than one dotted part, and the
/// one-part names, each as the ISA spells its section. Longest match wins.
pub const NAMES: &[&str] = &[
    // §9.7.1 integer, §9.7.3 floating point, §9.7.5/9.7.6 comparison, §9.7.7 logic.
    "add",
    "sub",
    "mul",
    "mad",
    "mul24",
    "mad24",
    "sad",
    "div",
    "rem",
    "abs",
    "neg",
    "min",
    "max",
    "popc",
    "clz",
    "bfind",
    "fns",
    "brev",
    "bfe",
    "bfi",
    "szext",
    "bmsk",
    "dp4a",
    "dp2a",
    "fma",
    "rcp",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "lg2",
    "ex2",
    "tanh",
    "copysign",
    "testp",
    "set",
    "setp",
    "selp",
    "slct",
    "and",
    "or",
    "xor",
    "not",
    "cnot",
    "lop3",
    "shf",
    "shl",
    "shr",
    "prmt",
    // §9.7.9 data movement and conversion.
    "mov",
    "shfl.sync",
    "ld",
    "ld.global.nc",
    "ldu",
    "st",
    "st.async",
    "st.bulk",
    "prefetch",
    "prefetchu",
    "isspacep",
    "cvta",
    "cvt",
    "cvt.pack",
    "mapa",
    "getctarank",
    "ldmatrix",
    "stmatrix",
    "movmatrix",
    "cp.async",
    "cp.async.commit_group",
    "cp.async.wait_group",
    "cp.async.wait_all",
    "cp.async.bulk",
    "cp.async.bulk.tensor",
    "cp.async.bulk.prefetch",
    "cp.async.bulk.prefetch.tensor",
    "cp.async.bulk.commit_group",
    "cp.async.bulk.wait_group",
    "cp.reduce.async.bulk",
    "cp.reduce.async.bulk.tensor",
    "tensormap.replace",
    "tensormap.cp_fenceproxy",
    // §9.7.12 atomics and reductions (under §9.7.13 in newer ISAs).
    "atom",
    "red",
    "red.async",
    "multimem.ld_reduce",
    "multimem.st",
    "multimem.red",
    // §9.7.13 control flow.
    "bra",
    "brx.idx",
    "call",
    "ret",
    "exit",
    // §9.7.13 parallel synchronization and communication.
    "bar",
    "barrier",
    "bar.warp.sync",
    "barrier.cluster",
    "membar",
    "fence",
    "vote",
    "vote.sync",
    "match.sync",
    "activemask",
    "redux.sync",
    "griddepcontrol",
    "elect.sync",
    "mbarrier.init",
    "mbarrier.inval",
    "mbarrier.expect_tx",
    "mbarrier.complete_tx",
    "mbarrier.arrive",
    "mbarrier.arrive_drop",
    "mbarrier.test_wait",
    "mbarrier.try_wait",
    "mbarrier.pending_count",
    "setmaxnreg",
    "nanosleep",
    "trap",
    "brkpt",
    "pmevent",
    "clusterlaunchcontrol.try_cancel",
    "clusterlaunchcontrol.query_cancel",
    // §9.7.14/§9.7.15 warp-level and warpgroup-level matrix instructions.
    "mma",
    "mma.sp",
    "wgmma.mma_async",
    "wgmma.mma_async.sp",
    "wgmma.fence",
    "wgmma.commit_group",
    "wgmma.wait_group",
    // §9.7.16 tcgen05 (TensorCore 5th generation).
    "tcgen05.alloc",
    "tcgen05.dealloc",
    "tcgen05.relinquish_alloc_permit",
    "tcgen05.ld",
    "tcgen05.st",
    "tcgen05.wait::ld",
    "tcgen05.wait::st",
    "tcgen05.cp",
    "tcgen05.shift",
    "tcgen05.mma",
    "tcgen05.mma.sp",
    "tcgen05.mma.ws",
    "tcgen05.mma.ws.sp",
    "tcgen05.commit",
    "tcgen05.fence::before_thread_sync",
    "tcgen05.fence::after_thread_sync",
];

impl Opcode {
    /// Splits a mnemonic's dotted parts (`["mbarrier", "try_wait", "parity", …]`) into the
    /// name and modifiers.
    pub fn from_parts(parts: &[String]) -> Opcode {
        let take = (1..=parts.len())
            .rev()
            .find(|&n| is_name(&parts[..n]))
            .unwrap_or(1)
            .min(parts.len());
        Opcode {
            base: parts[..take].join("."),
            modifiers: parts[take..].to_vec(),
        }
    }

    /// Whether [`NAMES`] knows the name (the mnemonic was not split by the fallback).
    pub fn is_known(&self) -> bool {
        NAMES.contains(&self.base.as_str())
    }

    /// Whether `modifier` (without its dot) is among the modifiers.
    pub fn has(&self, modifier: &str) -> bool {
        self.modifiers.iter().any(|m| m == modifier)
    }
}

/// Whether the dotted parts spell a listed name, compared part by part without joining.
fn is_name(parts: &[String]) -> bool {
    NAMES.iter().any(|name| {
        let mut want = name.split('.');
        parts.iter().all(|p| want.next() == Some(p.as_str())) && want.next().is_none()
    })
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)?;
        self.modifiers.iter().try_for_each(|m| write!(f, ".{m}"))
    }
}
