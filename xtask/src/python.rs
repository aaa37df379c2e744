//! The Python step of `cargo xtask test`: build the `tirx` wheel with maturin and run the
//! binding's tests (no GPU, no torch: numpy and hand-made DLPack / array-interface producers).
//!
//! Layout under `<root>/target/`:
//!
//! ```text
//! py-venv/        a virtual environment with the pinned maturin and numpy (from PyPI)
//! py-wheels/      the wheel built here (emptied first, so it holds exactly one)
//! ```
//!
//! The wheel is built in the `dev` profile so that it reuses what `cargo test` compiled (only
//! pyo3, built with `extension-module`, and `tirx-py` itself are compiled again). The wheel for
//! a GPU machine is built with `--release` by hand (docs/python.md).

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Pinned: the versions this step was written against. Bump together.
const PACKAGES: &[&str] = &["maturin==1.16.0", "numpy==2.4.6"];

fn run(cmd: &mut Command, shown: &str) -> Result<(), String> {
    println!("    {shown}");
    let status = cmd
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run `{shown}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

/// The venv's Python, created (with the pinned packages) when missing.
fn venv(root: &Path) -> Result<PathBuf, String> {
    let dir = root.join("target").join("py-venv");
    let python = dir.join("bin").join("python");
    if !python.is_file() {
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&dir),
            "python3 -m venv target/py-venv",
        )?;
    }
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(PACKAGES),
        &format!("pip install {}", PACKAGES.join(" ")),
    )?;
    Ok(python)
}

/// Builds the wheel, installs it in the venv and runs `tirx-py/tests`.
pub fn test(root: &Path, env: &[(&str, &OsStr)]) -> Result<(), String> {
    let python = venv(root)?;
    let bin = python.parent().unwrap_or(Path::new("."));
    let wheels = root.join("target").join("py-wheels");
    if wheels.exists() {
        fs::remove_dir_all(&wheels).map_err(|e| format!("remove {}: {e}", wheels.display()))?;
    }
    run(
        Command::new(bin.join("maturin"))
            .args(["build", "--profile", "dev", "--interpreter"])
            .arg(&python)
            .arg("-m")
            .arg(root.join("tirx-py").join("Cargo.toml"))
            .arg("-o")
            .arg(&wheels)
            // The cargo steps' environment, so build scripts see the same tool paths and
            // nothing they track forces a rebuild.
            .envs(env.iter().copied())
            .current_dir(root),
        "maturin build --profile dev -m tirx-py/Cargo.toml -o target/py-wheels",
    )?;
    let wheel = fs::read_dir(&wheels)
        .map_err(|e| format!("read {}: {e}", wheels.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("maturin wrote no wheel into {}", wheels.display()))?;
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--force-reinstall", "--no-deps"])
            .arg(&wheel),
        &format!("pip install {}", wheel.display()),
    )?;
    // From outside the source tree, so `import tirx` is the installed wheel.
    run(
        Command::new(&python)
            .args(["-m", "unittest", "discover", "-v", "-s"])
            .arg(root.join("tirx-py").join("tests"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(root.join("target")),
        "python -m unittest discover -s tirx-py/tests",
    )
}
