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
//! - Tile functions are inlined: a span interned inside an inlined body keeps the tile
//!   function's tokens and remembers the chain of calls it came through ([`CallSite`]), so an
//!   error there is followed by one "in this call" error at each call site (stable proc macros
//!   cannot attach notes, so the notes are errors of their own, placed right after).
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

/// A call of a tile function that an inlined piece of syntax came through.
#[derive(Clone, Debug)]
pub struct CallSite {
    /// The call (callee to closing parenthesis).
    pub range: SpanRange,
    /// The tile function called.
    pub callee: String,
}

impl CallSite {
    /// Same place, same callee (spans have no `PartialEq`; their debug form identifies them).
    fn same(&self, other: &CallSite) -> bool {
        let key = |c: &CallSite| format!("{:?}{:?}|{}", c.range.0, c.range.1, c.callee);
        key(self) == key(other)
    }
}

/// One error at the user's tokens, with the calls it was inlined through, innermost first.
#[derive(Clone, Debug)]
pub struct Diag {
    /// Where.
    pub range: SpanRange,
    /// What.
    pub message: String,
    /// Through which calls of tile functions (empty outside them).
    pub calls: Vec<CallSite>,
}

/// One active call of a tile function while a body is lowered.
#[derive(Clone, Debug)]
struct Frame {
    site: CallSite,
    parent: Option<u32>,
}

/// IR span ids ↔ user token ranges, for one lowered body.
#[derive(Clone, Debug)]
pub struct SpanTable {
    /// Each id's range and the innermost call frame it was interned in.
    entries: Vec<(SpanRange, Option<u32>)>,
    /// Every call frame ever entered (frames are never removed: ids keep pointing at them).
    frames: Vec<Frame>,
    /// The frame being lowered now.
    current: Option<u32>,
    fallback: SpanRange,
}

impl SpanTable {
    /// An empty table; `Span::NONE` (and unknown ids) map to `fallback` (the fn name).
    pub fn new(fallback: Span) -> SpanTable {
        SpanTable {
            entries: Vec::new(),
            frames: Vec::new(),
            current: None,
            fallback: (fallback, fallback),
        }
    }

    /// Records the range of `node` and returns its id.
    pub fn intern(&mut self, node: &impl ToTokens) -> ir::Span {
        self.intern_range(span_range(node))
    }

    /// Records `range` and returns its id.
    pub fn intern_range(&mut self, range: SpanRange) -> ir::Span {
        self.entries.push((range, self.current));
        ir::Span((self.entries.len() - 1) as u32)
    }

    /// The token range of `span`.
    pub fn get(&self, span: ir::Span) -> SpanRange {
        self.entries
            .get(span.0 as usize)
            .map_or(self.fallback, |(range, _)| *range)
    }

    /// The calls `span` was inlined through, innermost first.
    pub fn calls(&self, span: ir::Span) -> Vec<CallSite> {
        let frame = self.entries.get(span.0 as usize).and_then(|(_, f)| *f);
        self.chain(frame)
    }

    /// The calls being lowered now, innermost first.
    pub fn current_calls(&self) -> Vec<CallSite> {
        self.chain(self.current)
    }

    /// Enters the body of `callee`, called at `range`.
    pub fn enter(&mut self, range: SpanRange, callee: &str) {
        let site = CallSite {
            range,
            callee: callee.to_string(),
        };
        self.frames.push(Frame {
            site,
            parent: self.current,
        });
        self.current = Some((self.frames.len() - 1) as u32);
    }

    /// Leaves the innermost call entered.
    pub fn leave(&mut self) {
        self.current = self.current.and_then(|f| self.frames[f as usize].parent);
    }

    /// Whether the body of a tile function is being lowered.
    pub fn in_call(&self) -> bool {
        self.current.is_some()
    }

    fn chain(&self, mut frame: Option<u32>) -> Vec<CallSite> {
        let mut out = Vec::new();
        while let Some(f) = frame {
            let f = &self.frames[f as usize];
            out.push(f.site.clone());
            frame = f.parent;
        }
        out
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
    /// Calls of tile functions the error was reached through (each reported after it).
    calls: Vec<CallSite>,
}

/// Collects errors from several instances, deduplicated, in first-seen order.
#[derive(Default)]
pub struct ErrorSink {
    entries: Vec<Entry>,
    /// Every push, repeats included.
    pushes: usize,
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
        let diag = Diag {
            range,
            message: message.into(),
            calls: Vec::new(),
        };
        self.push_diag(diag, instance);
    }

    /// Adds `diag` (see [`ErrorSink::push_in`] for `instance`). The same error reached through
    /// other calls of a tile function is one entry with every call site.
    pub fn push_diag(&mut self, diag: Diag, instance: Option<(String, usize)>) {
        let Diag {
            range,
            message,
            calls,
        } = diag;
        self.pushes += 1;
        let key = format!("{:?}{:?}|{message}", range.0, range.1);
        let (label, total) = instance.unwrap_or_default();
        if let Some(entry) = self.entries.iter_mut().find(|e| e.key == key) {
            if !label.is_empty() && !entry.instances.contains(&label) {
                entry.instances.push(label);
            }
            for call in calls {
                if !entry.calls.iter().any(|c| c.same(&call)) {
                    entry.calls.push(call);
                }
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
            calls,
        });
    }

    /// Adds errors produced by syn's parsers (kept with their own ranges).
    pub fn push_syn(&mut self, error: syn::Error) {
        for e in error {
            self.pushes += 1;
            let key = format!("{:?}|{e}", e.span());
            if !self.entries.iter().any(|x| x.key == key) {
                self.entries.push(Entry {
                    key,
                    body: Body::Syn(e),
                    instances: Vec::new(),
                    total: 0,
                    calls: Vec::new(),
                });
            }
        }
    }

    /// Whether nothing was collected.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Number of errors pushed so far, repeats included: compare two readings to learn
    /// whether a step found an error.
    pub fn pushes(&self) -> usize {
        self.pushes
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
            let notes = entry.calls.iter().map(|call| {
                let message = format!(
                    "in this call of tile function `{}` (the error above is in its body)",
                    call.callee
                );
                error_at(call.range, message)
            });
            for error in std::iter::once(error).chain(notes) {
                match &mut out {
                    Some(all) => all.combine(error),
                    None => out = Some(error),
                }
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
