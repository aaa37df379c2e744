//! The block-scaled form of the `tcgen05` MMA variant: `tcgen05::mma(acc, a, b, accumulate =
//! p, scale_a = sfa, scale_b = sfb)`, D (+)= (A·scale_a)·(B·scale_b)ᵀ (PTX ISA §9.7.16.10.7
//! "Block Scaling").
//!
//! When: sm_100a, `cta_group::1`; `acc` a `tmem::<f32>([128, N])` (N a multiple of 8 up to
//! 256); `a` (128 rows) and `b` (N rows) shared tiles K-major with swizzle B128 (one 128-byte
//! row: four instructions of 32 bytes). The operand and factor types select the kind and
//! the scale vector (§9.7.16.10.7.1, the table "Valid combinations of scale_vectorsize and
//! shapes": `kind::mxf8f6f4` takes `.scale_vec::1X` with UE8M0 only; `kind::mxf4nvf4` takes
//! `::2X` with UE8M0 and `::4X` with UE8M0 or UE4M3):
//!
//! | A, B            | factors | kind, scale vector            | K / instr. | factors a 128-byte row (F) |
//! |-----------------|---------|-------------------------------|------------|----------------------------|
//! | `e4m3`/`e5m2`   | `ue8m0` | `mxf8f6f4`, `1X` (block 32)   | 32         | 4                          |
//! | `e3m2`/`e2m3`/`e2m1` (padded) | `ue8m0` | `mxf8f6f4`, `1X` | 32   | 4                          |
//! | `e2m1x2`        | `ue8m0` | `mxf4nvf4`, `2X` (MXFP4, 32)  | 64         | 8                          |
//! | `e2m1x2`        | `ue4m3` | `mxf4nvf4`, `4X` (NVFP4, 16)  | 64         | 16                         |
//!
//! (K per instruction: §9.7.16.2.1 "Matrix Shape", 32 for `.kind::mxf8f6f4`, 64 for dense
//! `.kind::mxf4nvf4`.) `scale_a` is a `tmem::<T>([128, F])` tile and `scale_b` a
//! `tmem::<T>([R, F])` tile with R = N rounded up to 128 (a stage of a staged one each), T the
//! factor type, the same for both (the descriptor's bit 23 names one type for both): row
//! `r`'s factor `f` in lane `r % 32` of every 32-lane quarter, column `(f / 4)·(R / 32) +
//! r / 32`, byte `f % 4` (the layout `tcgen05::cp` writes; the ISA's figures of the
//! scale-factor layouts in §9.7.16.10.7.2 "Scale Factor A ID" and §9.7.16.10.7.3 "Scale
//! Factor B ID"). Instruction `j` reads factors `j·v…j·v + v` of a row (v = 1, 2, 4 for
//! 1X, 2X, 4X): the cell `j·v / 4` (the factor address plus `(j·v / 4)·R / 32` columns) from
//! byte `j·v % 4`, the descriptor's scale-factor data ID (1X: 0-3; 2X: 0 or 2; 4X: 0).
//! Refused: any other operand type (kinds f16 and tf32 have no block-scaled form), FP8 with
//! FP4, UE4M3 with FP8 operands, factors of two types, A in tensor memory, factor tiles of
//! another shape or space.
//!
//! **The CTA pair** (`cta_group = 2`): `acc` is this CTA's `[128, N]` half of the pair's
//! M = 256, `a` its 128 rows of A and `b` its `N / 2` rows of B (as the unscaled pair MMA's);
//! the descriptor carries M = 256 (§9.7.16.4.2), the instructions are
//! `tcgen05.mma.cta_group::2…block_scale…` guarded by `%cluster_ctarank & 1 == 0`
//! (§9.7.16.5). Each CTA's tensor memory holds the factors of its own data path: `scale_a` a
//! `[128, F]` tile of **this CTA's** 128 rows of A, `scale_b` an `[R, F]` tile of **all** N
//! of B's rows (R = N rounded up to 128) — the same shapes as one CTA's, at the same columns
//! in both CTAs (the pair's allocation), each filled from its own shared memory by
//! `tcgen05::cp(.., cta_group = 2)`. The ISA does not say where the peer's factors are; this
//! is how CUTLASS's 2-SM block-scaled mainloop places them
//! (`include/cutlass/gemm/collective/sm100_blockscaled_mma_warpspecialized.hpp`: SFA
//! partitioned by the pair's MMA like A, per CTA rank; SFB by a one-CTA MMA, so each CTA
//! loads the whole N tile's factors; both copied by the leader's `…_2cta` UTCCP).
//! Before: `mma @acc <- @a_s[%s], @b_s[%s] accumulate (%k > 0) scale @sfa_t[%s], @sfb_t[%s]`
//! After: the TMEM addresses of D, scale_a and scale_b, and per K-step `j` (32 bytes of each
//! row) the instruction descriptor with its data IDs for A (bits 29-30) and B (bits 4-5),
//! the factor type (bit 23), M >> 7 (bits 27-28) (§9.7.16.4.2, the mxf8f6f4 and the
//! mxf4/mxf4nvf4 tables, via `encode::tcgen05_scaled`) and `tcgen05.mma.cta_group::1
//! .kind::{mxf8f6f4|mxf4nvf4}.block_scale.scale_vec::{1X|2X|4X} [taddr], adesc, bdesc, idesc,
//! [sfa + c_a], [sfb + c_b], p` (§9.7.16.10.9).
//! Completion: as the unscaled MMA's, `tcgen05::commit(bar)`; the factors must be in tensor
//! memory first (`check-protocol`'s scale rule: a `tcgen05::cp` by the MMA's own thread
//! before it, §9.7.16.6.5, or one committed and waited on).

use super::{accumulator, in_tmem, smem_operand_any, tmem_columns};
use crate::abi::{ElemType, Swizzle};
use crate::diag::Diagnostics;
use crate::dispatch::Reject;
use crate::encode::Major;
use crate::encode::tcgen05::{LboMode, SwizzleMode, desc_const_part};
use crate::encode::tcgen05_scaled::{Mxf4Desc, ScaleType, ScaleVec, ScaledDesc};
use crate::encode::wgmma::kmajor_desc_fields;
use crate::inst::reg;
use crate::ir::{
    BlockScale, Buffer, Expr, Inst, Kernel, Operand as O, ScalarType as T, Space, TileRef,
};
use crate::lower::Lower;

/// A block-scaled MMA's kind as its operand and factor types select it (see the module
/// docs), with the descriptor of its first K-step (data IDs 0).
#[derive(Clone, Copy, Debug)]
pub(super) enum Scaled {
    /// `kind::mxf8f6f4`, `.scale_vec::1X`, UE8M0.
    Mxf8(ScaledDesc),
    /// `kind::mxf4nvf4`, `.scale_vec::2X` or `::4X`; with `true` (`kind = mxf4`, 2X and
    /// UE8M0 only) emitted as `kind::mxf4`.
    Mxf4(Mxf4Desc, bool),
}

impl Scaled {
    /// Factors a row for one instruction (the scale vector size).
    fn vec(self) -> u32 {
        match self {
            Scaled::Mxf8(_) => 1,
            Scaled::Mxf4(d, _) => d.vec.factors(),
        }
    }
    /// N.
    fn n(self) -> u32 {
        match self {
            Scaled::Mxf8(d) => d.n,
            Scaled::Mxf4(d, _) => d.n,
        }
    }
    /// The kind, `.block_scale` and scale vector modifiers of the PTX instruction.
    fn ptx(self) -> String {
        match self {
            Scaled::Mxf8(_) => ".kind::mxf8f6f4.block_scale.scale_vec::1X".into(),
            Scaled::Mxf4(d, true) => format!(".kind::mxf4.block_scale{}", d.vec.ptx()),
            Scaled::Mxf4(d, false) => format!(".kind::mxf4nvf4.block_scale{}", d.vec.ptx()),
        }
    }
    /// The descriptor of K-step `j`'s instruction: data ID `j·v % 4` for A and B; `pair`
    /// the CTA pair's (`cta_group::2`).
    fn encode_step(self, j: u32, pair: bool) -> Result<u32, crate::encode::EncodeError> {
        let id = j * self.vec() % 4;
        match self {
            Scaled::Mxf8(d) => ScaledDesc {
                sfa_id: id,
                sfb_id: id,
                ..d
            }
            .encode(pair),
            Scaled::Mxf4(d, _) => Mxf4Desc {
                sfa_id: id,
                sfb_id: id,
                ..d
            }
            .encode(pair),
        }
    }
}

/// The factor type of the scale tile `t` (`which` names it), if it is a scale tile.
fn factor_type(k: &Kernel, t: &TileRef, which: &str) -> Result<ElemType, Reject> {
    let TileRef::Buf { buf, .. } = t else {
        return Err(Reject::BlockScale {
            why: format!("{which} must be a TMEM tile, not a global tensor"),
        });
    };
    let b = &k.buffers[*buf];
    if b.elem.is_scale() {
        return Ok(b.elem);
    }
    Err(Reject::BlockScale {
        why: format!(
            "{which} `{}` holds {}; block-scale factors are ue8m0 (MX formats) or ue4m3 (NVFP4)",
            b.name,
            b.elem.name()
        ),
    })
}

/// The kind the operand types `a`, `b` and the factor type `sf` select.
fn select(
    (ea, eb): (ElemType, ElemType),
    (na, nb): (&str, &str),
    sf: ElemType,
    (m, n): (u32, u32),
) -> Result<Scaled, Reject> {
    let bad = |why: String| Reject::BlockScale { why };
    // kind::mxf8f6f4 takes kind::f8f6f4's types, the 6- and 4-bit ones in their padded
    // shared-memory packing (one byte of footprint an element: K = 32 is still 32 bytes).
    let f8f6f4 = |e: ElemType| e.is_fp8() || e.is_f6f4();
    if f8f6f4(ea) && f8f6f4(eb) {
        if sf != ElemType::Ue8m0 {
            return Err(bad(format!(
                "e4m3/e5m2/e3m2/e2m3/e2m1 operands take ue8m0 factors (kind::mxf8f6f4 has scale_vec::1X with \
                 UE8M0 only, PTX ISA §9.7.16.10.7.1), not {}; ue4m3 factors scale e2m1x2 \
                 operands (NVFP4, kind::mxf4nvf4 scale_vec::4X)",
                sf.name()
            )));
        }
        return Ok(Scaled::Mxf8(ScaledDesc {
            a: ea,
            b: eb,
            m,
            n,
            sfa_id: 0,
            sfb_id: 0,
        }));
    }
    if ea.is_fp4() && eb.is_fp4() {
        let (scale, vec) = if sf == ElemType::Ue4m3 {
            (ScaleType::Ue4m3, ScaleVec::X4)
        } else {
            (ScaleType::Ue8m0, ScaleVec::X2)
        };
        return Ok(Scaled::Mxf4(
            Mxf4Desc {
                m,
                n,
                scale,
                vec,
                sfa_id: 0,
                sfb_id: 0,
            },
            false,
        ));
    }
    let narrow = |e: ElemType| f8f6f4(e) || e.is_fp4();
    let (name, e) = if narrow(ea) { (nb, eb) } else { (na, ea) };
    if narrow(ea) && narrow(eb) {
        return Err(bad(format!(
            "A holds {} and B {}: a block-scaled MMA multiplies FP8/FP6/FP4 by FP8/FP6/FP4 \
             (kind::mxf8f6f4) or packed FP4 by packed FP4 (kind::mxf4nvf4); declare both \
             operands e2m1x2 or both of e4m3/e5m2/e3m2/e2m3/e2m1",
            ea.name(),
            eb.name()
        )));
    }
    Err(bad(format!(
        "`{name}` holds {}: block scaling takes e4m3/e5m2/e3m2/e2m3/e2m1 operands \
         (kind::mxf8f6f4, ue8m0 factors) or e2m1x2 ones (kind::mxf4nvf4, ue8m0 or ue4m3 factors); kind::f16 and \
         kind::tf32 have no block-scaled form",
        e.name()
    )))
}

/// The descriptor of the block-scaled MMA `acc` ← `a`, `b` scaled by `sc` (IDs 0), or why
/// the op is not one.
pub(super) fn scaled_desc(
    k: &Kernel,
    (acc, a, b): (&TileRef, &TileRef, &TileRef),
    sc: &BlockScale,
    pair: bool,
) -> Result<Scaled, Reject> {
    let bad = |why: String| Reject::BlockScale { why };
    let (_, m, n) = accumulator(k, acc, Space::Tmem)?;
    if in_tmem(k, a) {
        return Err(bad(
            "the block-scaled MMA reads A from shared memory here, not tensor memory".into(),
        ));
    }
    let (oa, ob) = (smem_operand_any(k, a, "A")?, smem_operand_any(k, b, "B")?);
    let (sfa, sfb) = (
        factor_type(k, &sc.a, "scale_a")?,
        factor_type(k, &sc.b, "scale_b")?,
    );
    if sfa != sfb {
        return Err(bad(format!(
            "scale_a holds {} and scale_b {}: one MMA's factors share one type (the \
             instruction descriptor's bit 23 names it for both, PTX ISA §9.7.16.4.2)",
            sfa.name(),
            sfb.name()
        )));
    }
    // The pair's descriptor carries M = 256 across the pair; `acc` is this CTA's half.
    if pair && m != 128 {
        return Err(Reject::PairScaledM { m });
    }
    let kind = select(
        (oa.buf.elem, ob.buf.elem),
        (&oa.buf.name, &ob.buf.name),
        sfa,
        (if pair { 2 * m } else { m }, n),
    )?;
    // `kind = mxf4` (§9.7.16.10.9: `.kind::mxf4` takes E2M1 with UE8M0 factors,
    // `.scale_vec::2X` only) names the MXFP4 selection's other spelling; nothing else.
    let kind = match (kind, sc.mxf4) {
        (_, false) => kind,
        (Scaled::Mxf4(d, _), true) if d.vec == ScaleVec::X2 => Scaled::Mxf4(d, true),
        (_, true) => {
            return Err(bad(format!(
                "`kind = mxf4` is MXFP4's instruction: e2m1x2 operands with ue8m0 factors \
                 (`.kind::mxf4` takes E2M1 and UE8M0 with .scale_vec::2X only, PTX ISA \
                 §9.7.16.10.9); these operands are {} and {} with {} factors — drop `kind` \
                 and the types select the kind",
                oa.buf.elem.name(),
                ob.buf.elem.name(),
                sfa.name()
            )));
        }
    };
    for o in [&oa, &ob] {
        if o.major != Major::K {
            return Err(Reject::MnMajor {
                which: if std::ptr::eq(o, &oa) { "A" } else { "B" },
                buffer: o.buf.name.clone(),
            });
        }
    }
    // The pair: each CTA holds its 128 rows of A and N / 2 rows of B.
    if pair && (oa.rows != m || ob.rows * 2 != n || oa.k != ob.k) {
        return Err(Reject::PairShapes {
            m,
            n,
            a: (oa.rows, oa.k),
            b: (ob.rows, ob.k),
        });
    }
    if !pair && (oa.rows != m || ob.rows != n || oa.k != ob.k) {
        return Err(Reject::ShapesDisagree {
            m,
            n,
            a: (oa.rows, oa.k),
            b: (ob.rows, ob.k),
        });
    }
    let f = oa.k / STEP_BYTES * kind.vec();
    scale_tile(k, &sc.a, "scale_a", (m.next_multiple_of(128), f), kind)?;
    scale_tile(k, &sc.b, "scale_b", (n.next_multiple_of(128), f), kind)?;
    kind.encode_step(0, pair)?;
    Ok(kind)
}

/// Bytes of each operand row one instruction reads: K = 32 of FP8, K = 64 of packed FP4.
const STEP_BYTES: u32 = 32;

/// Checks that `t` is a TMEM factor tile `[rows, factors]`, indexed down to one tile.
fn scale_tile(
    k: &Kernel,
    t: &TileRef,
    which: &str,
    (rows, factors): (u32, u32),
    kind: Scaled,
) -> Result<(), Reject> {
    let TileRef::Buf { buf, index } = t else {
        unreachable!("checked by factor_type")
    };
    let b: &Buffer = &k.buffers[*buf];
    let dims = &b.layout.shape[index.len().min(b.layout.shape.len())..];
    if b.space == Space::Tmem && dims == [rows, factors] {
        return Ok(());
    }
    let (block, per) = match kind {
        Scaled::Mxf8(_) => (32, "32 K of the 128-K FP8 row, scale_vec::1X"),
        Scaled::Mxf4(d, _) if d.vec == ScaleVec::X2 => {
            (32, "32 of the row's 256 FP4 values, scale_vec::2X")
        }
        Scaled::Mxf4(..) => (16, "16 of the row's 256 FP4 values, scale_vec::4X"),
    };
    debug_assert!(block > 0);
    Err(Reject::BlockScale {
        why: format!(
            "{which} `{}` is {} {:?} in {}; it must be a TMEM tile `tmem::<{e}>([{rows}, \
             {factors}])`: {rows} rows (the operand's rows, a multiple of 128) × {factors} {e} \
             factors (one per {per}), indexed down to one tile",
            b.name,
            b.elem.name(),
            dims,
            b.space.name(),
            e = b.elem.name(),
        ),
    })
}

/// Lowers the block-scaled MMA (see the module docs).
pub(super) fn lower(
    lw: &mut Lower,
    (acc, a, b): (&TileRef, &TileRef, &TileRef),
    sc: &BlockScale,
    (accumulate, pair): (&Expr, bool),
) -> Result<(), Diagnostics> {
    let d0 = scaled_desc(lw.k, (acc, a, b), sc, pair).map_err(|e| lw.error(e))?;
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
    // A factor tile's cell columns: R / 32 for R rows (A: 128; B: N rounded up to 128).
    let (a_cols, b_cols) = (128 / 32, d0.n().next_multiple_of(128) / 32);
    let modifiers = d0.ptx();
    // The pair's MMA is issued once, by the even CTA (PTX ISA §9.7.16.5).
    let issuer = pair.then(|| lw.pair_issuer());
    for j in 0..kext / STEP_BYTES {
        // K-step j: 32 bytes on (2 descriptor units); its factors are bytes j·v % 4… of
        // cell j·v / 4.
        let bits = d0.encode_step(j, pair).map_err(|e| enc(lw, e))?;
        let idesc = lw.let_("idesc", T::U32, Expr::u32(bits));
        let (ad, bd) = (lw.var("adesc", T::U64), lw.var("bdesc", T::U64));
        let step = O::Imm(i64::from(2 * j));
        lw.inst(Inst::binary("add.u64", ad, reg(adesc0), step.clone()));
        lw.inst(Inst::binary("add.u64", bd, reg(bdesc0), step));
        let cell = j * d0.vec() / 4;
        let (sa, sb) = if cell == 0 {
            (sfa, sfb)
        } else {
            (
                lw.let_(
                    "sfa_c",
                    T::U32,
                    crate::lower::add(Expr::Var(sfa), Expr::u32(cell * a_cols)),
                ),
                lw.let_(
                    "sfb_c",
                    T::U32,
                    crate::lower::add(Expr::Var(sfb), Expr::u32(cell * b_cols)),
                ),
            )
        };
        let p = if j == 0 { first } else { always };
        let mut mma =
            Inst::tcgen05_mma_block_scale(taddr, (ad, bd, idesc), (sa, sb), p, (&modifiers, pair));
        mma.guard = issuer.map(O::Reg);
        lw.inst(mma);
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
