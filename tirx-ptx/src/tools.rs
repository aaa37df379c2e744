//! Running NVIDIA's offline tools on our PTX: `ptxas` (assemble, and report registers, spills,
//! shared memory) and `nvdisasm` (the SASS that came out, summarised as an opcode histogram).
//!
//! This is how sm_100a code is verified without a Blackwell GPU (DESIGN.md §5): it must assemble
//! with ptxas, with the resources and SASS we intended.
//!
//! Where the tools come from, first match wins:
//! 1. `$TIRX_PTXAS` / `$TIRX_NVDISASM` (an explicit choice: if set and wrong, that is an error),
//! 2. the cache that `cargo xtask install-tools` fills, `<workspace>/target/tirx-tools/`
//!    (layout shared with `xtask/src/tools.rs`),
//! 3. `PATH`.
//!
//! Invariants: nothing here panics on a missing tool or bad PTX; every failure is a
//! [`ToolError`]. Temporary files live in a private folder under [`std::env::temp_dir`] that is
//! removed when the call returns. Tests that need a real tool go through [`tool_for_test`], which
//! turns "missing" into a failure under `TIRX_REQUIRE_PTXAS=1` (CI) and a skip otherwise.
//!
//! Here: the error type and the two runs, [`ptxas`] and [`nvdisasm`]. The lookup is in
//! `tools/lookup.rs`, the reading of ptxas's report in `tools/report.rs`, the SASS histogram in
//! `tools/sass.rs`.

mod lookup;
mod report;
mod sass;
#[cfg(test)]
mod tests;

pub use lookup::{find_nvdisasm, find_ptxas, tool_for_test};
pub use report::{FunctionReport, PtxasReport};
pub use sass::{sass_histogram, sass_mnemonics};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::{env, fs, io};

/// Why a tool could not give us an answer.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The tool is neither where its variable points, nor in the cache, nor on `PATH`.
    #[error("{tool} not found: {hint}")]
    NotFound {
        /// `"ptxas"` or `"nvdisasm"`.
        tool: &'static str,
        /// Where we looked and what to do about it.
        hint: String,
    },
    /// Writing the input, reading the output or starting the process failed.
    #[error("{context}: {source}")]
    Io {
        /// What we were doing.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// ptxas rejected the PTX. `stderr` holds its messages, e.g.
    /// `ptxas kernel.ptx, line 7; error   : Not a name of any known instruction: 'bogus'`.
    #[error("ptxas failed:\n{stderr}")]
    Ptxas {
        /// Everything ptxas printed.
        stderr: String,
    },
    /// nvdisasm could not disassemble the cubin.
    #[error("nvdisasm failed:\n{stderr}")]
    Nvdisasm {
        /// Everything nvdisasm printed.
        stderr: String,
    },
}

/// Variable that makes tests needing a real tool fail instead of skip (set by `cargo xtask test`).
pub const REQUIRE_VAR: &str = "TIRX_REQUIRE_PTXAS";

/// Assemble `ptx` for `arch` (`"sm_90a"`, `"sm_100a"`) with
/// `ptxas -arch=<arch> -v --warn-on-spills`, and report per-function resources.
///
/// The PTX is written as `kernel.ptx` in a private temporary folder, so messages read
/// `ptxas kernel.ptx, line 7; error : …` whatever the folder. A non-zero exit is
/// [`ToolError::Ptxas`] with ptxas's messages.
pub fn ptxas(ptx: &str, arch: &str) -> Result<PtxasReport, ToolError> {
    let tool = find_ptxas()?;
    let dir = TempDir::new("ptxas")?;
    dir.write("kernel.ptx", ptx.as_bytes())?;
    let output = run(
        Command::new(&tool)
            .arg(format!("-arch={arch}"))
            .args(["-v", "--warn-on-spills", "-o", "kernel.cubin", "kernel.ptx"])
            .current_dir(&dir.path),
        "ptxas",
        &tool,
    )?;
    let log = combined(&output);
    if !output.status.success() {
        return Err(ToolError::Ptxas { stderr: log });
    }
    let cubin = dir.read("kernel.cubin")?;
    Ok(PtxasReport::from_log(&log, cubin))
}

/// The SASS in `cubin`, as `nvdisasm -c` prints it (code sections only).
pub fn nvdisasm(cubin: &[u8]) -> Result<String, ToolError> {
    let tool = find_nvdisasm()?;
    let dir = TempDir::new("nvdisasm")?;
    dir.write("kernel.cubin", cubin)?;
    let output = run(
        Command::new(&tool)
            .args(["-c", "kernel.cubin"])
            .current_dir(&dir.path),
        "nvdisasm",
        &tool,
    )?;
    if !output.status.success() {
        return Err(ToolError::Nvdisasm {
            stderr: combined(&output),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn run(command: &mut Command, name: &str, tool: &Path) -> Result<Output, ToolError> {
    command
        .stdin(Stdio::null())
        .output()
        .map_err(|source| ToolError::Io {
            context: format!("running {name} ({})", tool.display()),
            source,
        })
}

/// stderr, then stdout if there was any (ptxas prints `-v` and errors on stderr).
fn combined(output: &Output) -> String {
    let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stdout));
    text
}

/// A private folder under the system temp dir, removed on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new(purpose: &str) -> Result<TempDir, ToolError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = env::temp_dir().join(format!("tirx-{purpose}-{}-{n}", std::process::id()));
            // `create_dir` fails on an existing folder, so a leftover from a dead process with
            // our pid is skipped rather than shared.
            match fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(source) => {
                    return Err(ToolError::Io {
                        context: format!("creating {}", path.display()),
                        source,
                    });
                }
            }
        }
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<(), ToolError> {
        let path = self.path.join(name);
        fs::write(&path, bytes).map_err(|source| ToolError::Io {
            context: format!("writing {}", path.display()),
            source,
        })
    }

    fn read(&self, name: &str) -> Result<Vec<u8>, ToolError> {
        let path = self.path.join(name);
        fs::read(&path).map_err(|source| ToolError::Io {
            context: format!("reading {}", path.display()),
            source,
        })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a leftover temp folder is not worth failing a build over.
        let _ = fs::remove_dir_all(&self.path);
    }
}
