//! Transposing copies between register tiles and shared memory (issue #30 item 4):
//! `copy(t, s, transpose = true)` is `ldmatrix….trans` (PTX ISA §9.7.14.5.15) from a shared
//! tile holding `t`'s transpose, `copy(s, t, transpose = true)` is `stmatrix….trans`
//! (§9.7.14.5.16) into one; both lowered from the `ldmatrix_trans`/`stmatrix_trans` copy
//! variants. Two `y = xᵀ` kernels run in the emulator (which implements `.trans` from the ISA
//! on its own) on random bf16 data with tails in both dimensions, bit-exact against the CPU
//! transpose, and assemble with ptxas; a plain copy never transposes.

use tirx::KernelArtifact;
use tirx::prelude::*;
use tirx::runtime::{ElemType, TensorMeta};
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{self, put};
use tirx_sim::Device;

use super::emu_io::{assert_ir_round_trips, poisoned};
use super::sim_exec::EMULATED;

/// `y = xᵀ` by `ldmatrix.trans`: a 64×64 box of `x` by TMA, into registers transposed, stored
/// to `y`'s transposed tile coordinates.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn transpose_ld(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>) {
    let s = smem::<bf16>([64, 64]);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(s, x.tile(cta.y, cta.x), bar);
    }
    bar.wait(0);
    let t = regs::<bf16>([64, 64]);
    copy(t, s, transpose = true);
    copy(y.tile(cta.x, cta.y), t);
}

/// `y = xᵀ` by `stmatrix.trans`: a tile of `x` into registers, into shared memory transposed,
/// back by a plain `ldmatrix`, stored.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn transpose_st(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>) {
    let t = regs::<bf16>([64, 64]);
    copy(t, x.tile(cta.y, cta.x));
    let s = smem::<bf16>([64, 64], swizzle = B128);
    copy(s, t, transpose = true);
    sync_threads();
    let u = regs::<bf16>([64, 64]);
    copy(u, s);
    copy(y.tile(cta.x, cta.y), u);
}

/// A non-square tile: `[64, 128]` registers from a `[128, 64]` shared tile.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 128)))]
pub fn transpose_wide(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>) {
    let s = smem::<bf16>([128, 64], swizzle = B128);
    let bar = mbarrier();
    #[scope(thread = 0)]
    {
        tma::load(s, x.tile(cta.y, cta.x), bar);
    }
    bar.wait(0);
    let t = regs::<bf16>([64, 128]);
    copy(t, s, transpose = true);
    copy(y.tile(cta.x, cta.y), t);
}

/// An MN-major epilogue: an f32 tile (an accumulator's layout) rounded to bf16 into shared
/// memory transposed, as two 64-column chunks (`[2, 64, 64]`, the layout of 64-wide TMA boxes),
/// back by a plain `ldmatrix`, stored.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 128)))]
pub fn transpose_f32(#[shape(M, N)] x: Tensor<f32>, #[shape(N, M)] y: Tensor<bf16>) {
    let t = regs::<f32>([128, 64]);
    copy(t, x.tile(cta.y, cta.x));
    let s = smem::<bf16>([2, 64, 64], swizzle = B128);
    copy(s, t, transpose = true);
    sync_threads();
    let u = regs::<bf16>([64, 128]);
    copy(u, s);
    copy(y.tile(cta.x, cta.y), u);
}

/// An odd count of 8-column blocks (the transposed GEMM's `[64, 72]` accumulator, issue #32):
/// `[64, 72]` registers into a `[72, 64]` shared tile transposed — four `stmatrix.x4.trans`
/// and one `.x2.trans` for the ninth block — back by a plain copy, stored.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 72), cdiv(M, 64)))]
pub fn transpose_odd(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>) {
    let t = regs::<bf16>([64, 72]);
    copy(t, x.tile(cta.y, cta.x));
    let s = smem::<bf16>([72, 64], swizzle = B128);
    copy(s, t, transpose = true);
    sync_threads();
    let u = regs::<bf16>([72, 64], layout = blocked(vec = 4));
    copy(u, s);
    copy(y.tile(cta.x, cta.y), u);
}

/// Runs `y = xᵀ` on an `m × n` `x` of random values (`f32_in`: f32, else bf16) in the emulator
/// (`y` poisoned first) and compares every element of `y` with the CPU transpose, rounded to
/// bf16 (round to nearest even) from f32.
fn run(art: &KernelArtifact, m: usize, n: usize, seed: u64, f32_in: bool) {
    let entry = (art.signature)().entry;
    let mut rng = Rng::new(seed);
    let xf: Vec<f32> = (0..m * n).map(|_| rng.unit() * 3.0).collect();
    let (xb, xe, x): (Vec<u8>, _, Vec<u16>) = if f32_in {
        let x = xf
            .iter()
            .map(|v| half::bf16::from_f32(*v).to_bits())
            .collect();
        (
            xf.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ElemType::F32,
            x,
        )
    } else {
        let x: Vec<u16> = xf.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
        (
            x.iter().flat_map(|h| h.to_le_bytes()).collect(),
            ElemType::Bf16,
            x,
        )
    };
    let mut dev = Device::new();
    let xt: TensorMeta = put(&mut dev, &xb, xe, &[m, n]);
    let yt = poisoned(&mut dev, ElemType::Bf16, &[n, m]);
    simulate::launch(
        art.ptx,
        &(art.signature)(),
        &mut dev,
        (&[xt, yt.clone()], &[]),
        3,
        &EMULATED,
    )
    .unwrap_or_else(|e| panic!("{entry}: {e}"));
    let y: Vec<u16> = dev
        .read(yt.addr, m * n * 2)
        .expect("the output")
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    for r in 0..n {
        for c in 0..m {
            assert_eq!(
                y[r * m + c],
                x[c * n + r],
                "{entry}: y[{r}][{c}] is not x[{c}][{r}]"
            );
        }
    }
}

#[test]
fn ldmatrix_trans_transposes_in_the_emulator() {
    // 100 × 72: tails of 36 rows and 8 columns.
    run(&transpose_ld::KERNEL.artifacts[0], 100, 72, 51, false);
}

#[test]
fn stmatrix_trans_transposes_in_the_emulator() {
    run(&transpose_st::KERNEL.artifacts[0], 100, 72, 52, false);
}

#[test]
fn a_non_square_transposing_copy_in_the_emulator() {
    run(&transpose_wide::KERNEL.artifacts[0], 200, 72, 53, false);
}

#[test]
fn an_f32_tile_rounds_into_transposed_chunks_in_the_emulator() {
    // 150 × 100: tails of 22 rows and 36 columns; the second chunk of the last column of
    // CTAs lies past the end.
    run(&transpose_f32::KERNEL.artifacts[0], 150, 100, 54, true);
}

#[test]
fn an_odd_count_of_blocks_transposes_in_the_emulator() {
    // 100 × 152: tails of 36 rows and 8 columns (152 = 2·72 + 8).
    run(&transpose_odd::KERNEL.artifacts[0], 100, 152, 55, false);
}

/// The `.trans` instructions are emitted (and only where asked); the kernels assemble for
/// sm_90a without spills (ptxas where installed; `TIRX_REQUIRE_PTXAS=1` makes it required).
#[test]
fn the_transposing_copies_emit_trans_and_assemble() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    let ld = transpose_ld::KERNEL.artifacts[0].ptx;
    assert!(
        ld.contains("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
        "{ld}"
    );
    let st = transpose_st::KERNEL.artifacts[0].ptx;
    assert!(
        st.contains("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
        "{st}"
    );
    // The plain copy back is an ldmatrix without `.trans`.
    assert!(
        st.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
        "{st}"
    );
    assert!(!st.contains("ldmatrix.sync.aligned.m8n8.x4.trans"), "{st}");
    // Nine 8-column blocks: four pairs by `.x4` and the last by `.x2`.
    let odd = transpose_odd::KERNEL.artifacts[0].ptx;
    assert_eq!(
        odd.matches("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16")
            .count(),
        4,
        "{odd}"
    );
    assert_eq!(
        odd.matches("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16")
            .count(),
        1,
        "{odd}"
    );
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in [
        &transpose_ld::KERNEL,
        &transpose_st::KERNEL,
        &transpose_wide::KERNEL,
        &transpose_f32::KERNEL,
        &transpose_odd::KERNEL,
    ] {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(
                c.problems.is_empty(),
                "{}: {:?} {:?}",
                k.name,
                c.problems,
                c.sass
            );
        }
    }
}

/// The IR text names the forced variants and parses back to the same PTX.
#[test]
fn transposing_copies_print_parse_and_recompile() {
    for a in [
        &transpose_ld::KERNEL.artifacts[0],
        &transpose_st::KERNEL.artifacts[0],
    ] {
        assert!(a.ir.contains("_trans"), "{}", a.ir);
        assert_ir_round_trips(a, false);
    }
}
