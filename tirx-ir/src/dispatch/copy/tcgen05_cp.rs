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
//! Completion: asynchronous. A later `tcgen05.mma` by the same thread reads the copied
//! cells in order (the ISA's pipelined `tcgen05.cp → tcgen05.mma` pair, §9.7.16.6.5), and
//! the thread's next `tcgen05.commit` tracks the copy as it tracks its MMAs.
//! PTX used: PTX ISA §9.7.16.9.2 (tcgen05.cp), §9.7.16.2.3 (data-movement shapes),
//! §9.7.16.4.1 (shared-memory descriptor, via `encode::tcgen05`).

use crate::abi::{ElemType, Swizzle};
use crate::diag::Diagnostics;
use crate::dispatch::mma::{smem_operand, tmem_columns};
use crate::dispatch::{Cx, Reject, Variant};
use crate::encode::Major;
use crate::encode::tcgen05::{LboMode, SwizzleMode, desc_const_part};
use crate::encode::wgmma::kmajor_desc_fields;
use crate::inst::reg;
use crate::ir::{Expr, Inst, Kernel, Op, Operand as O, ScalarType as T, Space, Special, TileRef};
use crate::lower::{Lower, add};

/// The variant.
pub static VARIANT: Variant = Variant {
    name: "tcgen05_cp",
    priority: 8,
    applies,
    lower,
};

/// K, when `dst` ← `src` is a copy this variant makes.
fn plan(k: &Kernel, dst: &TileRef, src: &TileRef) -> Result<u32, Reject> {
    let sides = match (dst, src) {
        (TileRef::Buf { buf: d, index: di }, TileRef::Buf { buf: s, .. })
            if k.buffers[*d].space == Space::Tmem && k.buffers[*s].space == Space::Shared =>
        {
            Some((&k.buffers[*d], di, &k.buffers[*s]))
        }
        _ => None,
    };
    let Some((db, di, sb)) = sides else {
        return Err(Reject::Tcgen05Cp {
            why: "it copies a shared tile into tensor memory".into(),
        });
    };
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
        || dims != [128, o.k]
        || o.rows != 128
        || !o.k.is_multiple_of(16)
    {
        return Err(Reject::Tcgen05Cp {
            why: format!(
                "`{}` is {} {:?} and `{}` {} [{}, {}]; it copies 128 rows of a 16-bit tile, K a \
                 multiple of 16, into a TMEM tile of the same type and shape",
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
    Ok(o.k)
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
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("tcgen05_cp on a non-copy"));
    };
    let kext = plan(lw.k, dst, src).map_err(|e| lw.error(e))?;
    let (TileRef::Buf { buf: hd, index: id }, TileRef::Buf { buf: hs, index: is }) = (dst, src)
    else {
        unreachable!("checked by plan")
    };
    let eb = lw.k.buffers[*hs].elem.bytes();
    let (lbo, sbo) =
        kmajor_desc_fields(Swizzle::B128, eb).map_err(|e| lw.internal(e.to_string()))?;
    let cst = desc_const_part(lbo, sbo, 0, LboMode::Relative, SwizzleMode::B128)
        .map_err(|e| lw.internal(e.to_string()))?;
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
    for i in 0..kext / 16 {
        // 32 bytes of each row: 2 descriptor units of 16 bytes, 8 TMEM columns.
        let (d, t) = (lw.var("cdesc", T::U64), lw.var("ctaddr", T::U32));
        lw.inst(Inst::binary(
            "add.u64",
            d,
            reg(desc0),
            O::Imm(i64::from(2 * i)),
        ));
        lw.inst(Inst::binary(
            "add.u32",
            t,
            reg(taddr),
            O::Imm(i64::from(8 * i)),
        ));
        lw.inst(Inst::tcgen05_cp_128x256b(t, d));
    }
    Ok(())
}
