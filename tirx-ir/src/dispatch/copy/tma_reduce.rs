//! `tma_reduce` — a shared tile reduced into a global tile by the TMA engine.
//!
//! When: `tma::reduce_add(y.tile(..), s)` (also `reduce_min`, `reduce_max`) with a TMA-legal
//! box, run by one thread; `add` on f32, bf16, f16, i32, u32 tensors, `min`/`max` on bf16,
//! f16, i32, u32. Each element of the box is combined with the global one atomically (the
//! tensor map's type and rounding: 16-bit floats round to nearest even); out-of-bounds parts
//! of the box are clipped, as for `tma_store`. Only forced by its word.
//! Before: `copy global y[%m, %n] <- @s atomic add gpu relaxed variant tma_reduce`
//! After: `cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group
//! [map, {n*BN, m*BM}], [src]`.
//! Completion is `tma_store`'s: the source is read until `tma::wait_group_read(n)` (or
//! `wait_group`) covers the bulk group `tma::commit_group()` closed; the same checks apply.
//! PTX used: PTX ISA §9.7.9.25.5.2 (cp.reduce.async.bulk.tensor), sm_90.

use super::tma_box;
use super::tma_load::element_coords;
use crate::abi::ElemType;
use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::{AtomicOp, Inst, Major, Op, ScalarType, TileRef};
use crate::lower::Lower;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::TmaReduce,
    priority: 10,
    applies,
    lower,
};

/// Which operations the TMA reduce-store takes on an element type.
pub fn op_fits(op: AtomicOp, elem: ElemType) -> Result<(), String> {
    let ok = match op {
        AtomicOp::Add => matches!(
            elem,
            ElemType::F32 | ElemType::Bf16 | ElemType::F16 | ElemType::I32 | ElemType::U32
        ),
        AtomicOp::Min | AtomicOp::Max => matches!(
            elem,
            ElemType::Bf16 | ElemType::F16 | ElemType::I32 | ElemType::U32
        ),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`tma::reduce_{op}` takes {} tensors; this one is {}",
            match op {
                AtomicOp::Add => "f32, bf16, f16, i32 or u32",
                _ => "bf16, f16, i32 or u32 (no f32 min/max in cp.reduce.async.bulk.tensor)",
            },
            elem.name()
        ))
    }
}

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::unscaled(cx.op)?;
    let Op::Copy {
        dst,
        src,
        bar,
        atomic: Some(a),
        ..
    } = cx.op
    else {
        return Err(Reject::WrongOp {
            expected: "an atomic copy",
        });
    };
    if !matches!(dst, TileRef::Global { .. }) {
        return Err(Reject::NotGlobal {
            side: "destination",
        });
    }
    if bar.is_some() {
        return Err(Reject::StoreWithBarrier);
    }
    let (b, _) = tma_box(cx.k, src, dst)?;
    op_fits(a.op, b.elem).map_err(|why| Reject::Atomic { why })?;
    if b.layout.major == Major::MN {
        return Err(Reject::MnMajorStore {
            buffer: b.name.clone(),
        });
    }
    if !cx.threads.is_single() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "a TMA reduce-store is issued by one thread",
        });
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy {
        dst,
        src,
        atomic: Some(a),
        ..
    } = op
    else {
        return Err(lw.internal("tma_reduce on a non-atomic copy"));
    };
    let (b, dims) = tma_box(lw.k, src, dst).map_err(|e| lw.error(e))?;
    let swizzle = b.layout.swizzle;
    let TileRef::Buf { buf, index } = src else {
        unreachable!("checked by tma_box")
    };
    let TileRef::Global { tensor, coords, .. } = dst else {
        unreachable!("checked by tma_box")
    };
    let inner_first: Vec<u32> = dims.iter().rev().copied().collect();
    let map = lw.tensor_map(tensor, inner_first, swizzle);
    // Tile coordinates only: `refuses_form` keeps element offsets away from this path.
    let crd = element_coords(lw, coords, &dims, false);
    let src_e = lw.smem_addr(*buf, index)?;
    let src_v = lw.let_("src", ScalarType::U32, src_e);
    lw.inst(Inst::cp_reduce_async_bulk_tensor(
        a.op.name(),
        map,
        crd,
        src_v,
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_module;
    use crate::passes::run_pipeline;

    fn reduce_into(elem: &str, op: &str) -> Result<String, String> {
        let text = format!(
            "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 128
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor d: {elem}[M, N]
  buffer @d_s: smem {elem} (64, 64):(64, 1) swizzle none
{{
  scope thread 0 {{
    op copy global d[0:u32, 0:u32] <- @d_s atomic {op} gpu relaxed variant tma_reduce
  }}
}}
"
        );
        let m = parse_module(&text).map_err(|e| e.to_string())?;
        let printed = m.to_string();
        assert!(
            printed.contains(&format!("atomic {op} gpu relaxed variant tma_reduce")),
            "{printed}"
        );
        let k = m.kernels.into_iter().next().expect("one kernel");
        match run_pipeline(k, false) {
            Ok((k, _)) => Ok(k.to_string()),
            Err(errs) => Err(errs
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .join("\n")),
        }
    }

    #[test]
    fn the_text_form_round_trips_and_the_type_decides_the_operations() {
        let k = reduce_into("bf16", "max").expect("compiles");
        assert!(
            k.contains("cp.reduce.async.bulk.tensor.2d.global.shared::cta.max.tile.bulk_group"),
            "{k}"
        );
        let k = reduce_into("f32", "add").expect("compiles");
        assert!(k.contains(".add.tile.bulk_group"), "{k}");
        let err = reduce_into("f32", "min").unwrap_err();
        assert!(err.contains("no f32 min/max"), "{err}");
    }
}
