//! Every documented error, asserted on its message.

use super::*;

fn assert_one(errors: &[String], expected: &str) {
    assert!(
        errors.iter().any(|e| e == expected),
        "expected {expected:?} among {errors:#?}"
    );
}

fn assert_contains(errors: &[String], needle: &str) {
    assert!(
        errors.iter().any(|e| e.contains(needle)),
        "expected an error containing {needle:?} among {errors:#?}"
    );
}

const BODY_PRELUDE: &str =
    "let tile = smem::<bf16>([BM, BN]); let bar = mbarrier(); let pipe = pipeline::<2>();";

fn with_prelude(stmts: &str) -> Vec<String> {
    body_errors(&format!("{BODY_PRELUDE} {stmts}"))
}

#[test]
fn unknown_op() {
    let e = with_prelude("tma::lod(tile, src.tile(0, 0), bar);");
    assert_eq!(
        e,
        [
            "unknown op `tma::lod`; tma ops are load, store, commit_group, wait_group, wait_group_read, reduce_add, reduce_min, reduce_max"
        ]
    );
    let e = with_prelude("cpy(tile, src.tile(0, 0));");
    assert_contains(
        &e,
        "unknown op `cpy`; ops are copy, mma, sync_threads, cluster_sync, named_barrier, named_barrier_arrive, warp_any, warp_all, warp_ballot, tma::…, atomic::…, wgmma::…, tcgen05::…, clc::…, fence::…, grid::…, setmaxnreg::…; did you mean `copy`?",
    );
    assert_one(
        &with_prelude("tmaa::load(tile, src.tile(0, 0), bar);"),
        "unknown op namespace `tmaa` in `tmaa::load`; namespaces are tma, atomic, wgmma, tcgen05, clc, fence, grid, setmaxnreg",
    );
    assert_one(
        &with_prelude("bar.arive();"),
        "unknown method `arive`; barrier methods are arrive, expect_tx, wait; pipeline methods are producer_acquire, consumer_wait, consumer_release",
    );
}

#[test]
fn unknown_scope_key() {
    let e = with_prelude("#[scope(warpz = 0)] { sync_threads(); }");
    assert_eq!(
        e,
        [
            "unknown scope key `warpz`; expected warp, warps, warpgroup, warpgroups, thread, leader, cta, elect"
        ]
    );
    assert_one(
        &with_prelude("#[scope(warp = 0, thread = 1)] { }"),
        "a scope names one group of threads; found both `warp` and `thread`",
    );
    assert_one(
        &with_prelude("#[scope(warp = 4)] { }"),
        "warp 4 does not exist: the kernel has 4 warps (threads = 128)",
    );
    assert_one(
        &with_prelude("#[scope(warps = 2..2)] { }"),
        "the range is empty",
    );
    assert_one(
        &with_prelude("#[inline] { }"),
        "unknown attribute `#[inline]`; statements accept `#[scope(...)]`",
    );
}

#[test]
fn bad_target() {
    let attr = STD_ATTR.replace("target = sm_90a", "targets(sm_90a, sm_120)");
    let e = errors(&attr, "fn k(#[shape(M, N)] src: Tensor<bf16>) {}");
    assert_eq!(
        e,
        [
            "`sm_120` (consumer Blackwell) has no tcgen05 or tensor memory; tirx targets `sm_90a` and `sm_100a`"
        ]
    );
    let attr = STD_ATTR.replace("target = sm_90a", "target = sm_90");
    assert_contains(
        &errors(&attr, "fn k(#[shape(M, N)] src: Tensor<bf16>) {}"),
        "write `sm_90a`",
    );
}

#[test]
fn bad_config_value() {
    let attr = STD_ATTR.replace("BN = 64", "BN = 64.0");
    let e = errors(&attr, "fn k(#[shape(M, N)] src: Tensor<bf16>) {}");
    assert_contains(
        &e,
        "bad value for config constant `BN`: expected an integer constant",
    );
    let attr = STD_ATTR.replace("BN = 64", "BN = BM * 2, BK = BQ");
    let e = errors(&attr, "fn k(#[shape(M, N)] src: Tensor<bf16>) {}");
    assert_eq!(
        e,
        ["bad value for config constant `BK`: `BQ` is not a known constant here"]
    );
    let attr = STD_ATTR.replace("(BM = 64, BN = 64)", "(BM = 64, BN = 64), default = ()");
    assert_one(
        &errors(&attr, "fn k(#[shape(M, N)] src: Tensor<bf16>) {}"),
        "config `default` defined twice",
    );
}

#[test]
fn bad_attribute() {
    let e = errors("target = sm_90a, treads = 128", "fn k() {}");
    assert_contains(
        &e,
        "unknown argument `treads`; expected targets, target, threads, cluster, grid, configs",
    );
    assert_contains(&e, "`#[tile_kernel]` needs `threads = N` (threads per CTA)");
    assert_contains(&e, "`#[tile_kernel]` needs `grid = (x, y, z)`");
    let attr = STD_ATTR.replace("cdiv(M, BM)", "cdiv(Q, BM)");
    assert_one(
        &errors(&attr, "fn k(#[shape(M, N)] src: Tensor<bf16>) {}"),
        "unknown name `Q` in the grid; expected a shape symbol (M, N), a config constant or `SMS` (the device's SM count)",
    );
    let attr = STD_ATTR.replace("cdiv(M, BM)", "M % 2");
    assert_one(
        &errors(&attr, "fn k(#[shape(M, N)] src: Tensor<bf16>) {}"),
        "a grid entry is a constant, a shape symbol, `SMS`, or `cdiv(a, b)`, `a / b`, `a * b` of those",
    );
    assert_contains(
        &errors(&format!("{STD_ATTR}, cluster = (1, 1, 1, 1)"), "fn k() {}"),
        "`cluster` takes 1 to 3 entries",
    );
    assert_contains(
        &errors(&STD_ATTR.replace("128", "2048"), "fn k() {}"),
        "`threads` must be between 1 and 1024, found 2048",
    );
}

#[test]
fn bad_parameters() {
    let e = errors(
        STD_ATTR,
        "fn k(src: Tensor<bf16>, #[shape(M)] x: Tensor<i16>, #[shape(BM - 64)] y: Tensor<f32>) -> u32 {}",
    );
    assert_contains(
        &e,
        "tensor `src` needs its shape: `#[shape(M, N)] src: Tensor<…>`",
    );
    assert_contains(
        &e,
        "unknown element type `i16`; tensors hold bf16, f16, f32, i32, u32, i64, u64, the 8-bit MMA formats or a config's element type",
    );
    assert_contains(&e, "a fixed extent must be between 1 and 2³² − 1, found 0");
    assert_contains(&e, "a tile kernel returns nothing");
}

#[test]
fn undeclared_name() {
    assert_one(
        &with_prelude("let x = foo + 1;"),
        "cannot find `foo` in this kernel",
    );
    assert_one(
        &with_prelude("copy(tlie, src.tile(0, 0));"),
        "cannot find `tlie` in this kernel; did you mean `tile`?",
    );
    assert_one(
        &with_prelude("bar.wait(phase);"),
        "cannot find `phase` in this kernel",
    );
}

#[test]
fn wrong_kinds_and_arities() {
    assert_one(
        &with_prelude("let x = tile + 1;"),
        "`tile` is a smem buffer, not a scalar",
    );
    assert_one(
        &with_prelude("copy(tile, src);"),
        "`src` is a global tensor; name one tile of it: `src.tile(i, j)`",
    );
    assert_one(
        &with_prelude("tma::load(tile, src.tile(0, 0));"),
        "`tma::load` takes 3 argument(s): `tma::load(dst, src, bar)`; found 2",
    );
    assert_one(
        &with_prelude("copy(tile, src.tile(0));"),
        "`src` has 2 dimension(s) (M, N); `tile` takes 2 coordinate(s), found 1",
    );
    assert_one(
        &with_prelude("tma::load(tile, src.tile(0, 0), pipe);"),
        "`pipe` is a pipeline; name one of its barriers: `pipe.full(s)` or `pipe.empty(s)`",
    );
    assert_one(
        &with_prelude("tma::load(tile, src.tile(0, 0), bar[1]);"),
        "barrier index 1 out of range: `bar` has 1 barrier(s)",
    );
    assert_one(
        &with_prelude("mma(tile, tile, tile, acumulate = true);"),
        "unknown argument `acumulate` of `mma`; expected accumulate",
    );
    assert_one(
        &with_prelude("mma(tile, tile, tile, accumulate = 1);"),
        "expected a predicate (a comparison such as `k > 0`, or `true`/`false`), found an integer",
    );
    assert_one(
        &with_prelude("tcgen05::alloc(tile);"),
        "`tcgen05::alloc` takes a TMEM buffer declared with `tmem::<f32>([BM, BN])`",
    );
    assert_one(
        &with_prelude("pipe.producer_acquire(0);"),
        "`producer_acquire` gives the stage; bind it: `let s = pipe.producer_acquire(k);`",
    );
    assert_one(
        &with_prelude("let t = smem::<i16>([4]);"),
        "expected an element type (bf16, f16, f32, i32, u32, i64, u64 or a config's element type): `smem::<bf16>([BM, BK], swizzle = B128)`",
    );
    assert_one(
        &with_prelude("let t = smem::<bf16>([M]);"),
        "a buffer dimension must be a build-time constant (literals and config constants)",
    );
    assert_one(
        &with_prelude("let t = smem::<bf16>([4], swizzle = B256);"),
        "unknown swizzle; expected none, B32, B64, B128",
    );
    assert_one(
        &with_prelude("for k in 0..4 { let t = mbarrier(); }"),
        "declare buffers, barriers and pipelines at the top level of the kernel body",
    );
}

#[test]
fn variables() {
    assert_one(
        &with_prelude("let x = 1; x = 2;"),
        "cannot assign to `x`: declare it with `let mut x`",
    );
    assert_one(
        &with_prelude("let mut x = 1; x = 1 > 0;"),
        "`x` is a u32; this value is a pred",
    );
    assert_one(
        &with_prelude("let BM = 1;"),
        "`BM` is a config constant; choose another name",
    );
    assert_one(
        &with_prelude("let x = 1 / 0;"),
        "division by zero: the divisor is the constant 0 (a config constant or literal), so the result is unspecified",
    );
    assert_one(
        &with_prelude("let x = -1;"),
        "negation is not supported: scalars are u32",
    );
    assert_one(
        &with_prelude("let x = cta.w;"),
        "unknown field `w` of `cta`; expected x, y, z",
    );
    assert_one(
        &with_prelude("let x = foo(1);"),
        "unknown function `foo`; scalar functions are cdiv, min, max; a function of your own is a `#[tile_fn]` of a `#[tile_module]` that holds this kernel (docs/language.md §10)",
    );
}

/// Several errors in one build, and no follow-up error from a failed `let`.
#[test]
fn errors_are_collected_without_cascades() {
    let e = with_prelude("let x = foo; let y = x + 1; tma::lod(); sync_threads(1);");
    assert_eq!(
        e,
        [
            "cannot find `foo` in this kernel",
            "unknown op `tma::lod`; tma ops are load, store, commit_group, wait_group, wait_group_read, reduce_add, reduce_min, reduce_max",
            "`sync_threads` takes 0 argument(s): `sync_threads()`; found 1",
        ]
    );
}

/// An error in only some configs names them; one in every config is reported once, plainly.
#[test]
fn config_specific_errors() {
    let attr = STD_ATTR.replace(
        "(BM = 64, BN = 64)",
        "(BM = 64, BN = 64, BK = 32), wide = (BM = 64, BN = 128)",
    );
    let e = errors(
        &attr,
        "fn k(#[shape(M, N)] src: Tensor<bf16>) { let t = smem::<bf16>([BM, BK]); let u = foo; }",
    );
    // First-seen order: config `default` is lowered first.
    assert_eq!(
        e,
        [
            "cannot find `foo` in this kernel",
            "cannot find `BK` in this kernel; did you mean `BM`? (in config `wide`)"
        ]
    );
}

/// Diagnostics from the passes come back as errors (here: TMEM on Hopper).
#[test]
fn pass_diagnostics_are_reported() {
    let (def, mut sink) = def(
        STD_ATTR,
        "fn k(#[shape(M, N)] src: Tensor<bf16>) { let acc = tmem::<f32>([128, 64]); let a = smem::<bf16>([128, 64], swizzle = B128); #[scope(warp = 0, elect)] { tcgen05::mma(acc, a, a); } }",
    );
    let (arts, _) = expand::compile(&def, &TileFns::default(), &mut sink);
    assert!(arts.is_empty());
    let e: Vec<String> = sink
        .finish()
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect();
    assert!(!e.is_empty());
}

/// A pass's scope error on a kernel with one implicit config still fails the build.
#[test]
fn a_scope_error_from_the_passes_fails_a_one_config_kernel() {
    let (def, mut sink) = def(
        "target = sm_100a, threads = 128, grid = (1, 1)",
        "fn k(#[shape(M, K)] a: Tensor<bf16>) { let a_s = smem::<bf16>([128, 64], swizzle = B128); let b_s = smem::<bf16>([128, 64], swizzle = B128); let acc = tmem::<f32>([128, 128]); tcgen05::mma(acc, a_s, b_s, accumulate = false); }",
    );
    let (arts, _) = expand::compile(&def, &TileFns::default(), &mut sink);
    let e: Vec<String> = sink
        .finish()
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect();
    assert!(arts.is_empty(), "{e:?}");
    assert!(e[0].contains("must run on one thread"), "{e:?}");
}

/// A TMA store has no multicast form: the argument is refused, not ignored.
#[test]
fn a_tma_store_takes_no_multicast() {
    let e = body_errors(
        "let t = smem::<bf16>([64, 64], swizzle = B128); #[scope(thread = 0)] { tma::store(dst.tile(0, 0), t, multicast = 3); }",
    );
    assert!(e.iter().any(|m| m.contains("multicast")), "{e:?}");
}

#[test]
fn constant_indices_of_staged_buffers_are_range_checked() {
    let body = "let st = smem::<bf16>([STAGES, BM, BN], swizzle = B128); let bar = mbarrier();";
    let attr = STD_ATTR.replace("BN = 64", "BN = 64, STAGES = 3");
    let run = |stmts: &str| {
        errors(
            &attr,
            &format!("fn k(#[shape(M, N)] src: Tensor<bf16>) {{ {body} {stmts} }}"),
        )
    };
    // A literal, a config constant and an expression of constants, as a copy's destination
    // and as a TMA load's.
    for (index, v) in [("3", 3), ("STAGES", 3), ("STAGES + 1", 4)] {
        assert_one(
            &run(&format!(
                "#[scope(thread = 0)] {{ tma::load(st[{index}], src.tile(0, 0), bar); }}"
            )),
            &format!("index {v} out of range: dimension 0 of `st` has 3 entries (0…2)"),
        );
    }
    assert_one(
        &run("let t = regs::<f32>([BM, BN]); copy(t, st[STAGES - 1]); copy(st[5], t);"),
        "index 5 out of range: dimension 0 of `st` has 3 entries (0…2)",
    );
    // In range, and a run-time index, pass.
    assert!(
        run("let t = regs::<f32>([BM, BN]); copy(t, st[STAGES - 1]); copy(st[cta.x % STAGES], t);")
            .is_empty()
    );
    // A TMEM stage.
    let e = errors(
        "target = sm_100a, threads = 128, grid = (1, 1)",
        "fn k() { let acc = tmem::<f32>([2, 128, 64]); \
         let t = regs::<f32>([128, 64]); copy(t, acc[2]); }",
    );
    assert_contains(
        &e,
        "index 2 out of range: dimension 0 of `acc` has 2 entries (0…1)",
    );
}

#[test]
fn constant_shifts_by_the_width_or_more_are_errors() {
    for (stmt, msg) in [
        (
            "let s = cta.x << 32;",
            "`<< 32` shifts a 32-bit scalar by 32",
        ),
        (
            "let s = cta.x >> BN;",
            "`>> 64` shifts a 32-bit scalar by 64",
        ),
        (
            "let mut s = cta.x; s <<= 40;",
            "`<< 40` shifts a 32-bit scalar by 40",
        ),
        ("let s = 1 << 33;", "`<< 33` shifts a 32-bit scalar by 33"),
    ] {
        assert_contains(&body_errors(stmt), msg);
    }
    assert!(body_errors("let s = (cta.x << 31) >> 5;").is_empty());
}

#[test]
fn launch_sizes_over_the_hardware_limits_are_errors() {
    assert_contains(
        &errors(&format!("{STD_ATTR}, cluster = (4, 4, 1)"), "fn k() {}"),
        "a cluster of 4×4×1 = 16 CTAs: the portable maximum is 8",
    );
    let attr = "target = sm_90a, threads = 128, cluster = (CX, 2, 1), grid = (16, 1), \
                configs(default = (CX = 8))";
    assert_contains(
        &errors(attr, "fn k() {}"),
        "a cluster of 8×2×1 = 16 CTAs: the portable maximum is 8",
    );
    assert_contains(
        &errors(
            "target = sm_90a, threads = 128, grid = (1, 70000)",
            "fn k() {}",
        ),
        "the grid's y is 70000 CTAs, over the launch limit of 65535",
    );
    assert_contains(
        &errors(
            "target = sm_90a, threads = 128, grid = (1, 1, G), configs(default = (G = 65536))",
            "fn k() {}",
        ),
        "the grid's z is 65536 CTAs, over the launch limit of 65535",
    );
    // At the limits: no error.
    let attr = "target = sm_90a, threads = 128, grid = (2147483640, 65535, 1), cluster = (8, 1, 1)";
    assert!(errors(attr, "fn k() {}").is_empty());
}

#[test]
fn unknown_functions_are_named_in_every_position() {
    let tiles = "let t = regs::<f32>([BM, BN]); copy(t, tile);";
    for (stmt, name) in [
        // As a copy's source, inside a tile expression, as a statement's value.
        ("copy(t, foo(tile));", "foo"),
        ("let u = t * foo(2.0);", "foo"),
        ("copy(tile, exp3(t));", "exp3"),
        ("let m = rowmax(t);", "rowmax"),
    ] {
        let e = with_prelude(&format!("{tiles} {stmt}"));
        assert_contains(
            &e,
            &format!("unknown function `{name}`; functions on register tiles are "),
        );
    }
    assert_contains(
        &with_prelude(&format!("{tiles} copy(tile, exp2_aprox(t));")),
        "did you mean `exp2_approx`?",
    );
    // Scalar positions name the scalar functions.
    for stmt in [
        "let s = foo(cta.x);",
        "if foo(cta.x) { sync_threads(); }",
        "for i in 0..foo(4) { sync_threads(); }",
    ] {
        assert_contains(
            &with_prelude(stmt),
            "unknown function `foo`; scalar functions are",
        );
    }
}

/// A layout that fails in one config is one error, at the layout, for that config: the valid
/// statements that use the broken tile (in expressions, reductions, masks, statistics) are
/// not blamed (issue #30 item 8).
#[test]
fn a_bad_layout_in_one_config_does_not_cascade() {
    let attr = STD_ATTR.replace(
        "(BM = 64, BN = 64)",
        "(BM = 64, BN = 64), narrow = (BM = 64, BN = 12)",
    );
    let real = "a 64×12 tile cannot be spread over 128 threads with 8 consecutive elements each: the row length is not a multiple of the vector width; no vector width fits 64×12 over 128 threads (docs/guide.md §1 says which shapes do) (in config `narrow`)";
    for uses in [
        "copy(dst.tile(cta.y, cta.x), t * 2.0);",
        "let m = reduce_max(t, axis = 1); copy(dst.tile(cta.y, cta.x), t - m);",
        "let inside = col_index(t) < N; let v = select(inside, t, 0.0); copy(dst.tile(0, 0), v);",
        "let s = regs::<f32>([BM, 1], layout = stat(t, axis = 1)); copy(s, src.tile(0, 0));",
    ] {
        let e = errors(
            &attr,
            &format!(
                "fn k(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {{ let t = regs::<f32>([BM, BN], layout = blocked(vec = 8)); copy(t, src.tile(cta.y, cta.x)); {uses} }}"
            ),
        );
        assert_eq!(e, [real], "{uses}");
    }
    // The default layout (the wgmma fragment) is checked at the declaration too.
    let e = body_errors("let acc = regs::<f32>([48, 64]); acc = 0.0; copy(dst.tile(0, 0), acc);");
    assert_eq!(
        e,
        [
            "the wgmma accumulator fragment is m64·i × n8·j; 48×64 is not: a register tile without `layout = …` takes the wgmma accumulator fragment; give it a layout that fits, e.g. `layout = blocked(vec = V)`"
        ]
    );
    // The widths that would fit are named.
    assert_one(
        &body_errors("let t = regs::<f32>([64, 64], layout = blocked(vec = 3));"),
        "a 64×64 tile cannot be spread over 128 threads with 3 consecutive elements each: the row length is not a multiple of the vector width; `vec = 8`, `vec = 4`, `vec = 2`, `vec = 1` fit",
    );
    // An error at a statement that does not read the broken name is still reported, and a
    // field or path segment spelled like it is not the name (`cta.x`).
    let e = body_errors(
        "let t = regs::<f32>([64, 12], layout = blocked(vec = 8)); copy(t, src.tile(0, 0)); tma::lod(t);",
    );
    assert_eq!(e.len(), 2, "{e:#?}");
    let e = body_errors(
        "let x = regs::<f32>([64, 12], layout = blocked(vec = 8)); sync_threads(cta.x);",
    );
    assert_eq!(e.len(), 2, "{e:#?}");
}

/// An unknown function lists the nearest names that exist, up to three, nearest first: typos
/// by edit distance, then names the unknown one begins or is a word of (issue #30 item 8).
#[test]
fn unknown_functions_list_the_nearest_ones() {
    let tile = "let t = regs::<f32>([64, 64], layout = blocked(vec = 8)); copy(t, src.tile(0, 0));";
    let fns = "exp2_approx, exp2_poly3, log2_approx, rsqrt_approx, rcp_approx, rcp, sqrt, tanh_approx, to_bits, from_bits, abs, fma, select, cast, row_index, col_index, reduce_max, reduce_sum, reduce_min, argmax, argmin, gather, min, max";
    let own = "a function of your own is a `#[tile_fn]` of a `#[tile_module]` that holds this kernel (docs/language.md §10)";
    for (call, hint) in [
        ("exp(t)", "did you mean `exp2_approx` or `exp2_poly3`?"),
        ("sum(t, axis = 1)", "did you mean `reduce_sum`?"),
        (
            "reduce_mx(t, axis = 1)",
            "did you mean `reduce_max`, `reduce_min` or `reduce_sum`?",
        ),
        ("softmax(t)", own),
    ] {
        let name = call.split('(').next().unwrap();
        assert_eq!(
            body_errors(&format!("{tile} copy(dst.tile(0, 0), {call});")),
            [format!(
                "unknown function `{name}`; functions on register tiles are {fns}; {hint}"
            )]
        );
    }
    assert_contains(
        &body_errors(&format!("{tile} my_helper(t);")),
        &format!(
            "unknown op `my_helper`; ops are copy, mma, sync_threads, cluster_sync, named_barrier, named_barrier_arrive, warp_any, warp_all, warp_ballot, tma::…, atomic::…, wgmma::…, tcgen05::…, clc::…, fence::…, grid::…, setmaxnreg::…; {own}"
        ),
    );
    assert_one(
        &body_errors("let x = cdv(N, 64);"),
        "unknown function `cdv`; scalar functions are cdiv, min, max; did you mean `cdiv`?",
    );
    // A name shorter than three letters gets its one nearest typo.
    assert_eq!(
        crate::parse::nearest("BX", &["BM".into(), "BN".into(), "BK".into()]),
        ["BM"]
    );
}

#[test]
fn an_integer_tile_adds_into_a_tensor_of_its_own_type_only() {
    let e = errors(
        "target = sm_90a, threads = 128, grid = (1, 1)",
        "fn k(#[shape(M, N)] x: Tensor<i64>, #[shape(M, N)] h: Tensor<bf16>) { \
         let t = regs::<i64>([32, 64], layout = blocked(vec = 2)); copy(t, x.tile(0, 0)); \
         atomic::add(h.tile(0, 0), t, scope = gpu); }",
    );
    assert_contains(
        &e,
        "an i64 tile cannot be stored into a bf16 tensor without a cast: integers move between tiles and tensors of their own type",
    );
    // 64-bit integers take atomics into their own type.
    let ok = errors(
        "target = sm_90a, threads = 128, grid = (1, 1)",
        "fn k(#[shape(M, N)] x: Tensor<i64>, #[shape(M, N)] y: Tensor<i64>) { \
         let t = regs::<i64>([32, 64], layout = blocked(vec = 2)); copy(t, x.tile(0, 0)); \
         atomic::add(y.tile(0, 0), t, scope = gpu); atomic::max(y.tile(0, 0), t, scope = gpu); }",
    );
    assert!(ok.is_empty(), "{ok:?}");
}
