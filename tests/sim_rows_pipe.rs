//! The persistent double-buffered row kernels (`softmax_staged_pipe`, `rmsnorm_staged_pipe`,
//! `kernels/src/row_kernels/staged_pipe.rs`) in the emulator: every config on a device of few
//! SMs, so that each cluster walks several rows (more rows than clusters, a count that the
//! grid does not divide), the ring's stages and the pipeline's phases wrap, and the cluster
//! exchange runs round after round; with a ragged part and parts wholly past the row
//! (zero-filled boxes, waited on and released). Random rows, outputs poisoned, against the
//! f64 reference within 2 bf16 ulps; the emulator's protocol diagnostics (an mbarrier phase
//! overrun, a TMA write into shared memory still being read) fail the run.

use crate::sim_exec::{EMULATED, report, row_case_on};
use tirx::problem::RowOp;
use tirx::runtime::DeviceLimits;
use tirx_kernels::catalogue;

/// `config` of `name` on `rows × cols` with `sms` SMs (the grid `SMS·W·15/16` rounded down
/// to whole clusters, `W` and `CS` from the config): asserts that the cluster walks more than
/// two rows, so both halves of the ring are used twice. Under the default scheduling and
/// under long bursts (a warp runs up to 1000 instructions before the scheduler switches):
/// thread 0, the TMA thread, then runs well ahead of the other warps, and a stage released
/// before every thread's last read of it is refilled under them (a mutation without the
/// `sync_threads` before the release fails here).
fn pipe_case(
    name: &str,
    op: RowOp,
    config: &str,
    (sms, rows, cols): (u32, usize, usize),
) -> Vec<tirx_sim::Stats> {
    let k = catalogue::find(name).expect("shipped");
    let art = k
        .artifacts
        .iter()
        .find(|a| a.config == config)
        .unwrap_or_else(|| panic!("{name} {config}"));
    let (w, cs) = (art.int("W").expect("W"), art.int("CS").expect("CS"));
    let clusters = (i64::from(sms) * w * 15 / 16 / cs) as usize;
    assert!(
        clusters >= 1 && rows > 2 * clusters && (clusters == 1 || rows % clusters != 0),
        "{name} {config}: {rows} rows over {clusters} clusters"
    );
    let limits = DeviceLimits {
        sm_count: sms,
        ..EMULATED
    };
    let bursts = tirx_sim::Policy {
        max_burst: 1000,
        ..tirx_sim::Policy::default()
    };
    [tirx_sim::Policy::default(), bursts]
        .iter()
        .map(|policy| {
            row_case_on(
                art,
                op,
                (rows, cols),
                (70 + rows as u64, 0.0),
                (&limits, policy),
            )
        })
        .collect()
}

#[test]
fn staged_pipe_kernels_walk_several_rows_per_cluster() {
    let mut runs = Vec::new();
    for (name, op) in [
        ("softmax_staged_pipe", RowOp::Softmax),
        ("rmsnorm_staged_pipe", RowOp::RmsNorm),
    ] {
        // Two CTAs of 16384: whole parts, 2 clusters over 7 rows (4, 3).
        runs.extend(pipe_case(name, op, "p32k", (2, 7, 32768)));
        // The second part ragged (8200 columns: two chunks and 8 columns).
        runs.extend(pipe_case(name, op, "p32k", (2, 7, 24584)));
        // Four CTAs: the second ragged, the last two wholly past the row; 2 clusters, 7 rows.
        runs.extend(pipe_case(name, op, "p64k", (4, 7, 24584)));
        // Eight CTAs: the third ragged (7240), five past the row; one cluster, 3 rows, then
        // two clusters over 5 rows.
        runs.extend(pipe_case(name, op, "p128k", (3, 3, 40008)));
        runs.extend(pipe_case(name, op, "p128k", (6, 5, 131072)));
        // Eight CTAs of 32768 (16 stages): the third ragged (4472), five past; 3 rows.
        runs.extend(pipe_case(name, op, "p256k", (9, 3, 70008)));
        // Parts of 32768 at the shorter capacities: two clusters over 5 rows, the second
        // part ragged (4104); four CTAs over 3 rows, the last two past the row.
        runs.extend(pipe_case(name, op, "p64k_w1", (5, 5, 36872)));
        runs.extend(pipe_case(name, op, "p128k_w1", (5, 3, 65536)));
    }
    report("staged pipe kernels over several rows per cluster", &runs);
}
