//! The Hopper attention kernel in the emulator (`tirx-sim`): configs of every head dim and
//! both masks on odd lengths, several schedules each, O and the LSE against the f64 reference,
//! with the emulator's strict checks on (the RS operand's `wgmma.fence` rule, `setmaxnreg`
//! budgets at the registers ptxas gives the CTA), and the persistent kernel with fewer SMs than
//! tiles. No diagnostic may fire.

use tirx::Kernel;
use tirx_kernels::attention::blackwell::kernels::attention_sm100;
use tirx_kernels::attention::family::head_dims;
use tirx_kernels::attention::hopper::kernels::attention_sm90;
use tirx_kernels::attention::hopper_persistent::kernels::attention_sm90_persistent;
use tirx_kernels::attention::reference::Dims;
use tirx_kernels::simulate;
use tirx_sim::Policy;

/// Runs `kernel`'s `config` on `s` queries and keys, `h` heads ([`simulate::attention`], which
/// also checks the LSE) on a device of two SMs (a persistent CTA then walks several tiles, and
/// its Q stages and K/V rings wrap across them); returns max |o − ref|.
fn run(kernel: &Kernel, config: &str, s: usize, h: usize, seed: u64) -> f64 {
    let art = kernel
        .artifacts
        .iter()
        .find(|a| a.config == config)
        .expect("a config of the kernel");
    // The registers ptxas gives each thread of the CTA (`.minnctapersm 1`): 65536 / threads,
    // in steps of 8 — 168 for 384 threads, 128 for the three-consumer tile's 512.
    let threads = 128 * (art.int("NWG").expect("NWG") as u32 + 1);
    let policy = Policy {
        strict_wgmma_fence: true,
        launch_regs: Some(65536 / threads / 8 * 8),
        ..Policy::default()
    };
    simulate::attention(art, (s, h), 2, seed, &policy)
        .unwrap_or_else(|e| panic!("{} {config} s={s} h={h} seed {seed}: {e}", kernel.name))
        .1
}

#[test]
fn attention_in_the_emulator_matches_the_f64_reference() {
    for (config, s, h) in [
        ("causal_d64", 130, 1),
        ("d64_w3", 200, 1),
        ("d128", 70, 2),
        ("d128_ping", 129, 1),
        ("f16_causal_d256", 90, 1),
    ] {
        for seed in 1..=2 {
            let err = run(&attention_sm90::KERNEL, config, s, h, seed);
            assert!(
                err <= 2e-2,
                "{config} s={s} h={h} seed {seed}: max |o − ref| {err:.3e}"
            );
        }
    }
}

/// The persistent kernel on two SMs: six tiles (three per CTA, so the two Q stages wrap) with a
/// key tail, and three tiles of one query tile each (the two CTAs walk unequal
/// counts: two tiles and one); causal, three query tiles a head (an odd count: the pair
/// (2, 0) of each head, then the middle tiles 1 alone) with a key tail, and hd 64's pairs
/// over three heads (two items for one CTA, one for the other).
#[test]
fn persistent_attention_in_the_emulator_walks_several_tiles() {
    for (config, s, h) in [
        ("d128_sms", 130, 3),
        ("f16_d128_sms", 70, 3),
        ("causal_d128_sms", 300, 2),
        ("f16_causal_d64_sms", 200, 3),
    ] {
        for seed in 1..=2 {
            let err = run(&attention_sm90_persistent::KERNEL, config, s, h, seed);
            assert!(
                err <= 2e-2,
                "{config} s={s} h={h} seed {seed}: max |o − ref| {err:.3e}"
            );
        }
    }
}

/// The Hopper kernels with query and key lengths that differ (prefill after a cached prefix,
/// SK > SQ; and SK < SQ), causal bottom-right aligned as FA2/FA3 (query i sees keys
/// j ≤ i + SK − SQ): odd lengths, a key tail of one column, GQA, a batch of two; with SK < SQ
/// and the mask the first SQ − SK rows see no key and must give O = 0 and LSE = −∞ (a whole
/// CTA of them reads no key block at all). The persistent kernel on two SMs too. O and the
/// LSE against the f64 reference ([`simulate::attention_values`] checks both).
#[test]
fn hopper_attention_with_other_key_lengths_matches_the_f64_reference() {
    let cases: [(&Kernel, &str, [usize; 5]); 9] = [
        // (kernel, config, [b, s, sk, hq, hk])
        (&attention_sm90::KERNEL, "causal_d64", [1, 70, 300, 2, 1]),
        (&attention_sm90::KERNEL, "causal_d64", [2, 200, 65, 1, 1]),
        (&attention_sm90::KERNEL, "d64_w3", [1, 100, 129, 1, 1]),
        (&attention_sm90::KERNEL, "f16_d128", [1, 130, 1, 2, 2]),
        (&attention_sm90::KERNEL, "causal_d128", [1, 65, 257, 4, 2]),
        (&attention_sm90::KERNEL, "f16_causal_d256", [1, 1, 90, 1, 1]),
        (
            &attention_sm90_persistent::KERNEL,
            "d128_sms",
            [1, 300, 77, 2, 1],
        ),
        // The causal pairs with fewer keys than queries (query tile 0 sees no key: it reads
        // no block, its partner all of them) and with more, GQA, a batch of two.
        (
            &attention_sm90_persistent::KERNEL,
            "causal_d128_sms",
            [1, 300, 77, 2, 1],
        ),
        (
            &attention_sm90_persistent::KERNEL,
            "f16_causal_d128_sms",
            [2, 65, 257, 4, 2],
        ),
    ];
    for (kernel, config, [b, s, sk, hq, hk]) in cases {
        let art = kernel
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("a config of the kernel");
        let threads = 128 * (art.int("NWG").expect("NWG") as u32 + 1);
        let policy = Policy {
            strict_wgmma_fence: true,
            launch_regs: Some(65536 / threads / 8 * 8),
            ..Policy::default()
        };
        let (d, dv) = head_dims(art).expect("D");
        let dims = Dims {
            b,
            s,
            sk,
            hq,
            hk,
            d,
            dv,
        };
        let (_, err) = simulate::attention_on(art, dims, 2, 1, &policy)
            .unwrap_or_else(|e| panic!("{} {config} {dims:?}: {e}", kernel.name));
        assert!(err <= 2e-2, "{config} {dims:?}: max |o − ref| {err:.3e}");
    }
}

/// The Blackwell kernel (FA4's roles, TMEM S/P/O) in both head dims, both element types, with
/// and without the causal mask, on batches of two, GQA, query and key lengths with tails (a
/// CTA's second Q tile partly or wholly past S, a last key block of 1 column), several
/// schedules each, at the 128 registers a thread ptxas launches its 512
/// threads with (the `setmaxnreg` budget checked against it). No Blackwell GPU ran it.
#[test]
fn blackwell_attention_in_the_emulator_matches_the_f64_reference() {
    let policy = Policy {
        launch_regs: Some(65536 / 512),
        ..Policy::default()
    };
    for (config, b, s, sk, hq, hk) in [
        ("fa4_d128", 2, 300, 257, 2, 2),
        ("fa4_d128", 1, 129, 384, 1, 1),
        // Causal with more queries than keys, GQA: CTA 0's rows precede every key (no key
        // block at all), CTA 1's first rows see none either.
        ("causal_fa4_d128", 1, 600, 100, 2, 1),
        ("f16_causal_fa4_d64", 2, 257, 300, 2, 2),
        // One query against one key, four query heads over two K/V heads.
        ("f16_fa4_d64", 1, 1, 1, 4, 2),
    ] {
        let art = attention_sm100::KERNEL
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("a config of the kernel");
        let (d, dv) = head_dims(art).expect("D_QK and D_V");
        let dims = Dims {
            b,
            s,
            sk,
            hq,
            hk,
            d,
            dv,
        };
        for seed in 1..=2 {
            let (_, err) = simulate::attention_on(art, dims, 4, seed, &policy)
                .unwrap_or_else(|e| panic!("{config} {dims:?} seed {seed}: {e}"));
            assert!(
                err <= 2e-2,
                "{config} {dims:?} seed {seed}: max |o − ref| {err:.3e}"
            );
        }
    }
}

/// The MLA-shaped tile (`fa4_d192_128`: Q and K of head dim 192, V and O of 128; one K/V
/// stage): both element types, both masks, GQA, odd query and key lengths (a second Q tile
/// partly past S, a last key block of 44 or 1 columns), O and the LSE against the f64
/// reference, two schedules each. No Blackwell GPU ran it.
#[test]
fn blackwell_attention_d192_128_in_the_emulator_matches_the_f64_reference() {
    let policy = Policy {
        launch_regs: Some(65536 / 512),
        ..Policy::default()
    };
    for (config, b, s, sk, hq, hk) in [
        ("fa4_d192_128", 1, 257, 300, 2, 1),
        ("f16_fa4_d192_128", 2, 77, 129, 1, 1),
        ("causal_fa4_d192_128", 1, 300, 257, 4, 2),
        ("f16_causal_fa4_d192_128", 1, 131, 131, 1, 1),
    ] {
        let art = attention_sm100::KERNEL
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("a config of the kernel");
        assert_eq!(head_dims(art), Some((192, 128)), "{config}");
        let dims = Dims {
            b,
            s,
            sk,
            hq,
            hk,
            d: 192,
            dv: 128,
        };
        for seed in 1..=2 {
            let (_, err) = simulate::attention_on(art, dims, 4, seed, &policy)
                .unwrap_or_else(|e| panic!("{config} {dims:?} seed {seed}: {e}"));
            assert!(
                err <= 2e-2,
                "{config} {dims:?} seed {seed}: max |o − ref| {err:.3e}"
            );
        }
    }
}

/// Conditional rescaling (the running max moves only when a block's exceeds it by more than
/// 8 in log2 units) on inputs built for both paths: the keys of block 1 scaled by 16 (a row's
/// max jumps far past the threshold: O and the row sum are rescaled), those of block 2 by 17
/// (a row's max grows, mostly within the threshold: it is kept, and P rises above 1). The result is the f64 reference's — which always rescales — within rounding, and the
/// inputs are checked here to take both paths.
#[test]
fn blackwell_conditional_rescaling_matches_always_rescaling() {
    let art = attention_sm100::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == "fa4_d128")
        .expect("the hd128 config");
    let dims = Dims {
        b: 1,
        s: 200,
        sk: 384,
        hq: 1,
        hk: 1,
        d: 128,
        dv: 128,
    };
    let mut rng = tirx_kernels::reference::Rng::new(7);
    let mut unit = |n: usize| -> Vec<f64> { (0..n).map(|_| f64::from(rng.unit())).collect() };
    let q = unit(dims.s * dims.d);
    let mut k = unit(dims.sk * dims.d);
    let v = unit(dims.sk * dims.d);
    for (j, x) in k.iter_mut().enumerate() {
        *x *= [1.0, 16.0, 17.0][j / dims.d / 128];
    }
    // Which path each row takes at each block after the first, from the rounded inputs.
    let round = |x: &[f64]| simulate::encode(x, tirx::abi::ElemType::Bf16).1;
    let (qr, kr) = (round(&q), round(&k));
    let scale_log2 = std::f64::consts::LOG2_E / (dims.d as f64).sqrt();
    let (mut rescaled, mut kept_growth) = (0, 0);
    for i in 0..dims.s {
        let score = |j: usize| -> f64 {
            (0..dims.d)
                .map(|c| qr[i * dims.d + c] * kr[j * dims.d + c])
                .sum::<f64>()
                * scale_log2
        };
        let block_max = |n: usize| (n * 128..(n + 1) * 128).map(score).fold(f64::MIN, f64::max);
        let mut m = block_max(0);
        for n in 1..3 {
            let b = block_max(n);
            if b - m > 8.0 {
                rescaled += 1;
                m = b;
            } else if b > m {
                kept_growth += 1;
            }
        }
    }
    assert!(rescaled >= dims.s / 2, "rows rescaled: {rescaled}");
    assert!(kept_growth > 0, "no row kept a grown max");
    for seed in 1..=2 {
        let policy = Policy {
            launch_regs: Some(65536 / 512),
            ..Policy::default()
        };
        let (_, err) = simulate::attention_values(art, dims, [&q, &k, &v], 2, seed, &policy)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(err <= 2e-2, "seed {seed}: max |o − ref| {err:.3e}");
    }
}

/// Which (Q tile, correction warp, key block) rescale O: those where some row of the warp's 32
/// moves its running max (a block's max above it by more than 8 in log2 units, FA4's rule),
/// from the rounded inputs of one CTA (`s` ≤ 256 queries, one head). Panics when a row's
/// growth is within 0.01 of the threshold (f32 rounding could take either side).
fn predicted_rescales(q: &[f64], k: &[f64], s: usize, sk: usize, d: usize) -> Vec<[usize; 3]> {
    let round = |x: &[f64]| simulate::encode(x, tirx::abi::ElemType::Bf16).1;
    let (qr, kr) = (round(q), round(k));
    let scale_log2 = std::f64::consts::LOG2_E / (d as f64).sqrt();
    let blocks = sk.div_ceil(128);
    // Per row, the blocks at which its max moves.
    let moves = |r: usize| -> Vec<bool> {
        let score = |j: usize| -> f64 {
            if r >= s {
                return 0.0; // a row past S: TMA fills its Q with zeros
            }
            (0..d).map(|c| qr[r * d + c] * kr[j * d + c]).sum::<f64>() * scale_log2
        };
        let block_max = |n: usize| {
            (n * 128..sk.min((n + 1) * 128))
                .map(score)
                .fold(f64::MIN, f64::max)
        };
        let mut m = block_max(0);
        let mut out = vec![false];
        for n in 1..blocks {
            let b = block_max(n);
            assert!(
                (b - m - 8.0).abs() > 0.01,
                "row {r} block {n}: growth {} at the threshold",
                b - m
            );
            out.push(b - m > 8.0);
            if b - m > 8.0 {
                m = b;
            }
        }
        out
    };
    let rows: Vec<Vec<bool>> = (0..256).map(moves).collect();
    let mut out = Vec::new();
    #[allow(clippy::needless_range_loop)] // `n` indexes the inner vectors of `rows`
    for n in 1..blocks {
        for i in 0..2 {
            for w in 0..4 {
                let base = 128 * i + 32 * w;
                if rows[base..base + 32].iter().any(|m| m[n]) {
                    out.push([i, w, n]);
                }
            }
        }
    }
    out
}

/// The correction warps' vote (`warp_any(c != 1.0)`): a warp rescales O only at the blocks
/// where one of its rows moved its max. Three inputs: keys of one magnitude (no row ever moves:
/// no warp rescales), the keys of blocks 1 and 2 scaled by 16 and 17 (nearly every warp
/// rescales at block 1), and the same with the queries of all but rows 0–31 scaled down by 64
/// (only the first correction warp of Q tile 0 rescales). The emulator's timeline counts the
/// correction warps' `tcgen05.st` groups, which only a rescale issues, against the prediction
/// from the inputs; O and the LSE match the f64 reference (which always rescales) each time.
#[test]
fn blackwell_correction_warps_rescale_only_when_a_row_moved() {
    let art = attention_sm100::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == "fa4_d128")
        .expect("the hd128 config");
    let dims = Dims {
        b: 1,
        s: 250,
        sk: 384,
        hq: 1,
        hk: 1,
        d: 128,
        dv: 128,
    };
    let mut rng = tirx_kernels::reference::Rng::new(11);
    let mut unit = |n: usize| -> Vec<f64> { (0..n).map(|_| f64::from(rng.unit())).collect() };
    let q = unit(dims.s * dims.d);
    let k = unit(dims.sk * dims.d);
    let v = unit(dims.sk * dims.d);
    let grown: Vec<f64> = k
        .iter()
        .enumerate()
        .map(|(j, x)| x * [1.0, 16.0, 17.0][j / dims.d / 128])
        .collect();
    let quiet: Vec<f64> = q
        .iter()
        .enumerate()
        .map(|(j, x)| if j / dims.d < 32 { *x } else { x / 64.0 })
        .collect();
    let policy = Policy {
        launch_regs: Some(65536 / 512),
        timeline: true,
        ..Policy::default()
    };
    let mut counts = Vec::new();
    for (name, q, k) in [
        ("flat", &q, &k),
        ("grown", &q, &grown),
        ("one warp", &quiet, &grown),
    ] {
        let want = predicted_rescales(q, k, dims.s, dims.sk, dims.d);
        let (mut stats, err) = simulate::attention_values(art, dims, [q, k, &v], 1, 3, &policy)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(err <= 2e-2, "{name}: max |o − ref| {err:.3e}");
        let tl = stats.timeline.take().expect("recorded");
        assert_eq!(tl.dropped, 0, "{name}");
        let stores = tl
            .ops
            .iter()
            .filter(|o| o.unit == tirx_sim::exec::Unit::TmemStore && (8..12).contains(&o.warp))
            .count();
        // Each rescale stores O's D / 64 = 2 chunks.
        assert_eq!(stores, 2 * want.len(), "{name}: rescales {want:?}");
        counts.push(want);
    }
    assert!(counts[0].is_empty(), "the flat keys move no row's max");
    // Every warp of both tiles at block 1 (and more at block 2).
    assert!(counts[1].len() >= 8, "{:?}", counts[1]);
    // Only warp 0 of Q tile 0, at block 1 at least.
    assert!(counts[2].contains(&[0, 0, 1]), "{:?}", counts[2]);
    assert!(
        counts[2].iter().all(|&[i, w, _]| i == 0 && w == 0),
        "{:?}",
        counts[2]
    );
}

/// Steps of `cta`'s warp `w` busy while a `tcgen05.mma` group of `cta` is in flight, summed
/// over the groups (as `docs/perf/attention-sm100-emulator-2026-12-05/timeline_stats.py`
/// counts them).
fn busy_with_mma(tl: &tirx_sim::exec::Timeline, cta: u32, w: u32) -> u64 {
    use tirx_sim::exec::{Unit, WarpState};
    tl.ops
        .iter()
        .filter(|o| o.cta == cta && o.unit == Unit::Tcgen05Mma)
        .map(|o| {
            let (a, b) = (o.issue, o.complete.unwrap_or(tl.end));
            tl.warps
                .iter()
                .filter(|s| s.cta == cta && s.warp == w && s.state == WarpState::Busy)
                .map(|s| s.end.min(b).saturating_sub(s.start.max(a)))
                .sum::<u64>()
        })
        .sum()
}

/// Steps of `cta`'s warp `w` busy while one of `others` is busy.
fn busy_with_warps(tl: &tirx_sim::exec::Timeline, cta: u32, w: u32, others: &[u32]) -> u64 {
    use tirx_sim::exec::WarpState;
    let busy = |w: u32| {
        tl.warps
            .iter()
            .filter(move |s| s.cta == cta && s.warp == w && s.state == WarpState::Busy)
    };
    // Steps are unit-width events: count them one by one (a run is tens of thousands).
    let mut other = vec![false; tl.end as usize + 1];
    for &o in others {
        for s in busy(o) {
            other[s.start as usize..s.end as usize].fill(true);
        }
    }
    busy(w)
        .map(|s| {
            other[s.start as usize..s.end as usize]
                .iter()
                .filter(|b| **b)
                .count() as u64
        })
        .sum()
}

/// The timeline of one CTA on inputs that make the correction warps rescale: 512 queries and
/// keys, one head (CTA 0 takes rows 256–511 against 4 key blocks), the keys of blocks 1, 2, 3
/// scaled by 16, 17, 64 — every row's max moves at blocks 1 and 3 (by far more than the 8
/// log2 units of the threshold). The first correction warp then stores O back to TMEM
/// (`tcgen05.st`, which only a rescale issues) for both Q tiles, busy while a softmax warp
/// is. With the default scheduler (an async operation completes at a round with probability
/// 1/6) the tensor core's groups complete before a softmax pass ends, so the correction
/// warp — after softmax i, before P·V_i by the barrier graph — never runs while one is in
/// flight; with completions five times rarer (1/30, a slower tensor core in the emulator's
/// units) it does. O and the LSE match the f64 reference in both. With
/// `TIRX_TIMELINE_DIR=DIR` (an absolute path) the test also writes both pictures and their
/// JSON to DIR, as `tirx sim --timeline` does (`docs/perf/attention-sm100-emulator.md`).
#[test]
fn blackwell_rescaling_timeline_overlaps_correction_with_softmax_and_mma() {
    let art = attention_sm100::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == "fa4_d128")
        .expect("the hd128 config");
    let dims = Dims {
        b: 1,
        s: 512,
        sk: 512,
        hq: 1,
        hk: 1,
        d: 128,
        dv: 128,
    };
    let mut rng = tirx_kernels::reference::Rng::new(1);
    let mut unit = |n: usize| -> Vec<f64> { (0..n).map(|_| f64::from(rng.unit())).collect() };
    let q = unit(dims.s * dims.d);
    let k: Vec<f64> = unit(dims.sk * dims.d)
        .iter()
        .enumerate()
        .map(|(j, x)| x * [1.0, 16.0, 17.0, 64.0][j / dims.d / 128])
        .collect();
    let v = unit(dims.sk * dims.dv);
    for (name, complete_one_in) in [("timeline_rescale", 6), ("timeline_rescale_slow_mma", 30)] {
        let policy = Policy {
            launch_regs: Some(65536 / 512),
            complete_one_in,
            timeline: true,
            ..Policy::default()
        };
        let (mut stats, err) = simulate::attention_values(art, dims, [&q, &k, &v], 132, 1, &policy)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(err <= 2e-2, "{name}: max |o − ref| {err:.3e}");
        let tl = stats.timeline.take().expect("recorded");
        assert_eq!(tl.dropped, 0, "{name}");
        if let Some(dir) = std::env::var_os("TIRX_TIMELINE_DIR") {
            let file = std::path::Path::new(&dir).join(format!("{name}.svg"));
            let title = format!(
                "attention_sm100 fa4_d128 sm_100a 512x1 seed 1, keys of blocks 1–3 scaled by 16, \
                 17, 64; an async operation completes at a round with probability \
                 1/{complete_one_in}"
            );
            let line =
                tirx_kernels::timeline::write(&file, &tl, &title).unwrap_or_else(|e| panic!("{e}"));
            println!("{line}");
        }
        let stores = tl
            .ops
            .iter()
            .filter(|o| o.cta == 0 && o.warp == 8 && o.unit == tirx_sim::exec::Unit::TmemStore)
            .count();
        // Blocks 1 and 3 at least, for both Q tiles, each O's two 64-column chunks.
        assert!(
            stores >= 8,
            "{name}: tcgen05.st groups of correction warp 8: {stores}"
        );
        let with_softmax = busy_with_warps(&tl, 0, 8, &[0, 4]);
        assert!(
            with_softmax > 1000,
            "{name}: correction warp 8 busy with the softmax for {with_softmax} steps"
        );
        let with_mma = busy_with_mma(&tl, 0, 8);
        if complete_one_in > 6 {
            assert!(
                with_mma > 0,
                "{name}: correction warp 8 never busy with an MMA in flight"
            );
        }
    }
}

/// The variable-length kernel (`attention_sm90_varlen`) on packed batches: an empty sequence,
/// sequences of one token, lengths that are not a multiple of the 128-row tile or of the key
/// block, a sequence spanning two query tiles, query and key lengths that differ both ways
/// (causal bottom-right per sequence: queries before every key give O = 0 and LSE = −∞), GQA;
/// every head dim, both masks, both element types; a batch of six sequences whose query tiles
/// the host's list interleaves. O and the LSE against the f64 reference,
/// the outputs poisoned first; rows of one sequence never written by another's CTA (a tile's
/// rows past its sequence's end are the next sequence's rows, which must keep their values).
#[test]
fn varlen_attention_in_the_emulator_matches_the_f64_reference() {
    use tirx_kernels::attention::hopper_varlen::kernels::attention_sm90_varlen;
    use tirx_kernels::attention::varlen;
    /// (config, cu_seqlens_q, cu_seqlens_k, (hq, hk)).
    type Case = (&'static str, &'static [i32], &'static [i32], (usize, usize));
    let cases: [Case; 7] = [
        ("d64", &[0, 0, 1, 131, 140], &[0, 5, 6, 136, 336], (2, 1)),
        (
            "causal_d64",
            &[0, 0, 1, 131, 140],
            &[0, 5, 6, 136, 336],
            (2, 1),
        ),
        (
            "causal_d128",
            &[0, 200, 201, 265],
            &[0, 70, 71, 400],
            (1, 1),
        ),
        ("f16_d128", &[0, 1, 2, 3], &[0, 1, 1, 130], (4, 2)),
        ("f16_causal_d256", &[0, 90, 91], &[0, 30, 200], (1, 1)),
        ("causal_d256", &[0, 1], &[0, 1], (1, 1)),
        // Six sequences of 0…257 queries: the tile list interleaves them (longest first).
        (
            "causal_d64",
            &[0, 3, 260, 261, 300, 300, 429],
            &[0, 1, 300, 301, 302, 302, 500],
            (1, 1),
        ),
    ];
    for (config, cu_q, cu_k, heads) in cases {
        let art = attention_sm90_varlen::KERNEL
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("a config of the kernel");
        let policy = Policy {
            strict_wgmma_fence: true,
            launch_regs: Some(65536 / 384 / 8 * 8),
            ..Policy::default()
        };
        let err = varlen::simulate(art, (cu_q, cu_k), heads, 4, 1, &policy)
            .unwrap_or_else(|e| panic!("{config} {cu_q:?} {cu_k:?}: {e}"));
        assert!(err <= 2e-2, "{config} {cu_q:?}: max |o − ref| {err:.3e}");
    }
}

/// The paged kernel (`attention_sm90_paged`) in the emulator: queries packed as in varlen, K
/// and V through shuffled block tables with spare pages and −1 padding, pages not filled
/// (rows past a sequence's keys hold random values and must be masked), an empty sequence,
/// sequences of one token, a prefill after a cached prefix (SQ < SK, causal bottom-right),
/// decode-like batches of 1…16 queries per sequence over many pages, queries before every key
/// (O = 0, LSE = −∞), GQA; every head dim, both page sizes, both masks, both element types.
/// O and the LSE against the f64 reference through the table, the outputs poisoned first.
#[test]
fn paged_attention_in_the_emulator_matches_the_f64_reference() {
    use tirx_kernels::attention::hopper_paged::kernels::attention_sm90_paged;
    use tirx_kernels::attention::paged;
    /// (config, cu_seqlens_q, seqused_k, (hq, hk)).
    type Case = (&'static str, &'static [i32], &'static [i32], (usize, usize));
    let cases: [Case; 10] = [
        // Empty, one token, a prefill of 130 after 5 cached keys' worth more, a tail.
        ("d64_p128", &[0, 0, 1, 131, 140], &[5, 1, 300, 200], (2, 1)),
        (
            "causal_d64_p256",
            &[0, 0, 1, 131, 140],
            &[5, 1, 300, 600],
            (2, 1),
        ),
        // Decode-like: 1, 16, 7 queries over long cached prefixes.
        (
            "causal_d128_p128",
            &[0, 1, 17, 24],
            &[520, 333, 129],
            (2, 1),
        ),
        ("f16_d128_p256", &[0, 16, 17], &[256, 513], (2, 2)),
        // Queries before every key: the first 60 rows see none.
        ("f16_causal_d256_p128", &[0, 90, 91], &[30, 200], (1, 1)),
        ("causal_d256_p256", &[0, 1], &[1], (1, 1)),
        // Pages of 64 (key blocks of 128, two pages each): a prefill of 128 after 172 cached
        // keys, a decode; an odd number of pages (the last block's second page past the end).
        ("causal_d128_p64w", &[0, 5, 133], &[300, 129], (2, 1)),
        ("d64_p64w", &[0, 1, 40], &[191, 65], (2, 1)),
        ("f16_d256_p64", &[0, 2], &[130], (1, 1)),
        ("d256_p128", &[0, 3, 3, 8], &[0, 0, 150], (2, 1)),
    ];
    for (n, (config, cu_q, seqused, heads)) in cases.into_iter().enumerate() {
        let art = attention_sm90_paged::KERNEL
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("a config of the kernel");
        let page = art.int("PAGE").unwrap() as usize;
        let p = paged::shuffled((cu_q, seqused), page, 2, 40 + n as u64);
        let policy = Policy {
            strict_wgmma_fence: true,
            launch_regs: Some(65536 / 384 / 8 * 8),
            ..Policy::default()
        };
        let err = paged::simulate(art, &p, heads, 4, 1, &policy)
            .unwrap_or_else(|e| panic!("{config} {cu_q:?} {seqused:?}: {e}"));
        assert!(err <= 2e-2, "{config} {cu_q:?}: max |o − ref| {err:.3e}");
    }
}

/// Pages smaller than 64 tokens (vLLM's default 16, and 32): key blocks of BN/PAGE pages each
/// (the `w` tiles: BN 128, 64 for d256), random tables (pages shuffled, spare pages, −1 padding), sequences of odd
/// lengths whose last page is partly filled, an empty one, decode and prefill, every head dim,
/// both masks, both element types, GQA — against the f64 reference, outputs poisoned.
#[test]
fn small_pages_in_the_emulator_match_the_f64_reference() {
    use tirx_kernels::attention::hopper_paged::kernels::attention_sm90_paged;
    use tirx_kernels::attention::paged;
    use tirx_kernels::reference::Rng;
    let mut rng = Rng::new(0x16_3216);
    let configs = [
        "d64_p16w",
        "causal_d64_p32w",
        "f16_causal_d128_p16w",
        "d128_p32w",
        "causal_d256_p16w",
        "f16_d256_p32w",
    ];
    for (case, config) in configs.into_iter().enumerate() {
        let b = rng.range(1, 3);
        let decode = case % 2 == 1;
        let mut cu_q = vec![0i32];
        for _ in 0..b {
            let n = rng.range(0, if decode { 16 } else { 140 });
            cu_q.push(cu_q.last().unwrap() + n as i32);
        }
        // Odd key counts: every sequence's last page partly filled; one empty sequence.
        let mut seqused: Vec<i32> = (0..b).map(|_| 2 * rng.range(0, 150) as i32 + 1).collect();
        seqused.push(0);
        cu_q.push(*cu_q.last().unwrap() + 3);
        let heads = [(1, 1), (2, 1)][case % 2];
        let art = attention_sm90_paged::KERNEL
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("a config of the kernel");
        let page = art.int("PAGE").unwrap() as usize;
        let p = paged::shuffled((&cu_q, &seqused), page, rng.range(0, 3), 700 + case as u64);
        let policy = Policy {
            strict_wgmma_fence: true,
            launch_regs: Some(65536 / 384 / 8 * 8),
            ..Policy::default()
        };
        let err = paged::simulate(art, &p, heads, 4, case as u64, &policy)
            .unwrap_or_else(|e| panic!("#{case} {config} {cu_q:?} {seqused:?}: {e}"));
        assert!(err <= 2e-2, "#{case} {config}: max |o − ref| {err:.3e}");
    }
}

/// Pages of 16 and 32 gathered into wide key blocks (the `…_p16w` / `…_p32w` tiles: BN 128, 64
/// for d256, one TMA box of PAGE rows per page of the block into its rows of the stage): every
/// head dim and page size, each with both masks and both element types, shuffled tables with
/// spare pages and −1 padding. Key counts: none (with queries), fewer than one page, fewer
/// than one key block, a whole number of pages but not of key blocks, and lengths that are a
/// multiple of neither (the last block's page slots past the sequence reload its last page,
/// masked); decode (1 query) and prefill (70 queries after a cached prefix, causal
/// bottom-right), a sequence with no query, GQA — O and the LSE against the f64 reference,
/// outputs poisoned first.
#[test]
fn wide_key_blocks_over_small_pages_in_the_emulator_match_the_f64_reference() {
    use tirx_kernels::attention::hopper_paged::kernels::attention_sm90_paged;
    use tirx_kernels::attention::paged;
    for (case, (d, page, prefix)) in [64, 128, 256]
        .into_iter()
        .flat_map(|d| {
            [
                (d, 16, ""),
                (d, 16, "f16_causal_"),
                (d, 32, "causal_"),
                (d, 32, "f16_"),
            ]
        })
        .enumerate()
    {
        let config = format!("{prefix}d{d}_p{page}w");
        let art = attention_sm90_paged::KERNEL
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("a config of the kernel");
        let bn = art.int("BN").unwrap() as i32;
        assert!(bn > page, "{config}");
        // (queries, keys): no key; fewer than a page; fewer than a key block; whole pages, not
        // a whole block; a prefill over a tail; no query; a decode over blocks and a tail.
        let seqs = [
            (3, 0),
            (1, 5),
            (20, bn - page / 2 - 3),
            (5, 3 * page),
            (70, 2 * bn + page + 7),
            (0, 50),
            (1, 3 * bn - 1),
        ];
        let mut cu_q = vec![0i32];
        for (q, _) in seqs {
            cu_q.push(cu_q.last().unwrap() + q);
        }
        let seqused: Vec<i32> = seqs.iter().map(|s| s.1).collect();
        let heads = [(1, 1), (2, 1)][case % 2];
        let p = paged::shuffled(
            (&cu_q, &seqused),
            page as usize,
            case % 3,
            900 + case as u64,
        );
        let policy = Policy {
            strict_wgmma_fence: true,
            launch_regs: Some(65536 / 384 / 8 * 8),
            ..Policy::default()
        };
        let err = paged::simulate(art, &p, heads, 4, case as u64, &policy)
            .unwrap_or_else(|e| panic!("#{case} {config} {cu_q:?} {seqused:?}: {e}"));
        assert!(err <= 2e-2, "#{case} {config}: max |o − ref| {err:.3e}");
    }
}

/// A page id out of the cache read from the block table (one the host would refuse,
/// `Paging::new`) is reported by the emulator: the TMA box it gives starts outside K
/// (`tirx.check tma`), rather than reading another tensor's memory.
#[test]
fn a_paged_table_out_of_range_is_reported_by_the_emulator() {
    use tirx_kernels::attention::hopper_paged::kernels::attention_sm90_paged;
    use tirx_kernels::attention::paged;
    let art = attention_sm90_paged::KERNEL
        .artifacts
        .iter()
        .find(|a| a.config == "d64_p128")
        .expect("a config of the kernel");
    let mut p = paged::shuffled((&[0, 2], &[200]), 128, 0, 1);
    assert!(p.block_table[1] >= 0);
    p.block_table[1] = p.num_pages as i32;
    let policy = Policy {
        strict_wgmma_fence: true,
        launch_regs: Some(65536 / 384 / 8 * 8),
        ..Policy::default()
    };
    let e = paged::simulate(art, &p, (1, 1), 4, 1, &policy).unwrap_err();
    assert!(
        e.contains("TMA load of `k`") && e.contains("outside the tensor"),
        "{e}"
    );
}

/// Random paged batches in the emulator (seeded): 1…4 sequences of 0…20 (decode) or 0…150
/// queries and 0…400 keys, each over its own shuffled pool, a d64 tile of a random page size,
/// mask and element type, GQA or not — against the f64 reference, outputs poisoned.
#[test]
fn random_paged_batches_in_the_emulator_match_the_f64_reference() {
    use tirx_kernels::attention::hopper_paged::kernels::attention_sm90_paged;
    use tirx_kernels::attention::paged;
    use tirx_kernels::reference::Rng;
    let mut rng = Rng::new(0x9a6e_5131);
    for case in 0..4u64 {
        let b = rng.range(1, 4);
        let decode = rng.range(0, 1) == 1;
        let mut cu_q = vec![0i32];
        for _ in 0..b {
            let n = rng.range(0, if decode { 20 } else { 150 });
            cu_q.push(cu_q.last().unwrap() + n as i32);
        }
        let seqused: Vec<i32> = (0..b).map(|_| rng.range(0, 400) as i32).collect();
        let config = format!(
            "{}{}d64_{}",
            ["", "f16_"][rng.range(0, 1)],
            ["", "causal_"][rng.range(0, 1)],
            ["p64w", "p128", "p256"][rng.range(0, 2)]
        );
        let heads = [(1, 1), (2, 1)][rng.range(0, 1)];
        let art = attention_sm90_paged::KERNEL
            .artifacts
            .iter()
            .find(|a| a.config == config)
            .expect("a config of the kernel");
        let page = art.int("PAGE").unwrap() as usize;
        let p = paged::shuffled((&cu_q, &seqused), page, rng.range(0, 3), 500 + case);
        let policy = Policy {
            strict_wgmma_fence: true,
            launch_regs: Some(65536 / 384 / 8 * 8),
            ..Policy::default()
        };
        println!("#{case} {config} heads {heads:?} q {cu_q:?} k {seqused:?}");
        let err = paged::simulate(art, &p, heads, 4, case, &policy)
            .unwrap_or_else(|e| panic!("#{case} {config} {cu_q:?} {seqused:?}: {e}"));
        assert!(err <= 2e-2, "#{case} {config}: max |o − ref| {err:.3e}");
    }
}

/// The decode path in the emulator: `attention_sm90_decode` (one CTA per query head) or
/// `attention_sm90_decode_gqa` (the query heads of a K/V head packed into one tile: G = 2 and
/// 4 with up to 16 positions a head, G = 8 with up to 8), then `attention_decode_combine` when the
/// keys are split or the heads packed. 1, 3, 7, 8 and 16 query positions, 1, 77, 140, 300 and
/// 1000 keys (none a multiple of the key block but the one-key case's tile), 1, 2 and 5 splits
/// asked (5 of 8 key blocks gives 4 of 2, of 13 gives 5 of 3), GQA 8, 4, 2 and 1, both masks
/// (causal bottom-right: the early queries of 16 against 1 or 10 keys see none, O = 0 and LSE =
/// −∞, packed and not; against 140 keys in two splits the first four see nothing of the second), every head
/// dim, both element types. O and the LSE against the f64 reference; O, the LSE and the
/// workspace poisoned first.
#[test]
fn decode_attention_in_the_emulator_matches_the_f64_reference() {
    use tirx::abi::ElemType;
    use tirx_kernels::attention::decode::{self, Ask};
    /// ((b, sq, sk, hq, hk, d), causal, elem, (splits asked, pack asked), (splits run, group
    /// packed)).
    type Case = (
        (usize, usize, usize, usize, usize, usize),
        bool,
        ElemType,
        (usize, bool),
        (usize, Option<usize>),
    );
    let bf = ElemType::Bf16;
    let cases: [Case; 19] = [
        ((2, 1, 1000, 4, 1, 64), false, bf, (5, false), (4, None)),
        ((1, 16, 1000, 4, 1, 64), true, bf, (2, false), (2, None)),
        (
            (1, 16, 140, 1, 1, 64),
            true,
            ElemType::F16,
            (2, true),
            (2, None),
        ),
        ((1, 3, 77, 2, 2, 128), true, bf, (1, true), (1, None)),
        (
            (1, 16, 300, 4, 1, 128),
            false,
            ElemType::F16,
            (2, false),
            (2, None),
        ),
        ((2, 3, 1000, 2, 2, 128), true, bf, (5, true), (4, None)),
        ((1, 3, 1, 1, 1, 256), true, bf, (1, true), (1, None)),
        ((2, 1, 1000, 1, 1, 256), false, bf, (5, true), (5, None)),
        ((1, 16, 10, 2, 1, 64), true, bf, (1, false), (1, None)),
        ((1, 1, 77, 8, 2, 64), false, bf, (1, false), (1, None)),
        // Packed.
        ((1, 1, 77, 8, 2, 64), false, bf, (1, true), (1, Some(4))),
        ((2, 16, 1000, 4, 1, 64), true, bf, (5, true), (4, Some(4))),
        (
            (1, 16, 140, 8, 2, 128),
            true,
            ElemType::F16,
            (2, true),
            (2, Some(4)),
        ),
        ((1, 7, 300, 8, 1, 128), false, bf, (2, true), (2, Some(8))),
        ((1, 8, 10, 16, 2, 256), true, bf, (1, true), (1, Some(8))),
        (
            (2, 3, 1000, 4, 1, 256),
            false,
            ElemType::F16,
            (5, true),
            (5, Some(4)),
        ),
        ((1, 16, 300, 4, 2, 64), true, bf, (2, true), (2, Some(2))),
        (
            (2, 1, 77, 2, 1, 128),
            false,
            ElemType::F16,
            (1, true),
            (1, Some(2)),
        ),
        ((1, 16, 10, 2, 1, 64), true, bf, (1, true), (1, Some(2))),
    ];
    let policy = Policy {
        strict_wgmma_fence: true,
        ..Policy::default()
    };
    for (n, ((b, s, sk, hq, hk, d), causal, elem, (splits, pack), want)) in
        cases.into_iter().enumerate()
    {
        let dims = Dims {
            b,
            s,
            sk,
            hq,
            hk,
            d,
            dv: d,
        };
        let ask = Ask {
            splits: Some(splits),
            pack,
        };
        let (plan, err) = decode::simulate(dims, (causal, elem), ask, 4, 7 + n as u64, &policy)
            .unwrap_or_else(|e| panic!("case {n} {dims:?} causal {causal}: {e}"));
        let got = (plan.split.splits, plan.tiles.pack.map(|p| p.group));
        assert_eq!(got, want, "case {n}: splits and packing");
        assert!(err <= 2e-2, "case {n}: max |o − ref| {err:.3e}");
    }
}

/// The 128-row packed tiles of `attention_sm90_decode_gqa` (two consumer warpgroups sharing the
/// K/V rings) in the emulator, through the host's choice: G = 8 with 9…16 query positions a
/// head and G = 16 with 1…8, both masks, keys that end in a partial block (300, 333, 140, 1000
/// with blocks of 128 or 80), 2, 3 and 5 splits so the combine weighs them, batch and K/V
/// heads above one (the blocks' order), and causal rows that see no key (16 positions against
/// 10 keys: O = 0, LSE = −∞). O and the LSE against the f64 reference; O, the LSE and the
/// workspace poisoned first.
#[test]
fn decode_attention_in_128_row_packed_tiles_matches_the_f64_reference() {
    use tirx::abi::ElemType;
    use tirx_kernels::attention::decode::{self, Ask, Pack};
    /// ((b, sq, sk, hq, hk, d), causal, elem, splits asked, (splits run, pack)).
    type Case = (
        (usize, usize, usize, usize, usize, usize),
        bool,
        ElemType,
        usize,
        (usize, Pack),
    );
    let (bf, f16) = (ElemType::Bf16, ElemType::F16);
    let g8 = Pack { group: 8, rows: 16 };
    let g16 = Pack { group: 16, rows: 8 };
    let cases: [Case; 8] = [
        ((1, 9, 300, 8, 1, 64), false, bf, 2, (2, g8)),
        ((1, 16, 300, 8, 1, 128), true, f16, 2, (2, g8)),
        ((1, 12, 1000, 16, 2, 256), true, f16, 5, (5, g8)),
        ((1, 16, 10, 8, 1, 64), true, bf, 1, (1, g8)),
        ((1, 1, 200, 16, 1, 64), true, bf, 2, (2, g16)),
        ((1, 1, 300, 16, 1, 128), false, bf, 2, (2, g16)),
        ((1, 8, 333, 16, 1, 256), false, bf, 3, (3, g16)),
        ((2, 8, 140, 32, 2, 128), true, bf, 2, (2, g16)),
    ];
    let policy = Policy {
        strict_wgmma_fence: true,
        ..Policy::default()
    };
    for (n, ((b, s, sk, hq, hk, d), causal, elem, splits, want)) in cases.into_iter().enumerate() {
        let dims = Dims {
            b,
            s,
            sk,
            hq,
            hk,
            d,
            dv: d,
        };
        let ask = Ask {
            splits: Some(splits),
            pack: true,
        };
        let (plan, err) = decode::simulate(dims, (causal, elem), ask, 4, 90 + n as u64, &policy)
            .unwrap_or_else(|e| panic!("case {n} {dims:?} causal {causal}: {e}"));
        let got = (plan.split.splits, plan.tiles.pack);
        assert_eq!(got, (want.0, Some(want.1)), "case {n}: splits and packing");
        assert_eq!(
            plan.tiles.decode.int("NWG"),
            Some(2),
            "case {n}: two warpgroups"
        );
        assert!(err <= 2e-2, "case {n}: max |o − ref| {err:.3e}");
    }
}
