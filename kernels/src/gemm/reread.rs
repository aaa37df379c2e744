//! The GEMM cost model's re-read term (issue #32): what every CTA's TMA boxes pull through the
//! L2, counted by the busiest CTA, with the rows of zero fill a tile past M carries.
//!
//! The stream term of [`GemmRequest::cost`] (`memory_units`) reads A and B once from HBM; but
//! each tile loads its own boxes, so A's rows come through the L2 once for every column of
//! tiles and B's once for every row of tiles, and the rows of a box that reaches past M are
//! filled with zeros by the TMA unit, which takes longer than loading the rows they stand
//! for. Neither was charged: a tile that splits M into more, or emptier, row blocks cost the
//! same as one that does not. This term charges both, as a property of the tile against the
//! shape (no config, kernel or shape is named):
//!
//! `resident CTAs × (busiest CTA's box rows + (FILL_ROW_COST − 1) × its rows of fill) × K ×
//! bytes / L2_BYTES_PER_S`
//!
//! — every resident CTA takes its share of the L2's rate, and the grid waits for the CTA with
//! the most tiles, one of them in the last row of tiles with its fill (the one-launch model's
//! wave quantisation, seen from the L2). The cost is then the most of the tile term, the HBM
//! stream and this, with the tile term's factors (a grid that is not persistent, D not stored
//! by TMA, a cluster) applied to this term too: a kernel that is slower per tile is so whatever
//! bounds it. Split-K plans (`split::best_split`) keep their own model.
//!
//! Measured on an H100 (stop 56, `docs/perf/h100-2026-12-07-stop56/call6/`):
//! - [`L2_BYTES_PER_S`], 10 TB/s: the fastest box stream measured, `gemm_sm90_ws/n64` at
//!   256×4096×4096 (128 CTAs of 128×64, no fill: 201 MB of boxes in 20.7 µs, 9.7 TB/s);
//! - [`FILL_ROW_COST`], 2.8: the same kernel at M = 224, 192 and 160 (a second row of tiles
//!   with 32, 64 and 96 rows of fill) took 25.6, 31.0 and 34.0 µs; this term predicts 26.2,
//!   32.2 and 38.2 µs. Only rows of A past M were measured (no measured shape had N off the
//!   tile): columns past N count as box rows, without the surcharge (charging them too moved
//!   the model's choice at five of `dispatch::tests`' larger shapes, 1000³ to 4095×4097×4096,
//!   1000³'s measured `pair_n` among them).
//!
//! A cluster that multicasts B (issue #32: `gemm_sm90_t`'s `m2*` configs, after cuBLAS's
//! `nvjet_sm90_tst_64x96_64x10_2x1_v_bz_TNT`; any kernel whose CTAs each compute their own
//! tile and load `1 / CL` of B's box, TN) pulls only its part of B's rows through the L2: the
//! busiest CTA's box rows count `BN / CL` of B's ([`b_parts`]), the same re-read counted per
//! CTA, with the multicast delivering the rest. Not yet measured: a prediction from this
//! term's own reading of the L2, which ranks the `m2*` tiles only once they are timed. It is
//! applied to transposed tiles only (`TRANS = 1`): applied to the row-major Hopper clusters
//! that share B (`gemm_sm90_tma_epi_abc/n64` and kin) it moved the measured choice at scaled
//! TN 1000³ (`pair_n_abc`) to `tma_epi_abc/n64` (`dispatch::tests`), whose ×0.98 already
//! stands for what their sharing measured.
//!
//! The two constants hold within a window: at 10 TB/s any fill cost from 2.6 to 3.0 rows gives
//! the same choices at every measured point (2.5 leaves 160×4096×4096 at `t/n96`; 3.1 moves
//! 224×4096×4096 off `t/n128`); the window moves with the rate (3.0–3.2 at 10.5 TB/s).
//!
//! What it changes at the 26 points of stop 56's call 6 (TN and NN; the geometric mean of the
//! fastest config's time over the choice's 0.964 → 0.988, `dispatch::measured`):
//! - 160×4096×4096: `gemm_sm90_t/n96` → `gemm_sm90_t/w2n96` (TN 0.893 → 1.000, NN 0.883 →
//!   1.000): `n96`'s 128 CTAs each pull 96 + 64 box rows, 32 of them fill, where `w2n96`'s 64
//!   pull 96 + 128 with the same fill but share the L2 with half as many;
//! - 240×5120×5120: `gemm_sm90_t/w2n96` → TN `gemm_sm90_tma_epi/n128` (0.776 → 0.920), NN
//!   `gemm_sm90_ws/nn_n128` (0.775 → 1.000): three 96-row blocks read B three times for 288
//!   rows with 48 of fill, the 128-row tiles twice for 256 with 16. TN stays under 0.95: the
//!   four one-wave 128×128 tiles are within 3.5 % in the model (154.5–160.0 units, bound by
//!   their tiles) and the cluster's ×0.98 ranks `tma_epi/n128` first; measured `t/w2n128` 33.3
//!   µs, `ws/n128` 33.9, `cluster/n128` 35.2, `tma_epi/n128` 36.2.
//!
//! - 208×8192×2048 (TN): `gemm_sm90_ws/n128` → `gemm_sm90_tma_epi/n128` (1.000 → 0.984): the
//!   128×128 tiles are bound by the term there, and the cluster's ×0.98 ranks its tile first.
//!
//! No other measured point changes its choice (stop 53's 18 TN shapes, stop 54's 10 NN, stop
//! 56's first run: the same shapes as above where they repeat).
//!
//! Predictions at shapes no run has measured (H100; the model's time, its runner-up, and the
//! choice before this term; `dispatch::transposed` pins them):
//! - 176×4096×4096: `t/n96` 24.3 µs (TN and NN), `t/w2n96` 26.4 next — unchanged;
//! - 208×4096×4096: TN `gemm_sm90_tma_epi/n128` 31.6 µs, NN `gemm_sm90_splitk/nn_m128n64`
//!   (S = 2) 31.8, where the choice was `t/n128` (`nn_n128`), now 33.7: 0.94 of the new
//!   choice by the model. The one to measure: 48 of the 128-row tiles' rows are fill, and at
//!   M = 192 and 224 `t/n128` measured 30.6 and 26.6 µs against `tma_epi/n128`'s 30.0 and 29.2;
//! - 240×4096×4096: `t/n128` 27.7 µs (TN and NN), `ws/n64` 28.1 next — unchanged;
//! - 160×8192×4096: `t/w2n96` 34.0 µs (TN and NN), `tma_epi/n192` 43.0 next — unchanged;
//! - 144×4096×4096: `t/w2n96` 26.4 µs (TN and NN), where the choice was `t/n96`, now 30.3
//!   (0.87 of the new choice by the model: 48 of its 96 rows of A are fill in the second block).

use tirx::KernelArtifact;
use tirx::problem::BLayout;

use super::request::{
    GemmRequest, ctas_per_sm, ctas_per_tile, is_transposed_tile, tile_extent, unit_seconds,
};
use crate::dispatch::Device;

/// Bytes a second the L2 delivers to the SMs' TMA boxes, all SMs together (H100, this file's
/// header; the H200's GH100 L2 is taken to be the same, a Blackwell's until one is measured).
pub(crate) const L2_BYTES_PER_S: f64 = 10e12;

/// What one box row of zero fill costs the stream, in rows inside the tensors (this file's
/// header: `gemm_sm90_ws/n64` at M = 160…256).
pub(crate) const FILL_ROW_COST: f64 = 2.8;

/// The time, in units (`unit_seconds`), of the boxes `art`'s CTAs pull through the L2 on
/// `request` (this file's header); 0 for an artifact without `BM` and `BN`.
pub(crate) fn reread_units(request: &GemmRequest, art: &KernelArtifact, device: &Device) -> f64 {
    let (m, n, k) = request.shape;
    let Some((bm, bn)) = tile_extent(art) else {
        return 0.0;
    };
    let (row_tiles, col_tiles) = (m.div_ceil(bm), n.div_ceil(bn));
    // A CTA pair's CTA loads half of its tile's rows of A and half of B's.
    let per_tile = ctas_per_tile(art);
    let ctas = row_tiles * col_tiles * per_tile;
    let room = device.limits.sm_count as usize * ctas_per_sm(art);
    let resident = ctas.min(room).max(1);
    // The busiest CTA: the most tiles, one of them in the last row and column of tiles.
    let tiles_each = ctas.div_ceil(resident);
    // Its rows of A past M cost [`FILL_ROW_COST`] rows; its columns past N count as box rows
    // (no measured shape had N off the tile).
    let fill = row_tiles * bm - m;
    let b_rows = bn as f64 / b_parts(request, art, per_tile) as f64;
    let rows = tiles_each as f64 * (bm as f64 + b_rows) + (FILL_ROW_COST - 1.0) * fill as f64;
    let bytes =
        resident as f64 * rows / per_tile as f64 * k as f64 * request.types.input.bytes() as f64;
    bytes / L2_BYTES_PER_S / unit_seconds(k)
}

/// The parts B's box of a tile is loaded in by the CTAs of a cluster that multicast it (this
/// file's header): the cluster's size when `art` is a transposed tile (`TRANS = 1`) each of
/// whose CTAs computes its own tile (`per_tile` 1) and whose TMA box of a K-major B (TN: the
/// box's outer extent is B's rows) holds `BN / cluster` of the tile's `BN` rows of B — the
/// CTAs of the cluster compute neighbouring row blocks of D against the same rows of B, each
/// pulls its part through the L2 and the multicast delivers the rest; 1 otherwise (a CTA
/// pair's halves are `per_tile`'s).
fn b_parts(request: &GemmRequest, art: &KernelArtifact, per_tile: usize) -> usize {
    let sig = art.sig();
    let cluster = sig.cluster.iter().product::<u32>().max(1) as usize;
    if cluster == 1 || per_tile != 1 || request.layout != BLayout::Tn || !is_transposed_tile(art) {
        return 1;
    }
    let Some((_, bn)) = tile_extent(art) else {
        return 1;
    };
    let b_box_rows = sig.params.iter().find_map(|p| match p {
        tirx::abi::AbiParam::TensorMap {
            tensor, box_dims, ..
        } if tensor == "b" => box_dims.last().map(|&r| r as usize),
        _ => None,
    });
    if b_box_rows.is_some_and(|r| r * cluster == bn) {
        cluster
    } else {
        1
    }
}
