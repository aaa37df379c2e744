//! Generates the crate's family modules and the catalogue's kernel lists from the family
//! folders of `src/` (`build/families.rs` says how a folder, a file and a kernel are found),
//! so that adding a kernel is its file and adding a family its folder plus one line in
//! `catalogue::FAMILIES`. Writes `$OUT_DIR/families.rs` (included by `lib.rs`) and
//! `$OUT_DIR/catalogue.rs` (included by `catalogue.rs`).

#[path = "build/families.rs"]
mod families;

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let src = manifest.join("src");
    // A new file or folder anywhere under src/ changes what is found (cargo watches a
    // folder's whole tree).
    println!("cargo::rerun-if-changed=src");
    println!("cargo::rerun-if-changed=build");
    let found = families::discover(&src)
        .unwrap_or_else(|e| panic!("reading the family folders of {}: {e}", src.display()));
    write(&out.join("families.rs"), &families::modules_rs(&found));
    write(&out.join("catalogue.rs"), &families::lists_rs(&found));
}

/// Writes `text` to `path` unless it already holds it (an unchanged file keeps its time).
fn write(path: &std::path::Path, text: &str) {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return;
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}
