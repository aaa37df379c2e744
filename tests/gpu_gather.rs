//! Gathers on the GPU (feature `gpu`): the kernels of `tests/gather.rs` — cross-entropy whose
//! logit is picked per row by `gather(x, row, target[row])`, bf16 embedding rows by token id,
//! a page table read before its page, an embedding row by TMA at a coordinate loaded by a
//! scalar `gather` — on hardware against the same Rust references, with
//! odd sizes (45 rows of 500 columns; 21 tokens of 60 columns), indices at both edges and out
//! of range (−1, the extent, `i32::MAX`: they read 0 — the emulator reports them, the GPU
//! reads 0, as `docs/language.md` says), and poisoned outputs. Also the integer scalar
//! arguments of `tests/int_scalars.rs` (`.s32`/`.u32` kernel parameters) through the
//! generated launchers.

use half::bf16;
use tirx::Runtime;
use tirx_kernels::reference::Rng;

use super::gather::{cross_entropy, embed_rows, embed_tma, paged_words};
use super::int_scalars::{offset_ids, row_at};

fn rt() -> Runtime {
    Runtime::new(0).expect("the gpu feature needs a GPU")
}

fn below(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

#[test]
fn cross_entropy_gathers_each_rows_target_on_the_gpu() {
    const M: usize = 45;
    const N: usize = 500;
    let rt = rt();
    let art = tirx::select(
        cross_entropy::KERNEL.artifacts,
        "default",
        rt.target().unwrap(),
    )
    .unwrap();
    let mut rng = Rng::new(131);
    let x: Vec<f32> = (0..M * N).map(|_| rng.unit() * 4.0).collect();
    let target: Vec<i32> = (0..M)
        .map(|r| match r % 9 {
            0 => 0,
            1 => N as i32 - 1,
            2 => -1,
            3 => N as i32,
            4 => i32::MAX,
            _ => below(&mut rng, N) as i32,
        })
        .collect();
    let xt = rt.upload(&x, &[M, N]).unwrap();
    let tt = rt.upload(&target, &[M]).unwrap();
    let mut lt = rt.zeros::<f32>(&[M]).unwrap();
    rt.poison(&mut lt).unwrap();
    rt.launch(art, &[xt.view(), tt.view(), lt.view()]).unwrap();
    let got = rt.download(&lt).unwrap();
    for r in 0..M {
        let row = &x[r * N..(r + 1) * N];
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let lse = m as f64
            + row
                .iter()
                .map(|&v| ((v - m) as f64).exp())
                .sum::<f64>()
                .ln();
        let tg = target[r];
        let picked = if (0..N as i32).contains(&tg) {
            row[tg as usize] as f64
        } else {
            0.0
        };
        let want = lse - picked;
        let g = got[r] as f64;
        assert!(
            (g - want).abs() <= 1e-4 * want.abs().max(1.0),
            "row {r}, target {tg}: {g} vs {want}"
        );
    }
}

#[test]
fn embedding_rows_by_id_on_the_gpu() {
    const S: usize = 21;
    const V: usize = 50;
    const D: usize = 60;
    let rt = rt();
    let art = tirx::select(
        embed_rows::KERNEL.artifacts,
        "default",
        rt.target().unwrap(),
    )
    .unwrap();
    let mut rng = Rng::new(132);
    let table: Vec<bf16> = (0..V * D).map(|_| bf16::from_f32(rng.unit())).collect();
    let ids: Vec<i32> = (0..S)
        .map(|i| match i % 7 {
            0 => V as i32 - 1,
            1 => -3,
            2 => V as i32,
            _ => below(&mut rng, V) as i32,
        })
        .collect();
    let it = rt.upload(&ids, &[S]).unwrap();
    let tt = rt.upload(&table, &[V, D]).unwrap();
    let mut ot = rt.zeros::<f32>(&[S, D]).unwrap();
    rt.poison(&mut ot).unwrap();
    rt.launch(art, &[it.view(), tt.view(), ot.view()]).unwrap();
    let got = rt.download(&ot).unwrap();
    for s in 0..S {
        for c in 0..D {
            let want = match usize::try_from(ids[s]) {
                Ok(i) if i < V => table[i * D + c].to_f32(),
                _ => 0.0,
            };
            assert_eq!(
                got[s * D + c].to_bits(),
                want.to_bits(),
                "token {s} (id {}), column {c}",
                ids[s]
            );
        }
    }
}

#[test]
fn page_table_then_words_on_the_gpu() {
    const M: usize = 40;
    const P: usize = 9;
    let rt = rt();
    let art = tirx::select(
        paged_words::KERNEL.artifacts,
        "default",
        rt.target().unwrap(),
    )
    .unwrap();
    let mut rng = Rng::new(133);
    let pages: Vec<u32> = (0..M)
        .map(|i| {
            if i % 11 == 5 {
                P as u32 + 2
            } else {
                below(&mut rng, P) as u32
            }
        })
        .collect();
    let pool: Vec<u32> = (0..P * 16).map(|_| rng.next_u64() as u32).collect();
    let pt = rt.upload(&pages, &[M]).unwrap();
    let pl = rt.upload(&pool, &[P, 16]).unwrap();
    let mut ot = rt.zeros::<u32>(&[M, 16]).unwrap();
    rt.poison(&mut ot).unwrap();
    rt.launch(art, &[pt.view(), pl.view(), ot.view()]).unwrap();
    let got = rt.download(&ot).unwrap();
    for r in 0..M {
        for c in 0..16 {
            let p = pages[r] as usize;
            let want = if p < P { pool[p * 16 + c] } else { 0 };
            assert_eq!(got[r * 16 + c], want, "row {r} (page {p}), column {c}");
        }
    }
}

#[test]
fn embedding_rows_by_tma_at_loaded_coordinates_on_the_gpu() {
    const S: usize = 13;
    const V: usize = 40;
    let rt = rt();
    let art = tirx::select(embed_tma::KERNEL.artifacts, "default", rt.target().unwrap()).unwrap();
    let mut rng = Rng::new(134);
    let table: Vec<bf16> = (0..V * 64).map(|_| bf16::from_f32(rng.unit())).collect();
    // −1 and V put the box outside the table: TMA fills the row with zeros.
    let ids: Vec<i32> = (0..S)
        .map(|i| match i % 5 {
            0 => V as i32 - 1,
            1 => -1,
            2 => V as i32,
            3 => 0,
            _ => below(&mut rng, V) as i32,
        })
        .collect();
    let it = rt.upload(&ids, &[S]).unwrap();
    let tt = rt.upload(&table, &[V, 64]).unwrap();
    let mut ot = rt.zeros::<bf16>(&[S, 64]).unwrap();
    rt.poison(&mut ot).unwrap();
    rt.launch(art, &[it.view(), tt.view(), ot.view()]).unwrap();
    let got = rt.download(&ot).unwrap();
    for s in 0..S {
        for c in 0..64 {
            let want = match usize::try_from(ids[s]) {
                Ok(i) if i < V => table[i * 64 + c],
                _ => bf16::ZERO,
            };
            assert_eq!(
                got[s * 64 + c].to_bits(),
                want.to_bits(),
                "token {s} (id {}), column {c}",
                ids[s]
            );
        }
    }
}

/// `offset_ids` and `row_at` launched by their generated launchers, which take the scalars
/// by type (`lo: i32, first: u32, scale: f32`; `row: i32`), against the Rust reference of
/// `tests/int_scalars.rs`, with a negative `lo`.
#[test]
fn integer_scalar_arguments_on_the_gpu() {
    const M: usize = 70;
    const N: usize = 50;
    const R: usize = M + 64;
    let rt = rt();
    let mut rng = Rng::new(141);
    let ids: Vec<i32> = (0..R * N)
        .map(|_| (rng.next_u64() % 2001) as i32 - 1000)
        .collect();
    let it = rt.upload(&ids, &[R, N]).unwrap();
    for lo in [-250i32, 300] {
        let (first, scale) = (2u32, 0.375f32);
        let mut ot = rt.zeros::<i32>(&[M, N]).unwrap();
        let mut yt = rt.zeros::<f32>(&[M, N]).unwrap();
        rt.poison(&mut ot).unwrap();
        rt.poison(&mut yt).unwrap();
        offset_ids::launch(&rt, "default", &it, &mut ot, &mut yt, lo, first, scale).unwrap();
        let (out, y) = (rt.download(&ot).unwrap(), rt.download(&yt).unwrap());
        for r in 0..M {
            for c in 0..N {
                let t = ids[(r + 32 * first as usize) * N + c];
                let want = (t.max(lo) - lo).wrapping_mul(3);
                assert_eq!(out[r * N + c], want, "lo {lo}, row {r}, column {c}");
                let wy = (t + lo) as f32 * scale;
                assert_eq!(y[r * N + c], wy, "lo {lo}, row {r}, column {c}");
            }
        }
    }
    const V: usize = 9;
    let table: Vec<bf16> = (0..V * 64).map(|_| bf16::from_f32(rng.unit())).collect();
    let tt = rt.upload(&table, &[V, 64]).unwrap();
    for row in [0i32, 5, V as i32 - 1] {
        let mut ot = rt.zeros::<bf16>(&[1, 64]).unwrap();
        rt.poison(&mut ot).unwrap();
        row_at::launch(&rt, "default", &tt, &mut ot, row).unwrap();
        let got = rt.download(&ot).unwrap();
        assert_eq!(
            got,
            table[row as usize * 64..(row as usize + 1) * 64],
            "row {row}"
        );
    }
}
