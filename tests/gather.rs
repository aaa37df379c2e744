//! Gathers (issue #30 item 2): `gather(x, row, col)` loads each element of a tile expression
//! from a global tensor at indices computed per element — a class target per row, a token id
//! per row — by a guarded `ld.global`, 0 outside the tensor. Run in the emulator against a
//! Rust reference on random data, with rows and indices at and past the tensor's edges.
//! An index read from data (a target, an id, a page) outside its tensor is reported by the
//! emulator naming the tensor, the dimension, the index and the extent (planted below), unless
//! the gather says `oob = zero`; a TMA load at a coordinate read from data is checked alike.

use tirx::KernelArtifact;
use tirx::prelude::*;
use tirx::runtime::{ElemType, TensorMeta};
use tirx_kernels::reference::Rng;
use tirx_kernels::simulate::{self, put};
use tirx_sim::Device;

use super::emu_io::{assert_ir_round_trips, poisoned, read32, words32};
use super::sim_exec::EMULATED;

/// Cross-entropy per row: `logsumexp(x[r, :]) - x[r, target[r]]`, the target a row statistic
/// loaded from an `[M]` vector (`copy` into the `stat` layout), the logit picked by a gather.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 4), 1))]
pub fn cross_entropy(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M)] target: Tensor<i32>,
    #[shape(M)] loss: Tensor<f32>,
) {
    let t = regs::<f32>([4, 512], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    let tg = regs::<i32>([4, 1], layout = stat(t, axis = 1));
    copy(tg, target.tile(cta.x));
    let v = select(col_index(t) < N, t, f32::NEG_INFINITY);
    let m = reduce_max(v, axis = 1);
    let s = reduce_sum(exp2_approx((v - m) * 1.442695), axis = 1);
    let picked = gather(x, cta.x * 4 + row_index(tg), tg);
    copy(loss.tile(cta.x), m + log2_approx(s) * 0.6931472 - picked);
}

/// Embedding rows: row `ids[i]` of a bf16 table, widened, for 8 tokens a CTA; the id a row
/// statistic broadcast along the row, the column each element's own.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(S, 8), 1))]
pub fn embed_rows(
    #[shape(S)] ids: Tensor<i32>,
    #[shape(V, D)] table: Tensor<bf16>,
    #[shape(S, D)] out: Tensor<f32>,
) {
    let e = regs::<f32>([8, 64], layout = blocked(vec = 4));
    let id = regs::<i32>([8, 1], layout = stat(e, axis = 1));
    copy(id, ids.tile(cta.x));
    e = gather(table, id, col_index(e));
    copy(out.tile(cta.x, 0), e);
}

/// A page table read through a gather of a vector: each row's page, then its word; a page
/// past the pool reads zeros on purpose (`oob = zero`: no check).
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1))]
pub fn paged_words(
    #[shape(M)] pages: Tensor<u32>,
    #[shape(P, 16)] pool: Tensor<u32>,
    #[shape(M, 16)] out: Tensor<u32>,
) {
    let w = regs::<u32>([32, 16], layout = blocked(vec = 4));
    let page = gather(pages, cta.x * 32 + row_index(w));
    copy(
        out.tile(cta.x, 0),
        gather(pool, page, col_index(w), oob = zero),
    );
}

/// Cross-entropy with torch's `ignore_index`: a target outside `[0, N)` gathers 0 by intent
/// (`oob = zero`), so its loss is the row's logsumexp.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 4), 1))]
pub fn cross_entropy_ignore(
    #[shape(M, N)] x: Tensor<f32>,
    #[shape(M)] target: Tensor<i32>,
    #[shape(M)] loss: Tensor<f32>,
) {
    let t = regs::<f32>([4, 512], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    let tg = regs::<i32>([4, 1], layout = stat(t, axis = 1));
    copy(tg, target.tile(cta.x));
    let v = select(col_index(t) < N, t, f32::NEG_INFINITY);
    let m = reduce_max(v, axis = 1);
    let s = reduce_sum(exp2_approx((v - m) * 1.442695), axis = 1);
    let picked = gather(x, cta.x * 4 + row_index(tg), tg, oob = zero);
    copy(loss.tile(cta.x), m + log2_approx(s) * 0.6931472 - picked);
}

/// An embedding row by TMA at a coordinate loaded from global memory: `gather` of scalars is
/// a `u32` variable, a tile coordinate like any other. An id outside the table (−1, `V`) puts
/// the box outside the tensor, which TMA fills with zeros.
#[tile_kernel(target = sm_90a, threads = 32, grid = (S, 1))]
pub fn embed_tma(
    #[shape(S)] ids: Tensor<i32>,
    #[shape(V, 64)] table: Tensor<bf16>,
    #[shape(S, 64)] out: Tensor<bf16>,
) {
    let row_s = smem::<bf16>([1, 64]);
    let bar = mbarrier();
    let id = gather(ids, cta.x);
    #[scope(thread = 0)]
    {
        tma::load(row_s, table.tile(id, 0), bar);
    }
    bar.wait(0);
    let r = regs::<bf16>([1, 64], layout = blocked(vec = 2));
    copy(r, row_s);
    copy(out.tile(cta.x, 0), r);
}

/// The example of `docs/language.md` ("Tiles at element offsets"): segments of a packed
/// tensor given by offsets, each scaled by its index + 1, loaded by TMA at the segment's row
/// and stored up to its end.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(T, 32), 1, NB))]
pub fn segment_scale(
    #[shape(T, 64)] x: Tensor<bf16>,
    #[shape(NB)] cu: Tensor<i32>,
    #[shape(T, 64)] y: Tensor<f32>,
) {
    let x_s = smem::<bf16>([32, 64], swizzle = B128);
    let bar = mbarrier();
    let t = regs::<f32>([32, 64], layout = blocked(vec = 4));
    // Segment `cta.z`; the grid's last row of CTAs (z = NB − 1) has none: an empty one.
    let start = gather(cu, cta.z);
    let mut end = gather(cu, cta.z + 1);
    if cta.z + 1 >= NB {
        end = start;
    }
    let row = start + cta.x * 32;
    // A CTA past its segment's end has no row: it loads nothing (a box starting past the
    // tensor would only read zeros, and the emulator reports a loaded coordinate there).
    if row < end {
        #[scope(thread = 0)]
        {
            tma::load(x_s, x.at(row, 0), bar);
        }
        bar.wait(0);
        copy(t, x_s);
        copy(y.at(row, 0).within(end, 64), t * cast::<f32>(cta.z + 1));
    }
}

fn launch(art: &KernelArtifact, dev: &mut Device, tensors: &[TensorMeta]) {
    try_launch(art, dev, tensors).expect("the kernel runs");
}

fn try_launch(
    art: &KernelArtifact,
    dev: &mut Device,
    tensors: &[TensorMeta],
) -> Result<(), String> {
    simulate::launch(
        art.ptx,
        &(art.signature)(),
        dev,
        (tensors, &[]),
        5,
        &EMULATED,
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// The emulator's report of a data-dependent index outside its tensor, as text.
fn data_index(what: &str, tensor: &str, index: i64, dim: u32, extent: usize) -> String {
    format!(
        "the {what} of `{tensor}` at a data-dependent index: {index} in dimension {dim} \
         (outermost first) is outside the tensor's extent {extent}"
    )
}

fn below(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

// 45 rows: the last CTA's tile runs 3 rows past the tensor; 500 columns of a 512 tile.
const CE_M: usize = 45;
const CE_N: usize = 500;

/// Targets: random, the first and last column, and (with `oob`) out of range: -1, N, far.
fn ce_targets(rng: &mut Rng, oob: bool) -> Vec<i32> {
    let n = CE_N as i32;
    (0..CE_M)
        .map(|r| match (r % 9, oob) {
            (0, _) => 0,
            (1, _) => n - 1,
            (2, true) => -1,
            (3, true) => n,
            (4, true) => i32::MAX,
            _ => below(rng, CE_N) as i32,
        })
        .collect()
}

#[test]
fn cross_entropy_picks_each_rows_target() {
    let mut rng = Rng::new(31);
    let target = ce_targets(&mut rng, false);
    cross_entropy_vs_reference(&cross_entropy::KERNEL.artifacts[0], &mut rng, &target);
}

/// With `oob = zero`, out-of-range targets gather 0 (their loss is the row's logsumexp) and
/// nothing is reported.
#[test]
fn cross_entropy_with_oob_zero_reads_zero_for_ignored_targets() {
    let mut rng = Rng::new(35);
    let target = ce_targets(&mut rng, true);
    let art = &cross_entropy_ignore::KERNEL.artifacts[0];
    assert!(!art.ptx.contains("tirx.check"), "{}", art.ptx);
    cross_entropy_vs_reference(art, &mut rng, &target);
}

/// A target planted out of range (N, then -1) in row 7 of a checked gather: the emulator
/// names the gather of `x`, the column index and `x`'s extent N.
#[test]
fn an_out_of_range_target_is_reported_by_the_emulator() {
    let art = &cross_entropy::KERNEL.artifacts[0];
    assert!(art.ptx.contains("// tirx.check gather x 1"), "{}", art.ptx);
    // The row index is `cta.x * 4 + row_index(tg)`, a tile edge: not checked.
    assert!(!art.ptx.contains("// tirx.check gather x 0"), "{}", art.ptx);
    for bad in [CE_N as i32, -1] {
        let mut rng = Rng::new(36);
        let mut target = ce_targets(&mut rng, false);
        target[7] = bad;
        let mut dev = Device::new();
        let x: Vec<f32> = (0..CE_M * CE_N).map(|_| rng.unit()).collect();
        let xt = put(
            &mut dev,
            &words32(&x, f32::to_bits),
            ElemType::F32,
            &[CE_M, CE_N],
        );
        let tt = put(
            &mut dev,
            &words32(&target, |v| v as u32),
            ElemType::I32,
            &[CE_M],
        );
        let lt = poisoned(&mut dev, ElemType::F32, &[CE_M]);
        let err = try_launch(art, &mut dev, &[xt, tt, lt]).expect_err("an out-of-range target");
        let want = data_index("gather", "x", i64::from(bad), 1, CE_N);
        assert!(err.contains(&want), "{err}");
        // Row 7 is in CTA 1 (4 rows a CTA).
        assert!(err.contains("CTA (1,0,0)"), "{err}");
    }
}

fn cross_entropy_vs_reference(art: &KernelArtifact, rng: &mut Rng, target: &[i32]) {
    const M: usize = CE_M;
    const N: usize = CE_N;
    let mut dev = Device::new();
    let x: Vec<f32> = (0..M * N).map(|_| rng.unit() * 4.0).collect();
    let xt = put(&mut dev, &words32(&x, f32::to_bits), ElemType::F32, &[M, N]);
    let tt = put(
        &mut dev,
        &words32(target, |v| v as u32),
        ElemType::I32,
        &[M],
    );
    let lt = poisoned(&mut dev, ElemType::F32, &[M]);
    launch(art, &mut dev, &[xt, tt, lt.clone()]);
    let got = read32(&dev, &lt, M);
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
        let g = f32::from_bits(got[r]) as f64;
        assert!(
            (g - want).abs() <= 1e-4 * want.abs().max(1.0),
            "row {r}, target {tg}: {g} vs {want}"
        );
    }
}

#[test]
fn embedding_rows_gather_by_id() {
    const S: usize = 21;
    const V: usize = 50;
    const D: usize = 60;
    let mut dev = Device::new();
    let mut rng = Rng::new(32);
    let table: Vec<u16> = (0..V * D)
        .map(|_| (rng.unit().to_bits() >> 16) as u16)
        .collect();
    let ids: Vec<i32> = (0..S)
        .map(|i| match i % 7 {
            0 => V as i32 - 1,
            1 => 0,
            _ => below(&mut rng, V) as i32,
        })
        .collect();
    let tb: Vec<u8> = table.iter().flat_map(|h| h.to_le_bytes()).collect();
    // Planted: token 9's id is V, then -3: reported with `table`'s extent V.
    for bad in [V as i32, -3] {
        let mut planted = ids.clone();
        planted[9] = bad;
        let mut d = Device::new();
        let it = put(
            &mut d,
            &words32(&planted, |v| v as u32),
            ElemType::I32,
            &[S],
        );
        let tt = put(&mut d, &tb, ElemType::Bf16, &[V, D]);
        let ot = put(&mut d, &vec![0; S * D * 4], ElemType::F32, &[S, D]);
        let err = try_launch(&embed_rows::KERNEL.artifacts[0], &mut d, &[it, tt, ot])
            .expect_err("an id past the table");
        let want = data_index("gather", "table", i64::from(bad), 0, V);
        assert!(err.contains(&want), "{err}");
    }
    let it = put(&mut dev, &words32(&ids, |v| v as u32), ElemType::I32, &[S]);
    let tt = put(&mut dev, &tb, ElemType::Bf16, &[V, D]);
    let ot = poisoned(&mut dev, ElemType::F32, &[S, D]);
    launch(
        &embed_rows::KERNEL.artifacts[0],
        &mut dev,
        &[it, tt, ot.clone()],
    );
    let got = read32(&dev, &ot, S * D);
    for s in 0..S {
        for c in 0..D {
            let want = match usize::try_from(ids[s]) {
                Ok(i) if i < V => (table[i * D + c] as u32) << 16,
                _ => 0,
            };
            assert_eq!(
                got[s * D + c],
                want,
                "token {s} (id {}), column {c}",
                ids[s]
            );
        }
    }
}

#[test]
fn page_table_then_word_gather() {
    const M: usize = 40;
    const P: usize = 9;
    let mut dev = Device::new();
    let mut rng = Rng::new(33);
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
    let pt = put(&mut dev, &words32(&pages, |v| v), ElemType::U32, &[M]);
    let pl = put(&mut dev, &words32(&pool, |v| v), ElemType::U32, &[P, 16]);
    let ot = poisoned(&mut dev, ElemType::U32, &[M, 16]);
    launch(
        &paged_words::KERNEL.artifacts[0],
        &mut dev,
        &[pt, pl, ot.clone()],
    );
    let got = read32(&dev, &ot, M * 16);
    for r in 0..M {
        for c in 0..16 {
            let p = pages[r] as usize;
            let want = if p < P { pool[p * 16 + c] } else { 0 };
            assert_eq!(got[r * 16 + c], want, "row {r} (page {p}), column {c}");
        }
    }
}

#[test]
fn embedding_rows_by_tma_at_loaded_coordinates() {
    const S: usize = 13;
    const V: usize = 40;
    let mut dev = Device::new();
    let mut rng = Rng::new(34);
    let table: Vec<u16> = (0..V * 64)
        .map(|_| (rng.unit().to_bits() >> 16) as u16)
        .collect();
    let ids: Vec<i32> = (0..S)
        .map(|i| match i % 5 {
            0 => V as i32 - 1,
            3 => 0,
            _ => below(&mut rng, V) as i32,
        })
        .collect();
    let tb: Vec<u8> = table.iter().flat_map(|h| h.to_le_bytes()).collect();
    // Planted: token 6's id is -1, then V: the TMA box starts outside `table` (rows V).
    let art = &embed_tma::KERNEL.artifacts[0];
    assert!(art.ptx.contains("// tirx.check tma table 1"), "{}", art.ptx);
    for bad in [-1, V as i32] {
        let mut planted = ids.clone();
        planted[6] = bad;
        let mut d = Device::new();
        let it = put(
            &mut d,
            &words32(&planted, |v| v as u32),
            ElemType::I32,
            &[S],
        );
        let tt = put(&mut d, &tb, ElemType::Bf16, &[V, 64]);
        let ot = put(&mut d, &vec![0; S * 64 * 2], ElemType::Bf16, &[S, 64]);
        let err = try_launch(art, &mut d, &[it, tt, ot]).expect_err("an id outside the table");
        let want = data_index("TMA load", "table", i64::from(bad), 0, V);
        assert!(err.contains(&want), "{err}");
        assert!(err.contains("CTA (6,0,0)"), "{err}");
    }
    let it = put(&mut dev, &words32(&ids, |v| v as u32), ElemType::I32, &[S]);
    let tt = put(&mut dev, &tb, ElemType::Bf16, &[V, 64]);
    let ot = poisoned(&mut dev, ElemType::Bf16, &[S, 64]);
    launch(
        &embed_tma::KERNEL.artifacts[0],
        &mut dev,
        &[it, tt, ot.clone()],
    );
    let got: Vec<u16> = dev
        .read(ot.addr, S * 64 * 2)
        .expect("the output")
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    for s in 0..S {
        for c in 0..64 {
            let want = match usize::try_from(ids[s]) {
                Ok(i) if i < V => table[i * 64 + c],
                _ => 0,
            };
            assert_eq!(
                got[s * 64 + c],
                want,
                "token {s} (id {}), column {c}",
                ids[s]
            );
        }
    }
}

/// Each gather is a guarded `ld.global` after an unsigned bounds test; the kernels assemble
/// for sm_90a without spills (ptxas where installed; `TIRX_REQUIRE_PTXAS=1` makes it required).
#[test]
fn the_gather_kernels_lower_to_guarded_loads_and_assemble() {
    use tirx_kernels::check::check_artifact;
    use tirx_ptx::tools::{find_ptxas, tool_for_test};
    let kernels = [
        &cross_entropy::KERNEL,
        &embed_rows::KERNEL,
        &paged_words::KERNEL,
        &embed_tma::KERNEL,
    ];
    let ce = cross_entropy::KERNEL.artifacts[0].ptx;
    assert!(ce.contains("setp.lo.u32"), "{ce}");
    // One gathered logit per register of the row statistic: each thread holds a run of all
    // 4 rows of the [4, 512] tile, so it holds (and gathers) all 4 rows' targets.
    assert_eq!(guarded_gathers(ce), 4, "{ce}");
    let e = embed_rows::KERNEL.artifacts[0].ptx;
    assert!(e.contains("ld.global.b16"), "{e}");
    let p = paged_words::KERNEL.artifacts[0].ptx;
    assert!(p.contains("ld.global.b32"), "{p}");
    if tool_for_test(find_ptxas()).is_none() {
        return;
    }
    for k in kernels {
        for a in k.artifacts {
            let c = check_artifact(k.name, a).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert!(c.problems.is_empty(), "{}: {:?}", k.name, c.problems);
        }
    }
}

/// Guarded gathers: a zero fill, then a predicated scalar load into the same register.
fn guarded_gathers(ptx: &str) -> usize {
    let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| {
            w[0].starts_with("mov.f32")
                && w[0].ends_with("0f00000000;")
                && w[1].starts_with('@')
                && w[1].contains(" ld.global.f32 ")
                && !w[1].contains('+')
        })
        .count()
}

/// The IR text of the gather kernels parses back to the same text and recompiles to the same
/// PTX, after every pass too.
#[test]
fn gather_ir_prints_parses_and_recompiles() {
    for a in [
        &cross_entropy::KERNEL.artifacts[0],
        &embed_rows::KERNEL.artifacts[0],
        &paged_words::KERNEL.artifacts[0],
        &embed_tma::KERNEL.artifacts[0],
        &cross_entropy_ignore::KERNEL.artifacts[0],
    ] {
        assert!(
            a.ir.contains("(gather") || a.ir.contains("load_scalar global "),
            "{}",
            a.ir
        );
        assert_ir_round_trips(a, true);
    }
}

/// `segment_scale` in the emulator: segments of 1, 0, 34 and 37 rows (72 in all: the
/// segments start at rows 0, 1, 1 and 35, none a multiple of the 32-row tile). Every row of
/// `y` is its segment's (the CTAs of the segment before it leave it alone: `.within`), and
/// the IR prints the form as `global_at … within […]` and recompiles to the same PTX.
#[test]
fn segments_at_element_offsets_are_loaded_and_stored_within_their_ends() {
    const T: usize = 72;
    let cu: [i32; 5] = [0, 1, 1, 35, 72];
    let mut dev = Device::new();
    let mut rng = Rng::new(77);
    let x: Vec<u16> = (0..T * 64)
        .map(|_| (rng.unit().to_bits() >> 16) as u16)
        .collect();
    let xb: Vec<u8> = x.iter().flat_map(|h| h.to_le_bytes()).collect();
    let xt = put(&mut dev, &xb, ElemType::Bf16, &[T, 64]);
    let ct = put(
        &mut dev,
        &words32(&cu, |v| v as u32),
        ElemType::I32,
        &[cu.len()],
    );
    let yt = put(&mut dev, &vec![0xff; T * 64 * 4], ElemType::F32, &[T, 64]);
    let art = &segment_scale::KERNEL.artifacts[0];
    launch(art, &mut dev, &[xt, ct, yt.clone()]);
    let y = read32(&dev, &yt, T * 64);
    for r in 0..T {
        let seg = cu
            .windows(2)
            .position(|w| (w[0]..w[1]).contains(&(r as i32)));
        let factor = (seg.expect("every row is in a segment") + 1) as f32;
        for c in 0..64 {
            let xv = f32::from_bits(u32::from(x[r * 64 + c]) << 16);
            assert_eq!(
                f32::from_bits(y[r * 64 + c]),
                xv * factor,
                "row {r} column {c}"
            );
        }
    }
    assert!(art.ir.contains("global_at x["), "{}", art.ir);
    assert!(art.ir.contains("within ["), "{}", art.ir);
    let m = tirx_ir::parse::parse_module(art.ir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.to_string(), art.ir);
    let kernel = m.kernels.into_iter().next().expect("one kernel");
    let (lowered, _) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
    assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), art.ptx);
}
