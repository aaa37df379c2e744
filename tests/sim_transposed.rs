//! The transposed-tile GEMM (`gemm_sm90_t`, issue #32: D = A·Bᵀ computed as Dᵀ = B·Aᵀ, the
//! accumulator stored transposed through `stmatrix…trans` and one TMA store) in the emulator:
//! random inputs, D poisoned, each element against the f64 reference within the GEMM family's
//! bound (`sim_gemm.rs`' `typed_gemm_case`), on shapes with tails in M (150, 200: a partial
//! last row block, clipped by the TMA store), in N (264 = 4·64 + 8: a last column block of 8)
//! and in K (200, 1000: TMA's zero fill in the last K tile; 1000 is 16 K tiles, more than
//! every config's stages, so stages are reused); the tiles of 80 and 112 rows (`n80`/`n112`,
//! TN and NN) at M = 160 and 224, two whole row blocks, and with tails.

use super::sim_exec::report;
use super::sim_gemm::{sm90, typed_gemm_case};

/// The TN tile configs timed first (one and two consumer warpgroups, BN = 96 and 128) with
/// bf16 and f16, on M, N and K tails.
#[test]
fn the_transposed_gemm_matches_the_reference_with_tails() {
    let mut runs = Vec::new();
    for (config, shape, seed) in [
        ("n96", (192, 264, 200), 61),
        ("n96", (150, 136, 1000), 62),
        ("n128", (200, 72, 200), 63),
        ("w2n96", (150, 264, 200), 64),
        ("w2n128", (192, 136, 1000), 65),
        ("f16_n96", (200, 72, 200), 66),
        ("f16_w2n128", (150, 264, 136), 67),
    ] {
        let stats = typed_gemm_case(sm90("gemm_sm90_t", config), shape, seed)
            .unwrap_or_else(|e| panic!("gemm_sm90_t {config} {shape:?}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm90_t", &runs);
}

/// The tiles that split M = 160 and 224 into exactly two row blocks (`n80`, `n112`, issue
/// #32), bf16 and f16: M a whole number of row blocks (160 = 2·80, 224 = 2·112) and with a
/// tail (150, 200, 230, and 100: a second block of 20 rows); N with a last column block of 8
/// (136, 264, 72); K tails (200, 264, 136) and K = 1000 (16 K tiles, more than the 11 and 9
/// stages, so stages are reused).
#[test]
fn the_two_row_block_tiles_match_the_reference() {
    let mut runs = Vec::new();
    for (config, shape, seed) in [
        ("n80", (160, 264, 200), 81),
        ("n80", (150, 136, 1000), 82),
        ("f16_n80", (230, 72, 136), 83),
        ("n112", (224, 264, 200), 84),
        ("n112", (200, 136, 1000), 85),
        ("f16_n112", (230, 72, 264), 86),
        ("n80", (100, 256, 1000), 87),
        ("f16_n80", (160, 136, 200), 88),
        ("n112", (224, 136, 1000), 89),
    ] {
        let stats = typed_gemm_case(sm90("gemm_sm90_t", config), shape, seed)
            .unwrap_or_else(|e| panic!("gemm_sm90_t {config} {shape:?}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm90_t two row blocks", &runs);
}

/// The NN configs: B given K×N, the MMA's A operand read MN-major (`imm-trans-a`); the
/// two-row-block tiles `nn_n80`/`nn_n112` at M = 160 and 224 (two whole row blocks) and with
/// M, N and K tails (150, 230; 136, 72; 200, 1000).
#[test]
fn the_transposed_gemm_takes_b_given_k_by_n() {
    let mut runs = Vec::new();
    for (config, shape, seed) in [
        ("nn_n96", (192, 264, 200), 71),
        ("nn_n128", (150, 136, 1000), 72),
        ("nn_f16_n96", (200, 72, 136), 73),
        ("nn_w2n96", (150, 264, 200), 74),
        ("nn_f16_w2n96", (192, 136, 1000), 75),
        ("nn_n80", (160, 264, 200), 76),
        ("nn_n80", (150, 136, 1000), 77),
        ("nn_f16_n80", (230, 72, 136), 78),
        ("nn_n112", (224, 264, 1000), 79),
        ("nn_n112", (230, 136, 200), 80),
        ("nn_f16_n112", (224, 72, 264), 93),
    ] {
        let stats = typed_gemm_case(sm90("gemm_sm90_t", config), shape, seed)
            .unwrap_or_else(|e| panic!("gemm_sm90_t {config} {shape:?}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm90_t nn", &runs);
}

/// The tiles of an odd count of 8-column blocks (`n72`, `n88`, `n104`: 9, 11 and 13 blocks,
/// the last stored by `stmatrix.x2.trans`), which split M = 144, 176 and 208 into exactly two
/// row blocks, TN and NN, bf16 and f16: M a whole number of row blocks and with a tail (140,
/// 170, 200, 100: a second block of 28 rows); N with a last column block of 8 (136, 264, 72);
/// K tails (200, 136, 264) and K = 1000 (16 K tiles, more than the 12, 11 and 10 stages).
#[test]
fn the_odd_block_two_row_block_tiles_match_the_reference() {
    let mut runs = Vec::new();
    for (config, shape, seed) in [
        ("n72", (144, 264, 200), 101),
        ("n72", (140, 136, 1000), 102),
        ("f16_n72", (100, 72, 136), 103),
        ("n88", (176, 136, 1000), 104),
        ("f16_n88", (170, 264, 200), 105),
        ("n104", (208, 264, 200), 106),
        ("n104", (200, 136, 1000), 107),
        ("f16_n104", (208, 72, 264), 108),
        ("nn_n72", (144, 136, 1000), 109),
        ("nn_f16_n72", (140, 264, 200), 110),
        ("nn_n88", (176, 264, 200), 111),
        ("nn_n88", (170, 72, 1000), 112),
        ("nn_f16_n88", (176, 136, 136), 113),
        ("nn_n104", (208, 136, 1000), 114),
        ("nn_f16_n104", (200, 264, 200), 115),
        ("n120", (240, 136, 1000), 116),
        ("f16_n120", (230, 264, 200), 117),
        ("nn_n120", (232, 72, 1000), 118),
        ("nn_f16_n120", (240, 136, 264), 119),
    ] {
        let stats = typed_gemm_case(sm90("gemm_sm90_t", config), shape, seed)
            .unwrap_or_else(|e| panic!("gemm_sm90_t {config} {shape:?}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm90_t odd blocks", &runs);
}

/// The 2×1 clusters that share B (`m2n72`…`m2n128`, issue #32, after cuBLAS's
/// `nvjet_sm90_tst_64x96_64x10_2x1_v_bz_TNT`): the CTAs of a pair compute neighbouring row
/// blocks of D against the same 64 rows of B, each loading 32 of them and multicasting them to
/// both. M of two row blocks (192 = 2·96, 160 = 2·80, and with a tail: 100, 130, 90), of an odd
/// count (250 and 300: three blocks, so the grid's fourth CTA holds rows entirely past M: it
/// loads A's zero fill, its store is clipped, and it still supplies its half of B), and of one
/// (120, 96: the pair's second CTA past M); N with a last column block of 8 (264, 136, 72);
/// K tails (200, 136, 264) and K = 1000 (16 K tiles, more than every config's stages).
#[test]
fn the_b_sharing_cluster_tiles_match_the_reference() {
    let mut runs = Vec::new();
    for (config, shape, seed) in [
        ("m2n96", (192, 264, 200), 121),
        ("m2n96", (250, 136, 1000), 122),
        ("m2n80", (160, 72, 136), 123),
        ("m2n72", (100, 136, 200), 124),
        ("f16_m2n112", (300, 72, 264), 125),
        ("m2n128", (130, 264, 1000), 126),
        ("m2n88", (90, 136, 200), 127),
        ("m2n104", (200, 72, 200), 128),
        ("m2n120", (120, 136, 136), 129),
        ("f16_m2n96", (96, 136, 200), 130),
    ] {
        let stats = typed_gemm_case(sm90("gemm_sm90_t", config), shape, seed)
            .unwrap_or_else(|e| panic!("gemm_sm90_t {config} {shape:?}: {e}"));
        runs.push(stats);
    }
    report("gemm_sm90_t B-sharing clusters", &runs);
}
