//! FP8 split-K GEMM, Hopper: the FP8 GEMMs of `fp8.rs` (D = s ⊙ A·Bᵀ, E4M3 or E5M2 inputs,
//! per-tensor or row-wise scales) for the shapes whose output tiles are too few to fill 132
//! SMs (decode-like M = 128: 64 tiles of 128×128), with the K range of each output tile split
//! over `S` CTAs.
//!
//! Two launches, as the 16-bit split-K of `splitk.rs`:
//! 1. [`kernels::gemm_sm90_fp8_splitk`] (`solves = gemm`, the `partial` epilogue): CTA
//!    `(x, y, z)` multiplies the 128×BN tile `(y, x)` over the z-th slice of the K tiles —
//!    K tiles `⌊z·T/S⌋ … ⌊(z+1)·T/S⌋` of `T = ⌈K/BK⌉`, BK = 128 (one 128-byte swizzle span of
//!    8-bit elements, four `wgmma … k32` a 64-row slice, as in `fp8.rs`) — and stores its f32
//!    accumulator, unscaled, into slice `z` of the workspace `w` [S, M, N]. TMA zero-fills the
//!    columns past K in the last tile, so K need not be a multiple of `S·BK`.
//! 2. The reduce (`splitk.rs`'s `reduce` module): the `S` partials of an `R × C` block summed in
//!    one fixed order (`sum_slices`: deterministic, no atomics), **then** the scales applied,
//!    as the one-launch kernels apply them to the whole K sum: per tensor by `splitk_reduce`
//!    with α = `scale_a·scale_b` (the host multiplies the two in f32, as `fp8.rs`'s consumers
//!    do), row-wise by `splitk_reduce_rowwise` (`acc · sa[i] · sb[j]`, in `fp8.rs`'s order);
//!    rounded once to D's type (BF16, FP16 or FP32).
//!
//! The partial kernel is the ladder's level 5 (`level_05_2wg.rs`): a producer warpgroup (its
//! warp 0's elected thread loads the slice's K tiles) and two consumer warpgroups of 64 rows
//! each ([`super::pieces`]'s `consume`, one wgmma group in flight), registers moved by
//! `setmaxnreg`. A 128-row tile holds the decode-like M = 128 in one tile row, and two
//! consumer warpgroups keep the tensor core fed where the 16-bit split-K's one 64-row
//! warpgroup does not (the host's model weighs that, `split.rs`).
//!
//! Configs: `default` (BN = 128, six stages of 16 + 16 KB) and `n256` (BN = 256, four stages of
//! 16 + 32 KB), each in E4M3 and E5M2 (`e5m2`, `e5m2_n256`): 192 KB of operands in flight a CTA
//! either way (the host's model, `request::pull_rate`, weighs it). `promoted` and
//! `promoted_e5m2` (BN = 128, `PROMOTE = 128`): each K tile promoted into the f32 accumulator
//! (`pieces.rs`'s `consume_promoted`, `fp8.rs`'s header), the partials of a promoted request
//! (`fp8_ref::Fp8Accum::Promoted`); the reduce sums them in f32 as it does the others.

use tirx::prelude::*;

#[tile_module(uses(super::pieces::gemm_pieces))]
pub mod kernels {
    use tirx::prelude::*;

    /// The partial products of an FP8 split-K GEMM: `w[z] = A·Bᵀ` over the z-th of `S` slices
    /// of K, f32, unscaled (the reduce applies the scales to the sum). Warpgroup 0's warp 0
    /// loads the slice's K tiles; warpgroups 1 and 2 each multiply 64 rows of the 128×BN tile
    /// and store their f32 accumulator into `w[z]`, clipped at M and N.
    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 384,
        grid = (cdiv(N, BN), cdiv(M, BM), S),
        configs(
            product(
                types(default = (TA = e4m3), e5m2 = (TA = e5m2)),
                tile(default = (BN = 128, STAGES = 6), n256 = (BN = 256, STAGES = 4)),
                with = (BM = 128, BK = 128, PROMOTE = 0),
            ),
            product(
                accum(promoted = (PROMOTE = 128)),
                types(default = (TA = e4m3), e5m2 = (TA = e5m2)),
                with = (BM = 128, BK = 128, BN = 128, STAGES = 6),
            ),
        ),
    )]
    pub fn gemm_sm90_fp8_splitk(
        #[shape(M, K)] a: Tensor<TA>,
        #[shape(N, K)] b: Tensor<TA>,
        #[shape(S, M, N)] w: Tensor<f32>,
    ) {
        static_assert(
            PROMOTE == 0 || PROMOTE == BK,
            "a promotion interval of one K tile",
        );
        let a_s = smem::<TA>([STAGES, 2, 64, BK], swizzle = B128);
        let b_s = smem::<TA>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([64, BN]);
        let part = regs::<f32>([64, BN]);
        let pipe = pipeline::<STAGES>(consumers = 2);
        let k_tiles = cdiv(K, BK);
        let k0 = cta.z * k_tiles / S;
        let k_len = (cta.z + 1) * k_tiles / S - k0;
        // The reduce may be scheduled once every CTA has started (it waits for this grid).
        grid::launch_dependents();
        #[scope(warpgroup = 0)]
        {
            setmaxnreg::dec(40);
            #[scope(warp = 0, elect)]
            for i in 0..k_len {
                let s = pipe.producer_acquire(i);
                tma::load(a_s[s], a.tile(cta.y, k0 + i), pipe.full(s));
                tma::load(b_s[s], b.tile(cta.x, k0 + i), pipe.full(s));
            }
        }
        #[scope(warpgroups = 1..3)]
        {
            setmaxnreg::inc(232);
            let wg = tid / 128 - 1;
            if PROMOTE == 0 {
                let _ = consume(pipe, 0, acc, a_s, b_s, wg, k_len);
            } else {
                let _ = consume_promoted(pipe, 0, acc, part, a_s, b_s, wg, k_len);
            }
            copy(w.tile(cta.z, 2 * cta.y + wg, cta.x), acc);
        }
    }
}
