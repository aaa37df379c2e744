//! `grid::dependency_wait()`: a global access of a dependent tensor that may run before the
//! wait is an error at the access (`tirx_ir::passes::CheckGridDep`); `#[independent]` tensors
//! and kernels that never wait are not checked.

use super::*;

/// The compile errors of a kernel `fn k(params) { body }` (front end and passes).
fn compile_errors(params: &str, body: &str) -> Vec<String> {
    let (def, mut sink) = def(
        "target = sm_90a, threads = 128, grid = (cdiv(M, 32), 1)",
        &format!("fn k({params}) {{ {body} }}"),
    );
    let (arts, _) = expand::compile(&def, &TileFns::default(), &mut sink);
    let e: Vec<String> = sink
        .finish()
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(arts.is_empty(), !e.is_empty(), "{e:#?}");
    e
}

const XY: &str = "#[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>";
const T: &str = "let t = regs::<f32>([32, 64], layout = blocked(vec = 4));";

fn one(params: &str, body: &str) -> String {
    let e = compile_errors(params, &format!("{T} {body}"));
    assert_eq!(e.len(), 2, "an error and its note: {e:#?}");
    assert!(
        e[1].starts_with("note: the kernel's `grid::dependency_wait()`"),
        "{e:#?}"
    );
    e[0].clone()
}

#[test]
fn a_load_before_the_wait() {
    let e = one(
        XY,
        "copy(t, x.tile(cta.x, 0)); grid::dependency_wait(); copy(y.tile(cta.x, 0), t);",
    );
    assert!(
        e.starts_with("read before the grid dependency wait: this load reads `x` and may execute before `grid::dependency_wait()` (no wait comes before it)"),
        "{e}"
    );
    assert!(e.contains("`#[independent] x: Tensor<..>`"), "{e}");
}

#[test]
fn a_store_before_the_wait() {
    let e = one(
        XY,
        "copy(y.tile(cta.x, 0), t); grid::dependency_wait(); copy(t, x.tile(cta.x, 0));",
    );
    assert!(
        e.starts_with("write before the grid dependency wait: this store writes `y`"),
        "{e}"
    );
}

#[test]
fn an_atomic_and_a_gather_before_the_wait() {
    let e = one(
        XY,
        "atomic::add(y.tile(cta.x, 0), t, scope = gpu); grid::dependency_wait();",
    );
    assert!(e.contains("this atomic reduction writes `y`"), "{e}");
    let e = one(
        "#[shape(M, N)] x: Tensor<f32>, #[shape(R)] idx: Tensor<i32>",
        "let r = gather(idx, cta.x); grid::dependency_wait(); copy(t, x.tile(r, 0));",
    );
    assert!(e.contains("this scalar load reads `idx`"), "{e}");
}

#[test]
fn a_tma_load_before_the_wait() {
    let e = one(
        XY,
        "let s = smem::<f32>([32, 64]); let bar = mbarrier(); #[scope(thread = 0)] { tma::load(s, x.tile(cta.x, 0), bar); } bar.wait(0); grid::dependency_wait(); copy(t, s); copy(y.tile(cta.x, 0), t);",
    );
    assert!(e.contains("this TMA load reads `x`"), "{e}");
}

#[test]
fn paths_that_skip_the_wait() {
    let skip = "on a path that skips it";
    // The wait in one branch only.
    let e = one(
        XY,
        "if cta.x == 0 { grid::dependency_wait(); } copy(t, x.tile(cta.x, 0));",
    );
    assert!(e.contains(skip), "{e}");
    // In the other branch.
    let e = one(
        XY,
        "if cta.x == 0 { grid::dependency_wait(); } else { copy(t, x.tile(cta.x, 0)); }",
    );
    assert!(e.contains("(no wait comes before it)"), "{e}");
    // In a loop that may run no iteration.
    let e = one(
        XY,
        "for i in 0..N { grid::dependency_wait(); } copy(t, x.tile(cta.x, 0));",
    );
    assert!(e.contains(skip), "{e}");
    // Before the wait in the loop's first iteration.
    let e = one(
        XY,
        "for i in 0..4 { copy(t, x.tile(i, 0)); grid::dependency_wait(); }",
    );
    assert!(e.contains("(no wait comes before it)"), "{e}");
    // Waited by one warp, read by all.
    let e = one(
        XY,
        "#[scope(warp = 0)] { grid::dependency_wait(); } sync_threads(); copy(t, x.tile(cta.x, 0));",
    );
    assert!(e.contains(skip), "{e}");
}

#[test]
fn accesses_after_the_wait_on_every_path() {
    let ok = [
        "grid::dependency_wait(); copy(t, x.tile(cta.x, 0)); copy(y.tile(cta.x, 0), t);",
        "if cta.x == 0 { grid::dependency_wait(); } else { grid::dependency_wait(); } copy(t, x.tile(cta.x, 0));",
        "for i in 0..2 { grid::dependency_wait(); } copy(t, x.tile(cta.x, 0));",
        "for i in 0..N { grid::dependency_wait(); copy(t, x.tile(i, 0)); }",
        "let s = smem::<f32>([32, 64]); let bar = mbarrier(); #[scope(thread = 0)] { grid::dependency_wait(); tma::load(s, x.tile(cta.x, 0), bar); } bar.wait(0);",
        "#[scope(cta)] { grid::dependency_wait(); } copy(t, x.tile(cta.x, 0));",
        // No wait: launched as always, nothing checked.
        "copy(t, x.tile(cta.x, 0)); copy(y.tile(cta.x, 0), t);",
    ];
    for body in ok {
        assert_eq!(
            compile_errors(XY, &format!("{T} {body}")),
            Vec::<String>::new(),
            "{body}"
        );
    }
}

#[test]
fn independent_tensors_may_be_accessed_before_the_wait() {
    let params = "#[independent] #[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>, #[shape(M, N)] #[independent] z: Tensor<f32>";
    let body = "copy(t, x.tile(cta.x, 0)); copy(z.tile(cta.x, 0), t); grid::dependency_wait(); copy(y.tile(cta.x, 0), t);";
    assert_eq!(
        compile_errors(params, &format!("{T} {body}")),
        Vec::<String>::new()
    );
    // Only the declared ones.
    let body = "copy(t, x.tile(cta.x, 0)); copy(y.tile(cta.x, 0), t); grid::dependency_wait();";
    let e = compile_errors(params, &format!("{T} {body}"));
    assert!(e[0].contains("this store writes `y`"), "{e:#?}");
}

#[test]
fn independent_takes_no_arguments() {
    let e = errors(
        STD_ATTR,
        "fn k(#[independent(yes)] #[shape(M, N)] x: Tensor<f32>) { sync_threads(); }",
    );
    assert!(
        e[0].starts_with("`#[independent]` takes no arguments"),
        "{e:#?}"
    );
}
