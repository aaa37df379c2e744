//! `cargo xtask test`: exactly what CI runs, on a machine with no GPU.
//!
//! Steps, in order, stopping at the first failure:
//! 1. install-tools (ptxas and nvdisasm into `target/tirx-tools/`),
//! 2. `cargo fmt --all -- --check` and rustfmt on the kernel family folders (`fmt.rs`;
//!    skipped by `--quick`),
//! 3. `cargo clippy --workspace --all-targets -- -D warnings` (skipped by `--quick`),
//! 4. `cargo test --workspace`,
//! 5. the Python binding: build the `tirx` wheel with maturin (dev profile, reusing step 4's
//!    build) and run `tirx-py/tests` without a GPU (see `python.rs`),
//! 6. the candle bridge: `tirx-candle`'s tests, a workspace of its own built with nvcc from
//!    PyPI and link stubs for the CUDA libraries (see `candle.rs`).
//!
//! Every cargo child gets `TIRX_PTXAS`, `TIRX_NVDISASM` and `TIRX_REQUIRE_PTXAS=1`, so tests
//! that assemble PTX fail rather than skip when the tools are missing. Children never read
//! stdin, so a run can never hang waiting for input (on CI or off).

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Command, Stdio};

/// Which steps to run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// fmt, clippy, test.
    Full,
    /// test only.
    Quick,
}

/// One cargo invocation.
struct Step {
    args: &'static [&'static str],
    /// Part of `--quick`.
    quick: bool,
}

/// Cheapest first (formatting, which fails in seconds, runs before these): clippy before the
/// long test build.
const STEPS: &[Step] = &[
    Step {
        args: &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        quick: false,
    },
    Step {
        args: &["test", "--workspace"],
        quick: true,
    },
];

pub fn run(mode: Mode) -> Result<(), String> {
    println!("==> install-tools");
    let tools = crate::tools::install()?;
    tools.print();
    let env = crate::tools::env_for_children(&tools);
    // `cargo run` (behind the `xtask` alias) tells us which cargo it is; use the same one.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let root = crate::workspace_root();
    if mode == Mode::Full {
        println!("==> cargo fmt --all -- --check, rustfmt --check on the kernel family folders");
        crate::fmt::run(&root, true)?;
    }
    for step in STEPS.iter().filter(|s| mode == Mode::Full || s.quick) {
        cargo_step(&cargo, step.args, &env, &root)?;
    }
    println!("==> python: maturin build + unittest (tirx-py/tests)");
    crate::python::test(&root, &env)?;
    println!("==> candle: cargo test of tirx-candle (nvcc from PyPI, link stubs)");
    crate::candle::test(&root)?;
    println!("==> all steps passed");
    Ok(())
}

/// Only the Python step (with the same tools and environment as [`run`]).
pub fn run_python() -> Result<(), String> {
    let tools = crate::tools::install()?;
    let env = crate::tools::env_for_children(&tools);
    println!("==> python: maturin build + unittest (tirx-py/tests)");
    crate::python::test(&crate::workspace_root(), &env)
}

/// The ignored emulator runs of `sim-all`, in order, each a release build: the whole
/// catalogue at each family's default shape (`kernels/src/family/tests.rs`), then the
/// block-scaled production GEMM's sweep of 100 seeded schedules a format
/// (`tests/sim_mxfp8_prod.rs`: schedules and CLC modes the catalogue run does not vary).
const SIM_ALL: &[&[&str]] = &[
    &[
        "test",
        "--release",
        "-p",
        "tirx-kernels",
        "--lib",
        "every_artifact_runs_in_the_emulator",
        "--",
        "--ignored",
    ],
    &[
        "test",
        "--release",
        "-p",
        "tirx-tests",
        "--test",
        "main",
        "sim_mxfp8_prod::the_block_scaled_prod_gemms_pass_100_seeded_schedules",
        "--",
        "--ignored",
    ],
];

/// `sim-all`: the ignored emulator runs ([`SIM_ALL`]), with the tools in the environment like
/// [`run`]'s steps, stopping at the first failure.
pub fn run_sim_all() -> Result<(), String> {
    let tools = crate::tools::install()?;
    let env = crate::tools::env_for_children(&tools);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let root = crate::workspace_root();
    for args in SIM_ALL {
        cargo_step(&cargo, args, &env, &root)?;
    }
    Ok(())
}

/// Runs `cargo ARGS` in `root` with `env` and no stdin, announcing it; a failure is an error
/// that names the command.
fn cargo_step(
    cargo: &OsStr,
    args: &[&str],
    env: &[(&str, &OsStr)],
    root: &Path,
) -> Result<(), String> {
    let shown = format!("cargo {}", args.join(" "));
    println!("==> {shown}");
    let status = Command::new(cargo)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run `{shown}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}
