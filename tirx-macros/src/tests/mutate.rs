//! A deterministic mutation test of the whole expansion: the shipped kernels and the UI test
//! inputs, with tokens replaced, dropped, duplicated or swapped (extreme integer literals
//! among the replacements), each go through `expand::tile_kernel` / `expand::tile_module`,
//! which must return either compiled artifacts or `compile_error!`s, and never panic.
//!
//! The harness catches a panic only to report it as a failure (with the mutant's source);
//! the compiler itself never catches panics. A panic found here is fixed in the macro and the
//! mutant kept as a regression test in [`regressions`].
//!
//! Inputs: every `#[tile_kernel]` fn and `#[tile_module]` mod of `kernels/src/{copy,gemm}`,
//! `tests/ui/*.rs` and `tests/ui-pass/*.rs`; each kernel's `configs(...)` is cut to its first
//! config and the big warp-specialized module split into one module per kernel (with all the
//! tile functions), so that a mutant expands in milliseconds.
//!
//! Measured (debug build, 2 shared cores at load ~2.3, 2026-12): `mutants_expand_or_error`
//! tries 10,000 random mutants of 43 seeds (706 compile, 9,290 error, 4 lose their kernel
//! attribute) and `every_literal_at_the_edges` 1,227 edge-literal inputs; both together take
//! about 17 s. A one-off run of 80,000 mutants with another seed (`TIRX_MUTANTS=80000
//! TIRX_MUTATE_SEED=12345`, 88 s) found nothing further. The counts are printed:
//! `cargo test -p tirx-macros mutate -- --nocapture`.
//!
//! Here: the harness (what an expansion produced, run without a panic escaping) and the tests;
//! the inputs are in `mutate/seeds.rs`, the token-tree edits in `mutate/tokens.rs`.

mod seeds;
mod tokens;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use seeds::{Seed, all_seeds};
use std::panic::{AssertUnwindSafe, catch_unwind};
use tokens::{Rng, Tree, mutate, parent, paths, stream, tree};

/// How many mutants [`mutants_expand_or_error`] tries.
const MUTANTS: usize = 10_000;

/// What an expansion produced.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// At least one kernel compiled, no errors.
    Compiled,
    /// `compile_error!`s.
    Errors,
    /// No kernel left to compile (the mutation removed the attribute), no errors.
    Nothing,
    /// A kernel module with no artifacts and no error: a silent failure.
    Silent,
}

/// Every `ARTIFACTS = &[…]` list in `ts` (whether it is empty), and whether a
/// `compile_error` appears.
fn scan(ts: TokenStream, artifacts: &mut Vec<bool>, error: &mut bool) {
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    for (i, tt) in tokens.iter().enumerate() {
        match tt {
            TokenTree::Ident(id) if id == "compile_error" => *error = true,
            // `static ARTIFACTS: … = &[…]` (not the `artifacts: ARTIFACTS` of `KERNEL`).
            TokenTree::Ident(id)
                if id == "ARTIFACTS"
                    && i > 0
                    && matches!(&tokens[i - 1], TokenTree::Ident(s) if s == "static") =>
            {
                let list = tokens[i..].iter().find_map(|t| match t {
                    TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => Some(g),
                    _ => None,
                });
                if let Some(g) = list {
                    artifacts.push(!g.stream().is_empty());
                }
            }
            TokenTree::Group(g) => scan(g.stream(), artifacts, error),
            _ => {}
        }
    }
}

fn outcome(out: TokenStream) -> Outcome {
    let (mut artifacts, mut error) = (Vec::new(), false);
    scan(out, &mut artifacts, &mut error);
    if error {
        Outcome::Errors
    } else if artifacts.is_empty() {
        Outcome::Nothing
    } else if artifacts.iter().all(|a| *a) {
        Outcome::Compiled
    } else {
        Outcome::Silent
    }
}

/// Runs `seed`'s expansion, catching a panic only to report it.
fn check(seed: &Seed) -> Result<Outcome, String> {
    match catch_unwind(AssertUnwindSafe(|| seed.run())) {
        Ok(out) => Ok(outcome(out)),
        Err(payload) => Err(payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic without a message".into())),
    }
}

/// The unmutated seeds expand (kernels to artifacts, UI failures to errors) without a panic.
#[test]
fn seeds_expand() {
    let seeds = all_seeds();
    // 2026-12-01: 38 (the `_nn` twins became the kernels' `nn` configs).
    assert!(seeds.len() >= 36, "only {} seeds", seeds.len());
    for (name, seed, _) in &seeds {
        let o = check(seed).unwrap_or_else(|p| panic!("{name} panicked: {p}"));
        assert!(
            o == Outcome::Compiled || (name.starts_with("ui/") && o == Outcome::Errors),
            "{name}: {o:?}"
        );
    }
}

/// Thousands of mutants: each must compile or report errors, and none may panic.
#[test]
fn mutants_expand_or_error() {
    let seeds = all_seeds();
    // `TIRX_MUTANTS` / `TIRX_MUTATE_SEED` explore further by hand; CI uses the fixed ones.
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let mutants = env("TIRX_MUTANTS").map_or(MUTANTS, |n| n as usize);
    let mut rng = Rng(env("TIRX_MUTATE_SEED").unwrap_or(0x7469_7278_6d75_7461) | 1); // "tirxmuta"
    let (mut compiled, mut errors, mut nothing) = (0usize, 0usize, 0usize);
    let mut failures: Vec<String> = Vec::new();
    let start = std::time::Instant::now();
    for n in 0..mutants {
        let (name, seed, idents) = &seeds[n % seeds.len()];
        let mut mutant = seed.clone();
        let edits = 1 + rng.below(3);
        let ts = match &mut mutant {
            Seed::Kernel { attr, .. } if rng.below(4) == 0 => attr,
            Seed::Kernel { item, .. } | Seed::Module { item } => item,
        };
        let mut trees = tree(ts.clone());
        for _ in 0..edits {
            mutate(&mut trees, idents, &mut rng);
        }
        *ts = stream(&trees);
        match check(&mutant) {
            Ok(Outcome::Compiled) => compiled += 1,
            Ok(Outcome::Errors) => errors += 1,
            Ok(Outcome::Nothing) => nothing += 1,
            Ok(Outcome::Silent) => failures.push(format!(
                "mutant {n} of {name}: no artifacts and no error\n{}",
                mutant.show()
            )),
            Err(p) => failures.push(format!(
                "mutant {n} of {name} panicked: {p}\n{}",
                mutant.show()
            )),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{mutants} mutants of {} seeds in {secs:.1} s: {compiled} compiled, {errors} errors, \
         {nothing} without a kernel, {} failures",
        seeds.len(),
        failures.len()
    );
    for f in failures.iter().take(6) {
        let cut: String = f.chars().take(4000).collect();
        println!("{cut}\n");
    }
    assert!(failures.is_empty(), "{} mutants failed", failures.len());
    assert_eq!(compiled + errors + nothing, mutants);
    // A floor, so that the test cannot silently stop compiling anything.
    assert!(mutants >= 2_000, "only {mutants} mutants");
    // 2026-12-01: 389 compiled and 9,608 errors of 10,000.
    assert!(
        compiled >= mutants / 40 && errors >= mutants / 4,
        "{compiled} / {errors}"
    );
}

/// Every integer literal of every seed, one at a time, replaced by each of a few values at
/// the edges of the arithmetic (u32 and 2^31 boundaries, 2^40): the sizes, counts, extents
/// and grids that feed byte and offset computations.
#[test]
fn every_literal_at_the_edges() {
    const EDGES: &[&str] = &["0", "2147483648", "4294967295"];
    let mut tried = 0usize;
    let mut failures = Vec::new();
    for (name, seed, _) in all_seeds() {
        // One module per source: the split warp-specialized module repeats its tile
        // functions' literals in each of its sixteen seeds.
        if matches!(seed, Seed::Module { .. }) && !name.ends_with("#0") {
            continue;
        }
        let mut parts: Vec<TokenStream> = match &seed {
            Seed::Kernel { attr, item } => vec![attr.clone(), item.clone()],
            Seed::Module { item } => vec![item.clone()],
        };
        for part in 0..parts.len() {
            let trees = tree(parts[part].clone());
            let mut all = Vec::new();
            paths(&trees, &mut Vec::new(), &mut all);
            for p in &all {
                let mut t = trees.clone();
                let (list, i) = parent(&mut t, p);
                if !matches!(&list[i], Tree::Leaf(TokenTree::Literal(l)) if l.to_string().starts_with(|c: char| c.is_ascii_digit()))
                {
                    continue;
                }
                for edge in EDGES {
                    let mut t = t.clone();
                    let (list, i) = parent(&mut t, p);
                    list.splice(i..=i, tree(edge.parse().expect("a literal")));
                    let saved = std::mem::replace(&mut parts[part], stream(&t));
                    let mutant = match &seed {
                        Seed::Kernel { .. } => Seed::Kernel {
                            attr: parts[0].clone(),
                            item: parts[1].clone(),
                        },
                        Seed::Module { .. } => Seed::Module {
                            item: parts[0].clone(),
                        },
                    };
                    parts[part] = saved;
                    tried += 1;
                    match check(&mutant) {
                        Ok(Outcome::Silent) => {
                            failures.push(format!("{name}: silent\n{}", mutant.show()))
                        }
                        Ok(_) => {}
                        Err(e) => failures.push(format!("{name}: {e}\n{}", mutant.show())),
                    }
                }
            }
        }
    }
    println!("{tried} edge-literal inputs, {} failures", failures.len());
    for f in failures.iter().take(6) {
        let cut: String = f.chars().take(4000).collect();
        println!("{cut}\n");
    }
    assert!(failures.is_empty(), "{} inputs failed", failures.len());
    assert!(tried >= 1_000, "only {tried} inputs");
}

/// Mutants that once panicked, cut down to the statement that did.
mod regressions {
    use crate::tests::{STD_ATTR, body_errors, errors};

    /// `Layout::row_major` multiplied the extents into u32 strides unchecked.
    #[test]
    fn buffer_extents_overflow() {
        assert_eq!(
            body_errors("let d_s = smem::<bf16>([1, 4294967295, 64], swizzle = B128);"),
            [
                "this buffer is too large: 1 × 4294967295 × 64 bf16 elements of 2 bytes do not fit in 2^32 bytes"
            ]
        );
        assert_eq!(
            body_errors("let acc = regs::<f32>([65536, 16384]);"),
            [
                "this buffer is too large: 65536 × 16384 f32 elements of 4 bytes do not fit in 2^32 bytes"
            ]
        );
    }

    /// `consumers * peers` (a pipeline's empty-barrier arrivals) was unchecked.
    #[test]
    fn pipeline_arrivals_overflow() {
        assert_eq!(
            body_errors("let p = pipeline::<2>(consumers = 65536, peers = 65536);"),
            ["65536 consumers × 65536 peers arrivals overflow a u32 count"]
        );
    }

    /// `writers + 1` (a pipeline's full-barrier arrivals: the writers and the TMA producer).
    #[test]
    fn pipeline_writers_overflow() {
        assert_eq!(
            body_errors("let p = pipeline::<2>(writers = 4294967295);"),
            ["4294967295 writers overflow a u32 count"]
        );
    }

    /// `plan-memory` summed `8 * count` bytes of mbarriers unchecked.
    #[test]
    fn barrier_count_overflow() {
        let item = "fn k(#[shape(M, N)] src: Tensor<bf16>) { let bar = mbarrier(count = 4294967295); \
                    #[scope(thread = 0)] { bar.arrive(); } }";
        let (def, mut sink) = crate::tests::def(STD_ATTR, item);
        let _ = crate::expand::compile(&def, &crate::module::TileFns::default(), &mut sink);
        let e: Vec<String> = sink
            .finish()
            .into_iter()
            .flatten()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            e,
            [
                "shared memory over budget: the mbarriers `bar` (4294967295 of 8 bytes, 34359738360 bytes) do not fit in 232448 (227 KB)"
            ]
        );
        // The front end alone accepts it: the limit is the pass's.
        assert!(errors(STD_ATTR, item).is_empty());
    }
}
