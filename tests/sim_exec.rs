//! The emulator (`tirx-sim`, issue #10) running shipped sm_90a artifacts that need no MMA:
//! the TMA copy, the row kernels (softmax, RMSNorm, LayerNorm, each in its register-tile and
//! its long-row form) and `silu_mul`, on small odd shapes with random inputs and poisoned
//! outputs, over several scheduler seeds.
//!
//! Parameters are built the way the runtime builds them (`tirx_kernels::simulate::launch`).
//!
//! Bounds: the copy is bit-exact. Row kernels and `silu_mul` pass the project's bf16 check
//! (`tirx_kernels::rows::reference::check`: |got − want| ≤ 2⁻⁷·(|want| + 2⁻³·rms(row))
//! against the f64 reference) and, outside the cancellation floor (|want| ≥ 2⁻³·rms), are
//! within 2 bf16 ulps of the f64 reference rounded to bf16: the emulator's f32 arithmetic is
//! IEEE and its `.approx` functions exactly rounded, so only the f32 accumulation order and
//! the final rounding separate it from the f64 value.

use half::bf16;
use tirx::KernelArtifact;
use tirx::problem::RowOp;
use tirx::runtime::{DeviceLimits, Target, TensorMeta};
use tirx_kernels::catalogue;
use tirx_kernels::reference::Rng;
use tirx_kernels::row_kernels::host::capacity;
use tirx_kernels::rows::{RowProblem, reference};
use tirx_kernels::simulate::{self, LaunchError, download, upload};
use tirx_sim::ptx;
use tirx_sim::{Device, SimError, Stats};

/// The device the tests plan for: an H200's limits with 8 SMs, so a persistent kernel
/// (grid = SMs) launches 8 CTAs that loop over several tiles each, rather than 132 mostly
/// idle ones.
pub(crate) const EMULATED: DeviceLimits = DeviceLimits {
    sm_count: 8,
    ..DeviceLimits::HOPPER
};

/// Runs `art` on `tensors` (and `scalars`) in the emulator, parameters planned as the
/// runtime plans them.
pub(crate) fn sim_launch(
    art: &KernelArtifact,
    dev: &mut Device,
    tensors: &[TensorMeta],
    scalars: &[f32],
    seed: u64,
) -> Result<Stats, SimError> {
    sim_launch_ptx(art.ptx, &(art.signature)(), dev, tensors, scalars, seed)
}

/// [`sim_launch`] of a PTX text with its signature: the emulator's verdict (a planning or
/// parsing failure is a broken test, not a verdict).
pub(crate) fn sim_launch_ptx(
    ptx_text: &str,
    sig: &tirx::runtime::Signature,
    dev: &mut Device,
    tensors: &[TensorMeta],
    scalars: &[f32],
    seed: u64,
) -> Result<Stats, SimError> {
    sim_launch_policy(
        ptx_text,
        sig,
        dev,
        (tensors, scalars),
        seed,
        &tirx_sim::Policy::default(),
    )
}

/// [`sim_launch_ptx`] under a scheduling policy other than the default.
pub(crate) fn sim_launch_policy(
    ptx_text: &str,
    sig: &tirx::runtime::Signature,
    dev: &mut Device,
    (tensors, scalars): (&[TensorMeta], &[f32]),
    seed: u64,
    policy: &tirx_sim::Policy,
) -> Result<Stats, SimError> {
    sim_launch_on(
        ptx_text,
        sig,
        dev,
        (tensors, scalars),
        seed,
        policy,
        &EMULATED,
    )
}

/// [`sim_launch_policy`] on a device of other limits (fewer SMs: a persistent kernel's grid).
pub(crate) fn sim_launch_on(
    ptx_text: &str,
    sig: &tirx::runtime::Signature,
    dev: &mut Device,
    planned: (&[TensorMeta], &[f32]),
    seed: u64,
    policy: &tirx_sim::Policy,
    limits: &DeviceLimits,
) -> Result<Stats, SimError> {
    match simulate::launch_with(ptx_text, sig, dev, planned, seed, limits, policy) {
        Ok(s) => Ok(s),
        Err(LaunchError::Sim(e)) => Err(e),
        Err(e) => panic!("{}: {e}", sig.entry),
    }
}

/// Instructions and wall time over the file's runs, for the report.
pub(crate) fn report(what: &str, runs: &[Stats]) {
    let instr: u64 = runs.iter().map(|s| s.thread_instructions).sum();
    let wall: f64 = runs.iter().map(|s| s.wall.as_secs_f64()).sum();
    println!(
        "{what}: {} runs, {instr} thread-instructions in {wall:.2} s: {:.2} M instructions/s",
        runs.len(),
        instr as f64 / wall.max(1e-9) / 1e6
    );
}

/// bf16 ulps between `got` and `want` rounded to bf16 (both finite).
fn ulps(got: bf16, want: f64) -> u32 {
    let key = |b: u16| -> i32 {
        if b & 0x8000 != 0 {
            -i32::from(b & 0x7fff)
        } else {
            i32::from(b)
        }
    };
    (key(got.to_bits()) - key(bf16::from_f64(want).to_bits())).unsigned_abs()
}

/// Largest ulp distance over elements outside the cancellation floor of each row.
fn max_ulps(got: &[bf16], want: &[f64], cols: usize) -> u32 {
    let mut worst = 0;
    for (g, w) in got.chunks(cols).zip(want.chunks(cols)) {
        let rms = (w.iter().map(|v| v * v).sum::<f64>() / w.len() as f64).sqrt();
        for (&g, &w) in g.iter().zip(w) {
            if w.abs() >= reference::FLOOR * rms {
                worst = worst.max(ulps(g, w));
            }
        }
    }
    worst
}

#[test]
fn tma_copy_is_bit_exact_on_odd_shapes() {
    let k = catalogue::find("tma_copy").expect("shipped");
    let mut runs = Vec::new();
    for art in k.artifacts.iter().filter(|a| a.target == Target::Sm90a) {
        // Tails in both dimensions; N a multiple of 8 (TMA rows are multiples of 16 bytes).
        for (m, n, seed) in [(70, 136, 1), (129, 72, 2), (5, 8, 3)] {
            let mut rng = Rng::new(seed);
            let data = rng.bf16s(m * n);
            let mut dev = Device::new();
            let src = upload(&mut dev, &data, &[m, n]);
            let dst = upload(&mut dev, &[], &[m, n]);
            let stats = sim_launch(art, &mut dev, &[src, dst.clone()], &[], seed)
                .unwrap_or_else(|e| panic!("{} {m}x{n}: {e}", art.config));
            let got = download(&dev, &dst);
            assert!(
                got.iter()
                    .zip(&data)
                    .all(|(g, d)| g.to_bits() == d.to_bits()),
                "{} {m}x{n}: not bit-exact",
                art.config
            );
            runs.push(stats);
        }
    }
    report("tma_copy", &runs);
}

/// The kernel's sm_90a artifact with the smallest row capacity.
fn smallest(name: &str) -> &'static KernelArtifact {
    let k = catalogue::find(name).unwrap_or_else(|| panic!("{name} shipped"));
    k.artifacts
        .iter()
        .filter(|a| a.target == Target::Sm90a)
        .min_by_key(|a| capacity(a).unwrap_or(usize::MAX))
        .expect("an sm_90a artifact")
}

fn row_case(art: &KernelArtifact, op: RowOp, rows: usize, cols: usize, seed: u64) -> Stats {
    row_case_at(art, op, (rows, cols), seed, 0.0)
}

/// [`row_case`] with rows centred at `offset` (a mean far from 0 beside the spread: what a
/// variance computed as `E[x²] − E[x]²` would lose).
fn row_case_at(
    art: &KernelArtifact,
    op: RowOp,
    shape: (usize, usize),
    seed: u64,
    offset: f32,
) -> Stats {
    row_case_on(
        art,
        op,
        shape,
        (seed, offset),
        (&EMULATED, &tirx_sim::Policy::default()),
    )
}

/// [`row_case_at`] on a device of other limits (fewer SMs: a persistent kernel's grid of
/// fewer clusters than rows) under a scheduling policy.
pub(crate) fn row_case_on(
    art: &KernelArtifact,
    op: RowOp,
    (rows, cols): (usize, usize),
    (seed, offset): (u64, f32),
    (limits, policy): (&DeviceLimits, &tirx_sim::Policy),
) -> Stats {
    let mut rng = Rng::new(seed);
    let scale = 1.0 + 7.0 * rng.unit();
    let x: Vec<bf16> = (0..rows * cols)
        .map(|_| bf16::from_f32(offset + (rng.unit() * 2.0 - 1.0) * scale))
        .collect();
    let w: Vec<bf16> = (0..cols)
        .map(|_| bf16::from_f32(0.5 + rng.unit()))
        .collect();
    let b: Vec<bf16> = (0..cols)
        .map(|_| bf16::from_f32(rng.unit() - 0.5))
        .collect();
    let p = RowProblem::new(op, rows, cols);
    let mut dev = Device::new();
    let sig = (art.signature)();
    let xm = upload(&mut dev, &x, &[rows, cols]);
    let wm = upload(&mut dev, &w, &[cols]);
    let bm = upload(&mut dev, &b, &[cols]);
    let ym = upload(&mut dev, &[], &[rows, cols]);
    let tensors: Vec<TensorMeta> = sig
        .tensors
        .iter()
        .map(|t| match t.name.as_str() {
            "x" => xm.clone(),
            "xf" => xm.merge_outer().expect("a contiguous x"),
            "w" => wm.clone(),
            "b" => bm.clone(),
            "y" => ym.clone(),
            other => panic!("unexpected tensor {other}"),
        })
        .collect();
    let scalars: Vec<f32> = sig.scalars.iter().map(|_| p.eps).collect();
    let label = format!("{} {} {rows}x{cols} seed {seed}", art.kernel, art.config);
    let stats = sim_launch_on(
        art.ptx,
        &sig,
        &mut dev,
        (&tensors, &scalars),
        seed,
        policy,
        limits,
    )
    .unwrap_or_else(|e| panic!("{label}: {e}"));
    let got = download(&dev, &ym);
    let wv = op.takes_weight().then_some(&w[..]);
    let bv = op.takes_bias().then_some(&b[..]);
    let want = reference::reference(&p, &x, wv, bv);
    let err = reference::check(op, &got, &want, cols).unwrap_or_else(|e| panic!("{label}: {e}"));
    let u = max_ulps(&got, &want, cols);
    assert!(
        u <= 2,
        "{label}: {u} ulps from the f64 reference (error {err:.2e})"
    );
    stats
}

/// Every row kernel on 3 rows of odd lengths (non-multiples of 8 and of the vector width
/// included), two seeds each.
#[test]
fn row_kernels_match_the_f64_reference() {
    let mut runs = Vec::new();
    // The staged kernels take 16-byte aligned rows (their tensor maps); the cluster kernels
    // split each row over 4 CTAs exchanging statistics through distributed shared memory.
    let cases: [(&str, RowOp, &[usize]); 13] = [
        ("softmax", RowOp::Softmax, &[1, 7, 300]),
        ("rmsnorm", RowOp::RmsNorm, &[8, 129, 300]),
        ("layernorm", RowOp::LayerNorm, &[3, 64, 300]),
        ("softmax_long", RowOp::Softmax, &[13, 300]),
        ("rmsnorm_long", RowOp::RmsNorm, &[5, 300]),
        ("layernorm_long", RowOp::LayerNorm, &[9, 300]),
        ("softmax_staged", RowOp::Softmax, &[8, 296]),
        ("rmsnorm_staged", RowOp::RmsNorm, &[8, 296]),
        ("softmax_cluster", RowOp::Softmax, &[7, 300]),
        ("rmsnorm_cluster", RowOp::RmsNorm, &[9, 300]),
        // Two CTAs of 16384 columns (`h2`): the second wholly past the row, then ragged.
        ("softmax_staged_cluster", RowOp::Softmax, &[296, 16680]),
        ("rmsnorm_staged_cluster", RowOp::RmsNorm, &[296, 16680]),
        ("layernorm_staged_cluster", RowOp::LayerNorm, &[296, 16680]),
    ];
    for (name, op, cols) in cases {
        let art = smallest(name);
        for &n in cols {
            for seed in [11, 12] {
                runs.push(row_case(art, op, 3, n, seed));
            }
        }
    }
    report("row kernels", &runs);
}

/// The host's choice for each op at widths that are not a multiple of the tile (issue #32):
/// 1000 and 5000 (multiples of 8 in a longer tile: the masked-vector path), 4999 and 7171 (odd:
/// rows not 16-byte aligned, held from their first aligned column by the `ODD` kernels),
/// 3000 … 14000 (the capacity ladder), 24576 and
/// 65536 (long rows: staged, staged over a cluster). Random rows,
/// outputs poisoned, against the f64 reference within 2 bf16 ulps.
#[test]
fn host_choices_at_odd_widths_match_the_f64_reference() {
    use tirx_kernels::dispatch::Device as Gpu;
    use tirx_kernels::row_kernels::{host, request::RowRequest};
    let mut runs = Vec::new();
    for op in RowOp::ALL {
        for (i, n) in [
            1000, 3000, 4999, 5000, 6000, 7171, 10000, 14000, 24576, 65536,
        ]
        .into_iter()
        .enumerate()
        {
            let c = host::choose(&RowRequest::contiguous(op, 3, n), &Gpu::h200())
                .unwrap_or_else(|e| panic!("{op} 3x{n}: {e}"));
            runs.push(row_case(c.artifact, op, 3, n, 60 + i as u64));
        }
    }
    report("row kernels at odd widths", &runs);
}

/// The register kernels for rows of an odd length (`softmax_odd`, `rmsnorm_odd`,
/// `layernorm_odd`, issue #32) as the host chooses them up to 16384 columns: 1001 … 9999 over 9
/// rows (heads of 0 to 7 columns before the first aligned one, tails of 1 to 7 after the last
/// whole vector) and 7 (a row shorter than a vector: all head and tail); every config on
/// aligned rows (1024, 4096: empty head and tail); LayerNorm also on rows centred at 300.
/// Random rows, outputs poisoned, against the f64 reference within 2 bf16 ulps.
#[test]
fn odd_row_register_kernels_match_the_f64_reference() {
    use tirx_kernels::dispatch::Device as Gpu;
    use tirx_kernels::row_kernels::{host, request::RowRequest};
    let mut runs = Vec::new();
    for op in RowOp::ALL {
        for (i, n) in [1001, 1003, 2047, 3001, 4095, 7, 4999, 9999]
            .into_iter()
            .enumerate()
        {
            let c = host::choose(&RowRequest::contiguous(op, 9, n), &Gpu::h200())
                .unwrap_or_else(|e| panic!("{op} 9x{n}: {e}"));
            assert_eq!(
                c.artifact.int("ODD"),
                Some(1),
                "{op} 9x{n}: {}",
                c.artifact.kernel
            );
            runs.push(row_case(c.artifact, op, 9, n, 90 + i as u64));
        }
    }
    for (name, op) in [
        ("softmax_odd", RowOp::Softmax),
        ("rmsnorm_odd_rows", RowOp::RmsNorm),
        ("rmsnorm_odd", RowOp::RmsNorm),
        ("layernorm_odd", RowOp::LayerNorm),
    ] {
        let k = catalogue::find(name).expect("shipped");
        for art in k.artifacts.iter().filter(|a| a.target == Target::Sm90a) {
            for n in [1024, 4096] {
                if capacity(art).is_some_and(|c| c >= n) {
                    runs.push(row_case(art, op, 3, n, 97));
                }
            }
        }
    }
    runs.push(row_case_at(
        smallest("layernorm_odd"),
        RowOp::LayerNorm,
        (9, 1001),
        98,
        300.0,
    ));
    report("odd row register kernels", &runs);
}

/// The odd rows past 16k columns staged by TMA through `x`'s flat view (`staged_odd.rs`,
/// issue #32), as the host chooses them: 16385 … 32767 columns (past them the walkers take odd
/// rows) over up to 9 rows (every head length 0 to 7, the last row's boxes running past the
/// tensor's end), each config at the longest odd width it holds (a ragged last granule and
/// chunk), at one inside its first chunk (1001: most granules never issued) and at rows with
/// no aligned column (1 and 5 columns); LayerNorm also on rows centred at 300. Random rows,
/// outputs poisoned, against the f64 reference within 2 bf16 ulps.
#[test]
fn odd_rows_staged_through_the_flat_view_match_the_f64_reference() {
    use tirx_kernels::dispatch::Device as Gpu;
    use tirx_kernels::row_kernels::{host, request::RowRequest};
    let mut runs = Vec::new();
    for op in RowOp::ALL {
        for (i, (rows, n)) in [(9, 16385), (9, 20001), (9, 24575), (5, 30001), (3, 32767)]
            .into_iter()
            .enumerate()
        {
            let c = host::choose(&RowRequest::contiguous(op, rows, n), &Gpu::h200())
                .unwrap_or_else(|e| panic!("{op} {rows}x{n}: {e}"));
            assert!(
                c.artifact.sig().tensors.iter().any(|t| t.name == "xf"),
                "{op} {rows}x{n}: {}/{}",
                c.artifact.kernel,
                c.artifact.config
            );
            runs.push(row_case(c.artifact, op, rows, n, 130 + i as u64));
        }
    }
    for (name, op) in [
        ("softmax_staged_odd", RowOp::Softmax),
        ("rmsnorm_staged_odd", RowOp::RmsNorm),
        ("layernorm_staged_odd", RowOp::LayerNorm),
    ] {
        let k = catalogue::find(name).expect("shipped");
        for art in k.artifacts.iter().filter(|a| a.target == Target::Sm90a) {
            let cap = capacity(art).expect("a capacity");
            runs.push(row_case(art, op, 3, cap - 1, 136));
            runs.push(row_case(art, op, 2, 1001, 137));
            // Rows with no 16-byte aligned column (N < 8): the first granule, loaded whatever
            // the row, must still start aligned (the GPU faulted at 3x1 on a load at element 2).
            runs.push(row_case(art, op, 3, 1, 139));
            runs.push(row_case(art, op, 37, 5, 140));
        }
    }
    runs.push(row_case_at(
        smallest("layernorm_staged_odd"),
        RowOp::LayerNorm,
        (9, 20001),
        138,
        300.0,
    ));
    report("odd rows staged through the flat view", &runs);
}

/// The odd-width norms' CTAs walk rows: a grid of `SMS·W` CTAs (rounded down to whole
/// phases of `V = 8`), each staging `w` (and `b`) once and walking the rows of its column
/// phase `V·G` apart (`norm_odd.rs`). Two to three rows a CTA, the phases' counts unequal (a
/// ragged 13 rows past two full rounds), every head length 0 to 7; LayerNorm also on rows
/// centred at 300.
#[test]
fn odd_norms_walk_several_rows_per_cta() {
    let mut runs = Vec::new();
    for (name, op, configs) in [
        (
            "rmsnorm_odd",
            RowOp::RmsNorm,
            [("o5k", 4097), ("o7k", 7171), ("o16k", 16383)],
        ),
        (
            "layernorm_odd",
            RowOp::LayerNorm,
            [("o1k", 1001), ("o3k", 3001), ("o16k", 16383)],
        ),
    ] {
        let k = catalogue::find(name).expect("shipped");
        for (config, n) in configs {
            let art = k
                .artifacts
                .iter()
                .find(|a| a.config == config)
                .expect(config);
            let w = art.int("W").expect("W") as usize;
            let grid = EMULATED.sm_count as usize * w / 8 * 8;
            assert!(grid >= 8, "{name} {config}: a grid of {grid} CTAs");
            let offset = if op == RowOp::LayerNorm { 300.0 } else { 0.0 };
            runs.push(row_case_at(art, op, (2 * grid + 13, n), 99, offset));
        }
    }
    report("odd norms over several rows per CTA", &runs);
}

/// RMSNorm's narrow odd rows, one CTA a row (`rmsnorm_odd_rows`, `norm_odd.rs`): every
/// config at widths that give it every head length (1001, 3001 and the last odd widths of its
/// capacity, 1023 … 4093: tails of 1 to 7 columns), 17 rows (heads of 0 to 7 columns, twice);
/// random rows, outputs poisoned, against the f64 reference. The host takes it for every odd
/// width up to 4096 columns and the staged `rmsnorm_odd` past that, with no gap.
#[test]
fn rmsnorm_odd_rows_match_the_f64_reference_and_take_the_narrow_widths() {
    use tirx_kernels::dispatch::Device as Gpu;
    use tirx_kernels::row_kernels::{host, request::RowRequest};
    let k = catalogue::find("rmsnorm_odd_rows").expect("shipped");
    let mut runs = Vec::new();
    for (config, widths) in [
        ("o1k", [1001, 1023, 7]),
        ("o2k", [2047, 1025, 2041]),
        ("o3k", [3001, 2049, 3071]),
        ("o4k", [4093, 3075, 4095]),
    ] {
        let art = k
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect(config);
        for (i, n) in widths.into_iter().enumerate() {
            runs.push(row_case(art, RowOp::RmsNorm, 17, n, 120 + i as u64));
        }
    }
    report("rmsnorm_odd_rows", &runs);
    for n in [7, 1001, 2047, 3001, 4093, 4095, 4097, 4999, 16383] {
        let c = host::choose(
            &RowRequest::contiguous(RowOp::RmsNorm, 8192, n),
            &Gpu::h200(),
        )
        .unwrap_or_else(|e| panic!("8192x{n}: {e}"));
        let want = if n <= 4096 {
            "rmsnorm_odd_rows"
        } else {
            "rmsnorm_odd"
        };
        assert_eq!(c.kernel.name, want, "8192x{n}: {}", c.artifact.config);
    }
}

/// The chunked long-row kernels over several chunks with a ragged last one, aligned (24584:
/// masked vectors) and not (16389: elements), and with whole chunks only (16384); LayerNorm's
/// on rows of mean 300; the staged-cluster kernels over eight CTAs.
#[test]
fn long_row_kernels_match_the_f64_reference_over_ragged_chunks() {
    let mut runs = Vec::new();
    for (name, op) in [
        ("softmax_long", RowOp::Softmax),
        ("rmsnorm_long", RowOp::RmsNorm),
        ("layernorm_long", RowOp::LayerNorm),
    ] {
        let art = smallest(name);
        for (i, n) in [16384, 16389, 24584].into_iter().enumerate() {
            runs.push(row_case(art, op, 2, n, 80 + i as u64));
        }
    }
    // LayerNorm's sums about the first chunk's mean, on rows centred at 300 (spread 1 to 8).
    runs.push(row_case_at(
        smallest("layernorm_long"),
        RowOp::LayerNorm,
        (2, 24584),
        84,
        300.0,
    ));
    // Eight CTAs of 32768 columns, the last three past the row, the fifth ragged.
    for (name, op) in [
        ("softmax_staged_cluster", RowOp::Softmax),
        ("rmsnorm_staged_cluster", RowOp::RmsNorm),
        ("layernorm_staged_cluster", RowOp::LayerNorm),
    ] {
        let k = catalogue::find(name).expect("shipped");
        let art = k.artifacts.iter().find(|a| a.config == "x8").expect("x8");
        runs.push(row_case(art, op, 2, 140008, 85));
        // Eight of 16384: the sixth ragged, the last two past the row.
        let art = k.artifacts.iter().find(|a| a.config == "h8").expect("h8");
        runs.push(row_case(art, op, 2, 90008, 86));
    }
    report("long row kernels", &runs);
}

#[test]
fn silu_mul_matches_the_f64_reference() {
    let art = smallest("silu_mul");
    let mut runs = Vec::new();
    for (m, n, seed) in [(3, 300, 21), (9, 13, 22)] {
        let mut rng = Rng::new(seed);
        let xs: Vec<bf16> = (0..m * n)
            .map(|_| bf16::from_f32(8.0 * rng.unit() - 4.0))
            .collect();
        let gs: Vec<bf16> = (0..m * n)
            .map(|_| bf16::from_f32(2.0 * rng.unit() - 1.0))
            .collect();
        let mut dev = Device::new();
        let x = upload(&mut dev, &xs, &[m, n]);
        let g = upload(&mut dev, &gs, &[m, n]);
        let y = upload(&mut dev, &[], &[m, n]);
        runs.push(
            sim_launch(art, &mut dev, &[x, g, y.clone()], &[], seed)
                .unwrap_or_else(|e| panic!("silu_mul {m}x{n}: {e}")),
        );
        let got = download(&dev, &y);
        for (i, ((xv, gv), yv)) in xs.iter().zip(&gs).zip(&got).enumerate() {
            let (xf, gf) = (xv.to_f64(), gv.to_f64());
            let want = xf / (1.0 + (-xf).exp()) * gf;
            let err = (yv.to_f64() - want).abs() / (want.abs() + 1e-2);
            assert!(
                err.is_finite() && err <= reference::RTOL,
                "silu_mul {m}x{n} element {i}: {} vs {want:.6e}",
                yv.to_f64()
            );
            if want.abs() >= 1e-2 {
                assert!(
                    ulps(*yv, want) <= 2,
                    "element {i}: {} vs {want:.6e}",
                    yv.to_f64()
                );
            }
        }
    }
    report("silu_mul", &runs);
}

/// Runs the shipped `tma_copy` default sm_90a PTX with `edit` applied (one planted bug) on a
/// 64×64 tensor; returns the emulator's verdict.
fn planted_copy(edit: impl Fn(&str) -> String) -> Result<Stats, SimError> {
    let k = catalogue::find("tma_copy").expect("shipped");
    let art = k
        .artifacts
        .iter()
        .find(|a| a.target == Target::Sm90a && a.config == "default")
        .expect("default sm_90a");
    let text = edit(art.ptx);
    assert_ne!(text, art.ptx, "the edit changed nothing");
    let mut dev = Device::new();
    let data = Rng::new(9).bf16s(64 * 64);
    let src = upload(&mut dev, &data, &[64, 64]);
    let dst = upload(&mut dev, &[], &[64, 64]);
    sim_launch_ptx(&text, &(art.signature)(), &mut dev, &[src, dst], &[], 4)
}

/// Planted bugs in the shipped copy kernel, each diagnosed as what it is (issue #10,
/// validation 3): a byte count too large (the phase never completes: a deadlock naming the
/// bytes still expected), too small (tx-count underflow), an arrival count too large
/// (deadlock, one arrival missing), the tensor map's param-space address instead of its
/// generic one (the H200 reads the wrong address), and a missing bulk wait (the CTA exits
/// with the store in flight).
#[test]
fn planted_bugs_in_the_copy_kernel_are_diagnosed() {
    planted_copy(|p| p.replace("// tirx", "// planted: none\n// tirx"))
        .expect("the unedited kernel runs");
    let e = planted_copy(|p| p.replace("[%r12], 8192;", "[%r12], 16384;")).unwrap_err();
    let SimError::Deadlock(blocked) = &e else {
        panic!("{e}")
    };
    assert!(
        blocked.iter().all(|b| matches!(
            b.on,
            tirx_sim::exec::WaitOn::Mbarrier {
                tx: 8192,
                pending: 0,
                phase: 0,
                ..
            }
        )),
        "{e}"
    );
    let e = planted_copy(|p| p.replace("[%r12], 8192;", "[%r12], 4096;")).unwrap_err();
    assert!(
        matches!(e, SimError::TxUnderflow { excess: 4096, .. }),
        "{e}"
    );
    let e = planted_copy(|p| p.replace("[%r11], 1;", "[%r11], 2;")).unwrap_err();
    assert!(e.to_string().contains("1 of 2 arrivals seen"), "{e}");
    let e = planted_copy(|p| p.replace("\tcvta.param.u64 %rd2, %rd2;\n", "")).unwrap_err();
    assert!(e.to_string().contains("cvta.param"), "{e}");
    let e = planted_copy(|p| p.replace("\tcp.async.bulk.wait_group 0;\n", "")).unwrap_err();
    assert!(matches!(e, SimError::InFlightAtExit { ops: 1, .. }), "{e}");
}

/// Every shipped artifact, both targets, decodes completely: no instruction tirx emits is
/// outside what the emulator executes (`Program::unsupported` is empty for each).
#[test]
fn every_shipped_artifact_decodes() {
    let mut n = 0;
    for k in catalogue::all() {
        for art in k.artifacts {
            let m = ptx::parse(art.ptx).expect("parses");
            let errs = tirx_sim::Program::unsupported(&m, &(art.signature)().entry)
                .unwrap_or_else(|e| panic!("{} {}: {e}", art.kernel, art.config));
            assert!(
                errs.is_empty(),
                "{} {} {}: {}",
                art.kernel,
                art.config,
                art.target.name(),
                errs[0]
            );
            n += 1;
        }
    }
    assert!(n >= 128, "{n} artifacts");
}

/// The line of `needle` in the workspace file `path` (1-based).
fn source_line_of(path: &str, needle: &str) -> u32 {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let text = std::fs::read_to_string(format!("{root}/{path}")).expect("the kernel's source");
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i as u32 + 1)
        .expect("the statement is in the source")
}

/// Emulator diagnostics name the user's line, through the line map the macro emits with
/// each artifact: the planted deadlock points at the `bar.wait(0)` the threads hang in, the
/// store left in flight at the `tma::store` that issued it.
#[test]
fn emulator_diagnostics_name_the_source_line() {
    let art = catalogue::find("tma_copy")
        .expect("shipped")
        .artifacts
        .iter()
        .find(|a| a.target == Target::Sm90a && a.config == "default")
        .expect("default sm_90a");
    assert_eq!(art.source_file, "kernels/src/copy/tma_copy.rs");
    let name = |e: &SimError| tirx_kernels::simulate::with_source_lines(art, &e.to_string());
    let wait = source_line_of(art.source_file, "bar.wait(0);");
    let e = planted_copy(|p| p.replace("[%r12], 8192;", "[%r12], 16384;")).unwrap_err();
    let msg = name(&e);
    println!("{msg}");
    assert!(
        msg.contains(&format!("(kernels/src/copy/tma_copy.rs:{wait})")),
        "{msg}"
    );
    let store = source_line_of(art.source_file, "tma::store(dst.tile(m, n), tile);");
    let e = planted_copy(|p| p.replace("\tcp.async.bulk.wait_group 0;\n", "")).unwrap_err();
    let msg = name(&e);
    assert!(
        msg.contains(&format!("(kernels/src/copy/tma_copy.rs:{store})")),
        "{msg}"
    );
    // Every line of the map is in the file and the PTX lines increase.
    let lines = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../kernels/src/copy/tma_copy.rs"
    ))
    .unwrap()
    .lines()
    .count() as u32;
    assert!(art.line_map.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(art.line_map.iter().all(|&(_, l)| l >= 1 && l <= lines));
}

/// Every shipped artifact has a line map into its own file (lines within the file, PTX lines
/// increasing); a statement inlined from a tile library in another file is mapped to its call:
/// `gemm_sm100_ws`'s `tcgen05.alloc` (written in `gemm/pieces.rs`) maps to the level's
/// `tmem_acquire(acc);` line.
#[test]
fn every_line_map_points_into_the_kernels_own_file() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for k in catalogue::all() {
        for art in k.artifacts {
            let text = std::fs::read_to_string(format!("{root}/{}", art.source_file))
                .unwrap_or_else(|e| panic!("{} {}: {e}", art.kernel, art.source_file));
            let lines = text.lines().count() as u32;
            assert!(
                !art.line_map.is_empty(),
                "{} {}: no line map",
                art.kernel,
                art.config
            );
            assert!(art.line_map.windows(2).all(|w| w[0].0 < w[1].0));
            assert!(
                art.line_map.iter().all(|&(_, l)| (1..=lines).contains(&l)),
                "{} {}: a line outside {}",
                art.kernel,
                art.config,
                art.source_file
            );
        }
    }
    let art = &catalogue::find("gemm_sm100_ws").expect("shipped").artifacts[0];
    let alloc = art
        .ptx
        .lines()
        .position(|l| l.trim_start().starts_with("tcgen05.alloc"))
        .expect("the allocation") as u32
        + 1;
    let call = source_line_of(art.source_file, "tmem_acquire(acc);");
    assert_eq!(art.source_line(alloc), Some(call));
}
