//! `cargo xtask …`: the project's own chores, in plain std Rust (no dependencies, so it builds
//! fast and never pulls a crate the workspace does not already have).
//!
//! Commands:
//! - `install-tools`: fetch `ptxas` and `nvdisasm` from PyPI into `<root>/target/tirx-tools/`
//!   (see `tools.rs`). Idempotent.
//! - `tour [ARGS…]`: install-tools, then the `tirx` tool (see `tour.rs`).
//! - `test [--quick]`: what CI runs (see `test.rs`): install-tools, then fmt, clippy and the
//!   workspace tests with the tool paths in the environment, then the Python binding's wheel
//!   and tests (`python.rs`). `--quick` skips fmt and clippy.
//!
//! Invariant: every failure ends the process with a non-zero exit code and a one-line reason
//! on stderr; nothing ever waits for input.

mod python;
mod test;
mod tools;
mod tour;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  install-tools   download ptxas and nvdisasm (PyPI wheels) into target/tirx-tools/
  test [--quick]  install-tools, then cargo fmt --check, cargo clippy -D warnings,
                  cargo test --workspace and the Python wheel's tests (maturin, unittest),
                  as CI does; --quick skips fmt and clippy
  test-python     install-tools, then only the Python wheel's build and tests
  tour [ARGS…]    install-tools, then run the `tirx` tool (release build) with ARGS;
                  with none, the tour: list, check with ptxas/nvdisasm, run on a GPU if present
  help            print this message";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["install-tools"] => tools::install().map(|tools| tools.print()),
        ["test"] => test::run(test::Mode::Full),
        ["test", "--quick"] => test::run(test::Mode::Quick),
        ["test-python"] => test::run_python(),
        ["tour", rest @ ..] => tour::run(rest),
        [] | ["help" | "--help" | "-h"] => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown arguments `{}`\n\n{USAGE}", args.join(" "))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: the parent of this crate's manifest folder.
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// True on CI (`CI=true` or `CI=1`, as GitHub Actions, GitLab and most others set it).
fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}
