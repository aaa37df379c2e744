//! `cargo xtask tour [ARGS…]`: installs ptxas/nvdisasm, then runs the `tirx` tool (release
//! build) with the tool paths in its environment. With no ARGS the tool takes its tour: list
//! every kernel, check each with ptxas and nvdisasm, and run what this machine can run.

use std::ffi::OsString;
use std::process::{Command, Stdio};

/// Runs `tirx ARGS…`.
pub fn run(args: &[&str]) -> Result<(), String> {
    let tools = crate::tools::install()?;
    let env = crate::tools::env_for_children(&tools);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let status = Command::new(&cargo)
        .args([
            "run",
            "--release",
            "--quiet",
            "-p",
            "tirx-kernels",
            "--bin",
            "tirx",
            "--",
        ])
        .args(args)
        .envs(env)
        .current_dir(crate::workspace_root())
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run the tirx tool: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`tirx {}` failed ({status})", args.join(" ")))
    }
}
