//! 64-bit integers on the GPU (feature `gpu`): what `tests/int64_tiles.rs` checks in the
//! emulator — 64-bit tile arithmetic bit-exact against Rust, `i64`/`u64` scalar arguments
//! (8-byte parameters) and row reductions of 64-bit values across warps — on hardware.

use tirx::Runtime;
use tirx::runtime::ScalarArg;
use tirx_kernels::reference::Rng;

use super::int64_tiles::{M, N, i64_ops, i64_row_stats, ints64, token_offsets};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

#[test]
fn i64_arithmetic_matches_rust_on_the_gpu() {
    let rt = rt();
    let mut rng = Rng::new(12);
    let (a, b) = (ints64(&mut rng, 1 << 50), ints64(&mut rng, 1 << 20));
    let art = tirx::select(i64_ops::KERNEL.artifacts, "default", rt.target().unwrap()).unwrap();
    let (at, bt) = (
        rt.upload(&a, &[M, N]).unwrap(),
        rt.upload(&b, &[M, N]).unwrap(),
    );
    let mut outs: Vec<_> = (0..4).map(|_| rt.zeros::<i64>(&[M, N]).unwrap()).collect();
    for o in &mut outs {
        rt.poison(o).unwrap();
    }
    let mut args = vec![at.view(), bt.view()];
    args.extend(outs.iter().map(|o| o.view()));
    rt.launch(art, &args).unwrap();
    let got: Vec<Vec<i64>> = outs.iter().map(|o| rt.download(o).unwrap()).collect();
    for i in 0..M * N {
        let (x, y, col) = (a[i], b[i], (i % N % 64) as i64);
        let d = if y == 0 { 7 } else { y };
        let want = [
            x.wrapping_add(y.wrapping_mul(3)) - col - 5,
            (x / d).wrapping_mul(1000) + x % d,
            (x.wrapping_shl(3) ^ (y >> 2)) | (x & 255),
            if x < y { x.min(-y) } else { x.max(y.abs()) },
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(got[k][i], *w, "output {k} at {i}: a = {x}, b = {y}");
        }
    }
}

#[test]
fn i64_scalars_and_row_sums_match_rust_on_the_gpu() {
    let rt = rt();
    let mut rng = Rng::new(15);
    let ids: Vec<i32> = (0..M * N)
        .map(|i| {
            if i % 11 == 0 {
                -1
            } else {
                (rng.next_u64() % 200_000) as i32
            }
        })
        .collect();
    let (base, row_len) = (-(1i64 << 41) + 12345, 5_000_000_017u64);
    let art = tirx::select(
        token_offsets::KERNEL.artifacts,
        "default",
        rt.target().unwrap(),
    )
    .unwrap();
    let idt = rt.upload(&ids, &[M, N]).unwrap();
    let mut offs = rt.zeros::<i64>(&[M, N]).unwrap();
    rt.poison(&mut offs).unwrap();
    let scalars = [
        ScalarArg::I64(base),
        ScalarArg::U64(row_len),
        ScalarArg::U32(0),
    ];
    rt.launch_args(art, &[idt.view(), offs.view()], &scalars)
        .unwrap();
    let got = rt.download(&offs).unwrap();
    for i in 0..M * N {
        let (t, col) = (ids[i], (i % N % 64) as i64);
        let want = if t < 0 {
            base
        } else {
            base.wrapping_add(i64::from(t).wrapping_mul(row_len as i64)) + col
        };
        assert_eq!(got[i], want, "offset at {i}: id {t}");
    }
    // Row sums, maxima and (u64) minima across the four warps.
    const W: usize = 256;
    let x: Vec<i64> = (0..M * W)
        .map(|i| {
            let v = (rng.next_u64() % (1 << 50)) as i64;
            if i % 3 == 1 { -v } else { v }
        })
        .collect();
    let art = tirx::select(
        i64_row_stats::KERNEL.artifacts,
        "default",
        rt.target().unwrap(),
    )
    .unwrap();
    let xt = rt.upload(&x, &[M, W]).unwrap();
    let mut s = rt.zeros::<i64>(&[M, W]).unwrap();
    let mut mx = rt.zeros::<i64>(&[M, W]).unwrap();
    let mut mn = rt.zeros::<u64>(&[M, W]).unwrap();
    rt.poison(&mut s).unwrap();
    rt.poison(&mut mx).unwrap();
    rt.poison(&mut mn).unwrap();
    rt.launch(art, &[xt.view(), s.view(), mx.view(), mn.view()])
        .unwrap();
    let (gs, gx, gn) = (
        rt.download(&s).unwrap(),
        rt.download(&mx).unwrap(),
        rt.download(&mn).unwrap(),
    );
    for r in 0..M {
        let row = &x[r * W..(r + 1) * W];
        let sum = row.iter().fold(0i64, |a, &b| a.wrapping_add(b));
        let max = row.iter().copied().max().expect("a row");
        let min = row.iter().map(|&v| v as u64).min().expect("a row");
        for c in 0..W {
            let i = r * W + c;
            assert_eq!(gs[i], sum + c as i64, "sum at ({r}, {c})");
            assert_eq!(gx[i], max - c as i64, "max at ({r}, {c})");
            assert_eq!(gn[i], min + c as u64, "min at ({r}, {c})");
        }
    }
}
