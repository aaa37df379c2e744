//! `tma_store` — a shared buffer into a global tile through the TMA engine.
//!
//! When: `copy(tensor.tile(..), smem_tile)` with a TMA-legal box, run by one thread. Out-of-
//! bounds parts of the box are clipped by the hardware, so tails need no code.
//! Before: `copy global d[%m, %n] <- @d_s`
//! After: `cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [map, {n*BN, m*BM}], [src]`.
//! The source is K-major: an MN-major tile (`major = mn`) is refused, its chunked bytes are
//! not the box.
//! The user completes it with `tma::commit_group()` / `tma::wait_group(n)`.
//! PTX used: PTX ISA §9.7.9.25.5.1 (cp.async.bulk.tensor).

use super::tma_box;
use super::tma_load::element_coords;
use crate::diag::Diagnostics;
use crate::dispatch::{CopyVariant, Cx, Reject, Variant};
use crate::ir::{Inst, Major, Op, ScalarType, TileRef};
use crate::lower::Lower;

/// The variant.
pub static VARIANT: Variant<CopyVariant> = Variant {
    id: CopyVariant::TmaStore,
    priority: 10,
    applies,
    lower,
};

fn applies(cx: &Cx) -> Result<(), Reject> {
    super::unscaled(cx.op)?;
    let Op::Copy { dst, src, bar, .. } = cx.op else {
        return Err(Reject::WrongOp { expected: "a copy" });
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
    // No MN-major tensor is ever stored (the front end refuses it), so an MN-major source is
    // always a transposed layout written as if it were not.
    if b.layout.major == Major::MN {
        return Err(Reject::MnMajorStore {
            buffer: b.name.clone(),
        });
    }
    if !cx.threads.is_single() {
        return Err(Reject::Threads {
            threads: cx.threads,
            need: "a TMA store is issued by one thread",
        });
    }
    Ok(())
}

fn lower(lw: &mut Lower, op: &Op) -> Result<(), Diagnostics> {
    let Op::Copy { dst, src, .. } = op else {
        return Err(lw.internal("tma_store on a non-copy"));
    };
    let (b, dims) = tma_box(lw.k, src, dst).map_err(|e| lw.error(e))?;
    let swizzle = b.layout.swizzle;
    let TileRef::Buf { buf, index } = src else {
        unreachable!("checked by tma_box")
    };
    let TileRef::Global {
        tensor,
        coords,
        elements,
    } = dst
    else {
        unreachable!("checked by tma_box")
    };
    let inner_first: Vec<u32> = dims.iter().rev().copied().collect();
    let map = lw.tensor_map(tensor, inner_first, swizzle);
    let crd = element_coords(lw, coords, &dims, elements.is_some());
    let src_e = lw.smem_addr(*buf, index)?;
    let src_v = lw.let_("src", ScalarType::U32, src_e);
    lw.inst(Inst::cp_async_bulk_tensor_store(map, crd, src_v));
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_module;
    use crate::passes::run_pipeline;

    fn store_from(layout: &str) -> Result<String, String> {
        let text = format!(
            "kernel k config default phase tile
  signature k_default_sm_90a
    target sm_90a
    threads 128
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor d: bf16[M, N]
  buffer @d_s: smem bf16 {layout}
{{
  scope thread 0 {{
    op copy global d[0:u32, 0:u32] <- @d_s[0:u32]
  }}
}}
"
        );
        let m = parse_module(&text).expect("test input parses");
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
    fn a_k_major_tile_is_stored_and_an_mn_major_one_refused() {
        // The same bytes, read as the box (K-major) or as an MMA's transposed chunks (MN).
        let k = store_from("(2, 64, 64):(4096, 64, 1) swizzle B128").expect("compiles");
        assert!(
            k.contains("cp.async.bulk.tensor.2d.global.shared::cta"),
            "{k}"
        );
        let err = store_from("(2, 64, 64):(4096, 64, 1) swizzle B128 major mn").unwrap_err();
        assert!(
            err.contains("`d_s` is an MN-major tile") && err.contains("K-major tile"),
            "{err}"
        );
    }

    /// A box of rows narrower than its swizzle's span is refused at the buffer: the TMA unit
    /// lays such rows one span apart (the H100 fault of a `[64, 32]` bf16 B128 staging tile),
    /// and the swizzle of the row's own width is the fix the message names.
    #[test]
    fn a_box_narrower_than_its_swizzle_is_refused_with_the_swizzle_that_fits() {
        let err = store_from("(2, 64, 32):(2048, 32, 1) swizzle B128").unwrap_err();
        assert!(
            err.contains("rows are 64 bytes")
                && err.contains("128 bytes apart")
                && err.contains("64 bytes: B64"),
            "{err}"
        );
        let err = store_from("(2, 64, 16):(1024, 16, 1) swizzle B64").unwrap_err();
        assert!(err.contains("32 bytes: B32"), "{err}");
        let k = store_from("(2, 64, 32):(2048, 32, 1) swizzle B64").expect("compiles");
        assert!(
            k.contains("cp.async.bulk.tensor.2d.global.shared::cta"),
            "{k}"
        );
    }
}
