//! How register-tile expressions lower, seen in the PTX of small kernels built with the same
//! macro as the shipped ones: a value that reads only statistics is computed once per
//! statistic register, not once per element it broadcasts to; a reduction folds each row's
//! elements in independent chains.

use tirx::prelude::*;

/// O = acc / l per row, and the row maximum of a 64×64 accumulator.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, cdiv(M, 64)))]
pub fn row_scale(
    #[shape(M, K)] a: Tensor<bf16>,
    #[shape(N, K)] b: Tensor<bf16>,
    #[shape(M, N)] d: Tensor<bf16>,
) {
    let a_s = smem::<bf16>([64, 64], swizzle = B128);
    let b_s = smem::<bf16>([64, 64], swizzle = B128);
    let bar = mbarrier();
    let acc = regs::<f32>([64, 64]);
    let m = regs::<f32>([64, 1], layout = stat(acc, axis = 1));
    #[scope(thread = 0)]
    {
        tma::load(a_s, a.tile(cta.y, 0), bar);
        tma::load(b_s, b.tile(0, 0), bar);
    }
    bar.wait(0);
    wgmma::fence();
    wgmma::mma(acc, a_s, b_s, accumulate = false);
    wgmma::commit();
    wgmma::wait(0);
    m = reduce_max(acc, axis = 1);
    acc = acc * select(m == 0.0, 0.0, rcp(m));
    copy(d.tile(cta.y, 0), acc);
}

/// The accumulator fragment gives each thread two rows of 16 elements each: two statistic
/// registers, so two `rcp.rn.f32` (not 32) and two `setp` for the select.
#[test]
fn a_broadcast_value_is_computed_once_per_row() {
    let ptx = row_scale::KERNEL.artifacts[0].ptx;
    assert_eq!(ptx.matches("rcp.rn.f32").count(), 2, "{ptx}");
    assert_eq!(ptx.matches("setp.eq.f32").count(), 2);
}

/// Each row's 16 elements fold into four chains of four, then a tree of two levels: of the
/// row's 15 `max.f32` within the thread, the first four each combine two tile registers
/// (a chain's start), so no chain is longer than 3 + 2 operations.
#[test]
fn a_row_reduction_folds_in_independent_chains() {
    let ptx = row_scale::KERNEL.artifacts[0].ptx;
    let maxes: Vec<&str> = ptx
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("max.f32"))
        .collect();
    // 2 rows × 15 within the thread, then 2 rows × 2 shuffle steps.
    assert_eq!(maxes.len(), 2 * 15 + 2 * 2, "{maxes:#?}");
    let dsts: Vec<&str> = maxes
        .iter()
        .map(|l| l["max.f32".len()..].trim().split(',').next().unwrap())
        .collect();
    // The first op of each chain reads no earlier reduction result.
    let starts = maxes
        .iter()
        .take(2 * 15)
        .filter(|l| {
            let srcs = l.split(',').skip(1).map(|s| s.trim().trim_end_matches(';'));
            srcs.filter(|s| dsts.contains(s)).count() == 0
        })
        .count();
    assert_eq!(starts, 2 * 4, "{maxes:#?}");
}
