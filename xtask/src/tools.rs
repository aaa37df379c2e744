//! `cargo xtask install-tools`: put `ptxas` and `nvdisasm` in `<root>/target/tirx-tools/`.
//!
//! NVIDIA publishes both as PyPI wheels, so pip is the only thing a machine needs (no CUDA
//! toolkit, no GPU). Layout of the cache folder:
//!
//! ```text
//! target/tirx-tools/
//!   py/                       pip --target folder (the unpacked wheels)
//!   bin/ptxas    -> ../py/nvidia/cu13/bin/ptxas
//!   bin/nvdisasm -> ../py/nvidia/cu13/bin/nvdisasm
//! ```
//!
//! `tirx_ptx::tools::find_ptxas` looks in `bin/` (and `py/…` as a fallback), so this layout is
//! shared with that file: change both together.
//!
//! Invariants: the install is idempotent (nothing is downloaded when `bin/` already holds the
//! pinned versions and they run); a failed download never leaves a half-written `py/` behind
//! (pip writes to `py.partial/`, which is renamed only once both binaries are there).

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One wheel and the binary we want from it.
struct Wheel {
    package: &'static str,
    /// Pinned: the newest CUDA 13.x on PyPI when this was written. Bump all together. A newer
    /// ptxas accepts newer PTX, but keep `.version` ≤ 9.0 in test PTX anyway: the H200's
    /// driver rejects anything newer (DESIGN.md §6).
    version: &'static str,
    tool: &'static str,
    /// Where the wheel puts the binary, relative to the pip `--target` folder.
    path_in_wheel: &'static str,
}

const WHEELS: &[Wheel] = &[
    Wheel {
        package: "nvidia-cuda-nvcc",
        version: "13.5.37",
        tool: "ptxas",
        path_in_wheel: "nvidia/cu13/bin/ptxas",
    },
    Wheel {
        package: "nvidia-cuda-nvdisasm",
        version: "13.5.37",
        tool: "nvdisasm",
        path_in_wheel: "nvidia/cu13/bin/nvdisasm",
    },
];

/// Where the installed tools are.
pub struct Tools {
    pub ptxas: PathBuf,
    pub nvdisasm: PathBuf,
}

impl Tools {
    pub fn print(&self) {
        println!("ptxas    {}", self.ptxas.display());
        println!("nvdisasm {}", self.nvdisasm.display());
    }
}

/// The cache folder, `<workspace root>/target/tirx-tools`.
fn cache_dir() -> PathBuf {
    crate::workspace_root().join("target").join("tirx-tools")
}

/// Make sure both tools are in the cache at their pinned versions; download them if not.
pub fn install() -> Result<Tools, String> {
    let cache = cache_dir();
    let bin = cache.join("bin");
    let tools = Tools {
        ptxas: bin.join("ptxas"),
        nvdisasm: bin.join("nvdisasm"),
    };
    if WHEELS
        .iter()
        .all(|w| runs_at_version(&bin.join(w.tool), w.version))
    {
        println!("tools already installed in {}", cache.display());
        return Ok(tools);
    }
    println!("installing ptxas and nvdisasm into {}", cache.display());
    check_python()?;
    let partial = cache.join("py.partial");
    remove_if_present(&partial)?;
    fs::create_dir_all(&cache).map_err(|e| io_error("create", &cache, e))?;
    pip_install(&partial)?;
    for wheel in WHEELS {
        let binary = partial.join(wheel.path_in_wheel);
        if !binary.is_file() {
            return Err(format!(
                "pip installed {}=={} but {} is not at {} (did the wheel's layout change?)",
                wheel.package,
                wheel.version,
                wheel.tool,
                binary.display()
            ));
        }
    }
    let py = cache.join("py");
    remove_if_present(&py)?;
    fs::rename(&partial, &py).map_err(|e| io_error("rename", &partial, e))?;
    fs::create_dir_all(&bin).map_err(|e| io_error("create", &bin, e))?;
    for wheel in WHEELS {
        let target = py.join(wheel.path_in_wheel);
        make_executable(&target)?;
        link(&bin.join(wheel.tool), wheel.path_in_wheel)?;
        if !runs_at_version(&bin.join(wheel.tool), wheel.version) {
            return Err(format!(
                "installed {} but `{} --version` does not run or does not report V{}",
                wheel.tool,
                bin.join(wheel.tool).display(),
                wheel.version
            ));
        }
    }
    Ok(tools)
}

/// `tool --version` exits 0 and names the pinned release (`…, V13.5.37`).
fn runs_at_version(tool: &Path, version: &str) -> bool {
    if !tool.is_file() {
        return false;
    }
    let output = Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .output();
    match output {
        Ok(out) => {
            out.status.success()
                && String::from_utf8_lossy(&out.stdout).contains(&format!("V{version}"))
        }
        Err(_) => false,
    }
}

/// Fail early, with a fix, when python3 or its pip is missing.
pub(crate) fn check_python() -> Result<(), String> {
    match quiet(Command::new("python3").arg("--version")) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(
                "python3 is not on PATH; install Python 3 with pip (e.g. `apt-get install \
                 python3 python3-pip`)"
                    .into(),
            );
        }
        Err(e) => return Err(format!("could not run python3: {e}")),
        Ok(false) => return Err("`python3 --version` failed".into()),
        Ok(true) => {}
    }
    match quiet(Command::new("python3").args(["-m", "pip", "--version"])) {
        Ok(true) => Ok(()),
        _ => Err(
            "python3 has no pip; install it with `python3 -m ensurepip --upgrade` or your \
                  package manager (e.g. `apt-get install python3-pip`)"
                .into(),
        ),
    }
}

/// Run a command with no input and its output discarded; `Ok(success)`.
fn quiet(command: &mut Command) -> io::Result<bool> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
}

/// `pip install --no-deps --target <into> <pinned wheels>`, never interactive.
fn pip_install(into: &Path) -> Result<(), String> {
    let mut command = Command::new("python3");
    command
        .args(["-m", "pip", "install", "--no-deps", "--only-binary=:all:"])
        .args(["--no-input", "--disable-pip-version-check"])
        .arg("--target")
        .arg(into)
        .args(
            WHEELS
                .iter()
                .map(|w| format!("{}=={}", w.package, w.version)),
        )
        // The install goes into a private folder, so pip's warning about running as root
        // does not apply (env var rather than flag: older pips ignore unknown env vars).
        .env("PIP_ROOT_USER_ACTION", "ignore")
        .stdin(Stdio::null());
    if crate::on_ci() {
        command.args(["--progress-bar", "off"]);
    }
    let status = command
        .status()
        .map_err(|e| format!("could not run python3 -m pip: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "pip install failed ({status}); see pip's message above (the wheels exist for \
             x86_64 and aarch64 Linux only)"
        ))
    }
}

pub(crate) fn remove_if_present(dir: &Path) -> Result<(), String> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("remove", dir, e)),
        _ => Ok(()),
    }
}

#[cfg(unix)]
pub(crate) fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = fs::metadata(path)
        .map_err(|e| io_error("stat", path, e))?
        .permissions();
    permissions.set_mode(permissions.mode() | 0o755);
    fs::set_permissions(path, permissions).map_err(|e| io_error("chmod", path, e))
}

#[cfg(not(unix))]
pub(crate) fn make_executable(_path: &Path) -> Result<(), String> {
    Ok(())
}

/// `bin/<tool>` → `../py/<path_in_wheel>`: relative, so the checkout can move.
fn link(at: &Path, path_in_wheel: &str) -> Result<(), String> {
    match fs::remove_file(at) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_error("remove", at, e)),
        _ => {}
    }
    let target = Path::new("..").join("py").join(path_in_wheel);
    symlink(&target, at).map_err(|e| io_error("link", at, e))
}

#[cfg(unix)]
pub(crate) fn symlink(target: &Path, at: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

#[cfg(not(unix))]
pub(crate) fn symlink(target: &Path, at: &Path) -> io::Result<()> {
    let parent = at.parent().unwrap_or(Path::new("."));
    fs::copy(parent.join(target), at).map(|_| ())
}

pub(crate) fn io_error(action: &str, path: &Path, error: io::Error) -> String {
    format!("could not {action} {}: {error}", path.display())
}

/// For `test.rs`: the environment the child processes get.
pub fn env_for_children(tools: &Tools) -> [(&'static str, &OsStr); 3] {
    [
        ("TIRX_PTXAS", tools.ptxas.as_os_str()),
        ("TIRX_NVDISASM", tools.nvdisasm.as_os_str()),
        ("TIRX_REQUIRE_PTXAS", OsStr::new("1")),
    ]
}
