//! `cargo xtask fmt [--check]`: `cargo fmt --all`, the same for tirx-candle (a workspace of
//! its own), then the kernel family folders' files, which `cargo fmt` does not reach: their modules are declared by `kernels/build.rs` in a
//! generated file (`include!`d by `kernels/src/lib.rs`), and rustfmt follows only the `mod`
//! lines it reads in source. A family folder is a folder of `kernels/src/` holding a
//! `family.rs` (the rule of `kernels/build/families.rs`); rustfmt follows each file's own
//! submodules (`split.rs` → `split/`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Formats (or with `check`, checks) the workspace and the family folders' files.
pub fn run(root: &Path, check: bool) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut fmt = Command::new(cargo);
    fmt.args(["fmt", "--all"]);
    if check {
        fmt.args(["--", "--check"]);
    }
    status(fmt.current_dir(root), "cargo fmt --all")?;
    // tirx-candle is a workspace of its own (`tirx-candle/Cargo.toml` says why).
    let mut candle = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    candle.args(["fmt", "--manifest-path", "tirx-candle/Cargo.toml"]);
    if check {
        candle.args(["--", "--check"]);
    }
    status(candle.current_dir(root), "cargo fmt of tirx-candle")?;
    let files = family_files(&root.join("kernels").join("src"))?;
    let mut rustfmt = Command::new("rustfmt");
    rustfmt.args(["--edition", "2024"]);
    if check {
        rustfmt.arg("--check");
    }
    status(
        rustfmt.args(&files).current_dir(root),
        "rustfmt on the kernel family folders",
    )
}

/// Every `*.rs` file directly in a family folder of `src`, by name.
fn family_files(src: &Path) -> Result<Vec<PathBuf>, String> {
    let read = |dir: &Path| -> Result<Vec<PathBuf>, String> {
        let mut v = std::fs::read_dir(dir)
            .and_then(|d| {
                d.map(|e| e.map(|e| e.path()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| format!("reading {}: {e}", dir.display()))?;
        v.sort();
        Ok(v)
    };
    let mut out = Vec::new();
    for dir in read(src)? {
        if dir.join("family.rs").is_file() {
            out.extend(
                read(&dir)?
                    .into_iter()
                    .filter(|f| f.is_file() && f.extension().is_some_and(|e| e == "rs")),
            );
        }
    }
    Ok(out)
}

/// Runs `cmd` with no input; an error naming `what` unless it succeeds.
fn status(cmd: &mut Command, what: &str) -> Result<(), String> {
    let status = cmd
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run {what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}
