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

fn run(art: &KernelArtifact, m: usize, n: usize, seed: u64) {
    let entry = (art.signature)().entry;
    let mut rng = Rng::new(seed);
    let x: Vec<u16> = (0..m * n)
        .map(|_| (rng.unit().to_bits() >> 16) as u16)
        .collect();
    let mut dev = Device::new();
    let xb: Vec<u8> = x.iter().flat_map(|h| h.to_le_bytes()).collect();
    let xt: TensorMeta = put(&mut dev, &xb, ElemType::Bf16, &[m, n]);
    let yt = put(&mut dev, &vec![0xa5; m * n * 2], ElemType::Bf16, &[n, m]);
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
    run(&transpose_ld::KERNEL.artifacts[0], 100, 72, 51);
}

#[test]
fn stmatrix_trans_transposes_in_the_emulator() {
    run(&transpose_st::KERNEL.artifacts[0], 100, 72, 52);
}

#[test]
fn a_non_square_transposing_copy_in_the_emulator() {
    run(&transpose_wide::KERNEL.artifacts[0], 200, 72, 53);
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
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in [
        &transpose_ld::KERNEL,
        &transpose_st::KERNEL,
        &transpose_wide::KERNEL,
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
        let m = tirx_ir::parse::parse_module(a.ir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.to_string(), a.ir);
        let kernel = m.kernels.into_iter().next().expect("one kernel");
        let (lowered, _) = tirx_ir::passes::run_pipeline(kernel, false).expect("compiles");
        assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), a.ptx);
    }
}
