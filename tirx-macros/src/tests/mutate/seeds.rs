//! The mutation test's inputs: the sources it reads at build time, and the seeds cut from
//! them (each kernel's configs cut to the first, the big module split per kernel).

use super::tokens::idents_of;
use crate::expand;
use proc_macro2::{Delimiter, Group, Ident, TokenStream, TokenTree};

/// The sources, read at build time.
const SOURCES: &[(&str, &str)] = &[
    (
        "tma_copy",
        include_str!("../../../../kernels/src/copy/tma_copy.rs"),
    ),
    (
        "level_01",
        include_str!("../../../../kernels/src/gemm/level_01_sync.rs"),
    ),
    (
        "level_02",
        include_str!("../../../../kernels/src/gemm/level_02_tma.rs"),
    ),
    (
        "level_03_wgmma",
        include_str!("../../../../kernels/src/gemm/level_03_pipeline_wgmma.rs"),
    ),
    (
        "level_03_tcgen05",
        include_str!("../../../../kernels/src/gemm/level_03_pipeline_tcgen05.rs"),
    ),
    (
        "level_04",
        include_str!("../../../../kernels/src/gemm/level_04_ws1.rs"),
    ),
    (
        "level_05",
        include_str!("../../../../kernels/src/gemm/level_05_2wg.rs"),
    ),
    (
        "level_06",
        include_str!("../../../../kernels/src/gemm/level_06_persistent.rs"),
    ),
    (
        "level_07",
        include_str!("../../../../kernels/src/gemm/level_07_cluster.rs"),
    ),
    (
        "level_08",
        include_str!("../../../../kernels/src/gemm/level_08_tma_epi.rs"),
    ),
    (
        "pair_n",
        include_str!("../../../../kernels/src/gemm/pair_n.rs"),
    ),
    (
        "scaled",
        include_str!("../../../../kernels/src/gemm/scaled.rs"),
    ),
    (
        "ui/elem_type_and_integer",
        include_str!("../../../../tests/ui/elem_type_and_integer.rs"),
    ),
    (
        "ui/elem_type_launch_mismatch",
        include_str!("../../../../tests/ui/elem_type_launch_mismatch.rs"),
    ),
    (
        "ui/elem_type_missing_in_config",
        include_str!("../../../../tests/ui/elem_type_missing_in_config.rs"),
    ),
    (
        "ui/expect_tx_disagrees",
        include_str!("../../../../tests/ui/expect_tx_disagrees.rs"),
    ),
    (
        "ui/loop_never_runs",
        include_str!("../../../../tests/ui/loop_never_runs.rs"),
    ),
    (
        "ui/mn_major_a_operand",
        include_str!("../../../../tests/ui/mn_major_a_operand.rs"),
    ),
    (
        "ui/mn_tensor_misuse",
        include_str!("../../../../tests/ui/mn_tensor_misuse.rs"),
    ),
    (
        "ui/mn_major_bad_declaration",
        include_str!("../../../../tests/ui/mn_major_bad_declaration.rs"),
    ),
    (
        "ui/scaled_copy_errors",
        include_str!("../../../../tests/ui/scaled_copy_errors.rs"),
    ),
    ("ui/sm_120", include_str!("../../../../tests/ui/sm_120.rs")),
    (
        "ui/shape_constraints",
        include_str!("../../../../tests/ui/shape_constraints.rs"),
    ),
    (
        "ui-pass/shape_constraints_ok",
        include_str!("../../../../tests/ui-pass/shape_constraints_ok.rs"),
    ),
    (
        "ui/smem_over_budget",
        include_str!("../../../../tests/ui/smem_over_budget.rs"),
    ),
    (
        "ui/static_assert",
        include_str!("../../../../tests/ui/static_assert.rs"),
    ),
    (
        "ui/tcgen05_ld_outside_warpgroup",
        include_str!("../../../../tests/ui/tcgen05_ld_outside_warpgroup.rs"),
    ),
    (
        "ui/tcgen05_mma_outside_elect",
        include_str!("../../../../tests/ui/tcgen05_mma_outside_elect.rs"),
    ),
    (
        "ui/tcgen05_on_hopper",
        include_str!("../../../../tests/ui/tcgen05_on_hopper.rs"),
    ),
    (
        "ui/tile_fn_recursion",
        include_str!("../../../../tests/ui/tile_fn_recursion.rs"),
    ),
    (
        "ui/tile_fn_scalar_args",
        include_str!("../../../../tests/ui/tile_fn_scalar_args.rs"),
    ),
    (
        "ui/tile_fn_wrong_kind",
        include_str!("../../../../tests/ui/tile_fn_wrong_kind.rs"),
    ),
    (
        "ui/tmem_alloc_outside_warp",
        include_str!("../../../../tests/ui/tmem_alloc_outside_warp.rs"),
    ),
    (
        "ui/tmem_columns",
        include_str!("../../../../tests/ui/tmem_columns.rs"),
    ),
    (
        "ui/unknown_op",
        include_str!("../../../../tests/ui/unknown_op.rs"),
    ),
    (
        "ui-pass/tile_module",
        include_str!("../../../../tests/ui-pass/tile_module.rs"),
    ),
    (
        "ui-pass/user_pipelined_copy",
        include_str!("../../../../tests/ui-pass/user_pipelined_copy.rs"),
    ),
];

/// One input of the expansion.
#[derive(Clone)]
pub(super) enum Seed {
    /// `#[tile_kernel(attr)] item`.
    Kernel {
        attr: TokenStream,
        item: TokenStream,
    },
    /// `#[tile_module] item`.
    Module { item: TokenStream },
}

impl Seed {
    pub(super) fn run(&self) -> TokenStream {
        match self {
            Seed::Kernel { attr, item } => expand::tile_kernel(attr.clone(), item.clone()),
            Seed::Module { item } => expand::tile_module(TokenStream::new(), item.clone()),
        }
    }

    pub(super) fn show(&self) -> String {
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
    let file = syn::parse_file(include_str!("../../../../kernels/src/gemm/pieces.rs"))
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

pub(super) fn all_seeds() -> Vec<(String, Seed, Vec<Ident>)> {
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
