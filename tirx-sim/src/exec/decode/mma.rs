//! Decoding of `wgmma.mma_async` (PTX ISA §9.7.15.5.2): the shape `m64nNk16` (16-bit inputs)
//! or `m64nNk32` (FP8 inputs, `.e4m3`/`.e5m2`, no transpose operands), the types,
//! the accumulator registers, A as a descriptor or (the RS form) four fragment registers, the
//! B descriptor and the immediate scale and transpose operands.
//! Forms the executor does not run yet are refused here with the reason.

use super::Cx;
use crate::exec::diag::SimError;
use crate::exec::ops::{Op, TcA, WgmmaA};
use crate::exec::program::Val;
use crate::exec::tcgen05_kind::{Elem, Kind};
use crate::exec::tmem_shape::TmemShape;
use crate::ptx::Operand;

pub(super) fn wgmma(cx: &Cx<'_>) -> Result<Op, SimError> {
    let mods = &cx.i.opcode.modifiers;
    let (si, shape) = mods
        .iter()
        .enumerate()
        .find(|(_, m)| m.starts_with("m64n") && (m.ends_with("k16") || m.ends_with("k32")))
        .ok_or_else(|| {
            cx.err("only the .m64nNk16 (16-bit inputs) and .m64nNk32 (FP8) shapes are supported")
        })?;
    let k: u32 = if shape.ends_with("k32") { 32 } else { 16 };
    let n: u32 = shape["m64n".len()..shape.len() - 3]
        .parse()
        .map_err(|_| cx.err("malformed shape"))?;
    if n == 0 || n > 256 || !n.is_multiple_of(8) {
        return Err(cx.err(format!("N = {n} is not a multiple of 8 in 8..=256")));
    }
    // `.dtype.atype.btype` follow the shape (§9.7.15.5.2).
    let elem = |m: Option<&String>| match m.map(String::as_str) {
        Some("bf16") => Some(Elem::Bf16),
        Some("f16") => Some(Elem::F16),
        Some("e4m3") => Some(Elem::E4m3),
        Some("e5m2") => Some(Elem::E5m2),
        _ => None,
    };
    if mods.get(si + 1).map(String::as_str) != Some("f32") {
        return Err(cx.err("only an f32 accumulator is supported"));
    }
    let (a_elem, b_elem) = match (elem(mods.get(si + 2)), elem(mods.get(si + 3))) {
        (Some(a), Some(b)) if a == b && a.bytes() == 2 && k == 16 => (a, b),
        (Some(a), Some(b)) if a.bytes() == 1 && b.bytes() == 1 && k == 32 => (a, b),
        _ => {
            return Err(cx.err(
                "only bf16 × bf16 and f16 × f16 inputs (k16) and e4m3/e5m2 × e4m3/e5m2 \
                 inputs (k32) are supported",
            ));
        }
    };
    let fp8 = k == 32;
    // The RS form (A from registers) has no imm-trans-a: 7 operands instead of 8.
    let rs = matches!(cx.op(1)?, Operand::Vector(_));
    if rs && fp8 {
        return Err(cx.err("the FP8 wgmma with A from registers is not emulated yet"));
    }
    // The FP8 forms have no imm-trans operands (both operands K-major): 6.
    cx.n(match (fp8, rs) {
        (true, _) => 6,
        (false, true) => 7,
        (false, false) => 8,
    })?;
    let a = if rs {
        let regs = cx
            .list(1)?
            .into_iter()
            .map(|o| {
                cx.syms
                    .dst(o, cx.i.line, &cx.text)?
                    .ok_or_else(|| cx.err("a sink in the A fragment"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let regs: [u32; 4] = regs.try_into().map_err(|v: Vec<u32>| {
            cx.err(format!(
                "{} A registers: the .f16/.bf16 A fragment is four .b32 registers",
                v.len()
            ))
        })?;
        WgmmaA::Regs(regs)
    } else {
        WgmmaA::Desc(cx.val(1)?)
    };
    let d = cx
        .list(0)?
        .into_iter()
        .map(|o| {
            cx.syms
                .dst(o, cx.i.line, &cx.text)?
                .ok_or_else(|| cx.err("a sink in the accumulator"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if d.len() as u32 != n / 2 {
        return Err(cx.err(format!(
            "{} accumulator registers for N = {n} (expected {})",
            d.len(),
            n / 2
        )));
    }
    let imm = |k: usize| match cx.val(k)? {
        Val::Imm(v) => Ok(v as i64),
        _ => Err(cx.err("scale and transpose operands must be constants")),
    };
    let (scale_a, scale_b) = (imm(4)?, imm(5)?);
    let (tnsp_a, tnsp_b) = match (fp8, rs) {
        (true, _) => (0, 0),
        (false, true) => (0, imm(6)?),
        (false, false) => (imm(6)?, imm(7)?),
    };
    if ![0, 1].contains(&tnsp_a) || ![0, 1].contains(&tnsp_b) {
        return Err(cx.err("imm-trans-a/b must be 0 or 1"));
    }
    if ![1, -1].contains(&scale_a) || ![1, -1].contains(&scale_b) {
        return Err(cx.err("imm-scale-a/b must be 1 or -1"));
    }
    Ok(Op::Wgmma {
        n,
        k,
        a_elem,
        b_elem,
        d,
        a,
        b: cx.val(2)?,
        scale_d: cx.val(3)?,
        neg_a: scale_a == -1,
        neg_b: scale_b == -1,
        tnsp_a: tnsp_a == 1,
        tnsp_b: tnsp_b == 1,
    })
}

/// The tcgen05 instructions of the shipped Blackwell GEMM (PTX ISA §9.7.16), `cta_group::1`
/// and the CTA pair's `cta_group::2` (§9.7.16.5).
pub(super) fn tcgen05(cx: &Cx<'_>) -> Result<Op, SimError> {
    let base = cx.i.opcode.base.as_str();
    let needs_group = !matches!(
        base,
        "tcgen05.fence::before_thread_sync"
            | "tcgen05.fence::after_thread_sync"
            | "tcgen05.ld"
            | "tcgen05.wait::ld"
            | "tcgen05.st"
            | "tcgen05.wait::st"
    );
    let pair = cx.has("cta_group::2");
    if needs_group && !pair && !cx.has("cta_group::1") {
        return Err(cx.err("no .cta_group::1 or .cta_group::2"));
    }
    Ok(match base {
        "tcgen05.fence::before_thread_sync" => Op::Nop,
        "tcgen05.fence::after_thread_sync" => Op::TcFenceAfter,
        "tcgen05.alloc" => {
            cx.n(2)?;
            Op::TcAlloc {
                dst: cx.addr(0)?,
                ncols: cx.val(1)?,
                pair,
            }
        }
        "tcgen05.dealloc" => {
            cx.n(2)?;
            Op::TcDealloc {
                taddr: cx.val(0)?,
                ncols: cx.val(1)?,
                pair,
            }
        }
        "tcgen05.relinquish_alloc_permit" => Op::TcRelinquish,
        "tcgen05.wait::ld" => Op::TcWaitLd,
        "tcgen05.wait::st" => Op::TcWaitSt,
        "tcgen05.st" => {
            let (shape, num) = data_shape(cx)?;
            let split = matches!(shape, TmemShape::S16x32bx2 { .. });
            cx.n(if split { 3 } else { 2 })?;
            let shape = with_split(cx, shape, 1)?;
            let vals = cx
                .list(if split { 2 } else { 1 })?
                .into_iter()
                .map(|o| cx.syms.val(o, cx.i.line, &cx.text))
                .collect::<Result<Vec<_>, _>>()?;
            if vals.len() as u32 != num * shape.regs_per_rep() {
                return Err(cx.err(format!("{} registers for .x{num}", vals.len())));
            }
            Op::TcSt {
                taddr: cx.addr(0)?,
                vals,
                shape,
                unpack: cx.has("unpack::16b"),
            }
        }
        "tcgen05.ld" => {
            let (shape, num) = data_shape(cx)?;
            let split = matches!(shape, TmemShape::S16x32bx2 { .. });
            cx.n(if split { 3 } else { 2 })?;
            let shape = with_split(cx, shape, 2)?;
            let ds = cx
                .list(0)?
                .into_iter()
                .map(|o| {
                    cx.syms
                        .dst(o, cx.i.line, &cx.text)?
                        .ok_or_else(|| cx.err("a sink in a tcgen05.ld destination"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if ds.len() as u32 != num * shape.regs_per_rep() {
                return Err(cx.err(format!("{} registers for .x{num}", ds.len())));
            }
            Op::TcLd {
                ds,
                taddr: cx.addr(1)?,
                shape,
                pack: cx.has("pack::16b"),
            }
        }
        "tcgen05.mma" => {
            let mut kind = cx
                .i
                .opcode
                .modifiers
                .iter()
                .find_map(|m| Kind::from_modifier(m))
                .ok_or_else(|| {
                    cx.err(
                        "only kind::f16, kind::tf32, kind::f8f6f4, kind::i8, kind::mxf8f6f4, kind::mxf4 and kind::mxf4nvf4 are supported yet",
                    )
                })?;
            // `kind::mxf4nvf4` takes `.scale_vec::2X` (alias `.block32`) or `::4X`
            // (`.block16`), §9.7.16.10.7.1.
            if let Kind::MxF4Nvf4(_) = kind {
                let v = if cx.has("scale_vec::2X") || cx.has("block32") {
                    2
                } else if cx.has("scale_vec::4X") || cx.has("block16") {
                    4
                } else {
                    return Err(cx.err(
                        "kind::mxf4nvf4 takes .scale_vec::2X or .scale_vec::4X (.block32 / .block16)",
                    ));
                };
                kind = Kind::MxF4Nvf4(v);
            }
            // The block-scaled kinds (§9.7.16.10.7): `.block_scale` with the scale vector
            // size the kind allows — `kind::mxf8f6f4` takes `.scale_vec::1X` only (`.block32`
            // is its alias) — and the scale factors' TMEM addresses after the descriptor.
            // `kind::mxf4` takes `.scale_vec::2X` or `.block32` (its default when none is
            // written), §9.7.16.10.9 / §9.7.16.10.7.1.
            if kind == Kind::MxF4
                && ["scale_vec::1X", "scale_vec::4X", "block16"]
                    .iter()
                    .any(|m| cx.has(m))
            {
                return Err(cx.err("kind::mxf4 takes .scale_vec::2X (.block32) only"));
            }
            let scaled = kind.scaled();
            if scaled != cx.has("block_scale") {
                return Err(cx.err(format!(
                    "{kind:?} {} .block_scale",
                    if scaled { "needs" } else { "takes no" }
                )));
            }
            if kind == Kind::MxF8f6f4 && !(cx.has("scale_vec::1X") || cx.has("block32")) {
                return Err(
                    cx.err("kind::mxf8f6f4 takes .scale_vec::1X (or its alias .block32) only")
                );
            }
            cx.n(if scaled { 7 } else { 5 })?;
            let scale = if scaled {
                Some((cx.addr(4)?, cx.addr(5)?))
            } else {
                None
            };
            let enable_at = if scaled { 6 } else { 4 };
            // `[a-tmem]` (an address) or `a-desc` (a value), §9.7.16.10.9.
            let a = if matches!(cx.op(1)?, Operand::Mem(_)) {
                TcA::Tmem(cx.addr(1)?)
            } else {
                TcA::Desc(cx.val(1)?)
            };
            Op::TcMma {
                kind,
                d: cx.addr(0)?,
                a,
                b: cx.val(2)?,
                idesc: cx.val(3)?,
                enable: cx.val(enable_at)?,
                pair,
                scale,
            }
        }
        "tcgen05.cp" => {
            let m = &cx.i.opcode.modifiers;
            let shape = m.iter().find_map(|m| crate::exec::tcgen05_cp::cp_shape(m));
            let packed = ["b8x16", "b6x16_p32", "b4x16_p64"]
                .iter()
                .any(|f| cx.has(f));
            let group = cx.has("cta_group::1") || cx.has("cta_group::2");
            let (Some((rows, bytes)), false, true) = (shape, packed, group) else {
                return Err(cx.err(
                    "only tcgen05.cp.cta_group::{1,2} with .128x256b, .128x128b, .4x256b, \
                     .32x128b.warpx4 or .64x128b.warpx2::02_13 / ::01_23 (no decompression) \
                     is supported yet",
                ));
            };
            // The multicast each shape takes (§9.7.16.9.2 tcgen05.cp): `.32x128b` with
            // `.warpx4`, `.64x128b` with `.warpx2::02_13` or `::01_23`, the others none.
            use crate::exec::tcgen05_cp::{CpLanes, CpShape};
            let lanes = match (
                rows,
                cx.has("warpx4"),
                cx.has("warpx2::02_13"),
                cx.has("warpx2::01_23"),
            ) {
                (32, true, false, false) => CpLanes::Warpx4,
                (64, false, true, false) => CpLanes::Warpx2_02_13,
                (64, false, false, true) => CpLanes::Warpx2_01_23,
                (128 | 4, false, false, false) => CpLanes::Plain,
                _ => {
                    return Err(cx.err(
                        ".32x128b goes with .warpx4, .64x128b with .warpx2::02_13 or \
                         .warpx2::01_23, and the other shapes with no multicast",
                    ));
                }
            };
            let shape = CpShape { rows, bytes, lanes };
            cx.n(2)?;
            Op::TcCp {
                taddr: cx.addr(0)?,
                desc: cx.val(1)?,
                shape,
                pair: cx.has("cta_group::2"),
            }
        }
        "tcgen05.shift" => {
            if !cx.has("down") {
                return Err(cx.err("tcgen05.shift takes .down"));
            }
            cx.n(1)?;
            Op::TcShift {
                taddr: cx.addr(0)?,
                pair,
            }
        }
        "tcgen05.commit" => {
            if !cx.has("mbarrier::arrive::one") {
                return Err(cx.err("only the mbarrier::arrive::one completion is supported"));
            }
            // `.multicast::cluster` takes a 16-bit CTA mask operand (§9.7.16 `tcgen05.commit`).
            let multicast = cx.has("multicast::cluster");
            cx.n(if multicast { 2 } else { 1 })?;
            Op::TcCommit {
                mbar: cx.addr(0)?,
                multicast: if multicast { Some(cx.val(1)?) } else { None },
                pair,
            }
        }
        _ => return Err(cx.err("this tcgen05 instruction is not supported yet")),
    })
}

/// The `.shape` and `.num` of a tcgen05 data movement (§9.7.16.2.3): `.num` a power of two
/// with at most 128 registers per thread, only `.b32`, and neither `.red` (not supported yet).
fn data_shape(cx: &Cx<'_>) -> Result<(TmemShape, u32), SimError> {
    let m = &cx.i.opcode.modifiers;
    let shape = m
        .iter()
        .find_map(|m| TmemShape::from_modifier(m))
        .ok_or_else(|| cx.err("no .shape (32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2)"))?;
    if cx.has("red") || !cx.has("b32") {
        return Err(cx.err("only the .b32 forms are supported (no .red)"));
    }
    let n = m
        .iter()
        .find_map(|m| m.strip_prefix('x').and_then(|n| n.parse::<u32>().ok()))
        .ok_or_else(|| cx.err("no .xN repetition"))?;
    if !n.is_power_of_two() || n > shape.max_num() {
        return Err(cx.err(format!(
            ".x{n}: .num is a power of two up to {} for this shape",
            shape.max_num()
        )));
    }
    Ok((shape, n))
}

/// The `16x32bx2` shape with its `immHalfSplitoff` (operand `k`, a constant).
fn with_split(cx: &Cx<'_>, shape: TmemShape, k: usize) -> Result<TmemShape, SimError> {
    if !matches!(shape, TmemShape::S16x32bx2 { .. }) {
        return Ok(shape);
    }
    match cx.val(k)? {
        Val::Imm(v) if v < 512 => Ok(TmemShape::S16x32bx2 { split: v as u32 }),
        _ => Err(cx.err("immHalfSplitoff must be a constant column offset")),
    }
}
