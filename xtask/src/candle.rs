//! `cargo xtask test-candle`: build and test `tirx-candle` (a workspace of its own) on a
//! machine with no GPU and no CUDA toolkit, as CI does.
//!
//! candle's CUDA backend needs, at build time, what tirx itself does not:
//! - nvcc, for candle's own kernels (`candle-kernels`' build script: PTX, and a static library
//!   compiled to SASS for `CUDA_COMPUTE_CAP`). NVIDIA publishes the compiler, its headers and
//!   the CUDA runtime as PyPI wheels; they go to `target/tirx-tools/cuda/py/` (pip `--target`,
//!   written to `py.partial/` and renamed when complete, as `tools.rs` does).
//! - the CUDA libraries to link against: cudarc's `dynamic-linking` (candle's choice) links
//!   `libcuda`, `libnvrtc`, `libcurand`, `libcublas` and `libcublasLt`. No wheel carries a
//!   `libcuda`, and the others are 600 MB of wheels for symbols never called here, so this
//!   step writes link stubs: one C function per entry point cudarc declares (read from
//!   cudarc's own bindings, `src/<lib>/sys/mod.rs`), each answering
//!   `CUDA_ERROR_STUB_LIBRARY` (34), compiled with `cc` into `<root>/lib/stubs/` under the
//!   CUDA 13.0 sonames. The tests run with the stubs on `LD_LIBRARY_PATH`: a program linked
//!   this way starts, and every driver call says there is no driver. On a GPU machine the real
//!   libraries (same sonames) are found instead.
//!
//! Pinned: CUDA 13.0 (the toolkit matching cudarc's `cuda-13000`, which tirx selects; its PTX,
//! ISA 9.0, is what the H200's driver 580 accepts — DESIGN.md §6).
//!
//! Invariants: idempotent (nothing is downloaded when the marker file for the pinned versions
//! is present); the cargo build goes to `target/candle/`, apart from the main workspace's
//! target folder (cudarc is built with other features here, so nothing could be shared).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::tools::{check_python, io_error, remove_if_present, symlink};

/// The wheels: nvcc and ptxas, the compiler's headers, cicc and libdevice, the CUDA runtime
/// (headers, `libcudart`, which candle's static library links), and CCCL (`nv/target`, which
/// `cuda_fp16.h` includes). Bump together.
const WHEELS: &[&str] = &[
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-cuda-cccl==13.0.85",
];

/// The libraries cudarc links with `dynamic-linking` and candle's features: cudarc's bindings
/// folder, the link name, the soname of CUDA 13.0.
const STUBS: &[(&str, &str, &str)] = &[
    ("driver", "cuda", "libcuda.so.1"),
    ("nvrtc", "nvrtc", "libnvrtc.so.13"),
    ("curand", "curand", "libcurand.so.10"),
    ("cublas", "cublas", "libcublas.so.13"),
    ("cublaslt", "cublasLt", "libcublasLt.so.13"),
];

/// SASS target of candle's static kernels (the H200's).
const COMPUTE_CAP: &str = "90";

/// Where the toolkit's pieces are, once installed.
struct Kit {
    /// The CUDA root: `bin/nvcc`, `include/`, `lib/`, `lib/stubs/`.
    root: PathBuf,
}

fn kit_dir(root: &Path) -> PathBuf {
    root.join("target").join("tirx-tools").join("cuda")
}

/// Installs the wheels (once per pinned set) and writes the link stubs.
fn install(root: &Path, cudarc_src: &Path) -> Result<Kit, String> {
    let dir = kit_dir(root);
    let py = dir.join("py");
    let marker = dir.join(format!("installed-{}", WHEELS.join("+").replace("==", "-")));
    if !marker.is_file() {
        println!(
            "    installing nvcc and the CUDA headers into {}",
            dir.display()
        );
        check_python()?;
        let partial = dir.join("py.partial");
        remove_if_present(&partial)?;
        remove_if_present(&py)?;
        fs::create_dir_all(&dir).map_err(|e| io_error("create", &dir, e))?;
        let mut pip = Command::new("python3");
        pip.args(["-m", "pip", "install", "--no-deps", "--only-binary=:all:"])
            .args(["--no-input", "--disable-pip-version-check", "--quiet"])
            .arg("--target")
            .arg(&partial)
            .args(WHEELS)
            .env("PIP_ROOT_USER_ACTION", "ignore");
        run(&mut pip, "pip install the CUDA 13.0 compiler wheels")?;
        fs::rename(&partial, &py).map_err(|e| io_error("rename", &partial, e))?;
        fs::write(&marker, "").map_err(|e| io_error("write", &marker, e))?;
    }
    let cuda = py.join("nvidia").join("cu13");
    for tool in [
        "bin/nvcc",
        "bin/ptxas",
        "bin/cudafe++",
        "bin/fatbinary",
        "nvvm/bin/cicc",
    ] {
        crate::tools::make_executable(&cuda.join(tool))?;
    }
    // The unversioned name the linker looks for (`-lcudart`).
    let cudart = cuda.join("lib").join("libcudart.so");
    if !cudart.exists() {
        symlink(Path::new("libcudart.so.13"), &cudart).map_err(|e| io_error("link", &cudart, e))?;
    }
    write_stubs(&cuda.join("lib").join("stubs"), cudarc_src)?;
    Ok(Kit { root: cuda })
}

/// Every `pub unsafe fn NAME(` of one of cudarc's bindings files.
fn entry_points(bindings: &Path) -> Result<Vec<String>, String> {
    let text = fs::read_to_string(bindings).map_err(|e| io_error("read", bindings, e))?;
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("pub unsafe fn "))
        .filter_map(|l| l.split('(').next())
        // Generic helpers (`from_library<L>`) are Rust's own, not the library's symbols.
        .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return Err(format!(
            "no `pub unsafe fn` in {}: did cudarc's bindings change shape?",
            bindings.display()
        ));
    }
    Ok(names)
}

/// The C source of one stub library.
fn stub_source(names: &[String]) -> String {
    let mut c = String::from(
        "/* Link stub written by `cargo xtask test-candle`: no driver behind it. */\n\
         static const char MESSAGE[] = \"no CUDA driver (tirx's link stub library)\";\n",
    );
    for name in names {
        let _ = match name.as_str() {
            // The driver's error strings: the caller reads the pointer it passed.
            "cuGetErrorString" | "cuGetErrorName" => writeln!(
                c,
                "int {name}(int e, const char **s) {{ (void)e; if (s) *s = MESSAGE; return 0; }}"
            ),
            // The other libraries' error strings are returned.
            n if n.ends_with("GetErrorString") || n.ends_with("StatusString") => {
                writeln!(c, "const char *{name}(void) {{ return MESSAGE; }}")
            }
            // CUDA_ERROR_STUB_LIBRARY; any other status is "not success" just the same.
            _ => writeln!(c, "long {name}(void) {{ return 34; }}"),
        };
    }
    c
}

/// `lib<name>.so` (soname `SONAME`) and the `SONAME` link beside it, for every library.
fn write_stubs(stubs: &Path, cudarc_src: &Path) -> Result<(), String> {
    fs::create_dir_all(stubs).map_err(|e| io_error("create", stubs, e))?;
    for &(folder, name, soname) in STUBS {
        let bindings = cudarc_src.join(folder).join("sys").join("mod.rs");
        let source = stub_source(&entry_points(&bindings)?);
        let c = stubs.join(format!("{name}.c"));
        let so = stubs.join(format!("lib{name}.so"));
        if fs::read_to_string(&c).is_ok_and(|old| old == source) && so.is_file() {
            continue;
        }
        fs::write(&c, &source).map_err(|e| io_error("write", &c, e))?;
        let mut cc = Command::new("cc");
        cc.args(["-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(format!("-Wl,-soname,{soname}"))
            .arg(&c);
        run(&mut cc, &format!("cc: the {name} link stub"))?;
        let link = stubs.join(soname);
        let _ = fs::remove_file(&link);
        symlink(Path::new(&format!("lib{name}.so")), &link)
            .map_err(|e| io_error("link", &link, e))?;
    }
    Ok(())
}

/// cudarc's `src/` folder, from `cargo metadata` of tirx-candle's lock file.
fn cudarc_src(cargo: &OsString, manifest: &Path) -> Result<PathBuf, String> {
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--manifest-path",
        ])
        .arg(manifest)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed ({})", out.status));
    }
    let json = String::from_utf8_lossy(&out.stdout);
    // The one manifest path of a package named cudarc (plain text search: xtask has no JSON
    // parser, and a path holds no quote).
    json.split("\"manifest_path\":\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .find(|p| {
            Path::new(p)
                .parent()
                .and_then(|d| d.file_name())
                .is_some_and(|d| d.to_string_lossy().starts_with("cudarc-"))
        })
        .map(|p| Path::new(p).parent().unwrap_or(Path::new(".")).join("src"))
        .ok_or_else(|| "cargo metadata of tirx-candle names no cudarc package".to_string())
}

/// Installs the kit, then `cargo test` of tirx-candle with it.
pub fn test(root: &Path) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let manifest = root.join("tirx-candle").join("Cargo.toml");
    let kit = install(root, &cudarc_src(&cargo, &manifest)?)?;
    let mut path = OsString::from(kit.root.join("bin"));
    if let Some(old) = std::env::var_os("PATH") {
        path.push(":");
        path.push(old);
    }
    let mut libs = OsString::from(kit.root.join("lib").join("stubs"));
    libs.push(":");
    libs.push(kit.root.join("lib"));
    let mut test = Command::new(&cargo);
    test.args(["test", "--locked", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", root.join("target").join("candle"))
        // candle-kernels' nvcc and headers (cudaforge), cudarc's link search (`lib/stubs`).
        .env("CUDA_PATH", &kit.root)
        .env("PATH", path)
        .env("CUDA_COMPUTE_CAP", COMPUTE_CAP)
        .env("LD_LIBRARY_PATH", libs)
        .current_dir(root);
    run(
        &mut test,
        "cargo test --manifest-path tirx-candle/Cargo.toml",
    )
}

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
