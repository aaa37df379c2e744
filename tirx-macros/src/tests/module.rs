//! `#[tile_module]` and tile functions: kernels sharing helpers, results, argument kinds,
//! name hiding, recursion and the errors' call-site notes.

use super::*;
use crate::module::{ModuleDef, ModuleItem};

/// Two kernels of the GEMM ladder's shape, one tiled and one persistent, sharing a tile
/// scheduler and the producer and consumer loops.
const LADDER: &str = r#"
mod ladder {
    use tirx::prelude::*;

    /// Passes through.
    pub const WAVES: u32 = 1;

    /// Grouped rasterization: output tile (m, n) of linear tile index t.
    #[tile_fn]
    fn tile_of(t: u32, tiles_m: u32, tiles_n: u32, group: u32) -> (u32, u32) {
        let group_size = group * tiles_n;
        let first = (t / group_size) * group;
        let rows = min(tiles_m - first, group);
        (first + (t % group_size) % rows, (t % group_size) / rows)
    }

    /// The producer loop over one tile's K steps.
    #[tile_fn]
    fn load_k(pipe: Pipe, it: u32, a_s: Smem, b_s: Smem, a: Global, b: Global, m: u32, n: u32, k_tiles: u32) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(it);
            tma::load(a_s[s], a.tile(m, k), pipe.full(s));
            tma::load(b_s[s], b.tile(n, k), pipe.full(s));
            it += 1;
        }
        it
    }

    /// The consumer loop over one tile's K steps, then its store.
    #[tile_fn]
    fn mma_k(pipe: Pipe, it: u32, acc: Regs, a_s: Smem, b_s: Smem, d: Global, m: u32, n: u32, k_tiles: u32) -> u32 {
        let mut it = it;
        for k in 0..k_tiles {
            let s = pipe.consumer_wait(it);
            wgmma::fence();
            wgmma::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
            wgmma::commit();
            wgmma::wait(0);
            #[scope(thread = 128)]
            {
                pipe.consumer_release(s);
            }
            it += 1;
        }
        copy(d.tile(m, n), acc);
        it
    }

    #[tile_kernel(target = sm_90a, threads = 256, grid = (cdiv(N, BN), cdiv(M, BM)),
                  configs(default = (BM = 128, BN = 128, BK = 64, STAGES = 4)))]
    pub fn tiled(#[shape(M, K)] a: Tensor<bf16>, #[shape(N, K)] b: Tensor<bf16>, #[shape(M, N)] d: Tensor<bf16>) {
        let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1);
        let k_tiles = cdiv(K, BK);
        #[scope(warp = 0, elect)]
        {
            let _ = load_k(pipe, 0, a_s, b_s, a, b, cta.y, cta.x, k_tiles);
        }
        #[scope(warpgroup = 1)]
        {
            let _ = mma_k(pipe, 0, acc, a_s, b_s, d, cta.y, cta.x, k_tiles);
        }
    }

    #[tile_kernel(target = sm_90a, threads = 256, grid = (132, 1),
                  configs(default = (BM = 128, BN = 128, BK = 64, STAGES = 4, GROUP = 8)))]
    pub fn persistent(#[shape(M, K)] a: Tensor<bf16>, #[shape(N, K)] b: Tensor<bf16>, #[shape(M, N)] d: Tensor<bf16>) {
        let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1);
        let tiles_m = cdiv(M, BM);
        let tiles_n = cdiv(N, BN);
        let k_tiles = cdiv(K, BK);
        #[scope(warp = 0, elect)]
        {
            let mut it = 0;
            for t in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                let (m, n) = tile_of(t, tiles_m, tiles_n, GROUP);
                it = load_k(pipe, it, a_s, b_s, a, b, m, n, k_tiles);
            }
        }
        #[scope(warpgroup = 1)]
        {
            let mut it = 0;
            for t in (cta.x..tiles_m * tiles_n).step_by(ncta.x) {
                let (m, n) = tile_of(t, tiles_m, tiles_n, GROUP);
                it = mma_k(pipe, it, acc, a_s, b_s, d, m, n, k_tiles);
            }
        }
    }
}
"#;

/// The module's contents, sorted, and the sink with its own errors.
fn module(src: &str) -> (ModuleDef, ErrorSink) {
    let m: syn::ItemMod = syn::parse_str(src).expect("a module");
    let mut sink = ErrorSink::new();
    let def = ModuleDef::new(m.content.expect("inline").1, &mut sink);
    (def, sink)
}

/// Every kernel of a module: its definition (errors go to `sink`).
fn kernels(def: &ModuleDef, sink: &mut ErrorSink) -> Vec<KernelDef> {
    let mut out = Vec::new();
    for item in &def.items {
        if let ModuleItem::Kernel { attr, item } = item {
            out.push(KernelDef::new(attr.clone(), item.clone(), &def.fns, sink));
        }
    }
    out
}

fn messages(sink: ErrorSink) -> Vec<String> {
    sink.finish()
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect()
}

/// Every front-end error of a module: its own and each kernel's lowering.
fn module_errors(src: &str) -> Vec<String> {
    let (def, mut sink) = module(src);
    for k in kernels(&def, &mut sink) {
        let _ = expand::lower_configs(&k, &def.fns, &mut sink).ok;
    }
    messages(sink)
}

/// The IR text of kernel `name` (first config), which must lower without errors.
fn module_ir(src: &str, name: &str) -> String {
    let (def, mut sink) = module(src);
    let k = kernels(&def, &mut sink)
        .into_iter()
        .find(|k| k.name == name)
        .expect("the kernel");
    let low = expand::lower_configs(&k, &def.fns, &mut sink).ok;
    let errors = messages(sink);
    assert!(errors.is_empty(), "unexpected errors: {errors:#?}");
    low[0].1.kernel.to_string()
}

/// Errors of a one-kernel module with `helpers` and a kernel body after a standard prelude.
fn helper_errors(helpers: &str, body: &str) -> Vec<String> {
    module_errors(&format!(
        "mod m {{ {helpers} #[tile_kernel({STD_ATTR})] fn k(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {{ {PRELUDE} {body} }} }}"
    ))
}

/// The IR of that kernel, which must lower.
fn helper_ir(helpers: &str, body: &str) -> String {
    module_ir(
        &format!(
            "mod m {{ {helpers} #[tile_kernel({STD_ATTR})] fn k(#[shape(M, N)] src: Tensor<bf16>, #[shape(M, N)] dst: Tensor<bf16>) {{ {PRELUDE} {body} }} }}"
        ),
        "k",
    )
}

const PRELUDE: &str = "let tile = smem::<bf16>([BM, BN], swizzle = B128); let bar = mbarrier(); \
                       let pipe = pipeline::<2>(); let acc = tmem::<f32>([128, 64]);";

fn has_line(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "missing line {line:?} in\n{text}"
    );
}

#[test]
fn two_kernels_share_helpers_and_compile() {
    let (def, mut sink) = module(LADDER);
    assert_eq!(def.fns.names(), ["tile_of", "load_k", "mma_k"]);
    let ks = kernels(&def, &mut sink);
    assert_eq!(ks.len(), 2);
    for k in &ks {
        // `d` is written inside `mma_k`: the launcher takes it `&mut`.
        assert_eq!(k.written.iter().collect::<Vec<_>>(), ["d"], "{}", k.name);
        let (artifacts, _) = expand::compile(k, &def.fns, &mut sink);
        assert_eq!(artifacts.len(), 1, "{}", k.name);
    }
    let errors = messages(sink);
    assert!(errors.is_empty(), "{errors:#?}");
    // Other items pass through, in order.
    let others: Vec<String> = def
        .items
        .iter()
        .filter_map(|i| match i {
            ModuleItem::Other(item) => Some(quote::quote!(#item).to_string()),
            ModuleItem::Kernel { .. } => None,
        })
        .collect();
    assert_eq!(others.len(), 2);
    assert!(
        others[0].starts_with("use tirx :: prelude :: *"),
        "{others:?}"
    );
    assert!(others[1].contains("const WAVES"), "{others:?}");
}

#[test]
fn calls_are_inlined() {
    let text = module_ir(LADDER, "persistent");
    for line in [
        // `tile_of(t, tiles_m, tiles_n, GROUP)`: variables and the constant bind as they are;
        // the body's lets follow, then the results bind `m` and `n`.
        "      for %4 = ctaid.x to %0 * %1 step nctaid.x {",
        "        let %5 = 8:u32 * %1",
        "        let %7 = min(%0 - %6, 8:u32)",
        "        let %8 = %6 + %4 % %5 % %7",
        "        let %9 = %4 % %5 / %7",
        // `it = load_k(…)`: the body's `let mut it = it`, its loop, then the assignment.
        "        let %10 = %3",
        "          op copy @a_s[%12] <- global a[%8, %11] bar @pipe.full[%12] variant tma_load",
        "          %10 = %10 + 1:u32",
        "        %3 = %10",
        // The consumer's scope inside `mma_k` stays where it was written.
        "        scope thread 128 {",
        "      op copy global d[%18, %19] <- @acc",
    ] {
        has_line(&text, line);
    }
    assert!(
        !text.contains("tile_of") && !text.contains("load_k"),
        "{text}"
    );
}

#[test]
fn tuple_results_and_parallel_assignment() {
    let swap = "#[tile_fn] fn swap(a: u32, b: u32) -> (u32, u32) { (b, a) }";
    let text = helper_ir(
        swap,
        "let mut x = tid; let mut y = x + 2; let (p, _) = swap(x, y); (x, y) = swap(x, y);",
    );
    for line in [
        // `let (p, _) = …`: the parameters alias the variables, and `_` binds nothing.
        "  let %2 = %1",
        // `(x, y) = swap(x, y)`: both results are read before either target is written.
        "  let %3 = %1",
        "  let %4 = %0",
        "  %0 = %3",
        "  %1 = %4",
    ] {
        has_line(&text, line);
    }
    assert_eq!(text.matches("let ").count(), 5, "{text}");
}

#[test]
fn constants_and_shape_symbols_are_visible_in_a_tile_fn() {
    let helper = "#[tile_fn] fn tiles() -> u32 { cdiv(N, BN) * BM }";
    let text = helper_ir(helper, "let t = tiles();");
    has_line(&text, "  let %0 = cdiv(dim N, 64:u32) * 64:u32");
}

#[test]
fn arguments_are_evaluated_once() {
    let helper = "#[tile_fn] fn twice(x: u32) -> u32 { x + x }";
    let text = helper_ir(helper, "let y = twice(tid * 3); let z = twice(7);");
    // A non-atom argument gets a variable named after the parameter.
    has_line(&text, "  var %0: u32 \"x\"");
    has_line(&text, "  let %0 = tid.x * 3:u32");
    has_line(&text, "  let %1 = %0 + %0");
    // An immediate is substituted and folds.
    has_line(&text, "  let %2 = 14:u32");
}

#[test]
fn a_zero_argument_adds_nothing() {
    // A counter's start passed as 0 (`attention_pieces::load_kv`'s `it`): `it + n` is `n`.
    let helper = "#[tile_fn] fn at(it: u32, n: u32) -> u32 { (it + n) - 0 }";
    let text = helper_ir(helper, "let y = at(0, tid); let z = at(tid, 0);");
    has_line(&text, "  let %0 = tid.x");
    has_line(&text, "  let %1 = tid.x");
    assert!(!text.contains('+'), "{text}");
}

#[test]
fn argument_kinds_are_checked() {
    let helper = "#[tile_fn] fn use_all(s: Smem, t: Tmem, b: Bar, p: Pipe, g: Global, n: u32) {}";
    let e = helper_errors(helper, "use_all(acc, acc, bar, pipe, src, 1);");
    assert_eq!(
        e,
        ["argument `s` of `use_all` is a smem buffer (`s: Smem`); `acc` is a tmem buffer"]
    );
    let e = helper_errors(helper, "use_all(tile, acc, pipe, bar, tile, tile);");
    assert_eq!(
        e,
        [
            "argument `b` of `use_all` is an mbarrier (`b: Bar`); `pipe` is a pipeline",
            "argument `p` of `use_all` is a pipeline (`p: Pipe`); `bar` is an mbarrier",
            "argument `g` of `use_all` is a global tensor (`g: Global`); `tile` is a smem buffer",
            "argument `n` of `use_all` is a u32 scalar (`n: u32`); `tile` is a smem buffer",
        ]
    );
    let e = helper_errors(helper, "use_all(tile[0], acc, bar, pipe, src, tid > 1);");
    assert_eq!(
        e,
        [
            "argument `s` of `use_all` is a smem buffer (`s: Smem`); pass its name, not an expression",
            "argument `n` of `use_all` is a u32 scalar (`n: u32`); this is a bool",
        ]
    );
    assert_eq!(
        helper_errors(helper, "use_all(tile, acc, bar, pipe, src);"),
        [
            "`use_all` takes 6 argument(s): `use_all(s: Smem, t: Tmem, b: Bar, p: Pipe, g: Global, n: u32)`; found 5"
        ]
    );
    assert_eq!(
        helper_errors(helper, "use_all(tile, acc, bar, pipe, nope, 1);"),
        ["cannot find `nope` in this kernel"]
    );
}

#[test]
fn results_are_checked() {
    let helpers = "#[tile_fn] fn one() -> u32 { 1 } #[tile_fn] fn two() -> (u32, bool) { (1, true) } \
                   #[tile_fn] fn none() {}";
    for (body, expected) in [
        (
            "one();",
            "`one` returns u32; use it: `let v = one(…);` or `v = one(…);`",
        ),
        (
            "let (a, b) = one();",
            "`one` returns one u32; take it with `let x = one(…);`",
        ),
        (
            "let a = two();",
            "`two` returns 2 values, (u32, bool); destructure them: `let (x0, x1) = two(…);`",
        ),
        (
            "let (a, b, c) = two();",
            "`two` returns 2 values, (u32, bool); this takes 3",
        ),
        (
            "let x = none();",
            "`none` returns nothing; call it as a statement: `none(…);`",
        ),
        (
            "let mut x = 0; let mut y = 0; (x, y) = two();",
            "this variable is a u32; `two` returns a bool here",
        ),
        (
            "let x = one() + 1;",
            "`one` is a tile function, inlined as a statement; bind its result first: `let v = one(…);`",
        ),
    ] {
        assert_eq!(helper_errors(helpers, body), [expected], "{body}");
    }
    let bad = "#[tile_fn] fn f() -> (u32, u32) { let x = 1; x } #[tile_fn] fn g() -> u32 { 1; } \
               #[tile_fn] fn h() -> bool { 1 }";
    assert_eq!(
        helper_errors(bad, "let (a, b) = f(); let c = g(); let d = h();"),
        [
            "`f` returns (u32, u32): end its body with a tuple of 2 values",
            "in this call of tile function `f` (the error above is in its body)",
            "expected a statement: an op call, `let`, an assignment, `for`, `if` or a block",
            "in this call of tile function `g` (the error above is in its body)",
            "`g` returns u32: end its body with the value, without a `;`",
            "in this call of tile function `g` (the error above is in its body)",
            "`h` returns a bool here; this is a u32",
            "in this call of tile function `h` (the error above is in its body)",
        ]
    );
}

#[test]
fn recursion_is_an_error_at_the_call() {
    let helpers = "#[tile_fn] fn f(x: u32) -> u32 { g(x) } #[tile_fn] fn g(x: u32) -> u32 { let y = f(x); y }";
    assert_eq!(
        helper_errors(helpers, "let a = f(1);"),
        [
            "recursive call of tile function `f` (f → g → f); tile functions are inlined at each call, so they cannot recurse",
            "in this call of tile function `g` (the error above is in its body)",
            "in this call of tile function `f` (the error above is in its body)",
        ]
    );
    let direct = "#[tile_fn] fn f() { f(); }";
    assert_eq!(
        helper_errors(direct, "f();")[0],
        "recursive call of tile function `f` (f → f); tile functions are inlined at each call, so they cannot recurse"
    );
}

#[test]
fn a_tile_fn_sees_only_its_parameters_and_globals() {
    let helper = "#[tile_fn] fn f(n: u32) { let y = x + n; copy(tile, src.tile(0, 0)); }";
    // (Both calls report the same errors; with real spans each call adds its own note, here
    // the fallback spans are all alike and the notes merge.)
    let e = helper_errors(helper, "let x = 1; f(x); f(2);");
    let note = "in this call of tile function `f` (the error above is in its body)";
    assert_eq!(
        e,
        [
            "cannot find `x` in tile function `f`; the caller's `x` is not visible here: pass it as a parameter",
            note,
            "cannot find `tile` in tile function `f`; the caller's `tile` is not visible here: pass it as a parameter",
            note,
            "cannot find `src` in tile function `f`; the caller's `src` is not visible here: pass it as a parameter",
            note,
        ]
    );
    // Declarations belong to the kernel.
    let decl = "#[tile_fn] fn f() { let t = smem::<bf16>([64, 64]); }";
    assert_eq!(
        helper_errors(decl, "f();")[0],
        "declare buffers, barriers and pipelines in the kernel body and pass them to the tile function (parameters `Smem`, `Tmem`, `Regs`, `Bar`, `Pipe`)"
    );
}

#[test]
fn unknown_callees_list_the_tile_fns() {
    let helper = "#[tile_fn] fn tile_of(t: u32) -> u32 { t } #[tile_fn] fn load_k() {}";
    assert_eq!(
        helper_errors(helper, "let m = tile_off(1);"),
        [
            "unknown function `tile_off`; scalar functions are cdiv, min, max; tile functions of this module are tile_of, load_k; did you mean `tile_of`?"
        ]
    );
    assert_eq!(
        helper_errors(helper, "load_j();"),
        [
            "unknown op `load_j`; ops are copy, mma, sync_threads, cluster_sync, named_barrier, named_barrier_arrive, warp_any, warp_all, warp_ballot, tma::…, atomic::…, wgmma::…, tcgen05::…, clc::…, fence::…, grid::…, setmaxnreg::…; tile functions of this module are tile_of, load_k; did you mean `load_k`?"
        ]
    );
}

#[test]
fn signatures_are_checked() {
    let e = module_errors(
        "mod m { #[tile_fn] fn copy(a: f64, mut b: Smem, c: &Bar) -> (u32,) {} \
                 #[tile_fn] fn g() -> Smem {} #[tile_fn] fn g() {} #[tile_fn(x)] fn h<T>(self) {} \
                 #[tile_fn] struct S; }",
    );
    assert_eq!(
        e,
        [
            "`copy` is a built-in of the language; name the tile function differently",
            "unknown parameter type; expected u32, bool (scalars), f32 (a scalar argument of the kernel), Smem, Tmem, Regs (buffers), Bar (an mbarrier), Pipe (a pipeline), Global (a tensor)",
            "only scalar parameters can be `mut`; `Smem` is not a variable",
            // (`c: &Bar` has the same message; without real spans the two merge here.)
            "a one-element tuple; write the scalar type itself",
            "a tile function returns nothing, a scalar (`u32`, `bool`) or a tuple of scalars (`(u32, u32)`)",
            "tile function `g` defined twice",
            "`#[tile_fn]` takes no arguments",
            "a tile function takes no generic parameters; config constants are visible in its body",
            "a tile function takes no `self`",
            "this attribute applies to a function",
        ]
    );
}

/// Every plain word of the vocabulary called like a tile function is refused at the tile
/// function's name (`named_barrier` was once missing from the reserved list, and a tile
/// function of that name silently replaced the op).
#[test]
fn tile_fns_cannot_take_a_dsl_word() {
    let words = [
        "copy",
        "mma",
        "sync_threads",
        "cluster_sync",
        "named_barrier",
        "static_assert",
        "smem",
        "tmem",
        "regs",
        "mbarrier",
        "pipeline",
        "cdiv",
        "min",
        "max",
    ];
    for w in words {
        let e = module_errors(&format!("mod m {{ #[tile_fn] fn {w}() {{}} }}"));
        assert_eq!(
            e,
            [format!(
                "`{w}` is a built-in of the language; name the tile function differently"
            )],
        );
    }
    // Built-in scalars and methods are not called like tile functions, so they stay free.
    for w in ["tid", "wait", "arrive"] {
        assert!(module_errors(&format!("mod m {{ #[tile_fn] fn {w}() {{}} }}")).is_empty());
    }
}

/// A call of a tile function with a bad signature reports nothing more, and compiles nothing.
#[test]
fn broken_tile_fns_fail_quietly() {
    let src = format!(
        "mod m {{ #[tile_fn] fn f(a: f64) {{}} #[tile_kernel({STD_ATTR})] fn k(#[shape(M, N)] src: Tensor<bf16>) {{ f(1); }} }}"
    );
    let (def, mut sink) = module(&src);
    let before = sink.pushes();
    let k = kernels(&def, &mut sink).remove(0);
    assert!(expand::compile(&k, &def.fns, &mut sink).0.is_empty());
    assert_eq!(sink.pushes(), before);
}

/// Scope checks run on the lowered IR, so they apply at each call site.
#[test]
fn scope_checks_apply_per_call_site() {
    let src = r#"
mod m {
    #[tile_fn]
    fn release(pipe: Pipe, s: u32) {
        #[scope(thread = 128)]
        {
            pipe.consumer_release(s);
        }
    }
    #[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
    fn k(#[shape(M, N)] src: Tensor<bf16>) {
        let pipe = pipeline::<2>();
        release(pipe, 0);
    }
}
"#;
    assert_eq!(
        module_errors(src),
        [
            "thread 128 does not exist: the kernel has 128 threads (threads = 128)",
            "in this call of tile function `release` (the error above is in its body)",
        ]
    );
}

/// A diagnostic of the passes inside an inlined body is followed by its call site, once per
/// call (the per-call scope decides: only the unscoped call is wrong).
#[test]
fn pass_diagnostics_carry_their_call_sites() {
    let src = r#"
mod m {
    #[tile_fn]
    fn issue(acc: Tmem, a: Smem) {
        tcgen05::mma(acc, a, a, accumulate = false);
    }
    #[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
    fn k(#[shape(M, N)] src: Tensor<bf16>) {
        let a_s = smem::<bf16>([128, 64], swizzle = B128);
        let acc = tmem::<f32>([128, 128]);
        #[scope(warp = 0, elect)]
        {
            issue(acc, a_s);
        }
        issue(acc, a_s);
    }
}
"#;
    let (def, mut sink) = module(src);
    let k = kernels(&def, &mut sink).remove(0);
    assert!(expand::compile(&k, &def.fns, &mut sink).0.is_empty());
    let e = messages(sink);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(
        e[0].starts_with("`tcgen05::mma` runs here on all 128 threads"),
        "{e:#?}"
    );
    assert_eq!(
        e[1],
        "in this call of tile function `issue` (the error above is in its body)"
    );
}

#[test]
fn expansion_keeps_items_and_drops_tile_fns() {
    let out = expand::tile_module(TokenStream::new(), LADDER.parse().unwrap());
    let text = out.to_string();
    let file: syn::File = syn::parse2(out).expect("valid Rust");
    let syn::Item::Mod(m) = &file.items[0] else {
        panic!("{text}")
    };
    assert_eq!(m.ident, "ladder");
    for needle in [
        "use tirx :: prelude :: * ;",
        "pub const WAVES : u32 = 1 ;",
        "pub mod tiled {",
        "pub mod persistent {",
        "# [allow (unused_imports)] use tile_fn as _ ;",
        "# [allow (unused_imports)] use tile_kernel as _ ;",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in {text}");
    }
    assert!(!text.contains("fn tile_of"), "{text}");
    assert!(!text.contains("compile_error"), "{text}");
    let bad = expand::tile_module(TokenStream::new(), "mod m;".parse().unwrap()).to_string();
    assert!(bad.contains("needs the module's items inline"), "{bad}");
}

/// Inlined statements keep the tile function's tokens; the calls are remembered per span.
#[test]
fn inlined_spans_remember_their_call() {
    let (def, mut sink) = module(LADDER);
    let k = kernels(&def, &mut sink).remove(1);
    let low = expand::lower_configs(&k, &def.fns, &mut sink)
        .ok
        .remove(0)
        .1;
    let mut inlined = 0;
    for s in 0..low.spans.len() {
        let calls = low.spans.calls(tirx_ir::Span(s as u32));
        if let Some(first) = calls.first() {
            assert!(["tile_of", "load_k", "mma_k"].contains(&first.callee.as_str()));
            inlined += 1;
        }
    }
    assert!(inlined > 10, "{inlined}");
}
