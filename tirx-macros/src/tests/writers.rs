//! The `writers` rule of `check-protocol` through the front end: a pipeline's
//! `writers = w` against the `pipe.full(s).arrive()` that fill part of its stages, counted
//! from the scopes and thread-index `if`s around them (`docs/language.md`, section 5).

use super::*;

/// The compile errors of a kernel under the attribute `attr` (front end and passes).
fn compile_errors_with(attr: &str, item: &str) -> Vec<String> {
    let (def, mut sink) = def(attr, item);
    let (arts, _) = expand::compile(&def, &TileFns::default(), &mut sink);
    let e: Vec<String> = sink
        .finish()
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(arts.is_empty(), !e.is_empty(), "{e:#?}");
    e
}

const ATTR: &str = "target = sm_90a, threads = 256, grid = (cdiv(M, 128), 1)";

/// A kernel whose warp 0 loads each stage by TMA, whose `writer` block stores a scale into
/// it from warp `w`'s tile `xw` (and arrives, or not), and whose warpgroup 1 consumes it; `pipe` is the declaration.
fn kernel(pipe: &str, writer: &str) -> Vec<String> {
    kernel_with(ATTR, pipe, writer)
}

/// The same, under the attribute `attr`.
fn kernel_with(attr: &str, pipe: &str, writer: &str) -> Vec<String> {
    compile_errors_with(
        attr,
        &format!(
            "fn k(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, NB)] scale: Tensor<f32>, #[shape(M, N)] dst: Tensor<bf16>) {{
                let ring = smem::<bf16>([2, 128, 64], swizzle = B128);
                let sc_s = smem::<f32>([2, 128, 1]);
                let pipe = {pipe};
                let x1 = regs::<f32>([128, 1], layout = blocked(vec = 1, threads = 32));
                let x2 = regs::<f32>([128, 1], layout = blocked(vec = 1, threads = 32));
                let x3 = regs::<f32>([128, 1], layout = blocked(vec = 1, threads = 32));
                let t = regs::<f32>([128, 64], layout = blocked(vec = 8, threads = 128));
                #[scope(warp = 0, elect)]
                for j in 0..NB {{
                    let s = pipe.producer_acquire(j);
                    tma::load(ring[s], src.tile(cta.x, j), pipe.full(s));
                }}
                {writer}
                #[scope(warpgroup = 1)]
                for j in 0..NB {{
                    let s = pipe.consumer_wait(j);
                    copy(t, ring[s]);
                    named_barrier(1, 128);
                    #[scope(leader)]
                    {{
                        pipe.consumer_release(s);
                    }}
                    copy(dst.tile(cta.x, j), t);
                }}
            }}"
        ),
    )
}

/// Warp `w`'s writer loop over K blocks `first, first + step, …` with `arrive` after its
/// store; with `step > 1`, inside a loop over tiles whose iteration base the pipeline counter
/// adds (`fp8_block.rs`'s `scale_blocks`: a stride alone is a counter error).
fn warp(w: u32, first: u32, step: u32, arrive: &str) -> String {
    let inner = |k: &str| {
        format!(
            "for j in ({first}..NB).step_by({step}) {{
                copy(x{w}, scale.tile(cta.x, j));
                let s = pipe.producer_acquire({k});
                copy(sc_s[s], x{w});
                {arrive}
            }}"
        )
    };
    if step == 1 {
        return format!("#[scope(warp = {w})] {}", inner("j"));
    }
    format!(
        "#[scope(warp = {w})]
        {{
            let mut base = 0;
            for u in 0..cdiv(N, 64) {{
                {}
                base += NB;
            }}
        }}",
        inner("base + j")
    )
}

const ARRIVE: &str = "pipe.full(s).arrive();";

fn one(errs: &[String], text: &str) {
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].contains(text), "{errs:#?}");
}

#[test]
fn a_warp_of_writers_matches_writers_32() {
    let errs = kernel("pipeline::<2>(writers = 32)", &warp(1, 0, 1, ARRIVE));
    assert!(errs.is_empty(), "{errs:#?}");
}

#[test]
fn an_arrive_without_declared_writers_is_an_early_completion() {
    let errs = kernel("pipeline::<2>()", &warp(1, 0, 1, ARRIVE));
    one(
        &errs,
        "undeclared writers: this `pipe.full(..).arrive()` is an arrival on the stage's full barrier from 32 thread(s)",
    );
    assert!(
        errs[0].contains("`pipeline::<S>(…, writers = 32)`"),
        "{errs:#?}"
    );
}

#[test]
fn declared_writers_that_never_arrive_hang() {
    let errs = kernel("pipeline::<2>(writers = 32)", &warp(1, 0, 1, ""));
    one(
        &errs,
        "missing writers: `pipe` is declared with `writers = 32`",
    );
}

#[test]
fn an_elected_or_lane_0_arrive_is_one_writer() {
    let elect = warp(1, 0, 1, &format!("#[scope(elect)] {{ {ARRIVE} }}"));
    let errs = kernel("pipeline::<2>(writers = 32)", &elect);
    one(
        &errs,
        "this arrive, once per use of a stage (its `producer_acquire` is in the same loop), runs on 1 thread(s)",
    );
    for guard in ["lane_id == 0", "tid % 32 == 0"] {
        let lane0 = warp(1, 0, 1, &format!("if {guard} {{ {ARRIVE} }}"));
        let errs = kernel("pipeline::<2>(writers = 32)", &lane0);
        one(&errs, "runs on 1 thread(s); no phase ever completes");
    }
}

#[test]
fn one_warp_is_too_few_for_96_and_too_many_for_16() {
    let errs = kernel("pipeline::<2>(writers = 96)", &warp(1, 0, 1, ARRIVE));
    one(&errs, "runs on 32 thread(s); no phase ever completes");
    let errs = kernel("pipeline::<2>(writers = 16)", &warp(1, 0, 1, ARRIVE));
    one(
        &errs,
        "but this arrive runs on 32 thread(s), each an arrival on the same phase",
    );
    assert!(errs[0].contains("Declare `writers = 32`, or arrive from 16 thread(s)"));
}

#[test]
fn a_lane_guard_counts_its_lanes() {
    let half = warp(1, 0, 1, &format!("if lane_id < 16 {{ {ARRIVE} }}"));
    let errs = kernel("pipeline::<2>(writers = 16)", &half);
    assert!(errs.is_empty(), "{errs:#?}");
}

#[test]
fn warps_taking_turns_or_filling_together_are_accepted() {
    // fp8_block's shape: three warps, each every third K block, one warp a phase.
    let turns: String = (0..3).map(|i| warp(i + 1, i, 3, ARRIVE)).collect();
    let errs = kernel("pipeline::<2>(writers = 32)", &turns);
    assert!(errs.is_empty(), "{errs:#?}");
    // Two warps filling every stage together.
    let together: String = (0..2).map(|i| warp(i + 1, 0, 1, ARRIVE)).collect();
    assert!(kernel("pipeline::<2>(writers = 64)", &together).is_empty());
    // But three elected threads make 32 in no combination.
    let elect = format!("#[scope(elect)] {{ {ARRIVE} }}");
    let elected: String = (0..3).map(|i| warp(i + 1, i, 3, &elect)).collect();
    let errs = kernel("pipeline::<2>(writers = 32)", &elected);
    one(
        &errs,
        "its 3 arrive sites, each once per use of a stage, run on 1, 1, 1 thread(s), and no combination of them makes 32",
    );
}

#[test]
fn an_arrive_under_a_data_dependent_if_is_not_judged_short() {
    let cond = warp(1, 0, 1, &format!("if j < 3 {{ {ARRIVE} }}"));
    assert!(kernel("pipeline::<2>(writers = 64)", &cond).is_empty());
    // Still too many whenever it runs.
    let errs = kernel("pipeline::<2>(writers = 16)", &cond);
    one(&errs, "this arrive runs on 32 thread(s)");
}

#[test]
fn an_arrive_a_config_switches_off_is_not_counted() {
    let attr = format!("{ATTR}, configs(off = (W = 0), on = (W = 1))");
    let switched = warp(1, 0, 1, &format!("if W == 1 {{ {ARRIVE} }}"));
    let errs = kernel_with(&attr, "pipeline::<2>(writers = 32 * W)", &switched);
    assert!(errs.is_empty(), "{errs:#?}");
}
