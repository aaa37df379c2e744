//! Token-tree mutation machinery: a deterministic PRNG, token trees editable by path, and
//! the random edits (replace, drop, duplicate, swap, extreme literals) of [`mutate`].

use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, TokenStream, TokenTree};

/// xorshift64*: a tiny deterministic PRNG.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A token tree whose groups are owned vectors, so that it can be edited by path.
#[derive(Clone)]
pub(super) enum Tree {
    Leaf(TokenTree),
    Group(Delimiter, Vec<Tree>),
}

pub(super) fn tree(ts: TokenStream) -> Vec<Tree> {
    ts.into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => Tree::Group(g.delimiter(), tree(g.stream())),
            leaf => Tree::Leaf(leaf),
        })
        .collect()
}

pub(super) fn stream(trees: &[Tree]) -> TokenStream {
    trees
        .iter()
        .map(|t| match t {
            Tree::Leaf(l) => l.clone(),
            Tree::Group(d, inner) => TokenTree::Group(Group::new(*d, stream(inner))),
        })
        .collect()
}

/// The paths (child indices from the root) of every node.
pub(super) fn paths(trees: &[Tree], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
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
pub(super) fn parent<'t>(trees: &'t mut Vec<Tree>, path: &[usize]) -> (&'t mut Vec<Tree>, usize) {
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
pub(super) fn mutate(trees: &mut Vec<Tree>, idents: &[Ident], rng: &mut Rng) {
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

pub(super) fn idents_of(ts: TokenStream, out: &mut Vec<Ident>) {
    for tt in ts {
        match tt {
            TokenTree::Ident(i) if !out.contains(&i) => out.push(i),
            TokenTree::Group(g) => idents_of(g.stream(), out),
            _ => {}
        }
    }
}
