//! Compile-fail cases of `#[tile_kernel]`: each error is reported at the user's token with
//! what is wrong and what would be right (`tests/ui/*.rs` with their `.stderr`), and a
//! compile-pass case of a new kernel built from the same constructs (`tests/ui-pass/`).

#[test]
fn macro_errors_point_at_the_users_tokens() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("ui-pass/*.rs");
}
