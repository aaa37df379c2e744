//! Unit tests of the typed diagnostics: each area's error is matched on its variant and
//! fields (not only its text), and an error the verifier finds after a pass carries the span
//! of the user's statement the broken one came from.

use super::walk::rewrite_body;
use super::{MemoryError, Need, Pass, PassError, ScopeError, verify_after};
use crate::arena::Handle;
use crate::diag::{DiagKind, Diagnostics};
use crate::dispatch::Reject;
use crate::ir::{Kernel, Span, StmtKind};
use crate::parse::parse_module;
use crate::valid::VerifyError;
use crate::valid::scope::Threads;

const HEADER: &str = "kernel k config default phase tile
  signature k_default_TARGET
    target TARGET
    threads 128
    cluster (1, 1, 1)
    grid (1, 1, 1)
    smem 0
    tmem 0
    tensor a: bf16[M, K]
  var %0: u32 \"i\"
";

fn kernel(target: &str, decls: &str, body: &str) -> Kernel {
    let text = format!("{}{decls}{{\n{body}}}\n", HEADER.replace("TARGET", target));
    parse_module(&text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .kernels
        .remove(0)
}

fn errors(k: Kernel) -> Diagnostics {
    match super::run_pipeline(k, false) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[test]
fn a_warpgroup_op_in_one_thread_is_a_scope_error_with_the_threads_it_got() {
    let k = kernel(
        "sm_90a",
        "",
        "  scope thread 0 !4 {\n    op wgmma_fence !5\n  }\n",
    );
    let errs = errors(k);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].span, Span(5));
    assert_eq!(
        errs[0].kind,
        DiagKind::Scope(ScopeError::Threads {
            op: "wgmma::fence",
            threads: Threads::Single,
            need: Need::Warpgroup,
        })
    );
    assert!(
        errs[0]
            .message
            .starts_with("`wgmma::fence` runs here on one thread")
    );
}

#[test]
fn tcgen05_on_hopper_is_a_target_error() {
    let k = kernel(
        "sm_90a",
        "",
        "  scope warp 0..=0 {\n    op tmem_relinquish !3\n  }\n",
    );
    let errs = errors(k);
    assert!(
        matches!(&errs[0].kind, DiagKind::Scope(ScopeError::NoTcgen05 { target }) if target.name() == "sm_90a"),
        "{errs:?}"
    );
}

#[test]
fn tmem_columns_that_tcgen05_alloc_cannot_take_name_the_buffer_and_count() {
    let k = kernel(
        "sm_100a",
        "  buffer @acc: tmem f32 (128, 600):(600, 1) swizzle none !9\n",
        "",
    );
    let errs = errors(k);
    assert_eq!(errs[0].span, Span(9));
    assert_eq!(
        errs[0].kind,
        DiagKind::Memory(MemoryError::TmemColumns {
            buffer: "acc".into(),
            cols: 600,
        })
    );
    assert!(
        errs[0]
            .message
            .contains("(use 512 columns, or split the tile")
    );
}

/// A shared view (`alias`) takes its base's offset and allocates nothing; a view larger than
/// its base, of another swizzle, or whose tiles split a swizzle atom is a typed error at the
/// view's declaration.
#[test]
fn shared_views_take_their_base_offset_or_name_what_does_not_fit() {
    let base = "  buffer @k_s: smem bf16 (64, 64):(64, 1) swizzle B128\n  buffer @q_s: smem bf16 (64, 64):(64, 1) swizzle B128\n";
    let view = |decl: &str| {
        let decls = format!("{base}{decl}");
        kernel("sm_90a", &decls, "")
    };
    let k = view("  buffer @q_h: smem bf16 (4, 16, 64):(1024, 64, 1) swizzle B128 alias @q_s\n");
    let (planned, _) = super::run_pipeline(k, false).expect("a view that fits");
    let off = |name: &str| {
        planned
            .buffers
            .iter()
            .find(|(_, b)| b.name == name)
            .and_then(|(_, b)| b.offset)
    };
    assert_eq!(off("q_h"), off("q_s"));
    assert_eq!(
        planned.sig.smem_bytes,
        2 * 8192 + 1024,
        "no bytes of its own"
    );
    for (decl, why) in [
        (
            "  buffer @q_h: smem bf16 (4, 32, 64):(2048, 64, 1) swizzle B128 alias @q_s !7\n",
            "its 16384 bytes exceed the base's 8192",
        ),
        (
            "  buffer @q_h: smem bf16 (4, 16, 64):(1024, 64, 1) swizzle B64 alias @q_s !7\n",
            "its swizzle or majorness differs from the base's",
        ),
        (
            "  buffer @q_h: smem bf16 (16, 4, 64):(256, 64, 1) swizzle B128 alias @q_s !7\n",
            "its tiles of 512 bytes are not whole 1024-byte swizzle atoms (a tile would start inside one)",
        ),
    ] {
        let errs = errors(view(decl));
        assert_eq!(errs[0].span, Span(7), "{decl}");
        assert_eq!(
            errs[0].kind,
            DiagKind::Memory(MemoryError::SmemAlias {
                buffer: "q_h".into(),
                base: "q_s".into(),
                why: why.into(),
            }),
            "{decl}"
        );
    }
}

#[test]
fn a_copy_no_variant_fits_lists_typed_rejections() {
    let k = kernel(
        "sm_90a",
        "  buffer @a_s: smem bf16 (128, 64):(64, 1) swizzle B128\n",
        "  scope thread 0 {\n    op copy @a_s <- global a[0:u32, 1:u32] !2\n  }\n",
    );
    let errs = errors(k);
    let DiagKind::Dispatch(d) = &errs[0].kind else {
        panic!("{errs:?}")
    };
    assert_eq!(errs[0].span, Span(2));
    assert_eq!(d.op, "copy");
    let thread = d.rejections.iter().find(|(n, _)| *n == "thread_load");
    assert!(
        matches!(
            thread,
            Some((
                _,
                Reject::Threads {
                    threads: Threads::Single,
                    ..
                }
            ))
        ),
        "{d:?}"
    );
    let tma = d.rejections.iter().find(|(n, _)| *n == "tma_load");
    assert_eq!(tma.map(|(_, r)| r), Some(&Reject::LoadWithoutBarrier));
    let store = d.rejections.iter().find(|(n, _)| *n == "tma_store");
    assert_eq!(
        store.map(|(_, r)| r),
        Some(&Reject::NotGlobal {
            side: "destination"
        })
    );
}

#[test]
fn a_forced_unknown_variant_lists_the_known_ones() {
    // A variant is a typed value: a misspelt one never reaches dispatch (where it could
    // silently skip a check), the parser refuses it at the name.
    let text = format!(
        "{}  buffer @a_s: smem bf16 (128, 64):(64, 1) swizzle B128\n{{\n  \
         op copy @a_s <- global a[0:u32, 1:u32] variant tma_laod\n}}\n",
        HEADER.replace("TARGET", "sm_90a")
    );
    let e = parse_module(&text).expect_err("an unknown variant");
    assert_eq!((e.line, e.col), (13, 50), "{e}");
    assert!(
        e.message
            .starts_with("no copy variant named `tma_laod`; known: ldmatrix, "),
        "{e}"
    );
    assert!(e.message.contains("tma_load, tma_reduce, tma_store"), "{e}");
    let mma = text.replace(
        "op copy @a_s <- global a[0:u32, 1:u32] variant tma_laod",
        "op mma @a_s <- @a_s, @a_s accumulate 1:pred variant tma_load",
    );
    let e = parse_module(&mma).expect_err("a copy variant on an mma");
    assert_eq!(
        e.message,
        "no mma variant named `tma_load`; known: tcgen05, wgmma"
    );
}

/// A broken pass: every `let` writes a variable the kernel does not have. It rewrites through
/// the visitor, so the broken statement keeps the user's span.
struct BreakLets;

impl Pass for BreakLets {
    fn name(&self) -> &'static str {
        "break-lets"
    }
    fn run(&self, k: &mut Kernel) -> Result<(), Diagnostics> {
        rewrite_body(k, &mut |_, mut s| {
            if let StmtKind::Let { var, .. } = &mut s.kind {
                *var = Handle::from_index(99);
            }
            Ok(vec![s])
        })
    }
}

#[test]
fn the_verifier_after_a_pass_reports_at_the_users_statement() {
    let mut k = kernel(
        "sm_90a",
        "",
        "  scope warp 0..=0 {\n    let %0 = 1:u32 !7\n  }\n",
    );
    crate::valid::verify(&k).expect("the input is valid");
    BreakLets.run(&mut k).expect("the pass runs");
    let errs = verify_after(&BreakLets, &k).expect_err("the pass broke the IR");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_ne!(errs[0].span, Span::NONE);
    assert_eq!(errs[0].span, Span(7));
    assert_eq!(
        errs[0].kind,
        DiagKind::Pass(PassError::InvalidAfter {
            pass: "break-lets",
            error: Box::new(DiagKind::Verify(VerifyError::Var { index: 99 })),
        })
    );
    assert_eq!(
        errs[0].message,
        "internal error: IR invalid after pass `break-lets`: variable %99 out of range"
    );
}

#[test]
fn lowered_statements_keep_the_span_of_the_statement_they_came_from() {
    // flatten-exprs turns the `let` into instructions and lower-scopes the scope into an `if`:
    // every statement they make for the user's line carries its span.
    let k = kernel(
        "sm_90a",
        "",
        "  scope warp 1..=2 !3 {\n    let %0 = tid.x / 32:u32 + 1:u32 !4\n  }\n",
    );
    let (k, _) = super::run_pipeline(k, false).expect("compiles");
    let mut spans = Vec::new();
    super::walk::visit(&k.body, &mut |s, stack| {
        if !stack.is_empty() {
            spans.push(s.span);
        }
    });
    assert!(!spans.is_empty());
    assert!(spans.iter().all(|&s| s == Span(4)), "{spans:?}\n{k:#}");
}

#[test]
fn a_warpgroup_index_is_broadcast_once_and_a_warp_index_is_not() {
    // flatten-exprs reads `tid.x / 128` in the prologue and broadcasts it from lane 0 (ptxas
    // then keeps what is computed from it in uniform registers); `tid.x / 32` stays a shift.
    let count = |body: &str| {
        let (k, _) = super::run_pipeline(kernel("sm_90a", "", body), false).expect("compiles");
        let text = format!("{k:#}");
        (
            text.matches("shfl.sync.idx.b32").count(),
            text.matches("shr.u32").count(),
        )
    };
    let (shfl, _) = count("  let %0 = tid.x / 128:u32 !1\n  let %0 = tid.x / 128:u32 + 1:u32 !2\n");
    assert_eq!(shfl, 1, "one broadcast serves both uses");
    let (shfl, shr) = count("  let %0 = tid.x / 32:u32 !1\n");
    assert_eq!((shfl, shr), (0, 1));
}
