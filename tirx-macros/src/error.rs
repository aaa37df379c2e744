//! Errors of the macro, always at the user's token.
//!
//! - [`SpanTable`] maps the IR's compact `Span(u32)` ids back to `proc_macro2` spans. Each
//!   entry is a (first token, last token) pair so that an error covers the whole statement on a
//!   stable compiler, where `Span::join` is unavailable (`syn::Error::new_spanned` renders a
//!   range from its first and last token).
//! - [`ErrorSink`] collects errors from every config × target instance, drops repeats (the same
//!   message at the same place from several instances) and, when an error shows up in only
//!   some instances, says which.
//!
//! Invariant: one body walk interns its spans in a fixed order, so two configs lowered from the
//! same function give the same ids to the same statements.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, quote};
use tirx_ir::ir;

/// The first and last token of a piece of syntax.
pub type SpanRange = (Span, Span);

/// The (first, last) token spans of `node`; `call_site` twice for empty syntax.
pub fn span_range(node: &impl ToTokens) -> SpanRange {
    let mut tokens = node.to_token_stream().into_iter();
    let Some(first) = tokens.next() else {
        return (Span::call_site(), Span::call_site());
    };
    let last = tokens.last().map_or(first.span(), |t| t.span());
    (first.span(), last)
}

/// A `syn::Error` covering `range`.
pub fn error_at(range: SpanRange, message: impl std::fmt::Display) -> syn::Error {
    let first = Ident::new("a", range.0);
    let last = Ident::new("b", range.1);
    syn::Error::new_spanned(quote!(#first #last), message)
}

/// IR span ids ↔ user token ranges, for one lowered body.
#[derive(Clone, Debug)]
pub struct SpanTable {
    entries: Vec<SpanRange>,
    fallback: SpanRange,
}

impl SpanTable {
    /// An empty table; `Span::NONE` (and unknown ids) map to `fallback` (the fn name).
    pub fn new(fallback: Span) -> SpanTable {
        SpanTable {
            entries: Vec::new(),
            fallback: (fallback, fallback),
        }
    }

    /// Records the range of `node` and returns its id.
    pub fn intern(&mut self, node: &impl ToTokens) -> ir::Span {
        self.intern_range(span_range(node))
    }

    /// Records `range` and returns its id.
    pub fn intern_range(&mut self, range: SpanRange) -> ir::Span {
        self.entries.push(range);
        ir::Span((self.entries.len() - 1) as u32)
    }

    /// The token range of `span`.
    pub fn get(&self, span: ir::Span) -> SpanRange {
        self.entries
            .get(span.0 as usize)
            .copied()
            .unwrap_or(self.fallback)
    }

    /// Number of interned spans.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// What a collected error holds.
enum Body {
    /// An error built here: its range and message, so a note can be appended.
    Ours { range: SpanRange, message: String },
    /// An error from syn's own parsers, kept as is.
    Syn(syn::Error),
}

/// One collected error and the instances (`config `x`, sm_90a`) it occurred in.
struct Entry {
    key: String,
    body: Body,
    instances: Vec<String>,
    total: usize,
}

/// Collects errors from several instances, deduplicated, in first-seen order.
#[derive(Default)]
pub struct ErrorSink {
    entries: Vec<Entry>,
}

impl ErrorSink {
    /// An empty sink.
    pub fn new() -> ErrorSink {
        ErrorSink::default()
    }

    /// Adds an instance-independent error at `range`.
    pub fn push(&mut self, range: SpanRange, message: impl Into<String>) {
        self.push_in(range, message, None);
    }

    /// Adds an error found while compiling one instance: `instance` is its label and the
    /// number of instances that were checked for this kind of error.
    pub fn push_in(
        &mut self,
        range: SpanRange,
        message: impl Into<String>,
        instance: Option<(String, usize)>,
    ) {
        let message = message.into();
        let key = format!("{:?}{:?}|{message}", range.0, range.1);
        let (label, total) = instance.unwrap_or_default();
        if let Some(entry) = self.entries.iter_mut().find(|e| e.key == key) {
            if !label.is_empty() {
                entry.instances.push(label);
            }
            return;
        }
        let instances = if label.is_empty() {
            Vec::new()
        } else {
            vec![label]
        };
        self.entries.push(Entry {
            key,
            body: Body::Ours { range, message },
            instances,
            total,
        });
    }

    /// Adds errors produced by syn's parsers (kept with their own ranges).
    pub fn push_syn(&mut self, error: syn::Error) {
        for e in error {
            let key = format!("{:?}|{e}", e.span());
            if !self.entries.iter().any(|x| x.key == key) {
                self.entries.push(Entry {
                    key,
                    body: Body::Syn(e),
                    instances: Vec::new(),
                    total: 0,
                });
            }
        }
    }

    /// Whether nothing was collected.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The collected errors combined into one (`None` when there are none). An error seen in
    /// only some of the instances it was checked in names them.
    pub fn finish(self) -> Option<syn::Error> {
        let mut out: Option<syn::Error> = None;
        for entry in self.entries {
            let error = match entry.body {
                Body::Syn(e) => e,
                Body::Ours { range, message } => {
                    let partial = entry.total > 1 && entry.instances.len() < entry.total;
                    if partial {
                        error_at(
                            range,
                            format!("{message} (in {})", entry.instances.join("; ")),
                        )
                    } else {
                        error_at(range, message)
                    }
                }
            };
            match &mut out {
                Some(all) => all.combine(error),
                None => out = Some(error),
            }
        }
        out
    }

    /// The collected errors as `compile_error!` invocations.
    pub fn into_compile_errors(self) -> TokenStream {
        self.finish()
            .map(syn::Error::into_compile_error)
            .unwrap_or_default()
    }
}
