//! Decoding of memory, barrier and bulk-copy instructions: `ld`/`st` with their state
//! spaces (PTX ISA §9.7.9–9), `bar`/`barrier` (§9.7.13), `mbarrier.arrive` (§9.7.13
//! "mbarrier"), `cp.async.bulk.tensor` (§9.7.9.25).

use super::{Cx, bits};
use crate::exec::diag::SimError;
use crate::exec::ops::{MemSpace, Op};
use crate::exec::program::Val;
use crate::ptx::Operand;

fn mem_space(cx: &Cx<'_>) -> Result<MemSpace, SimError> {
    let base = cx.i.opcode.base.as_str();
    Ok(if base == "ld.global.nc" || cx.has("global") {
        MemSpace::Global
    } else if cx.has("shared::cluster") {
        MemSpace::SharedCluster
    } else if cx.has("shared") || cx.has("shared::cta") {
        MemSpace::SharedCta
    } else if cx.has("param") {
        MemSpace::Param
    } else if cx.has("local") || cx.has("const") {
        return Err(cx.err(".local and .const state spaces"));
    } else {
        MemSpace::Generic
    })
}

pub(super) fn ld_st(cx: &Cx<'_>) -> Result<Op, SimError> {
    cx.n(2)?;
    let space = mem_space(cx)?;
    let b = bits(cx.ty()?);
    if b < 8 {
        return Err(cx.err("ld/st of .pred"));
    }
    if b == 128
        && matches!(
            cx.op(if cx.i.opcode.base == "st" { 1 } else { 0 })?,
            Operand::Vector(_)
        )
    {
        return Err(cx.err("vectors of .b128"));
    }
    if cx.i.opcode.base == "st" {
        let vals = cx
            .list(1)?
            .into_iter()
            .map(|o| cx.syms.val(o, cx.i.line, &cx.text))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Op::St {
            space,
            bits: b,
            vals,
            addr: cx.addr(0)?,
        });
    }
    let ds = cx
        .list(0)?
        .into_iter()
        .map(|o| cx.syms.dst(o, cx.i.line, &cx.text))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Op::Ld {
        space,
        bits: b,
        ds,
        addr: cx.addr(1)?,
    })
}

pub(super) fn bar(cx: &Cx<'_>) -> Result<Op, SimError> {
    let wait = if cx.has("sync") {
        true
    } else if cx.has("arrive") {
        false
    } else {
        return Err(cx.err("bar.red and other barrier forms"));
    };
    let n = cx.i.operands.len();
    if !(1..=2).contains(&n) {
        return Err(cx.err("bar takes a barrier id and an optional thread count"));
    }
    // §9.7.13.1: `bar{.cta}.arrive a, b` and `barrier{.cta}.arrive a, b` name the count.
    if !wait && n != 2 {
        return Err(cx.err("bar.arrive needs its thread count operand"));
    }
    Ok(Op::Bar {
        id: cx.val(0)?,
        count: if n == 2 { Some(cx.val(1)?) } else { None },
        wait,
    })
}

pub(super) fn mbar_arrive(cx: &Cx<'_>) -> Result<Op, SimError> {
    let n = cx.i.operands.len();
    if !(2..=3).contains(&n) {
        return Err(cx.err("mbarrier.arrive takes state, [addr] and an optional count"));
    }
    let expect = cx.has("expect_tx");
    let extra = if n == 3 { Some(cx.val(2)?) } else { None };
    if expect && extra.is_none() {
        return Err(cx.err("arrive.expect_tx needs a byte count"));
    }
    if cx.has("noComplete") {
        return Err(cx.err(".noComplete"));
    }
    Ok(Op::MbarArrive {
        d: cx.dst(0)?,
        addr: cx.addr(1)?,
        count: if expect { None } else { extra },
        tx: if expect { extra } else { None },
        cluster: cx.has("shared::cluster"),
        drop: cx.i.opcode.base == "mbarrier.arrive_drop",
    })
}

pub(super) fn tma(cx: &Cx<'_>) -> Result<Op, SimError> {
    if !cx.has("tile")
        && cx
            .i
            .opcode
            .modifiers
            .iter()
            .any(|m| m.starts_with("im2col"))
    {
        return Err(cx.err("im2col tensor copies"));
    }
    let tensor = |k: usize| -> Result<(Val, Vec<Val>), SimError> {
        let Operand::Tensor { map, coords } = cx.op(k)? else {
            return Err(cx.err("expected `[tensorMap, {coords}]`"));
        };
        let map = cx.syms.val(map, cx.i.line, &cx.text)?;
        let coords = coords
            .iter()
            .map(|o| cx.syms.val(o, cx.i.line, &cx.text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((map, coords))
    };
    if cx.has("shared::cluster") && cx.has("global") && cx.has("mbarrier::complete_tx::bytes") {
        let multicast = cx.has("multicast::cluster");
        cx.n(if multicast { 4 } else { 3 })?;
        if cx.i.opcode.modifiers.iter().any(|m| m.starts_with("L2::")) {
            return Err(cx.err("L2 cache hints"));
        }
        let (map, coords) = tensor(1)?;
        return Ok(Op::TmaLoad {
            dst: cx.addr(0)?,
            map,
            coords,
            mbar: cx.addr(2)?,
            multicast: if multicast { Some(cx.val(3)?) } else { None },
            pair: cx.has("cta_group::2"),
        });
    }
    if cx.has("global") && cx.has("shared::cta") && cx.has("bulk_group") {
        cx.n(2)?;
        let (map, coords) = tensor(0)?;
        let reduce = if cx.i.opcode.base == "cp.reduce.async.bulk.tensor" {
            use crate::exec::atom::AtomOp;
            let op = [
                ("add", AtomOp::Add),
                ("min", AtomOp::Min),
                ("max", AtomOp::Max),
            ]
            .into_iter()
            .find(|(n, _)| cx.has(n))
            .ok_or_else(|| cx.err("a TMA reduction other than .add, .min, .max"))?;
            Some(op.1)
        } else {
            None
        };
        return Ok(Op::TmaStore {
            map,
            coords,
            src: cx.addr(1)?,
            reduce,
        });
    }
    Err(cx.err("this direction or completion mechanism of cp.async.bulk.tensor"))
}

/// `atom` (§9.7.13.5) and `red` (§9.7.13.6): the operation and type pairs `atom.rs` executes.
pub(super) fn atom(cx: &Cx<'_>) -> Result<Op, SimError> {
    use crate::exec::atom::AtomOp;
    use crate::ptx::Type;
    let red = cx.i.opcode.base == "red";
    let space = mem_space(cx)?;
    if space == MemSpace::Param {
        return Err(cx.err("atomics on .param"));
    }
    let m = &cx.i.opcode.modifiers;
    if m.iter()
        .any(|m| m.starts_with("v2") || m.starts_with("v4") || m.starts_with("v8"))
    {
        if red {
            return red_vec(cx, space);
        }
        return Err(cx.err("vector atomics"));
    }
    if m.iter().any(|m| m.starts_with("L2::")) {
        return Err(cx.err("cache hints"));
    }
    let noftz = m.iter().any(|m| m == "noftz");
    let op = [
        ("add", AtomOp::Add),
        ("min", AtomOp::Min),
        ("max", AtomOp::Max),
        ("inc", AtomOp::Inc),
        ("dec", AtomOp::Dec),
        ("and", AtomOp::And),
        ("or", AtomOp::Or),
        ("xor", AtomOp::Xor),
        ("exch", AtomOp::Exch),
        ("cas", AtomOp::Cas),
    ]
    .into_iter()
    .find(|(n, _)| cx.has(n))
    .ok_or_else(|| cx.err("no atomic operation"))?
    .1;
    let ty = cx.ty()?;
    use Type::*;
    let half = matches!(ty, F16 | Bf16 | F16x2 | Bf16x2);
    if half != noftz {
        return Err(cx.err(if half {
            "16-bit float atomics without .noftz"
        } else {
            ".noftz on a type other than the 16-bit floats"
        }));
    }
    let ok = match op {
        AtomOp::Add => matches!(ty, U32 | S32 | U64 | F32 | F64) || half,
        AtomOp::Min | AtomOp::Max => matches!(ty, U32 | S32 | U64 | S64),
        AtomOp::Inc | AtomOp::Dec => ty == U32,
        AtomOp::And | AtomOp::Or | AtomOp::Xor | AtomOp::Exch | AtomOp::Cas => {
            matches!(ty, B32 | B64)
        }
    };
    if !ok {
        return Err(cx.err(format!("this atomic operation on .{ty}")));
    }
    if red && op == AtomOp::Cas {
        return Err(cx.err("red has no .cas"));
    }
    let cas = op == AtomOp::Cas;
    let k = usize::from(!red);
    cx.n(k + 2 + usize::from(cas))?;
    Ok(Op::Atom {
        op,
        ty,
        space,
        scope: crate::exec::global_race::AtomScope::of(m),
        d: if red { None } else { cx.dst(0)? },
        addr: cx.addr(k)?,
        b: cx.val(k + 1)?,
        c: if cas { Some(cx.val(k + 2)?) } else { None },
    })
}

/// `red` with a vector type (§9.7.13.6, PTX ISA 8.1+, sm_90): `.global` only;
/// `.add.v2/.v4.f32`, `.{add,min,max}.noftz.v2/.v4/.v8.{f16,bf16}` and
/// `.{add,min,max}.noftz.v2/.v4.{f16x2,bf16x2}`; the values a brace-enclosed vector of as
/// many registers as the `.vN` says.
fn red_vec(cx: &Cx<'_>, space: MemSpace) -> Result<Op, SimError> {
    use crate::exec::atom::AtomOp;
    use crate::ptx::Type::*;
    if space != MemSpace::Global {
        return Err(cx.err("red with a vector type outside .global"));
    }
    let m = &cx.i.opcode.modifiers;
    if m.iter().any(|m| m.starts_with("L2::")) {
        return Err(cx.err("cache hints"));
    }
    let n: usize = match ["v2", "v4", "v8"].into_iter().find(|v| cx.has(v)) {
        Some("v2") => 2,
        Some("v4") => 4,
        _ => 8,
    };
    let op = [
        ("add", AtomOp::Add),
        ("min", AtomOp::Min),
        ("max", AtomOp::Max),
    ]
    .into_iter()
    .find(|(o, _)| cx.has(o))
    .ok_or_else(|| cx.err("a vector red other than .add, .min, .max"))?
    .1;
    let ty = cx.ty()?;
    let noftz = cx.has("noftz");
    let ok = match ty {
        F32 => op == AtomOp::Add && !noftz && n <= 4,
        F16 | Bf16 => noftz,
        F16x2 | Bf16x2 => noftz && n <= 4,
        _ => false,
    };
    if !ok {
        return Err(cx.err(format!(
            "red.v{n} of this operation on .{ty} (vector red: .add.f32 in v2/v4, .noftz 16-bit floats)"
        )));
    }
    cx.n(2)?;
    let vals = cx
        .list(1)?
        .into_iter()
        .map(|o| cx.syms.val(o, cx.i.line, &cx.text))
        .collect::<Result<Vec<_>, _>>()?;
    if vals.len() != n {
        return Err(cx.err(format!("red.v{n} with {} values", vals.len())));
    }
    Ok(Op::RedVec {
        op,
        ty,
        scope: crate::exec::global_race::AtomScope::of(m),
        addr: cx.addr(0)?,
        vals,
    })
}

/// `st.async` (`st_async.rs`): the one form the ISA has (§9.7.9.12), a remote
/// `.shared::cluster` store completing bytes on an mbarrier, scalar or `.v2`/`.v4` of
/// 32- or 64-bit values (`.v4` of 32-bit only).
pub(super) fn st_async(cx: &Cx<'_>) -> Result<Op, SimError> {
    cx.n(3)?;
    for m in ["shared::cluster", "mbarrier::complete_tx::bytes"] {
        if !cx.has(m) {
            return Err(cx.err(format!("st.async without .{m}")));
        }
    }
    let b = bits(cx.ty()?);
    let vals = cx
        .list(1)?
        .into_iter()
        .map(|o| cx.syms.val(o, cx.i.line, &cx.text))
        .collect::<Result<Vec<_>, _>>()?;
    let ok = matches!((b, vals.len()), (32, 1 | 2 | 4) | (64, 1 | 2));
    if !ok {
        return Err(cx.err(format!(
            "st.async of {} {b}-bit values (the forms: .b32/.b64, .v2 of either, .v4 of 32-bit)",
            vals.len()
        )));
    }
    Ok(Op::StAsync {
        bits: b,
        vals,
        addr: cx.addr(0)?,
        mbar: cx.addr(2)?,
    })
}

/// `clusterlaunchcontrol.try_cancel` (`clc.rs`): the one form sm_100a has, with or without
/// `.multicast::cluster::all`.
pub(super) fn clc_try_cancel(cx: &Cx<'_>) -> Result<Op, SimError> {
    cx.n(2)?;
    for m in ["async", "mbarrier::complete_tx::bytes", "b128"] {
        if !cx.has(m) {
            return Err(cx.err(format!("try_cancel without .{m}")));
        }
    }
    if !cx.has("shared::cta") {
        return Err(cx.err("the response and mbarrier must be .shared::cta"));
    }
    Ok(Op::ClcTryCancel {
        resp: cx.addr(0)?,
        mbar: cx.addr(1)?,
        multicast: cx.has("multicast::cluster::all"),
    })
}

/// `clusterlaunchcontrol.query_cancel` (`clc.rs`).
pub(super) fn clc_query(cx: &Cx<'_>) -> Result<Op, SimError> {
    cx.n(2)?;
    if !cx.has("b128") {
        return Err(cx.err("query_cancel takes a .b128 response"));
    }
    let q = match cx.val(1)? {
        Val::Reg(r) => r,
        _ => return Err(cx.err("the response must be a .b128 register")),
    };
    let m = &cx.i.opcode.modifiers;
    let ds: Vec<Option<crate::exec::program::Reg>> = cx
        .list(0)?
        .into_iter()
        .map(|o| cx.syms.dst(o, cx.i.line, &cx.text))
        .collect::<Result<_, _>>()?;
    let first = if cx.has("is_canceled") {
        if ds.len() != 1 || !cx.has("pred") {
            return Err(cx.err("is_canceled writes one .pred"));
        }
        None
    } else if let Some(g) = m.iter().find(|m| m.starts_with("get_first_ctaid")) {
        let dim = match g.strip_prefix("get_first_ctaid") {
            Some("") => None,
            Some("::x") => Some(0),
            Some("::y") => Some(1),
            Some("::z") => Some(2),
            _ => return Err(cx.err("get_first_ctaid of an unknown dimension")),
        };
        let want = if dim.is_some() { 1 } else { 4 };
        if ds.len() != want || (dim.is_none() && !cx.has("v4")) {
            return Err(cx.err(format!("get_first_ctaid writes {want} .b32 registers")));
        }
        Some(dim)
    } else {
        return Err(cx.err("query_cancel needs .is_canceled or .get_first_ctaid"));
    };
    Ok(Op::ClcQuery { ds, q, first })
}

/// `ldmatrix` / `stmatrix` (PTX ISA "Warp-level matrix load instruction: ldmatrix", "Warp-level
/// matrix store instruction: stmatrix"): the `.m8n8` shape of `.b16` elements in shared
/// memory, `.x1`, `.x2` or `.x4` matrices, optionally `.trans`. The other shapes (`.m16n16`,
/// `.m8n16` of 8-bit and packed 6/4-bit elements) are refused by name.
pub(super) fn matrix(cx: &Cx<'_>) -> Result<Op, SimError> {
    cx.n(2)?;
    if !cx.has("m8n8") || !cx.has("b16") {
        return Err(cx.err("ldmatrix/stmatrix shapes other than .m8n8 of .b16"));
    }
    if !(cx.has("shared") || cx.has("shared::cta")) {
        return Err(cx.err("ldmatrix/stmatrix need the .shared state space"));
    }
    let n = match (cx.has("x1"), cx.has("x2"), cx.has("x4")) {
        (true, false, false) => 1,
        (false, true, false) => 2,
        (false, false, true) => 4,
        _ => return Err(cx.err("ldmatrix/stmatrix need one of .x1, .x2, .x4")),
    };
    let trans = cx.has("trans");
    let load = cx.i.opcode.base == "ldmatrix";
    let regs = cx.list(if load { 0 } else { 1 })?;
    if regs.len() != n as usize {
        return Err(cx.err(format!(
            "{} .x{n} takes {n} registers, not {}",
            cx.i.opcode.base,
            regs.len()
        )));
    }
    if load {
        let ds = regs
            .into_iter()
            .map(|o| cx.syms.dst(o, cx.i.line, &cx.text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Op::LdMatrix {
            n,
            trans,
            ds,
            addr: cx.addr(1)?,
        })
    } else {
        let vals = regs
            .into_iter()
            .map(|o| cx.syms.val(o, cx.i.line, &cx.text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Op::StMatrix {
            n,
            trans,
            vals,
            addr: cx.addr(0)?,
        })
    }
}
