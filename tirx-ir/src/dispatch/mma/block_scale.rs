//! The block-scaled form of the `tcgen05` MMA variant: `tcgen05::mma(acc, a, b, accumulate =
//! p, scale_a = sfa, scale_b = sfb)`, D (+)= (A·scale_a)·(B·scale_b)ᵀ (PTX ISA §9.7.16.10.7
//! "Block Scaling").
//!
//! When: sm_100a, `cta_group::1`; `acc` a `tmem::<f32>([128, N])` (N a multiple of 8 up to
//! 256); `a` (128 × 128) and `b` (N × 128) shared tiles of `e4m3`/`e5m2`, K-major with
//! swizzle B128 (one 128-byte row: four instructions of K = 32) — the operand types select
//! `.kind::mxf8f6f4` with UE8M0 factors and `.scale_vec::1X`, one factor per 32 K of a row
//! (§9.7.16.10.7.1, "Valid combinations of scale_vectorsize and shapes": scale_A M × 1,
//! scale_B 1 × N per instruction); `scale_a` a `tmem::<ue8m0>([128, 4])` tile and `scale_b` a
//! `tmem::<ue8m0>([R, 4])` tile with R = N rounded up to 128 (a stage of a staged one each):
//! row `r`'s factor `f` in lane `r % 32` of every 32-lane quarter, column `r / 32`, byte `f`
//! (the layout `tcgen05::cp` writes from the `[R / 4, 16]` shared image; the ISA's figures of
//! the scale-factor layouts in §9.7.16.10.7.2 "Scale Factor A ID" and §9.7.16.10.7.3 "Scale
//! Factor B ID"). Refused: any other operand type (kinds f16 and tf32 have no block-scaled
//! form), A in tensor memory, the CTA pair, factor tiles of another shape or type.
//! Before: `mma @acc <- @a_s[%s], @b_s[%s] accumulate (%k > 0) scale @sfa_t[%s], @sfb_t[%s]`
//! After: the TMEM addresses of D, scale_a and scale_b, and per K-step `j` (32 bytes of each
//! row) the instruction descriptor with scale-factor data IDs `j` for A (bits 29-30) and B
//! (bits 4-5), UE8M0 (bit 23), M >> 7 (bits 27-28) (§9.7.16.4.2, the mxf8f6f4 table, via
//! `encode::tcgen05_scaled`) and `tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale
//! .scale_vec::1X [taddr], adesc, bdesc, idesc, [sfa], [sfb], p` (§9.7.16.10.9).
//! Completion: as the unscaled MMA's, `tcgen05::commit(bar)`; the factors must be in tensor
//! memory first (`check-protocol`'s scale rule: a `tcgen05::cp` by the MMA's own thread
//! before it, §9.7.16.6.5, or one committed and waited on).

use super::{accumulator, in_tmem, smem_operand_any, tmem_columns};
use crate::abi::{ElemType, Swizzle};
use crate::diag::Diagnostics;
use crate::dispatch::Reject;
use crate::encode::Major;
use crate::encode::tcgen05::{LboMode, SwizzleMode, desc_const_part};
use crate::encode::tcgen05_scaled::ScaledDesc;
use crate::encode::wgmma::kmajor_desc_fields;
use crate::inst::reg;
use crate::ir::{
    BlockScale, Buffer, Expr, Inst, Kernel, Operand as O, ScalarType as T, Space, TileRef,
};
use crate::lower::Lower;

/// Factors a row of a scale tile holds: one per 32 K of the 128 K of an 8-bit operand row.
const FACTORS: u32 = 4;

/// The descriptor of the block-scaled MMA `acc` ← `a`, `b` scaled by `sc` (IDs 0), or why
/// the op is not one.
pub(super) fn scaled_desc(
    k: &Kernel,
    (acc, a, b): (&TileRef, &TileRef, &TileRef),
    sc: &BlockScale,
    pair: bool,
) -> Result<ScaledDesc, Reject> {
    let bad = |why: String| Reject::BlockScale { why };
    if pair {
        return Err(bad(
            "the CTA pair's block-scaled MMA (`cta_group = 2` with scales) is not lowered yet"
                .into(),
        ));
    }
    let (_, m, n) = accumulator(k, acc, Space::Tmem)?;
    if in_tmem(k, a) {
        return Err(bad(
            "the block-scaled MMA reads A from shared memory here, not tensor memory".into(),
        ));
    }
    let (oa, ob) = (smem_operand_any(k, a, "A")?, smem_operand_any(k, b, "B")?);
    for o in [&oa, &ob] {
        if !o.buf.elem.is_fp8() {
            return Err(bad(format!(
                "`{}` holds {}: block scaling takes e4m3/e5m2 operands (kind::mxf8f6f4, UE8M0 \
                 factors); kind::f16 and kind::tf32 have no block-scaled form",
                o.buf.name,
                o.buf.elem.name()
            )));
        }
        if o.major != Major::K {
            return Err(Reject::MnMajor {
                which: if std::ptr::eq(o, &oa) { "A" } else { "B" },
                buffer: o.buf.name.clone(),
            });
        }
    }
    if oa.rows != m || ob.rows != n || oa.k != ob.k {
        return Err(Reject::ShapesDisagree {
            m,
            n,
            a: (oa.rows, oa.k),
            b: (ob.rows, ob.k),
        });
    }
    scale_tile(k, &sc.a, "scale_a", m.next_multiple_of(128))?;
    scale_tile(k, &sc.b, "scale_b", n.next_multiple_of(128))?;
    let d = ScaledDesc {
        a: oa.buf.elem,
        b: ob.buf.elem,
        m,
        n,
        sfa_id: 0,
        sfb_id: 0,
    };
    d.encode(false)?;
    Ok(d)
}

/// Checks that `t` is a TMEM tile of UE8M0 factors `[rows, 4]`, indexed down to one tile.
fn scale_tile(k: &Kernel, t: &TileRef, which: &str, rows: u32) -> Result<(), Reject> {
    let TileRef::Buf { buf, index } = t else {
        return Err(Reject::BlockScale {
            why: format!("{which} must be a TMEM tile, not a global tensor"),
        });
    };
    let b: &Buffer = &k.buffers[*buf];
    let dims = &b.layout.shape[index.len().min(b.layout.shape.len())..];
    if b.space == Space::Tmem && b.elem == ElemType::Ue8m0 && dims == [rows, FACTORS] {
        return Ok(());
    }
    Err(Reject::BlockScale {
        why: format!(
            "{which} `{}` is {} {:?} in {}; it must be a TMEM tile `tmem::<ue8m0>([{rows}, \
             {FACTORS}])`: {rows} rows (the operand's rows, a multiple of 128) × {FACTORS} UE8M0 \
             factors (one per 32 K of the 128-K row, scale_vec::1X), indexed down to one tile",
            b.name,
            b.elem.name(),
            dims,
            b.space.name()
        ),
    })
}

/// Lowers the block-scaled MMA (see the module docs).
pub(super) fn lower(
    lw: &mut Lower,
    (acc, a, b): (&TileRef, &TileRef, &TileRef),
    sc: &BlockScale,
    accumulate: &Expr,
) -> Result<(), Diagnostics> {
    let d0 = scaled_desc(lw.k, (acc, a, b), sc, false).map_err(|e| lw.error(e))?;
    let buf_of = |t: &TileRef| match t {
        TileRef::Buf { buf, index } => (*buf, index.clone()),
        TileRef::Global { .. } => unreachable!("checked by scaled_desc"),
    };
    let ((hacc, iacc), (ha, ia), (hb, ib)) = (buf_of(acc), buf_of(a), buf_of(b));
    let ((hsa, isa), (hsb, isb)) = (buf_of(&sc.a), buf_of(&sc.b));
    let enc = |lw: &Lower, e: crate::encode::EncodeError| lw.internal(e.to_string());
    let (lbo, sbo) = kmajor_desc_fields(Swizzle::B128, 1).map_err(|e| enc(lw, e))?;
    let cst = desc_const_part(lbo, sbo, 0, LboMode::Relative, SwizzleMode::B128)
        .map_err(|e| enc(lw, e))?;
    let taddr = tmem_addr(lw, hacc, &iacc)?;
    let sfa = tmem_addr(lw, hsa, &isa)?;
    let sfb = tmem_addr(lw, hsb, &isb)?;
    let adesc0 = super::wgmma::desc_base(lw, ha, &ia, cst)?;
    let bdesc0 = super::wgmma::desc_base(lw, hb, &ib, cst)?;
    let first = lw.let_("acc_in", T::Pred, accumulate.clone());
    let always = lw.pred_const(true);
    let kext = super::smem_operand_any(lw.k, a, "A")
        .map_err(|e| lw.error(e))?
        .k;
    for j in 0..kext / ScaledDesc::k() {
        // K-step j: 32 bytes on (2 descriptor units); its factors are byte j of each cell.
        let bits = ScaledDesc {
            sfa_id: j,
            sfb_id: j,
            ..d0
        }
        .encode(false)
        .map_err(|e| enc(lw, e))?;
        let idesc = lw.let_("idesc", T::U32, Expr::u32(bits));
        let (ad, bd) = (lw.var("adesc", T::U64), lw.var("bdesc", T::U64));
        let step = O::Imm(i64::from(2 * j));
        lw.inst(Inst::binary("add.u64", ad, reg(adesc0), step.clone()));
        lw.inst(Inst::binary("add.u64", bd, reg(bdesc0), step));
        let p = if j == 0 { first } else { always };
        lw.inst(Inst::tcgen05_mma_block_scale(
            taddr,
            (ad, bd, idesc),
            (sfa, sfb),
            p,
        ));
    }
    Ok(())
}

/// The TMEM address of the tile `buf[index]` (its allocation's address from the slot, plus
/// the stage's first column).
fn tmem_addr(
    lw: &mut Lower,
    buf: crate::arena::Handle<Buffer>,
    index: &[Expr],
) -> Result<crate::arena::Handle<crate::ir::Var>, Diagnostics> {
    let slot = lw.k.buffers[buf]
        .offset
        .ok_or_else(|| lw.internal("TMEM buffer without slot"))?;
    let slot_addr = lw.let_(
        "slot",
        T::U32,
        crate::lower::add(Expr::Special(crate::ir::Special::SmemBase), Expr::u32(slot)),
    );
    let base = lw.var("taddr", T::U32);
    lw.inst(Inst::ld_shared_u32(base, slot_addr, 0));
    Ok(match tmem_columns(&lw.k.buffers[buf], index) {
        Expr::Imm(0, _) => base,
        col => lw.let_("taddr_s", T::U32, crate::lower::add(Expr::Var(base), col)),
    })
}
