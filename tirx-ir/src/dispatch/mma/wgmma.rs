//! `wgmma` — Hopper warpgroup MMA: A from shared memory or from registers (the RS form),
//! B from shared memory, accumulator in registers.
//!
//! When: sm_90a; `acc` a `regs::<f32>([M, N])` with M a multiple of 64 and N a legal wgmma N;
//! `a` (M×K) a bf16/f16 shared tile with swizzle B128, K-major with 128-byte rows or MN-major
//! (`major = mn`: A given K×M, each 64-row chunk one `[BK, 64]` TMA box, read with
//! `imm-trans-a` = 1); `b` either K-major the same way (N×K: "TN", B given N×K) or MN-major
//! (`smem::<bf16>([.., N / 64, K, 64], swizzle = B128, major = mn)`: "NN", B given K×N, each
//! 64-column chunk one `[BK, 64]` TMA box); run by one warpgroup. FP8: `a` and `b` `e4m3` or
//! `e5m2` shared tiles (the two may differ), both K-major — `[rows, 128]`, 128 8-bit
//! elements a 128-byte row — since the 8-bit forms have no transpose operands (PTX ISA
//! §9.7.15.5.2; an MN-major one is refused by name, `WgmmaFp8Major`); `.m64nNk32`, four
//! instructions per 128-wide K tile. A in registers is 16-bit only (an 8-bit float has no
//! register tile).
//! Before: `mma @acc, @a_s[%s], @b_s[%s] accumulate (%k > 0)`
//! After: descriptors for both operands, then for each K-step of 16 and each 64-row slice
//! `wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 {d…}, adesc, bdesc, p, 1, 1, ta, tb`
//! (`.f32.f16.f16` for f16 operands: the same K = 16 shape, descriptors and fragment;
//! `p` = accumulate for the first K-step, true after; `ta` / `tb` = 1 for an MN-major A / B;
//! FP8: `wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e5m2 {d…}, adesc, bdesc, p, 1, 1` per
//! K-step of 32, the same 32-byte descriptor step). Fencing and
//! completion (`wgmma::fence/commit/wait`) stay explicit in the kernel.
//! PTX used: PTX ISA §9.7.15.5.2 (wgmma.mma_async); descriptor §9.7.15.5.1.2.2 via
//! `encode::wgmma`. K-major: advancing K by 16 elements inside the 128-byte swizzle row adds
//! 32 bytes (2 in the descriptor's address field): the hardware applies the swizzle to the
//! address. MN-major: K-rows are the chunk's outer dimension, so K + 16 is 16 rows of 128 B =
//! 2048 B (two 1024-byte 8-row groups, 128 in the address field); LBO = the chunk stride
//! (K rows × 128 B), SBO = 1024 (`encode::wgmma::mn_major_desc_fields`, §9.7.15.5.1.2.1).
//! The same fields serve A and B: A's 64 rows of one instruction are one 64-element chunk,
//! the geometry of an MN-major B of N = 64, and its next 64-row slice the next chunk.
//!
//! Why majorness is a declaration attribute (`major = mn` on the shared buffer) and not an
//! operand marker on the mma: layout is declared once on the buffer and flows to every consumer
//! (DESIGN §3). The same buffer is the TMA destination (whose `[BK, 64]` boxes are plain
//! row-major and need no marker) and the MMA operand; a marker at the mma could disagree with
//! how the buffer was filled, an attribute cannot. A may be MN-major too (`imm-trans-a`, the
//! mirror image of B's transpose; `gemm_sm90_splitk_t`'s `nn` configs read B given K×N as
//! the MMA's A that way) for 16-bit types from shared memory only: the FP8 forms have no
//! transpose operands (`WgmmaFp8Major`), and the register form of A has no `imm-trans-a`
//! (PTX ISA §9.7.15.5.2: its A fragment is laid out by the ISA, not by a descriptor).

use super::{accumulator, smem_operand, smem_operand_any};
use crate::abi::ElemType;
use crate::diag::Diagnostics;
use crate::dispatch::{Cx, MmaVariant, Reject, Variant};
use crate::encode::Major;
use crate::encode::wgmma::{
    WgmmaShapeError, desc_const_part, kmajor_desc_fields, mn_major_desc_fields, mn_major_k_advance,
    wgmma_k, wgmma_shape_ok,
};
use crate::inst::reg;
use crate::ir::{BinOp, Expr, Inst, Op, Operand as O, ScalarType as T, Space, TileRef};
use crate::lower::Lower;

/// The variant.
pub static VARIANT: Variant<MmaVariant> = Variant {
    id: MmaVariant::Wgmma,
    priority: 10,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    let Op::Mma {
        acc, a, b, pair, ..
    } = cx.op
    else {
        return Err(Reject::WrongOp { expected: "an mma" });
    };
    if *pair {
        return Err(Reject::PairNotWgmma);
    }
    if let Op::Mma { saturate: true, .. } = cx.op {
        return Err(Reject::Saturate {
            kind: "wgmma (no integer kind here)".into(),
        });
    }
    if let Op::Mma { scale: Some(_), .. } = cx.op {
        return Err(Reject::BlockScale {
            why: "block scaling (`scale_a`, `scale_b`) is tcgen05's (kind::mxf8f6f4); wgmma \
                  has no block-scaled form"
                .into(),
        });
    }
    if !cx.k.target().has_wgmma() {
        return Err(Reject::NoWgmma {
            target: cx.k.target(),
        });
    }
    let (_, m, n) = accumulator(cx.k, acc, Space::Reg)?;
    if let Some(ra) = reg_a(cx.k, a) {
        return applies_rs(cx, ra, b, m, n);
    }
    let (a, b) = (ss_operand(cx.k, a, "A")?, ss_operand(cx.k, b, "B")?);
    let fp8 = a.buf.elem.is_fp8();
    // 16-bit operands of one type, or two 8-bit ones of either FP8 type (E4M3 × E5M2 is a
    // legal `.atype.btype`, §9.7.15.5.2).
    if fp8 != b.buf.elem.is_fp8() || (!fp8 && a.buf.elem != b.buf.elem) {
        return Err(Reject::ElemsDiffer);
    }
    if let Some((which, o)) = [("A", &a), ("B", &b)]
        .into_iter()
        .find(|(_, o)| fp8 && o.major != Major::K)
    {
        return Err(Reject::WgmmaFp8Major {
            which,
            buffer: o.buf.name.clone(),
            elem: o.buf.elem,
        });
    }
    // An MN-major A (16-bit, from shared memory: the FP8 forms are refused just above, the
    // register form has no majorness) is `imm-trans-a` = 1, the mirror image of an MN-major B.
    if a.rows != m || b.rows != n || a.k != b.k {
        return Err(Reject::ShapesDisagree {
            m,
            n,
            a: (a.rows, a.k),
            b: (b.rows, b.k),
        });
    }
    if m % 64 != 0 {
        return Err(Reject::WgmmaM { m });
    }
    // A row is one 128-byte span (`kmajor_dims`): K per tile is 64 16-bit or 128 8-bit
    // elements, a whole number of instructions' K (16 or 32) by construction.
    let kstep = wgmma_k(a.buf.elem).ok_or(WgmmaShapeError::Elem(a.buf.elem))?;
    wgmma_shape_ok(64, n, kstep, a.buf.elem)?;
    if !cx.threads.is_whole_warpgroups() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "wgmma is issued by one whole warpgroup",
        });
    }
    Ok(())
}

/// A shared-memory operand of the SS form: 16-bit or 8-bit floats (the type checked before
/// the layout, as [`smem_operand`] does), in one of the layouts of [`smem_operand_any`].
fn ss_operand<'k>(
    k: &'k crate::ir::Kernel,
    t: &'k TileRef,
    which: &'static str,
) -> Result<super::Operand<'k>, Reject> {
    if let TileRef::Buf { buf, .. } = t
        && let b = &k.buffers[*buf]
        && b.space == Space::Shared
        && !matches!(
            b.elem,
            ElemType::Bf16 | ElemType::F16 | ElemType::E4m3 | ElemType::E5m2
        )
    {
        return Err(Reject::OperandElem {
            which,
            buffer: b.name.clone(),
            elem: b.elem,
            supported: "bf16, f16, e4m3 and e5m2",
        });
    }
    smem_operand_any(k, t, which)
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Mma {
        acc,
        a,
        b,
        accumulate,
        ..
    } = op
    else {
        return Err(lw.internal("wgmma on a non-mma"));
    };
    let (
        TileRef::Buf { buf: acc_buf, .. },
        TileRef::Buf {
            buf: a_buf,
            index: a_ix,
        },
        TileRef::Buf {
            buf: b_buf,
            index: b_ix,
        },
    ) = (acc, a, b)
    else {
        return Err(lw.internal("wgmma operands are not buffers"));
    };
    let (_, m, n) = accumulator(lw.k, acc, Space::Reg).map_err(|e| lw.error(e))?;
    if reg_a(lw.k, a).is_some() {
        return lower_rs(lw, *acc_buf, *a_buf, b, (*b_buf, b_ix), accumulate, (m, n));
    }
    let (ab, kext, a_major) = {
        let oa = ss_operand(lw.k, a, "A").map_err(|e| lw.error(e))?;
        (oa.buf.elem, oa.k, oa.major)
    };
    let (b_major, bb) = {
        let ob = ss_operand(lw.k, b, "B").map_err(|e| lw.error(e))?;
        (ob.major, ob.buf.elem)
    };
    // One instruction's K: 16 16-bit or 32 8-bit elements, 32 bytes of a row either way.
    let kstep = wgmma_k(ab).ok_or_else(|| lw.internal("no wgmma K"))?;
    // Each operand's descriptor constant and address-field step per K-step (MN-major: 16-bit
    // only, refused for 8-bit operands by `applies`).
    let (acst, astep) = desc_layout(lw, a_major, ab, kext)?;
    let (bcst, bstep) = desc_layout(lw, b_major, ab, kext)?;
    let frag = lw
        .frags
        .get(acc_buf)
        .cloned()
        .ok_or_else(|| lw.internal("register fragment not allocated"))?;
    let adesc0 = desc_base(lw, *a_buf, a_ix, acst)?;
    let bdesc0 = desc_base(lw, *b_buf, b_ix, bcst)?;
    let first = lw.let_("acc_in", T::Pred, accumulate.clone());
    let always = lw.pred_const(true);
    let row_bytes = kext * ab.bytes();
    for kk in 0..kext / kstep {
        let bdesc = lw.var("bdesc", T::U64);
        lw.inst(Inst::binary(
            "add.u64",
            bdesc,
            reg(bdesc0),
            O::Imm(i64::from(kk * bstep)),
        ));
        for slice in 0..m / 64 {
            let adesc = lw.var("adesc", T::U64);
            // A 64-row slice is 64 K-major rows of `row_bytes`, or one MN-major chunk of
            // `kext` rows of 128 bytes: the same `64·row_bytes` bytes either way.
            let off = slice * 64 * row_bytes / 16 + kk * astep;
            lw.inst(Inst::binary(
                "add.u64",
                adesc,
                reg(adesc0),
                O::Imm(i64::from(off)),
            ));
            let regs = &frag[(slice * n / 2) as usize..((slice + 1) * n / 2) as usize];
            let p = if kk == 0 { first } else { always };
            lw.inst(if ab.is_fp8() {
                Inst::wgmma_mma_async_fp8(n, (ab.name(), bb.name()), regs, adesc, bdesc, p)
            } else {
                let trans = (a_major.transpose_bit(), b_major.transpose_bit());
                Inst::wgmma_mma_async(n, ab.name(), regs, adesc, bdesc, p, trans)
            });
        }
    }
    Ok(())
}

/// The descriptor's constant part (LBO, SBO, swizzle) and its address-field step per K-step
/// of a 128B-swizzled shared operand of `elem` with `kext` K per tile. K-major: 32 bytes along
/// the swizzled row (2 in the 16-byte address field; the hardware applies the swizzle to the
/// address). MN-major (16-bit only, `encode::wgmma::mn_major_desc_fields`, §9.7.15.5.1.2.1):
/// 16 K-rows of 128 bytes, 2048 B (128), whole swizzle atoms, so the base offset stays 0.
fn desc_layout(
    lw: &Lower,
    major: Major,
    elem: ElemType,
    kext: u32,
) -> Result<(u64, u32), Diagnostics> {
    let sw = crate::abi::Swizzle::B128;
    let enc = |e: crate::encode::EncodeError| lw.internal(e.to_string());
    match major {
        Major::K => {
            let (lbo, sbo) = kmajor_desc_fields(sw, elem.bytes()).map_err(enc)?;
            Ok((desc_const_part(lbo, sbo, 0, sw).map_err(enc)?, 32 / 16))
        }
        Major::MN => {
            let (lbo, sbo) = mn_major_desc_fields(sw, elem.bytes(), kext).map_err(enc)?;
            let step = mn_major_k_advance(sw, 16).ok_or_else(|| lw.internal("no swizzle span"))?;
            Ok((desc_const_part(lbo, sbo, 0, sw).map_err(enc)?, step / 16))
        }
    }
}

/// A in registers: the buffer, if `a` is a register tile.
fn reg_a(k: &crate::ir::Kernel, a: &TileRef) -> Option<crate::arena::Handle<crate::ir::Buffer>> {
    match a {
        TileRef::Buf { buf, index } if index.is_empty() && k.buffers[*buf].space == Space::Reg => {
            Some(*buf)
        }
        _ => None,
    }
}

/// The RS form: A an `[M, K]` 16-bit register tile in the accumulator-fragment layout (the
/// layout PTX ISA §9.7.15.5.1.1.1 gives matrix A in registers: per K-step of 16, thread `t`
/// holds rows `16(t/32) + (t%32)/4 (+8)` and columns `2(t%4) (+1) (+8)` — the fragment of
/// two n8 column groups of an accumulator, so a converted accumulator feeds the next MMA).
fn applies_rs(
    cx: &Cx,
    a: crate::arena::Handle<crate::ir::Buffer>,
    b: &TileRef,
    m: u32,
    n: u32,
) -> Result<(), Reject> {
    let ab = &cx.k.buffers[a];
    let b = smem_operand(cx.k, b, "B")?;
    let (am, ak) = match ab.layout.shape[..] {
        [am, ak] => (am, ak),
        _ => {
            return Err(Reject::RegTile {
                why: format!("A `{}` must be a 2-D register tile", ab.name),
            });
        }
    };
    if ab.elem.bytes() != 2 {
        return Err(Reject::RegTile {
            why: format!(
                "A `{}` in registers must be bf16 or f16 (cast it: `cast::<bf16>(…)`), not {}",
                ab.name,
                ab.elem.name()
            ),
        });
    }
    let want = crate::ir::RegLayout::wgmma_acc(am, ak).ok();
    if crate::regtile::layout(cx.k, a).ok() != want || !ak.is_multiple_of(16) {
        return Err(Reject::RegTile {
            why: format!(
                "A `{}` in registers must have the wgmma fragment layout, K a multiple of 16",
                ab.name
            ),
        });
    }
    if ab.elem != b.buf.elem {
        return Err(Reject::ElemsDiffer);
    }
    if am != m || b.rows != n || ak != b.k {
        return Err(Reject::ShapesDisagree {
            m,
            n,
            a: (am, ak),
            b: (b.rows, b.k),
        });
    }
    wgmma_shape_ok(64, n, 16, ab.elem)?;
    if !cx.threads.is_whole_warpgroups() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "wgmma is issued by one whole warpgroup",
        });
    }
    Ok(())
}

/// Lowers the RS form: per K-step and 64-row slice, A's eight 16-bit registers packed into
/// four `b32` (`mov.b32 {lo, hi}`), then `wgmma.mma_async … {d…}, {a0, a1, a2, a3}, bdesc, p,
/// 1, 1, tb` (PTX ISA §9.7.15.5.2: the register-A form has no `imm-trans-a`).
fn lower_rs(
    lw: &mut Lower,
    acc: crate::arena::Handle<crate::ir::Buffer>,
    a: crate::arena::Handle<crate::ir::Buffer>,
    b: &TileRef,
    (b_buf, b_ix): (crate::arena::Handle<crate::ir::Buffer>, &[Expr]),
    accumulate: &Expr,
    (m, n): (u32, u32),
) -> Result<(), Diagnostics> {
    let ob = smem_operand(lw.k, b, "B").map_err(|e| lw.error(e))?;
    let (ab, kext, b_major) = (ob.buf.elem, ob.k, ob.major);
    let (bcst, bstep) = desc_layout(lw, b_major, ab, kext)?;
    let frag = crate::regtile::frag(lw, acc)?;
    let afrag = crate::regtile::frag(lw, a)?;
    // A packed tile's words are the operand's registers as they are.
    let a_packed = crate::regtile::is_packed(lw, a);
    let bdesc0 = desc_base(lw, b_buf, b_ix, bcst)?;
    let first = lw.let_("acc_in", T::Pred, accumulate.clone());
    let always = lw.pred_const(true);
    // Every A word is packed first, then a `wgmma.fence`, then the MMAs: the packing writes
    // registers the MMAs read, and such writes must come before a fence that precedes the
    // wgmma (PTX ISA §9.7.15.6.1, wgmma.fence); packed between them, ptxas inserts its own
    // warpgroup arrive and may serialise the kernel's wgmmas (its C7519).
    let mut issues = Vec::new();
    for kk in 0..kext / 16 {
        let bdesc = lw.var("bdesc", T::U64);
        lw.inst(Inst::binary(
            "add.u64",
            bdesc,
            reg(bdesc0),
            O::Imm(i64::from(kk * bstep)),
        ));
        for slice in 0..m / 64 {
            // Registers of columns 16kk..16kk+16 of this slice: n8 groups 2kk and 2kk + 1.
            let base = (slice * kext / 2 + 8 * kk) as usize;
            let words: Vec<_> = (0..4)
                .map(|w| {
                    if a_packed {
                        return afrag[base / 2 + w];
                    }
                    let r = lw.var("a", T::U32);
                    lw.inst(Inst::pack_b32(
                        r,
                        afrag[base + 2 * w],
                        afrag[base + 2 * w + 1],
                    ));
                    r
                })
                .collect();
            let p = if kk == 0 { first } else { always };
            issues.push((slice, bdesc, words, p));
        }
    }
    lw.inst(Inst::wgmma_fence());
    for (slice, bdesc, words, p) in issues {
        let regs = &frag[(slice * n / 2) as usize..((slice + 1) * n / 2) as usize];
        lw.inst(Inst::wgmma_mma_async_rs(
            n,
            ab.name(),
            regs,
            &words,
            bdesc,
            p,
            b_major.transpose_bit(),
        ));
    }
    Ok(())
}

/// `const | ((addr & 0x3FFFF) >> 4)` for the operand's tile, as a u64 variable.
///
/// The start-address field is 14 bits, "matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4"
/// (PTX ISA §9.7.15.5.1.2, matrix descriptor format; the tcgen05 shared memory descriptor
/// encodes its start address the same way, §9.7.16.4.1). The mask matters: in a cluster
/// launch the `.shared` address of a variable can carry bits above bit 17 that identify the
/// CTA within the cluster (seen on the H200, 2026-11-30: CTA rank 1 of a 2×1 cluster), and
/// unmasked they land in the leading-byte-offset field next to the address. A K-major
/// operand with 128B swizzle ignores that field, so only MN-major B operands, whose chunk
/// stride is the leading byte offset, computed wrong columns — in rank 1 only.
pub fn desc_base(
    lw: &mut Lower,
    buf: crate::arena::Handle<crate::ir::Buffer>,
    index: &[Expr],
    cst: u64,
) -> Result<crate::arena::Handle<crate::ir::Var>, Diagnostics> {
    let addr = lw.smem_addr(buf, index)?;
    let field = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Shr, addr, Expr::u32(4)),
        Expr::u32(0x3FFF),
    );
    let a16 = lw.let_("addr16", T::U32, field);
    let a64 = lw.var("addr64", T::U64);
    lw.inst(Inst::cvt("u64.u32", a64, reg(a16)));
    let d = lw.var("desc", T::U64);
    lw.inst(Inst::binary("or.b64", d, reg(a64), O::Imm(cst as i64)));
    Ok(d)
}
