//! The language reference, `docs/language.md`, is tested: every fenced block tagged `rust`
//! is parsed as a file and each `#[tile_kernel]` fn and `#[tile_module]` mod in it goes
//! through the crate's expansion, which must produce artifacts and no `compile_error`; every
//! block tagged `rust,compile_fail` must produce a `compile_error` whose message contains the
//! text of the `<!-- error: … -->` comment right before it. Blocks tagged `rust,ignore` or
//! `text` are not checked.
//!
//! `#[tile_module(uses(lib))]` expands into a call of the library's macro, which a unit test
//! cannot follow; the test does what that macro does instead: it takes the tile functions of
//! the `#[tile_module(library)] mod lib` of the same block and puts them in front of the using
//! module's items, then expands that as a plain `#[tile_module]`. The library itself is
//! expanded too (it must give its `macro_rules!` and no error).

use crate::expand;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;

/// The reference, read at build time.
const DOC: &str = include_str!("../../../docs/language.md");

/// How a block is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Compiles: artifacts, no error.
    Compiles,
    /// Fails with an error containing the text.
    Fails,
}

/// One checked block: its first line in the document, how it is checked, its code and (for a
/// failing block) the text its error must contain.
struct Block {
    line: usize,
    expect: Expect,
    code: String,
    error: Option<String>,
}

/// The `rust` and `rust,compile_fail` blocks of the document.
fn blocks(doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = doc.lines().enumerate();
    let mut last_comment: Option<String> = None;
    while let Some((i, line)) = lines.next() {
        let trimmed = line.trim();
        if let Some(tag) = trimmed.strip_prefix("```") {
            let expect = match tag.trim() {
                "rust" => Some(Expect::Compiles),
                "rust,compile_fail" => Some(Expect::Fails),
                _ => None,
            };
            let mut code = String::new();
            for (_, l) in lines.by_ref() {
                if l.trim_start().starts_with("```") {
                    break;
                }
                code.push_str(l);
                code.push('\n');
            }
            if let Some(expect) = expect {
                let error = last_comment
                    .take()
                    .and_then(|c| c.strip_prefix("error:").map(|e| e.trim().to_string()));
                out.push(Block {
                    line: i + 1,
                    expect,
                    code,
                    error,
                });
            }
            last_comment = None;
            continue;
        }
        if let Some(c) = trimmed
            .strip_prefix("<!--")
            .and_then(|c| c.strip_suffix("-->"))
        {
            last_comment = Some(c.trim().to_string());
        } else if !trimmed.is_empty() {
            last_comment = None;
        }
    }
    out
}

/// The attribute named `name` (by its last path segment), removed from `attrs`, as its
/// argument tokens.
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

/// What the expansions of one block gave.
#[derive(Default)]
struct Outcome {
    /// Whether each `static ARTIFACTS` list is non-empty.
    artifacts: Vec<bool>,
    /// The messages of every `compile_error!`.
    errors: Vec<String>,
    /// Libraries expanded (each must give a `macro_rules!`).
    libraries: usize,
    /// Kernels and modules expanded.
    expansions: usize,
}

/// Records the `ARTIFACTS` lists and `compile_error!` messages of `ts`.
fn scan(ts: TokenStream, out: &mut Outcome) {
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    for (i, tt) in tokens.iter().enumerate() {
        match tt {
            TokenTree::Ident(id) if id == "compile_error" => {
                let message = tokens[i..].iter().find_map(|t| match t {
                    TokenTree::Group(g) => Some(g.stream().to_string()),
                    _ => None,
                });
                let text = message.unwrap_or_default();
                let value = syn::parse_str::<syn::LitStr>(&text)
                    .map(|l| l.value())
                    .unwrap_or(text);
                out.errors.push(value);
            }
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
                    out.artifacts.push(!g.stream().is_empty());
                }
            }
            TokenTree::Group(g) => scan(g.stream(), out),
            _ => {}
        }
    }
}

/// The last segment of each path in `uses(a::b, c)`.
fn uses_of(attr: &TokenStream) -> Option<Vec<String>> {
    let list: syn::MetaList = syn::parse2(attr.clone()).ok()?;
    if !list.path.is_ident("uses") {
        return None;
    }
    let paths = list
        .parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
        .ok()?;
    Some(
        paths
            .iter()
            .filter_map(|p| p.segments.last().map(|s| s.ident.to_string()))
            .collect(),
    )
}

/// Expands every kernel and module among `items` (inline modules without `#[tile_module]`
/// are searched too); `libraries` maps a library's name to its items.
fn expand_items(
    items: Vec<syn::Item>,
    libraries: &mut Vec<(String, Vec<syn::Item>)>,
    out: &mut Outcome,
) {
    // Libraries first, so a using module may come before or after its library.
    for item in &items {
        if let syn::Item::Mod(m) = item {
            let mut m = m.clone();
            if let Some(attr) = take(&mut m.attrs, "tile_module")
                && attr.to_string() == "library"
            {
                let expanded = expand::tile_module(attr, m.to_token_stream());
                assert!(
                    expanded.to_string().contains("macro_rules"),
                    "library `{}` gave no macro",
                    m.ident
                );
                scan(expanded, out);
                out.libraries += 1;
                let fns = m.content.map(|(_, items)| items).unwrap_or_default();
                libraries.push((m.ident.to_string(), fns));
            }
        }
    }
    for item in items {
        match item {
            syn::Item::Fn(mut f) => {
                if let Some(attr) = take(&mut f.attrs, "tile_kernel") {
                    scan(expand::tile_kernel(attr, f.to_token_stream()), out);
                    out.expansions += 1;
                }
            }
            syn::Item::Mod(mut m) => match take(&mut m.attrs, "tile_module") {
                Some(attr) if attr.to_string() == "library" => {}
                Some(attr) => {
                    let attr = match uses_of(&attr) {
                        Some(names) => {
                            let (_, items) = m.content.as_mut().expect("an inline module");
                            let mut spliced = Vec::new();
                            for name in names {
                                let (_, fns) =
                                    libraries.iter().find(|(n, _)| *n == name).unwrap_or_else(
                                        || panic!("library `{name}` is not in the block"),
                                    );
                                let fns = fns.iter().filter(|i| !matches!(i, syn::Item::Use(_)));
                                spliced.extend(fns.cloned());
                            }
                            spliced.append(items);
                            *items = spliced;
                            TokenStream::new()
                        }
                        None => attr,
                    };
                    scan(expand::tile_module(attr, m.to_token_stream()), out);
                    out.expansions += 1;
                }
                None => {
                    if let Some((_, inner)) = m.content {
                        expand_items(inner, libraries, out);
                    }
                }
            },
            _ => {}
        }
    }
}

/// Every `rust` block compiles and every `rust,compile_fail` block fails with its message.
#[test]
fn reference_examples_compile() {
    let blocks = blocks(DOC);
    let (mut compiled, mut failed) = (0, 0);
    for b in &blocks {
        let file: syn::File = syn::parse_str(&b.code)
            .unwrap_or_else(|e| panic!("docs/language.md:{}: not a Rust file: {e}", b.line));
        let mut out = Outcome::default();
        expand_items(file.items, &mut Vec::new(), &mut out);
        assert!(
            out.expansions + out.libraries > 0,
            "docs/language.md:{}: no `#[tile_kernel]` or `#[tile_module]` in the block",
            b.line
        );
        match b.expect {
            Expect::Compiles => {
                assert!(
                    out.errors.is_empty(),
                    "docs/language.md:{}: errors: {:#?}",
                    b.line,
                    out.errors
                );
                assert!(
                    out.libraries > 0 && out.expansions == 0 || !out.artifacts.is_empty(),
                    "docs/language.md:{}: no kernel compiled",
                    b.line
                );
                assert!(
                    out.artifacts.iter().all(|a| *a),
                    "docs/language.md:{}: a kernel has no artifacts",
                    b.line
                );
                compiled += 1;
            }
            Expect::Fails => {
                let want = b.error.as_deref().unwrap_or_else(|| {
                    panic!(
                        "docs/language.md:{}: a compile_fail block needs `<!-- error: … -->` before it",
                        b.line
                    )
                });
                assert!(
                    out.errors.iter().any(|e| e.contains(want)),
                    "docs/language.md:{}: no error contains {want:?}; errors: {:#?}",
                    b.line,
                    out.errors
                );
                failed += 1;
            }
        }
    }
    // 2026-12: 12 compiled, 10 compile_fail.
    assert!(compiled >= 12, "only {compiled} blocks compiled");
    assert!(failed >= 10, "only {failed} compile_fail blocks checked");
}

/// The block reader finds tags and error comments.
#[test]
fn blocks_are_read_with_their_tags() {
    let doc = "text\n```rust\nfn a() {}\n```\n<!-- error: boom -->\n```rust,compile_fail\nfn b() {}\n```\n```rust,ignore\nx\n```\n```text\ny\n```\n";
    let b = blocks(doc);
    assert_eq!(b.len(), 2);
    assert_eq!(
        (b[0].line, b[0].expect, b[0].error.as_deref()),
        (2, Expect::Compiles, None)
    );
    assert_eq!(
        (b[1].expect, b[1].error.as_deref()),
        (Expect::Fails, Some("boom"))
    );
}
