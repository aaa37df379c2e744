//! Where the tools come from: `$TIRX_PTXAS` / `$TIRX_NVDISASM`, the `cargo xtask
//! install-tools` cache, then `PATH` (the order is in the `tools` module docs), and
//! [`tool_for_test`], which turns a missing tool into a skip or, under `TIRX_REQUIRE_PTXAS=1`,
//! a failure.

use super::{REQUIRE_VAR, ToolError};
use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The `ptxas` to run: `$TIRX_PTXAS`, else the xtask cache, else `PATH`.
pub fn find_ptxas() -> Result<PathBuf, ToolError> {
    find("ptxas", "TIRX_PTXAS")
}

/// The `nvdisasm` to run: `$TIRX_NVDISASM`, else the xtask cache, else `PATH`.
pub fn find_nvdisasm() -> Result<PathBuf, ToolError> {
    find("nvdisasm", "TIRX_NVDISASM")
}

fn find(tool: &'static str, var: &'static str) -> Result<PathBuf, ToolError> {
    let cache = cache_dir();
    // `bin/` holds the links xtask makes; `py/…` is the file itself, should a link be missing.
    let candidates = [
        cache.join("bin").join(tool),
        cache.join("py/nvidia/cu13/bin").join(tool),
    ];
    locate(
        tool,
        var,
        env::var_os(var),
        &candidates,
        env::var_os("PATH"),
    )
}

/// `<workspace>/target/tirx-tools`, found from this crate's source folder.
fn cache_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .unwrap_or(manifest)
        .join("target")
        .join("tirx-tools")
}

/// The lookup order, without touching the process environment (so tests can drive it).
pub(super) fn locate(
    tool: &'static str,
    var: &'static str,
    explicit: Option<OsString>,
    candidates: &[PathBuf],
    path_var: Option<OsString>,
) -> Result<PathBuf, ToolError> {
    if let Some(explicit) = explicit.filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&explicit);
        return if path.is_file() {
            // Absolute, because we run the tool from inside a temporary folder.
            std::path::absolute(&path).map_err(|source| ToolError::Io {
                context: format!("resolving ${var}={}", path.display()),
                source,
            })
        } else {
            Err(ToolError::NotFound {
                tool,
                hint: format!(
                    "${var} is set to `{}`, which is not a file; unset it or run \
                     `cargo xtask install-tools`",
                    path.display()
                ),
            })
        };
    }
    let on_path = path_var
        .iter()
        .flat_map(env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(tool));
    if let Some(found) = candidates
        .iter()
        .cloned()
        .chain(on_path)
        .find(|p| p.is_file())
    {
        return Ok(found);
    }
    let cache = candidates
        .first()
        .map_or_else(String::new, |c| c.display().to_string());
    Err(ToolError::NotFound {
        tool,
        hint: format!(
            "looked at ${var}, {cache} and PATH; run `cargo xtask install-tools` \
             (downloads it from PyPI) or set ${var}"
        ),
    })
}

/// For tests that need a real tool. `Some(path)` when it was found. When it was not: panics
/// if `TIRX_REQUIRE_PTXAS=1` (CI must not silently skip), else prints a note and returns `None`
/// so the test can `return`.
///
/// ```no_run
/// # use tirx_ptx::tools;
/// let Some(_ptxas) = tools::tool_for_test(tools::find_ptxas()) else { return };
/// ```
pub fn tool_for_test(found: Result<PathBuf, ToolError>) -> Option<PathBuf> {
    match found {
        Ok(path) => Some(path),
        Err(error) if required() => panic!("{error}\n({REQUIRE_VAR} is set, so this is an error)"),
        Err(error) => {
            eprintln!("note: skipping: {error}");
            None
        }
    }
}

fn required() -> bool {
    env::var(REQUIRE_VAR).is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}
