//! `tcgen05` — Blackwell fifth-generation tensor core MMA: A from shared or tensor memory,
//! B from shared memory, accumulator in tensor memory, issued by one thread.
//!
//! When: sm_100a; `acc` a `tmem::<f32>([128, N])` (or a stage `acc[s]` of a
//! `tmem::<f32>([S, 128, N])`; or an f16 D, `tmem::<f16>([128, N], unpacked = true)`, one
//! element to a cell, §9.7.16.10.4.1, with f16 operands or those of `kind::f8f6f4`: the
//! descriptor's dtype F16 = 0, §9.7.16.4.2) with N legal for the kind (multiple of 8 up to 256 per
//! instruction descriptor); `b` (N×K) a shared tile with swizzle B128, K-major with 128-byte
//! rows, of bf16/f16 (`.kind::f16`, K = 16 per instruction), f32 (`.kind::tf32`, K = 8) or
//! e4m3/e5m2 or the 6-/4-bit e3m2/e2m3/e2m1 (`.kind::f8f6f4`, K = 32; A and B may differ;
//! the 6-/4-bit tiles hold the padded image PTX ISA §9.7.16's "Packing format used for matrix
//! A and B by .kind::mxf8f6f4 in shared memory" requires, 16 elements in each 16 bytes, so
//! their rows, descriptors and K-steps are the 8-bit ones and only the instruction
//! descriptor's atype/btype codes 3/4/5 differ) or i8/u8 (`.kind::i8`, K = 32, A and B may
//! differ; its accumulator a `tmem::<i32>` tile, the s32 D: descriptor dtype S32 = 2, an
//! i32 accumulator with any other kind and an f32 one with `kind::i8` refused) — the kind is
//! the operand types'
//! (PTX ISA §9.7.16.10.1), A and B of two kinds are refused before any shape check — or, for
//! the 16-bit kind only, MN-major (`major = mn`: chunks of 64 N-elements by K rows, as TMA
//! writes them; FA4's V); `a` (128×K) either such a shared tile or a 16-bit TMEM tile
//! `tmem::<bf16|f16>([128, K])` (a stage of a staged one, or an `alias` view such as FA4's P
//! over S), K a multiple of 16 (`mma::tmem_operand`); run by one thread. The form is chosen
//! by A's memory space.
//! Before: `mma @acc, @a_s[%s], @b_s[%s] accumulate (%k > 0)`
//! After: the TMEM base address (read from the allocation slot; plus `s·N` columns for a
//! stage), the instruction descriptor,
//! and per K-step (32 bytes of each row): `tcgen05.mma.cta_group::1.kind::… [taddr], adesc,
//! bdesc, idesc, p`
//! — or, A in TMEM, `tcgen05.mma.cta_group::1.kind::f16 [taddr], [ataddr], bdesc, idesc, p`
//! with `ataddr` A's TMEM address advanced 8 columns (16 packed 16-bit elements) per step.
//! Completion is explicit: `tcgen05::commit(bar)` after it.
//!
//! The CTA pair (`cta_group = 2`, PTX ISA §9.7.16.5): `acc` is this CTA's `[128, N]` half of
//! D, `a` its 128 rows of A and `b` its `N / 2` rows of B, each at the same shared-memory
//! offset in both CTAs (one declaration); the descriptor carries the pair's M = 256 and N
//! (`InstrDesc::encode_pair`), and each `tcgen05.mma.cta_group::2` is guarded by
//! `%cluster_ctarank & 1 == 0`, so only the even CTA's thread of the one-thread scope issues
//! it. Before: `mma @acc <- @a_s, @b_s accumulate (%k > 0) cta_group 2`. With `acc` a
//! `[64, N]` tile (and `a` 64 rows) the pair's M is 128: the descriptor's M = 128, N a
//! multiple of 32 (§9.7.16.2.1, Table 39), and each CTA's 64 rows of D lie in the 2x2 data
//! path — PTX ISA §9.7.16.10.5.2 "Layout B (M = 128 + cta-group::2 + Dense A matrix)", whose
//! figures are images; the mapping (column `n < N/2` of row `m` in lane `m`, column `n ≥ N/2`
//! in lane `64 + m`, at column `n mod N/2`) follows CUTLASS `cute/atom/mma_traits_sm100.hpp`
//! (`tmem_frg`, the "2x2" atom for two SMs) and is `Buffer::tmem_pair_half`'s, which
//! `tmem_epilogue` reads back. The pair may read A from TMEM (the `[a-tmem]` form,
//! `tcgen05.mma.cta_group::2.kind::f16 [taddr], [ataddr], bdesc, idesc, p`): with M = 256
//! `a` is each CTA's `tmem::<bf16|f16>([128, K])`, its 128 rows of A in its own TMEM at the
//! same address (Layout A: row `m` in lane `m`); with M = 128 it is `[64, K]`, which the 2x2
//! data path reads from lanes 0-63 for D's first N/2 columns and from lanes 64-127 for the
//! rest (CUTLASS `TmemAllocMode::Duplicated`), so A is stored twice: `tcgen05::cp` of a
//! 64-row tile writes both halves (`.64x128b.warpx2::02_13`); another shape is `PairTmemA`.
//! Its
//! 16-bit B may be MN-major as for one CTA (each CTA's `N / 2` columns its own chunks, the
//! NN GEMM's B; `gemm_sm100_prod/nn`).
//! The block-scaled form (`scale_a = …, scale_b = …`: `kind::mxf8f6f4.block_scale`,
//! §9.7.16.10.7) is `block_scale.rs`'s, with its own When / Before / After.
//! PTX used: PTX ISA §9.7.16.10.9 (tcgen05.mma, both A forms); §9.7.16.10.5 (data-path
//! layout D: M = 128 row `m` in lane `m`, for D and for A in TMEM); descriptors §9.7.16.4.1
//! (shared memory) and §9.7.16.4.2 (instruction), via `encode::tcgen05`.

use super::wgmma::desc_base;
use super::{
    accumulator_int, block_scale, in_tmem, smem_operand_any, tmem_columns, tmem_operand,
    tmem_operand_rows,
};
use crate::abi::{ElemType, Swizzle};
use crate::diag::Diagnostics;
use crate::dispatch::{Cx, MmaVariant, Reject, Variant};
use crate::encode::tcgen05::{InstrDesc, Kind, LboMode, SATURATE, SwizzleMode, desc_const_part};
use crate::encode::wgmma::{kmajor_desc_fields, mn_major_desc_fields, mn_major_k_advance};
use crate::encode::{AccType, Major};
use crate::inst::reg;
use crate::ir::{Expr, Inst, Op, Operand as O, ScalarType as T, Space, Special, TileRef};
use crate::lower::{Lower, add};

/// The variant.
pub static VARIANT: Variant<MmaVariant> = Variant {
    id: MmaVariant::Tcgen05,
    priority: 20,
    applies,
    lower,
};

/// A's rows, K and element type: from shared memory (K-major) or from tensor memory.
fn a_operand(k: &crate::ir::Kernel, a: &TileRef) -> Result<(u32, u32, ElemType), Reject> {
    if in_tmem(k, a) {
        let t = tmem_operand(k, a)?;
        return Ok((128, t.k, t.buf.elem));
    }
    let o = smem_operand_any(k, a, "A")?;
    if o.major != Major::K {
        // B may be MN-major (`instr_desc`); an MN-major A's descriptor and transpose-A bit are
        // not lowered yet: refuse, by name.
        return Err(Reject::MnMajorA {
            path: "tcgen05",
            buffer: o.buf.name.clone(),
        });
    }
    Ok((o.rows, o.k, o.buf.elem))
}

/// The instruction descriptor's fields; with `pair` (`cta_group = 2`) `acc`, `a` and `b` are
/// this CTA's halves: M = 2 × 128 rows across the pair, B's rows N / 2.
fn instr_desc(
    cx_k: &crate::ir::Kernel,
    acc: &TileRef,
    a: &TileRef,
    b: &TileRef,
    pair: bool,
) -> Result<InstrDesc, Reject> {
    let (acc_buf, m, n) = accumulator_int(cx_k, acc)?;
    // An i32 accumulator is kind::i8's s32 D (§9.7.16.10.1), an (unpacked) f16 one the f16 D
    // of kind::f16 with f16 operands or of kind::f8f6f4 (§9.7.16.2.1, Table 39's dtype
    // column); `kind()` checks the pairing with the operands.
    let d = match acc_buf.elem {
        ElemType::I32 => AccType::S32,
        ElemType::F16 => AccType::F16,
        _ => AccType::F32,
    };
    if pair {
        return pair_desc(cx_k, (m, n), (a, b), d);
    }
    let (a_rows, a_k, a_elem) = a_operand(cx_k, a)?;
    let ob = smem_operand_any(cx_k, b, "B")?;
    // The kind first: operands of two kinds also disagree in K (a row is one 128-byte span
    // of either type), and the kind is what is wrong.
    kind_of(a_elem, ob.buf.elem, d)?;
    // B may be MN-major for the 16-bit kind (FA4's V, `[D, BN]` stored D-contiguous): the
    // descriptor then carries the MN-major strides and the instruction descriptor's
    // transpose-B bit. The tf32 and 8-bit kinds take a K-major B only, here.
    if ob.major != Major::K && !matches!(ob.buf.elem, ElemType::Bf16 | ElemType::F16) {
        return Err(Reject::MnMajor {
            which: "B",
            buffer: ob.buf.name.clone(),
        });
    }
    if a_rows != m || ob.rows != n || a_k != ob.k {
        return Err(Reject::ShapesDisagree {
            m,
            n,
            a: (a_rows, a_k),
            b: (ob.rows, ob.k),
        });
    }
    if m != 128 {
        return Err(Reject::Tcgen05M { m });
    }
    let d = InstrDesc {
        d,
        a: a_elem,
        b: ob.buf.elem,
        a_major: Major::K,
        b_major: ob.major,
        m,
        n,
    };
    d.encode()?;
    Ok(d)
}

/// The `.kind` operands of types `a` and `b` select (PTX ISA §9.7.16.10.1), or why none
/// does: the instruction descriptor's type check alone, before shapes.
fn kind_of(a: ElemType, b: ElemType, d: AccType) -> Result<(), Reject> {
    InstrDesc {
        d,
        a,
        b,
        a_major: Major::K,
        b_major: Major::K,
        m: 128,
        n: 8,
    }
    .kind()?;
    Ok(())
}

/// The pair's descriptor: each CTA holds A's 128 rows of its half and `N / 2` rows of B
/// (PTX ISA §9.7.16.5; the data-path layout of `cta_group::2`, M = 256).
fn pair_desc(
    cx_k: &crate::ir::Kernel,
    (m, n): (u32, u32),
    (a, b): (&TileRef, &TileRef),
    acc: AccType,
) -> Result<InstrDesc, Reject> {
    // The pair's `[a-tmem]` form: each CTA's 128 rows of A in its own TMEM (M = 256, Layout
    // A: row `m` in lane `m`, as for one CTA). M = 128's 2x2 data path reads A's 64 rows
    // from lanes 0-63 for D's first N/2 columns and from lanes 64-127 for the rest, so A
    // would have to be written twice (CUTLASS `TmemAllocMode::Duplicated`): refused.
    if in_tmem(cx_k, a) {
        if m != 128 && m != 64 {
            return Err(Reject::PairM { m });
        }
        // M = 128: A's 64 rows, read from both lane halves (a 64-row `tcgen05::cp` writes
        // both); a tile of another shape is named as the pair's.
        let t = tmem_operand_rows(cx_k, a, m).map_err(|e| match e {
            Reject::TmemAShape { buffer, .. } if m == 64 => Reject::PairTmemA { buffer },
            e => e,
        })?;
        let ob = smem_operand_any(cx_k, b, "B")?;
        kind_of(t.buf.elem, ob.buf.elem, acc)?;
        if ob.major != Major::K && !matches!(ob.buf.elem, ElemType::Bf16 | ElemType::F16) {
            return Err(Reject::MnMajor {
                which: "B",
                buffer: ob.buf.name.clone(),
            });
        }
        if ob.rows * 2 != n || t.k != ob.k {
            return Err(Reject::PairShapes {
                m,
                n,
                a: (m, t.k),
                b: (ob.rows, ob.k),
            });
        }
        let d = InstrDesc {
            d: acc,
            a: t.buf.elem,
            b: ob.buf.elem,
            a_major: Major::K,
            b_major: ob.major,
            m: 2 * m,
            n,
        };
        d.encode_pair()?;
        return Ok(d);
    }
    let (oa, ob) = (
        smem_operand_any(cx_k, a, "A")?,
        smem_operand_any(cx_k, b, "B")?,
    );
    // A is K-major (an MN-major A's transpose-A bit is not lowered yet, as for one CTA); B
    // may be MN-major for the 16-bit kind, as for one CTA: each CTA's `N / 2` columns of B
    // are its own chunks of 64 N-elements by K rows (an NN GEMM's B given K×N), read through
    // the same MN-major descriptor with the transpose-B bit.
    let b_mn_ok = matches!(ob.buf.elem, ElemType::Bf16 | ElemType::F16);
    if let Some((which, o)) = [("A", &oa), ("B", &ob)]
        .into_iter()
        .find(|(w, o)| o.major != Major::K && !(*w == "B" && b_mn_ok))
    {
        return Err(Reject::MnMajor {
            which,
            buffer: o.buf.name.clone(),
        });
    }
    if oa.rows != m || ob.rows * 2 != n || oa.k != ob.k {
        return Err(Reject::PairShapes {
            m,
            n,
            a: (oa.rows, oa.k),
            b: (ob.rows, ob.k),
        });
    }
    // 128 rows per CTA: M = 256 across the pair (Layout A); 64: M = 128 (Layout B, the
    // accumulator a `Buffer::tmem_pair_half`).
    if m != 128 && m != 64 {
        return Err(Reject::PairM { m });
    }
    let d = InstrDesc {
        d: acc,
        a: oa.buf.elem,
        b: ob.buf.elem,
        a_major: Major::K,
        b_major: ob.major,
        m: 2 * m,
        n,
    };
    d.encode_pair()?;
    Ok(d)
}

fn applies(cx: &Cx) -> Result<(), Reject> {
    let Op::Mma {
        acc,
        a,
        b,
        pair,
        scale,
        saturate,
        ..
    } = cx.op
    else {
        return Err(Reject::WrongOp { expected: "an mma" });
    };
    if !cx.k.target().has_tcgen05() {
        return Err(Reject::NoTcgen05 {
            target: cx.k.target(),
        });
    }
    match scale {
        Some(sc) => {
            block_scale::scaled_desc(cx.k, (acc, a, b), sc, *pair)?;
            if *saturate {
                return Err(Reject::Saturate {
                    kind: "block-scaled (a float kind)".into(),
                });
            }
        }
        None => {
            let kind = instr_desc(cx.k, acc, a, b, *pair)?.kind()?;
            if *saturate && kind != Kind::I8 {
                return Err(Reject::Saturate {
                    kind: kind.ptx().trim_start_matches('.').into(),
                });
            }
        }
    }
    if !cx.threads.is_single() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "tcgen05.mma is issued by one thread (`#[scope(warp = W, elect)]`)",
        });
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Mma {
        acc,
        a,
        b,
        accumulate,
        pair,
        scale,
        saturate,
        ..
    } = op
    else {
        return Err(lw.internal("tcgen05 on a non-mma"));
    };
    if let Some(sc) = scale {
        return block_scale::lower(lw, (acc, a, b), sc, (accumulate, *pair));
    }
    let id = instr_desc(lw.k, acc, a, b, *pair).map_err(|e| lw.error(e))?;
    let idesc_bits = if *pair { id.encode_pair() } else { id.encode() }
        .map_err(|e| lw.internal(e.to_string()))?;
    // `saturate` (kind::i8 only, checked by `applies`): bit 3 of the descriptor.
    let idesc_bits = if *saturate {
        idesc_bits | SATURATE
    } else {
        idesc_bits
    };
    let (
        TileRef::Buf {
            buf: hacc,
            index: iacc,
        },
        TileRef::Buf { buf: ha, index: ia },
        TileRef::Buf { buf: hb, index: ib },
    ) = (acc, a, b)
    else {
        unreachable!("checked by instr_desc")
    };
    let ob = smem_operand_any(lw.k, b, "B").map_err(|e| lw.error(e))?;
    let (kext, b_major) = (ob.k, ob.major);
    let kind = id.kind().map_err(|e| lw.internal(e.to_string()))?;
    let eb = lw.k.buffers[*hb].elem.bytes();
    let enc = |e: crate::encode::EncodeError| lw.internal(e.to_string());
    let (lbo, sbo) = kmajor_desc_fields(Swizzle::B128, eb).map_err(enc)?;
    let cst = desc_const_part(lbo, sbo, 0, LboMode::Relative, SwizzleMode::B128).map_err(enc)?;
    // B's descriptor and its start-address step per instruction's K, in 16-byte units:
    // K-major, 32 bytes along the row; MN-major (16-bit only), 16 K-rows of one 128-byte span each (the canonical
    // MN-major SW128 form, the same strides as wgmma's: PTX ISA §9.7.16.4.1 refers to the
    // matrix layouts of §9.7.15.5.1.2).
    let (bcst, bstep) = match b_major {
        Major::K => (cst, i64::from(kind.k() * eb / 16)),
        Major::MN => {
            let (lbo, sbo) = mn_major_desc_fields(Swizzle::B128, eb, kext).map_err(enc)?;
            let step = mn_major_k_advance(Swizzle::B128, 16)
                .ok_or_else(|| lw.internal("no swizzle span"))?;
            let c =
                desc_const_part(lbo, sbo, 0, LboMode::Relative, SwizzleMode::B128).map_err(enc)?;
            (c, i64::from(step / 16))
        }
    };
    let taddr = tmem_address(lw, *hacc, iacc)?;
    let idesc = lw.let_("idesc", T::U32, Expr::u32(idesc_bits));
    let (ia, ib) = (ia.clone(), ib.clone());
    // A from shared memory: its descriptor; from tensor memory: its address (§9.7.16.10.9).
    let a0 = if lw.k.buffers[*ha].space == Space::Tmem {
        Err(tmem_address(lw, *ha, &ia)?)
    } else {
        Ok(desc_base(lw, *ha, &ia, cst)?)
    };
    let bdesc0 = desc_base(lw, *hb, &ib, bcst)?;
    let first = lw.let_("acc_in", T::Pred, accumulate.clone());
    let always = lw.pred_const(true);
    // The pair's MMA is issued once, by the even CTA (PTX ISA §9.7.16.5).
    let issuer = pair.then(|| lw.pair_issuer());
    // One instruction's K (§9.7.16.2.1): 16 bf16/f16, 8 tf32 or 32 8-bit elements — always
    // 32 bytes of each operand row (K-multiples are checked against it by `instr_desc`).
    let kstep = kind.k();
    for kk in 0..kext / kstep {
        // One K-step: 32 bytes — 2 descriptor units of 16 bytes, or 8 TMEM columns of two
        // packed 16-bit elements.
        let step = (kk * kstep * eb / 16) as i64;
        let p = if kk == 0 { first } else { always };
        // The A step first, then B's: the order the shared-memory form always had.
        let a_step = match a0 {
            Ok(adesc0) => {
                let ad = lw.var("adesc", T::U64);
                lw.inst(Inst::binary("add.u64", ad, reg(adesc0), O::Imm(step)));
                Ok(ad)
            }
            Err(abase) => {
                let at = lw.var("ataddr", T::U32);
                let cols = (kk * kstep * eb / 4) as i64;
                lw.inst(Inst::binary("add.u32", at, reg(abase), O::Imm(cols)));
                Err(at)
            }
        };
        let bd = lw.var("bdesc", T::U64);
        lw.inst(Inst::binary(
            "add.u64",
            bd,
            reg(bdesc0),
            O::Imm(kk as i64 * bstep),
        ));
        let mut inst = match a_step {
            Ok(ad) => Inst::tcgen05_mma(taddr, (ad, bd, idesc), p, (kind, *pair)),
            Err(at) => Inst::tcgen05_mma_tmem_a(taddr, at, bd, idesc, (p, *pair)),
        };
        inst.guard = issuer.map(O::Reg);
        lw.inst(inst);
    }
    Ok(())
}

/// The TMEM address of the tile `buf[index]`: the allocation's address, read from the
/// buffer's slot in shared memory, plus the stage's first column (TMEM address bits 15-0,
/// PTX ISA §9.7.16.1.1).
fn tmem_address(
    lw: &mut Lower,
    buf: crate::arena::Handle<crate::ir::Buffer>,
    index: &[Expr],
) -> Result<crate::arena::Handle<crate::ir::Var>, Diagnostics> {
    let slot = lw.k.buffers[buf]
        .offset
        .ok_or_else(|| lw.internal("TMEM buffer without slot"))?;
    let slot_addr = lw.let_(
        "slot",
        T::U32,
        add(Expr::Special(Special::SmemBase), Expr::u32(slot)),
    );
    let base = lw.var("taddr", T::U32);
    lw.inst(Inst::ld_shared_u32(base, slot_addr, 0));
    Ok(match tmem_columns(&lw.k.buffers[buf], index) {
        Expr::Imm(0, _) => base,
        col => lw.let_("taddr_s", T::U32, add(Expr::Var(base), col)),
    })
}
