//! GPU tests of the transposing copies (feature `gpu`): the `y = xᵀ` kernels of
//! `transpose.rs` — `ldmatrix….trans` from a TMA box, `stmatrix….trans` and a plain `ldmatrix`
//! back, a non-square tile, and an f32 tile rounded into transposed chunks — on matrices with
//! tails in both dimensions, `y` poisoned first, compared bit for bit with the CPU transpose
//! (rounded to bf16, to nearest even, from f32). The emulator runs the same kernels from its
//! own reading of the ISA's `.trans` layout; this is the hardware's word on it.

use crate::transpose::{transpose_f32, transpose_ld, transpose_st, transpose_wide};
use half::bf16;
use tirx::Runtime;
use tirx_kernels::reference::Rng;

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

/// The first `(row, col)` of `y` (`n × m`) that is not `want(col, row)`'s bits.
fn first_wrong(
    y: &[bf16],
    m: usize,
    n: usize,
    want: impl Fn(usize, usize) -> bf16,
) -> Option<String> {
    for r in 0..n {
        for c in 0..m {
            let (g, w) = (y[r * m + c], want(c, r));
            if g.to_bits() != w.to_bits() {
                return Some(format!(
                    "y[{r}][{c}] = {g} ({:#06x}), want {w} ({:#06x})",
                    g.to_bits(),
                    w.to_bits()
                ));
            }
        }
    }
    None
}

#[test]
fn transposing_copies_transpose_bf16_exactly() {
    let rt = rt();
    for (i, (m, n)) in [(64, 64), (100, 72), (200, 136)].into_iter().enumerate() {
        let mut rng = Rng::new(300 + i as u64);
        let hx: Vec<bf16> = rng.values(m * n);
        let x = rt.upload(&hx, &[m, n]).unwrap();
        for name in ["transpose_ld", "transpose_st", "transpose_wide"] {
            let mut y = rt.zeros::<bf16>(&[n, m]).unwrap();
            rt.poison(&mut y).unwrap();
            match name {
                "transpose_ld" => transpose_ld::launch(&rt, "default", &x, &mut y),
                "transpose_st" => transpose_st::launch(&rt, "default", &x, &mut y),
                _ => transpose_wide::launch(&rt, "default", &x, &mut y),
            }
            .expect("launches");
            rt.synchronize().unwrap();
            let got = rt.download(&y).unwrap();
            assert_eq!(
                first_wrong(&got, m, n, |r, c| hx[r * n + c]),
                None,
                "{name} {m}x{n}"
            );
        }
    }
}

#[test]
fn an_f32_tile_rounds_into_a_transposed_stage_exactly() {
    let rt = rt();
    for (i, (m, n)) in [(128, 64), (150, 100)].into_iter().enumerate() {
        let mut rng = Rng::new(310 + i as u64);
        let hx: Vec<f32> = (0..m * n).map(|_| rng.unit() * 3.0).collect();
        let x = rt.upload(&hx, &[m, n]).unwrap();
        let mut y = rt.zeros::<bf16>(&[n, m]).unwrap();
        rt.poison(&mut y).unwrap();
        transpose_f32::launch(&rt, "default", &x, &mut y).expect("launches");
        rt.synchronize().unwrap();
        let got = rt.download(&y).unwrap();
        let want = |r: usize, c: usize| bf16::from_f32(hx[r * n + c]);
        assert_eq!(first_wrong(&got, m, n, want), None, "transpose_f32 {m}x{n}");
    }
}
