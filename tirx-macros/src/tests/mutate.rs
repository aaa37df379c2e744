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

use crate::expand;
use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, TokenStream, TokenTree};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// How many mutants [`mutants_expand_or_error`] tries.
const MUTANTS: usize = 10_000;

/// The sources, read at build time.
const SOURCES: &[(&str, &str)] = &[
    (
        "tma_copy",
        include_str!("../../../kernels/src/copy/tma_copy.rs"),
    ),
    (
        "level_01",
        include_str!("../../../kernels/src/gemm/level_01_sync.rs"),
    ),
    (
        "level_02",
        include_str!("../../../kernels/src/gemm/level_02_tma.rs"),
    ),
    (
        "level_03_wgmma",
        include_str!("../../../kernels/src/gemm/level_03_pipeline_wgmma.rs"),
    ),
    (
        "level_03_tcgen05",
        include_str!("../../../kernels/src/gemm/level_03_pipeline_tcgen05.rs"),
    ),
    (
        "level_04",
        include_str!("../../../kernels/src/gemm/level_04_ws1.rs"),
    ),
    (
        "level_05",
        include_str!("../../../kernels/src/gemm/level_05_2wg.rs"),
    ),
    (
        "level_06",
        include_str!("../../../kernels/src/gemm/level_06_persistent.rs"),
    ),
    (
        "level_07",
        include_str!("../../../kernels/src/gemm/level_07_cluster.rs"),
    ),
    (
        "level_08",
        include_str!("../../../kernels/src/gemm/level_08_tma_epi.rs"),
    ),
    (
        "pair_n",
        include_str!("../../../kernels/src/gemm/pair_n.rs"),
    ),
    (
        "scaled",
        include_str!("../../../kernels/src/gemm/scaled.rs"),
    ),
    (
        "ui/elem_type_and_integer",
        include_str!("../../../tests/ui/elem_type_and_integer.rs"),
    ),
    (
        "ui/elem_type_launch_mismatch",
        include_str!("../../../tests/ui/elem_type_launch_mismatch.rs"),
    ),
    (
        "ui/elem_type_missing_in_config",
        include_str!("../../../tests/ui/elem_type_missing_in_config.rs"),
    ),
    (
        "ui/expect_tx_disagrees",
        include_str!("../../../tests/ui/expect_tx_disagrees.rs"),
    ),
    (
        "ui/loop_never_runs",
        include_str!("../../../tests/ui/loop_never_runs.rs"),
    ),
    (
        "ui/mn_major_a_operand",
        include_str!("../../../tests/ui/mn_major_a_operand.rs"),
    ),
    (
        "ui/mn_tensor_misuse",
        include_str!("../../../tests/ui/mn_tensor_misuse.rs"),
    ),
    (
        "ui/mn_major_bad_declaration",
        include_str!("../../../tests/ui/mn_major_bad_declaration.rs"),
    ),
    (
        "ui/scaled_copy_errors",
        include_str!("../../../tests/ui/scaled_copy_errors.rs"),
    ),
    ("ui/sm_120", include_str!("../../../tests/ui/sm_120.rs")),
    (
        "ui/smem_over_budget",
        include_str!("../../../tests/ui/smem_over_budget.rs"),
    ),
    (
        "ui/static_assert",
        include_str!("../../../tests/ui/static_assert.rs"),
    ),
    (
        "ui/tcgen05_ld_outside_warpgroup",
        include_str!("../../../tests/ui/tcgen05_ld_outside_warpgroup.rs"),
    ),
    (
        "ui/tcgen05_mma_outside_elect",
        include_str!("../../../tests/ui/tcgen05_mma_outside_elect.rs"),
    ),
    (
        "ui/tcgen05_on_hopper",
        include_str!("../../../tests/ui/tcgen05_on_hopper.rs"),
    ),
    (
        "ui/tile_fn_recursion",
        include_str!("../../../tests/ui/tile_fn_recursion.rs"),
    ),
    (
        "ui/tile_fn_scalar_args",
        include_str!("../../../tests/ui/tile_fn_scalar_args.rs"),
    ),
    (
        "ui/tile_fn_wrong_kind",
        include_str!("../../../tests/ui/tile_fn_wrong_kind.rs"),
    ),
    (
        "ui/tmem_alloc_outside_warp",
        include_str!("../../../tests/ui/tmem_alloc_outside_warp.rs"),
    ),
    (
        "ui/tmem_columns",
        include_str!("../../../tests/ui/tmem_columns.rs"),
    ),
    (
        "ui/unknown_op",
        include_str!("../../../tests/ui/unknown_op.rs"),
    ),
    (
        "ui-pass/tile_module",
        include_str!("../../../tests/ui-pass/tile_module.rs"),
    ),
    (
        "ui-pass/user_pipelined_copy",
        include_str!("../../../tests/ui-pass/user_pipelined_copy.rs"),
    ),
];

/// One input of the expansion.
#[derive(Clone)]
enum Seed {
    /// `#[tile_kernel(attr)] item`.
    Kernel {
        attr: TokenStream,
        item: TokenStream,
    },
    /// `#[tile_module] item`.
    Module { item: TokenStream },
}

impl Seed {
    fn run(&self) -> TokenStream {
        match self {
            Seed::Kernel { attr, item } => expand::tile_kernel(attr.clone(), item.clone()),
            Seed::Module { item } => expand::tile_module(TokenStream::new(), item.clone()),
        }
    }

    fn show(&self) -> String {
        match self {
            Seed::Kernel { attr, item } => format!("#[tile_kernel({attr})] {item}"),
            Seed::Module { item } => format!("#[tile_module] {item}"),
        }
    }
}

/// Whether `attrs` holds one whose path ends in `name`; removes it and returns its arguments.
fn take(attrs: &mut Vec<syn::Attribute>, name: &str) -> Option<TokenStream> {
    let i = attrs
        .iter()
        .position(|a| a.path().segments.last().is_some_and(|s| s.ident == name))?;
    let a = attrs.remove(i);
    Some(match a.meta {
        syn::Meta::List(l) => l.tokens,
        _ => TokenStream::new(),
    })
}

/// The items of a comma-separated token list up to its first comma.
fn first_item(ts: TokenStream) -> TokenStream {
    ts.into_iter()
        .take_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
        .collect()
}

/// `product(axis(a = …, b = …), …, with = (…))` → every axis cut to its first option.
fn first_options(ts: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut axis = false;
    for tt in ts {
        let tt = match tt {
            TokenTree::Group(g) if axis && g.delimiter() == Delimiter::Parenthesis => {
                TokenTree::Group(Group::new(Delimiter::Parenthesis, first_item(g.stream())))
            }
            other => other,
        };
        axis = matches!(&tt, TokenTree::Ident(i) if i != "with");
        out.push(tt);
    }
    out.into_iter().collect()
}

/// `configs(a = (…), b = (…))` → `configs(a = (…))`, anywhere in `ts`; a first config that is
/// a `product(…)` keeps one option per axis (one member).
fn first_config(ts: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut after_configs = false;
    for tt in ts {
        let tt = match tt {
            TokenTree::Group(g) if after_configs && g.delimiter() == Delimiter::Parenthesis => {
                let first: Vec<TokenTree> = first_item(g.stream()).into_iter().collect();
                let first: TokenStream = match first.as_slice() {
                    [TokenTree::Ident(p), TokenTree::Group(args)] if p == "product" => {
                        let args = Group::new(Delimiter::Parenthesis, first_options(args.stream()));
                        [TokenTree::Ident(p.clone()), TokenTree::Group(args)]
                            .into_iter()
                            .collect()
                    }
                    _ => first.into_iter().collect(),
                };
                TokenTree::Group(Group::new(Delimiter::Parenthesis, first))
            }
            TokenTree::Group(g) => {
                TokenTree::Group(Group::new(g.delimiter(), first_config(g.stream())))
            }
            other => other,
        };
        after_configs = matches!(&tt, TokenTree::Ident(i) if i == "configs");
        out.push(tt);
    }
    out.into_iter().collect()
}

/// The kernels and modules of one source file.
fn seeds_of(src: &str) -> Vec<Seed> {
    let file = syn::parse_file(src).expect("a source file parses");
    let mut out = Vec::new();
    for item in file.items {
        match item {
            syn::Item::Fn(mut f) => {
                if let Some(attr) = take(&mut f.attrs, "tile_kernel") {
                    let item = quote::quote!(#f);
                    out.push(Seed::Kernel {
                        attr: first_config(attr),
                        item,
                    });
                }
            }
            syn::Item::Mod(mut m) => {
                let attr = take(&mut m.attrs, "tile_module");
                // `#[tile_module(uses(…gemm_pieces))]`: the library's tile functions join
                // the module, as its macro would put them there.
                if attr
                    .as_ref()
                    .is_some_and(|a| a.to_string().contains("uses"))
                    && let Some((_, items)) = &mut m.content
                {
                    items.splice(0..0, library_fns());
                }
                out.extend(
                    attr.is_some()
                        .then(|| module_seeds(m))
                        .into_iter()
                        .flatten(),
                );
            }
            _ => {}
        }
    }
    out
}

/// The tile functions of the GEMM pieces library (`kernels/src/gemm/pieces.rs`).
fn library_fns() -> Vec<syn::Item> {
    let file = syn::parse_file(include_str!("../../../kernels/src/gemm/pieces.rs"))
        .expect("the library parses");
    file.items
        .into_iter()
        .filter_map(|i| match i {
            syn::Item::Mod(m) => m.content.map(|(_, items)| items),
            _ => None,
        })
        .flatten()
        .filter(|i| matches!(i, syn::Item::Fn(_)))
        .collect()
}

/// A module, one per kernel (each with every other item), configs cut to the first.
fn module_seeds(m: syn::ItemMod) -> Vec<Seed> {
    let Some((_, items)) = &m.content else {
        return Vec::new();
    };
    let is_kernel = |i: &syn::Item| matches!(i, syn::Item::Fn(f) if f.attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "tile_kernel")));
    let kernels: Vec<usize> = (0..items.len()).filter(|&i| is_kernel(&items[i])).collect();
    let mut out = Vec::new();
    for &k in &kernels {
        let mut one = m.clone();
        let kept: Vec<syn::Item> = items
            .iter()
            .enumerate()
            .filter(|(i, item)| *i == k || !is_kernel(item))
            .map(|(_, item)| item.clone())
            .collect();
        one.content = Some((m.content.as_ref().map(|c| c.0).unwrap_or_default(), kept));
        out.push(Seed::Module {
            item: first_config(quote::quote!(#one)),
        });
    }
    out
}

/// xorshift64*: a tiny deterministic PRNG.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A token tree whose groups are owned vectors, so that it can be edited by path.
#[derive(Clone)]
enum Tree {
    Leaf(TokenTree),
    Group(Delimiter, Vec<Tree>),
}

fn tree(ts: TokenStream) -> Vec<Tree> {
    ts.into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => Tree::Group(g.delimiter(), tree(g.stream())),
            leaf => Tree::Leaf(leaf),
        })
        .collect()
}

fn stream(trees: &[Tree]) -> TokenStream {
    trees
        .iter()
        .map(|t| match t {
            Tree::Leaf(l) => l.clone(),
            Tree::Group(d, inner) => TokenTree::Group(Group::new(*d, stream(inner))),
        })
        .collect()
}

/// The paths (child indices from the root) of every node.
fn paths(trees: &[Tree], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    for (i, t) in trees.iter().enumerate() {
        prefix.push(i);
        out.push(prefix.clone());
        if let Tree::Group(_, inner) = t {
            paths(inner, prefix, out);
        }
        prefix.pop();
    }
}

/// The list holding the node at `path`, and the node's index in it.
fn parent<'t>(trees: &'t mut Vec<Tree>, path: &[usize]) -> (&'t mut Vec<Tree>, usize) {
    let (last, up) = path.split_last().expect("a non-empty path");
    let mut list = trees;
    for &i in up {
        let Tree::Group(_, inner) = &mut list[i] else {
            unreachable!("a path goes through groups")
        };
        list = inner;
    }
    (list, *last)
}

/// Integer literals that stress the arithmetic (written as tokens: `-1` is two).
const EXTREMES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "31",
    "32",
    "255",
    "256",
    "65536",
    "2147483648",
    "4294967295",
    "4294967296",
    "1099511627776",
    "9223372036854775807",
    "18446744073709551615",
    "340282366920938463463374607431768211455",
    "0u32",
    "7i64",
];

const PUNCTS: &[char] = &[
    '+', '-', '*', '/', '%', '<', '>', '=', ',', ';', ':', '.', '&', '|', '!', '^', '#',
];

/// Applies one random mutation to `trees`; `idents` are the source's identifiers.
fn mutate(trees: &mut Vec<Tree>, idents: &[Ident], rng: &mut Rng) {
    let mut all = Vec::new();
    paths(trees, &mut Vec::new(), &mut all);
    if all.is_empty() {
        return;
    }
    let path = all[rng.below(all.len())].clone();
    let (list, i) = parent(trees, &path);
    match rng.below(8) {
        // Replace a token by one of its kind (the main source of interesting inputs).
        0..=2 => {
            let new: Vec<Tree> = match &list[i] {
                Tree::Leaf(TokenTree::Literal(_)) | Tree::Group(..) if rng.below(2) == 0 => {
                    let text = EXTREMES[rng.below(EXTREMES.len())];
                    tree(text.parse().expect("a literal"))
                }
                Tree::Leaf(TokenTree::Ident(_)) if !idents.is_empty() => {
                    vec![Tree::Leaf(TokenTree::Ident(
                        idents[rng.below(idents.len())].clone(),
                    ))]
                }
                Tree::Leaf(TokenTree::Punct(_)) => {
                    let c = PUNCTS[rng.below(PUNCTS.len())];
                    vec![Tree::Leaf(TokenTree::Punct(Punct::new(c, Spacing::Alone)))]
                }
                _ => {
                    let text = EXTREMES[rng.below(EXTREMES.len())];
                    tree(text.parse().expect("a literal"))
                }
            };
            list.splice(i..=i, new);
        }
        // Drop a token or a group.
        3 | 4 => {
            list.remove(i);
        }
        // Duplicate a token or a group.
        5 => {
            let t = list[i].clone();
            list.insert(i, t);
        }
        // Swap two tokens of the same list.
        6 => {
            let j = rng.below(list.len());
            list.swap(i, j);
        }
        // Replace a literal anywhere by an extreme one.
        _ => {
            let lits: Vec<Vec<usize>> = all
                .iter()
                .filter(|p| {
                    let (l, i) = parent(trees, p);
                    matches!(l[i], Tree::Leaf(TokenTree::Literal(_)))
                })
                .cloned()
                .collect();
            if lits.is_empty() {
                return;
            }
            let p = &lits[rng.below(lits.len())];
            let (l, i) = parent(trees, p);
            let text = EXTREMES[rng.below(EXTREMES.len())];
            l.splice(i..=i, tree(text.parse().expect("a literal")));
        }
    }
}

fn idents_of(ts: TokenStream, out: &mut Vec<Ident>) {
    for tt in ts {
        match tt {
            TokenTree::Ident(i) if !out.contains(&i) => out.push(i),
            TokenTree::Group(g) => idents_of(g.stream(), out),
            _ => {}
        }
    }
}

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

fn all_seeds() -> Vec<(String, Seed, Vec<Ident>)> {
    let mut out = Vec::new();
    for (name, src) in SOURCES {
        let mut idents = Vec::new();
        idents_of(src.parse().expect("a source file lexes"), &mut idents);
        for (i, seed) in seeds_of(src).into_iter().enumerate() {
            out.push((format!("{name}#{i}"), seed, idents.clone()));
        }
    }
    out
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
