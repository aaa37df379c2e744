//! `tcgen05_cp` — a shared tile into tensor memory by the tensor core's own copy (sm_100a):
//! how an MMA's A operand (or any 16-bit tile an MMA reads from TMEM) gets there without
//! passing through registers.
//!
//! When: `copy(a_t, a_s)` or `tcgen05::cp(a_t, a_s)`, run by one thread, with `a_t` a
//! 16-bit TMEM tile `tmem::<bf16|f16>([128, K])` (a stage of a staged one, or an `alias`
//! view) and `a_s` a shared tile of the same element type and shape in the MMA operand form
//! (K-major, swizzle B128, 128-byte rows: `mma::smem_operand`), K a multiple of 16.
//! Before: `copy @a_t <- @a_s`
//! After: `a_t`'s TMEM address (from its slot, plus the stage's columns) and `a_s`'s
//! shared-memory descriptor (the one the MMA would use), then per 16 elements (32 bytes) of
//! each row: `tcgen05.cp.cta_group::1.128x256b [taddr + 8·i], desc + 2·i` — lane `r` takes
//! row `r`'s 32 bytes into 8 consecutive columns, two elements to a column with the lower K
//! in the low half, which is where `tcgen05.mma` reads an A operand from TMEM.
//! A `[64, K]` tile (`a_s` of 64 rows: the CTA pair's M = 128 A half) is copied by
//! `tcgen05.cp.cta_group::N.64x128b.warpx2::02_13 [taddr + 4·i], desc + i` per 8 elements
//! (16 bytes) of each row: row `r` into lanes `r` and `64 + r` — the 2x2 data path of
//! §9.7.16.10.5.2 reads A's rows from both lane halves (CUTLASS `TmemAllocMode::Duplicated`).
//! Completion: asynchronous. A later `tcgen05.mma` by the same thread reads the copied
//! cells in order (the ISA's pipelined `tcgen05.cp → tcgen05.mma` pair, §9.7.16.6.5), and
//! the thread's next `tcgen05.commit` tracks the copy as it tracks its MMAs.
//!
//! **Block-scale factors** (`ue8m0`, `ue4m3`): `tcgen05::cp(sf_t, sf_s)` with `sf_t` a TMEM
//! tile `tmem::<ue8m0>([R, F])` (R = 128 or 256 rows of A or B; F factors a row, 4 per cell:
//! F = 4 for the 4 × 32 K of a 128-byte FP8 row, 8 or 16 for the 256 FP4 values of an
//! `e2m1x2` row in blocks of 32 or 16; a stage of a staged one) and `sf_s` its shared-memory
//! image `smem::<ue8m0>([F / 4 · R / 4, 16])` or `[F / 4, R / 4, 16]` (no swizzle): per cell
//! and 128 rows, 32 rows of 16 bytes, row `r` holding the cell's factors of rows `r`,
//! `r + 32`, `r + 64`, `r + 96` (`tirx::scale_image` writes each cell's; a TMA box of
//! `[R / 4, 16]` loads one). After: per 512-byte block `i` (cell `i / (R / 128)`, rows
//! `128·(i % (R / 128))…`), `tcgen05.cp.cta_group::1.32x128b.warpx4 [taddr + 4·i], desc +
//! 32·i` — the 32 × 16-byte image written to every 32-lane quarter of tensor memory (block
//! scaling reads each factor from all four, §9.7.16.10.7), 4 columns a block, so cell `c`
//! of row `r` lands at column `c·R / 32 + r / 32` (`Buffer::tmem_tile`); the descriptor's
//! canonical unswizzled K-major layout (core matrices of 8 rows × 16 bytes, SBO 128 bytes
//! between them).
//! **The CTA pair** (`tcgen05::cp(t, s, cta_group = 2)`): `tcgen05.cp.cta_group::2`, issued
//! once by the even CTA's thread (guarded by `%cluster_ctarank & 1 == 0`, §9.7.16.5 "Issue
//! Granularity": one thread of the CTA pair initiates it); "the data is copied into the
//! Tensor Memory of both the current and the peer CTAs" (§9.7.16.9.2). The ISA does not say
//! whose shared memory the peer's copy reads; CUTLASS's 2-SM block-scaled mainloop
//! (`include/cutlass/gemm/collective/sm100_blockscaled_mma_warpspecialized.hpp`: each CTA
//! TMA-loads its own scale factors, A's partitioned by the CTA's rank, and only the leader
//! issues `SM100_UTCCP_4x32dp128bit_2cta` with its own descriptor) implies each CTA's TMEM
//! receives its own shared memory's bytes at the descriptor's address, which is what tirx
//! and its emulator take. `t` must be allocated for the pair (`verify-pair`).
//! PTX used: PTX ISA §9.7.16.9.2 (tcgen05.cp, `.32x128b.warpx4` its multicast shape),
//! §9.7.16.2.3 (data-movement shapes), §9.7.16.4.1 (shared-memory descriptor, via
//! `encode::tcgen05`), §9.7.16.10.7 (where block scaling reads the factors).

use crate::abi::{ElemType, Swizzle};
use crate::diag::Diagnostics;
use crate::dispatch::mma::{smem_operand, tmem_columns};
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::encode::Major;
use crate::encode::tcgen05::{LboMode, SwizzleMode, desc_const_part};
use crate::encode::wgmma::kmajor_desc_fields;
use crate::inst::reg;
use crate::ir::{
    Buffer, Expr, Inst, Kernel, Op, Operand as O, ScalarType as T, Space, Special, TileRef,
};
use crate::lower::{Lower, add};

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::Tcgen05Cp,
    priority: 8,
    applies,
    lower,
};

/// What one copy moves.
enum Plan {
    /// A 16-bit `[128, K]` MMA operand tile: K.
    Operand(u32),
    /// A 16-bit `[64, K]` tile, the CTA pair's M = 128 A half, written to lanes 0-63 and
    /// again 64-127: K.
    OperandTwice(u32),
    /// Block-scale factors: the 512-byte blocks (128 rows × 4 factors) of a `[R, F]` tile.
    Scales(u32),
}

/// The copy `dst` ← `src` makes, if this variant makes it.
fn plan(k: &Kernel, dst: &TileRef, src: &TileRef) -> Result<Plan, Reject> {
    let sides = match (dst, src) {
        (TileRef::Buf { buf: d, index: di }, TileRef::Buf { buf: s, index: si })
            if k.buffers[*d].space == Space::Tmem && k.buffers[*s].space == Space::Shared =>
        {
            Some((&k.buffers[*d], di, &k.buffers[*s], si))
        }
        _ => None,
    };
    let Some((db, di, sb, si)) = sides else {
        return Err(Reject::Tcgen05Cp {
            why: "it copies a shared tile into tensor memory".into(),
        });
    };
    if db.elem.is_scale() || sb.elem.is_scale() {
        return scale_plan(db, di, sb, si).map(Plan::Scales);
    }
    let o = smem_operand(k, src, "the source")?;
    if o.major != Major::K {
        return Err(Reject::MnMajor {
            which: "the source",
            buffer: sb.name.clone(),
        });
    }
    let dims = &db.layout.shape[di.len().min(db.layout.shape.len())..];
    if !matches!(db.elem, ElemType::Bf16 | ElemType::F16)
        || db.elem != sb.elem
        || dims != [o.rows, o.k]
        || !matches!(o.rows, 64 | 128)
        || !o.k.is_multiple_of(16)
    {
        return Err(Reject::Tcgen05Cp {
            why: format!(
                "`{}` is {} {:?} and `{}` {} [{}, {}]; it copies 128 rows (or the pair's 64, \
                 written to both lane halves) of a 16-bit tile, K a multiple of 16, into a TMEM \
                 tile of the same type and shape",
                db.name,
                db.elem.name(),
                dims,
                sb.name,
                sb.elem.name(),
                o.rows,
                o.k
            ),
        });
    }
    Ok(if o.rows == 64 {
        Plan::OperandTwice(o.k)
    } else {
        Plan::Operand(o.k)
    })
}

/// The 512-byte blocks of a scale-factor copy: `dst` a TMEM `[R, F]` tile of a scale type
/// (R = 128 or 256, F a multiple of 4 up to 16: F / 4 cells of 4 factors a row), `src` its
/// unswizzled shared image of the same type, `[F / 4 · R / 4, 16]` or `[F / 4, R / 4, 16]`:
/// cell `c`'s image (factors `4c..4c + 4` of every row) after cell `c − 1`'s, 128 rows a
/// block within it — the order of the tile's TMEM columns (`Buffer::tmem_tile`), so block `b`
/// goes to columns `4b..4b + 4`.
fn scale_plan(db: &Buffer, di: &[Expr], sb: &Buffer, si: &[Expr]) -> Result<u32, Reject> {
    let tail =
        |b: &Buffer, i: &[Expr]| b.layout.shape[i.len().min(b.layout.shape.len())..].to_vec();
    let (dd, sd) = (tail(db, di), tail(sb, si));
    let fits = match dd[..] {
        [r @ (128 | 256), f] if f.is_multiple_of(4) && (4..=16).contains(&f) => {
            let image = sd == [f / 4 * r / 4, 16] || sd == [f / 4, r / 4, 16];
            (image && db.elem == sb.elem && sb.layout.swizzle == crate::abi::Swizzle::None)
                .then_some(f / 4 * r / 128)
        }
        _ => None,
    };
    fits.ok_or_else(|| Reject::Tcgen05Cp {
        why: format!(
            "`{}` is {} {:?} in {} and `{}` {} {:?} with swizzle {}; scale factors copy from a \
             shared image `[F / 4 · R / 4, 16]` or `[F / 4, R / 4, 16]` (no swizzle) into a TMEM \
             tile `[R, F]` of the same type, R = 128 or 256, F = 4, 8, 12 or 16 (one \
             `tcgen05.cp.32x128b.warpx4` per 128 rows × 4 factors)",
            db.name,
            db.elem.name(),
            dd,
            db.space.name(),
            sb.name,
            sb.elem.name(),
            sd,
            sb.layout.swizzle.name()
        ),
    })
}

fn applies(cx: &Cx) -> Result<(), Reject> {
    let Op::Copy { dst, src, bar, .. } = cx.op else {
        return Err(Reject::WrongOp { expected: "a copy" });
    };
    if !cx.k.target().has_tcgen05() {
        return Err(Reject::NoTmem {
            target: cx.k.target(),
        });
    }
    plan(cx.k, dst, src)?;
    if bar.is_some() {
        return Err(Reject::Tcgen05Cp {
            why: "it completes through `tcgen05::commit(bar)`, not a barrier argument".into(),
        });
    }
    if !cx.threads.is_single() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "tcgen05.cp is issued by one thread (`#[scope(thread = T)]`)",
        });
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, pair, .. } = op else {
        return Err(lw.internal("tcgen05_cp on a non-copy"));
    };
    let pair = *pair;
    let plan = plan(lw.k, dst, src).map_err(|e| lw.error(e))?;
    let (TileRef::Buf { buf: hd, index: id }, TileRef::Buf { buf: hs, index: is }) = (dst, src)
    else {
        unreachable!("checked by plan")
    };
    let enc = |lw: &Lower, e: crate::encode::EncodeError| lw.internal(e.to_string());
    // The descriptor's constant part: the MMA operand's (128B-swizzled K-major), or for the
    // factors the canonical unswizzled K-major layout of 8-row × 16-byte core matrices (SBO
    // 128 bytes between them; LBO unused with one 16-byte column, set to the same 128).
    let cst = match plan {
        Plan::Operand(_) | Plan::OperandTwice(_) => {
            let eb = lw.k.buffers[*hs].elem.bytes();
            let (lbo, sbo) = kmajor_desc_fields(Swizzle::B128, eb).map_err(|e| enc(lw, e))?;
            desc_const_part(lbo, sbo, 0, LboMode::Relative, SwizzleMode::B128)
        }
        Plan::Scales(_) => desc_const_part(128, 128, 0, LboMode::Relative, SwizzleMode::None),
    }
    .map_err(|e| enc(lw, e))?;
    let slot = lw.k.buffers[*hd]
        .offset
        .ok_or_else(|| lw.internal("TMEM buffer without slot"))?;
    let slot_addr = lw.let_(
        "slot",
        T::U32,
        add(Expr::Special(Special::SmemBase), Expr::u32(slot)),
    );
    let base = lw.var("taddr", T::U32);
    lw.inst(Inst::ld_shared_u32(base, slot_addr, 0));
    let taddr = match tmem_columns(&lw.k.buffers[*hd], id) {
        Expr::Imm(0, _) => base,
        col => lw.let_("taddr_s", T::U32, add(Expr::Var(base), col)),
    };
    let is = is.clone();
    let desc0 = crate::dispatch::mma::wgmma::desc_base(lw, *hs, &is, cst)?;
    // (copies, descriptor step in 16-byte units, TMEM column step) per shape:
    // the operand's 32 bytes of each row per `.128x256b` (2 units, 8 columns); a factor
    // block's 512-byte image per `.32x128b.warpx4` (32 units, 4 columns).
    let (n, dstep, cstep) = match plan {
        Plan::Operand(k) => (k / 16, 2, 8),
        // 16 bytes of each of 64 rows per `.64x128b.warpx2::02_13` (1 unit, 4 columns).
        Plan::OperandTwice(k) => (k / 8, 1, 4),
        Plan::Scales(blocks) => (blocks, 32, 4),
    };
    // The pair's copy is issued once, by the even CTA (PTX ISA §9.7.16.5).
    let issuer = pair.then(|| lw.pair_issuer());
    for i in 0..n {
        let (d, t) = (lw.var("cdesc", T::U64), lw.var("ctaddr", T::U32));
        lw.inst(Inst::binary(
            "add.u64",
            d,
            reg(desc0),
            O::Imm(i64::from(dstep * i)),
        ));
        lw.inst(Inst::binary(
            "add.u32",
            t,
            reg(taddr),
            O::Imm(i64::from(cstep * i)),
        ));
        let mut cp = match plan {
            Plan::Operand(_) => Inst::tcgen05_cp_128x256b(t, d, pair),
            Plan::OperandTwice(_) => Inst::tcgen05_cp_64x128b_warpx2(t, d, pair),
            Plan::Scales(_) => Inst::tcgen05_cp_32x128b_warpx4(t, d, pair),
        };
        cp.guard = issuer.map(O::Reg);
        lw.inst(cp);
    }
    Ok(())
}
