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

use std::collections::BTreeMap;
use std::ffi::OsString;
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
fn locate(
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

/// What ptxas said about one function (`ptxas -v`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionReport {
    /// The PTX name.
    pub name: String,
    /// A kernel (`.entry`), rather than a device function (`.func`).
    pub entry: bool,
    /// `Used N registers`.
    pub registers: u32,
    /// `used N barriers` (named barriers, `bar.sync`).
    pub barriers: u32,
    /// `N bytes smem`: static shared memory.
    pub smem_bytes: u32,
    /// `N bytes stack frame`.
    pub stack_frame_bytes: u32,
    /// `N bytes spill stores`.
    pub spill_store_bytes: u32,
    /// `N bytes spill loads`.
    pub spill_load_bytes: u32,
}

impl FunctionReport {
    /// Any register spilled to local memory.
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }
}

/// The result of a successful `ptxas -v` run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxasReport {
    /// Every function ptxas reported on, in its order (entries and device functions).
    pub functions: Vec<FunctionReport>,
    /// `ptxas warning : …` lines (and located `…; warning : …` ones), verbatim.
    pub warnings: Vec<String>,
    /// Everything ptxas printed.
    pub log: String,
    /// The assembled ELF.
    pub cubin: Vec<u8>,
}

impl PtxasReport {
    /// Parse the text `ptxas -v` prints (ptxas 12.x and 13.x read the same). Lines it does not
    /// know are kept in `log` only.
    pub fn from_log(log: &str, cubin: Vec<u8>) -> PtxasReport {
        let mut report = PtxasReport {
            log: log.to_owned(),
            cubin,
            ..PtxasReport::default()
        };
        // Index into `functions` of the function the next property lines describe.
        let mut current: Option<usize> = None;
        for line in log.lines() {
            if let Some(rest) = line.strip_prefix("ptxas info    : Compiling entry function '") {
                let name = rest.split('\'').next().unwrap_or_default();
                report.functions.push(FunctionReport {
                    name: name.to_owned(),
                    entry: true,
                    ..FunctionReport::default()
                });
                current = Some(report.functions.len() - 1);
            } else if let Some(name) = line.strip_prefix("ptxas info    : Function properties for ")
            {
                // Entries were announced by "Compiling entry function"; device functions not.
                let name = name.trim();
                let found = report.functions.iter().rposition(|f| f.name == name);
                current = Some(found.unwrap_or_else(|| {
                    report.functions.push(FunctionReport {
                        name: name.to_owned(),
                        ..FunctionReport::default()
                    });
                    report.functions.len() - 1
                }));
            } else if is_warning(line) {
                report.warnings.push(line.trim().to_owned());
            } else if let Some(function) = current.map(|i| &mut report.functions[i]) {
                // "    0 bytes stack frame, …" and "ptxas info    : Used 10 registers, …".
                let properties = line.strip_prefix("ptxas info    :").unwrap_or(line);
                for (value, key) in properties.split(',').filter_map(property) {
                    match key.as_str() {
                        "registers" => function.registers = value,
                        "barriers" => function.barriers = value,
                        "smem" => function.smem_bytes = value,
                        "stack frame" => function.stack_frame_bytes = value,
                        "spill stores" => function.spill_store_bytes = value,
                        "spill loads" => function.spill_load_bytes = value,
                        _ => {}
                    }
                }
            }
        }
        report
    }

    /// The entry (kernel) called `name`.
    pub fn entry(&self, name: &str) -> Option<&FunctionReport> {
        self.functions.iter().find(|f| f.entry && f.name == name)
    }
}

/// `ptxas warning : …` or `ptxas kernel.ptx, line 3; warning : …`.
fn is_warning(line: &str) -> bool {
    line.starts_with("ptxas")
        && line
            .split_once(" : ")
            .is_some_and(|(head, _)| head.trim_end().ends_with("warning"))
}

/// `"Used 10 registers"` → `(10, "registers")`; `"1024 bytes smem"` → `(1024, "smem")`.
fn property(text: &str) -> Option<(u32, String)> {
    let mut words = text
        .split_whitespace()
        .skip_while(|w| w.parse::<u32>().is_err());
    let value = words.next()?.parse().ok()?;
    let key: Vec<&str> = words.skip_while(|w| *w == "bytes").collect();
    Some((value, key.join(" ")))
}

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

/// How often each opcode appears in nvdisasm output: the first word of each instruction, with
/// its predicate (`@P0`, `@!UP0`) and modifiers (`.64x128x16.F32.BF16`) dropped, so
/// `@!P0 SYNCS.ARRIVE.TRANS64.A1T0 …` counts as `SYNCS`. Instruction lines are the ones that
/// start with an offset comment, `/*01c0*/`; everything else (labels, directives) is skipped.
pub fn sass_histogram(sass: &str) -> BTreeMap<String, usize> {
    let mut histogram = BTreeMap::new();
    for line in sass.lines() {
        let Some(rest) = line.trim_start().strip_prefix("/*") else {
            continue;
        };
        let Some((offset, instruction)) = rest.split_once("*/") else {
            continue;
        };
        if offset.is_empty() || !offset.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        // Older targets wrap dual-issued pairs in braces: `{ IADD … ;`.
        let mut words = instruction.split_whitespace().skip_while(|w| *w == "{");
        let Some(mut word) = words.next() else {
            continue;
        };
        if word.starts_with('@') {
            let Some(next) = words.next() else { continue };
            word = next;
        }
        let opcode = word.split(['.', ';']).next().unwrap_or_default();
        if !opcode.is_empty() {
            *histogram.entry(opcode.to_owned()).or_insert(0) += 1;
        }
    }
    histogram
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Real `ptxas -v --warn-on-spills -arch=sm_90a` output (ptxas 13.5.37) for three kernels:
    /// `spilly` (`.maxnreg 24`, spills), `empty`, and `add_one` (1 KiB of shared memory).
    const LOG_SM90: &str = r"ptxas warning : Registers are spilled to local memory in function 'spilly', 236 bytes spill stores, 240 bytes spill loads
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'spilly' for 'sm_90a'
ptxas info    : Function properties for spilly
    240 bytes stack frame, 236 bytes spill stores, 240 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 240 bytes cumulative stack size
ptxas info    : Compile time = 10.778 ms
ptxas info    : Compiling entry function 'empty' for 'sm_90a'
ptxas info    : Function properties for empty
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 4 registers, used 0 barriers
ptxas info    : Compile time = 0.673 ms
ptxas info    : Compiling entry function 'add_one' for 'sm_90a'
ptxas info    : Function properties for add_one
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 1.390 ms
";

    /// Real output for sm_100a: an entry `calls` that calls the `.func` `helper`.
    const LOG_SM100_FUNC: &str = r"ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'calls' for 'sm_100a'
ptxas info    : Function properties for calls
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 3.185 ms
ptxas info    : Function properties for helper
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
";

    /// Real `nvdisasm -c` output (13.5.37) for an sm_90a kernel that initialises, arrives on and
    /// waits for an mbarrier, then issues one `wgmma.mma_async` m64n8k16.
    const SASS_SM90_WGMMA: &str = r#"	.target	sm_90a

	.elftype	@"ET_EXEC"


//--------------------- .text.wgmma_tile          --------------------------
	.section	.text.wgmma_tile,"ax",@progbits
	.align	128
        .global         wgmma_tile
        .type           wgmma_tile,@function
        .size           wgmma_tile,(.L_x_10 - wgmma_tile)
        .other          wgmma_tile,@"STO_CUDA_ENTRY STV_DEFAULT"
wgmma_tile:
.text.wgmma_tile:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R5, SR_TID.X ;
        /*0020*/                   S2UR UR8, SR_CgaCtaId ;
        /*0030*/                   UMOV UR6, 0x400 ;
        /*0040*/                   UMOV UR5, 0x1 ;
        /*0050*/                   UIADD3 UR4, UR6, 0x1000, URZ ;
        /*0060*/                   SHF.L.U32 R0, RZ, 0x1f, RZ ;
        /*0070*/                   ULDC.64 UR10, c[0x0][0x208] ;
        /*0080*/                   ULEA UR7, UR8, UR4, 0x18 ;
        /*0090*/                   ISETP.NE.U32.AND P0, PT, R5, RZ, PT ;
.L_x_3:
        /*00a0*/                   VOTEU.ALL UP0, P0 ;
        /*00b0*/                   @!UP0 UIADD3 UR4, -UR5, 0x100000, URZ ;
        /*00c0*/                   @!UP0 USHF.L.U32 UR5, UR4, 0xb, URZ ;
        /*00d0*/                   @!UP0 USHF.L.U32 UR4, UR4, 0x1, URZ ;
.L_x_4:
        /*00e0*/                   VOTEU.ALL UP0, P0 ;
.L_x_5:
        /*00f0*/                   @!UP0 SYNCS.EXCH.64 URZ, [UR7], UR4 ;
        /*0100*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
.L_x_6:
        /*0110*/              @!P0 SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR7], RZ ;
.L_x_7:
        /*0120*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR7], R0 ;
        /*0130*/              @!P0 BRA `(.L_x_0) ;
.L_x_1:
        /*0140*/                   ULEA UR6, UR8, UR6, 0x18 ;
        /*0150*/                   WARPGROUP.ARRIVE ;
        /*0160*/                   UMOV UR5, 0x40000040 ;
        /*0170*/                   LDC.64 R2, c[0x0][0x210] ;
        /*0180*/                   USHF.R.U64 UR4, UR6, 0x4, URZ ;
        /*0190*/                   UMOV UR7, UR5 ;
        /*01a0*/                   ULOP3.LUT UR4, UR4, 0x3fff, URZ, 0xc0, !UPT ;
        /*01b0*/                   UMOV UR6, UR4 ;
        /*01c0*/                   HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0 ;
        /*01d0*/                   IMAD.WIDE.U32 R2, R5, 0x4, R2 ;
        /*01e0*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*01f0*/                   FADD R24, R24, R25 ;
        /*0200*/                   FADD R27, R26, R27 ;
        /*0210*/                   FADD R27, R24, R27 ;
        /*0220*/                   STG.E desc[UR10][R2.64], R27 ;
.L_x_9:
        /*0230*/                   EXIT ;
.L_x_0:
        /*0240*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR7], R0 ;
        /*0250*/              @!P0 BRA `(.L_x_0) ;
        /*0260*/                   BRA `(.L_x_1) ;
.L_x_2:
        /*0270*/                   BRA `(.L_x_2);
        /*0280*/                   NOP;
        /*0290*/                   NOP;
        /*02a0*/                   NOP;
        /*02b0*/                   NOP;
        /*02c0*/                   NOP;
        /*02d0*/                   NOP;
        /*02e0*/                   NOP;
        /*02f0*/                   NOP;
.L_x_10:


//--------------------- SYMBOLS --------------------------

	.type		.nv.reservedSmem.offset0,@object
	.size		.nv.reservedSmem.offset0,0x4
"#;

    /// The kernel behind `add_one` above, for the real-tool tests.
    const TINY_PTX: &str = r".version 8.7
.target TARGET
.address_size 64

.visible .entry add_one(.param .u64 p_out, .param .u32 p_n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 buf[256];

    ld.param.u64 %rd1, [p_out];
    ld.param.u32 %r1, [p_n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    shl.b32 %r3, %r2, 2;
    mov.u32 %r4, buf;
    add.u32 %r4, %r4, %r3;
    st.shared.u32 [%r4], %r2;
    bar.sync 0;
    ld.shared.u32 %r5, [%r4];
    add.u32 %r5, %r5, 1;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r2, 4;
    add.u64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r5;
DONE:
    ret;
}
";

    /// An unknown instruction on line 7.
    const BROKEN_PTX: &str = ".version 8.7\n.target sm_90a\n.address_size 64\n\n\
                              .visible .entry broken()\n{\n    bogus.op;\n    ret;\n}\n";

    fn tiny_ptx(arch: &str) -> String {
        TINY_PTX.replace("TARGET", arch)
    }

    #[test]
    fn parses_entries_spills_and_warnings() {
        let report = PtxasReport::from_log(LOG_SM90, Vec::new());
        let names: Vec<&str> = report.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["spilly", "empty", "add_one"]);
        let spilly = report.entry("spilly").unwrap();
        assert_eq!(
            *spilly,
            FunctionReport {
                name: "spilly".into(),
                entry: true,
                registers: 24,
                barriers: 0,
                smem_bytes: 0,
                stack_frame_bytes: 240,
                spill_store_bytes: 236,
                spill_load_bytes: 240,
            }
        );
        assert!(spilly.spills());
        let add_one = report.entry("add_one").unwrap();
        assert_eq!(
            (add_one.registers, add_one.barriers, add_one.smem_bytes),
            (10, 1, 1024)
        );
        assert!(!add_one.spills());
        assert_eq!(report.entry("empty").unwrap().registers, 4);
        assert_eq!(report.warnings.len(), 1);
        assert!(report.warnings[0].contains("spilled to local memory in function 'spilly'"));
    }

    #[test]
    fn parses_device_functions() {
        let report = PtxasReport::from_log(LOG_SM100_FUNC, Vec::new());
        let kinds: Vec<(&str, bool)> = report
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.entry))
            .collect();
        assert_eq!(kinds, [("calls", true), ("helper", false)]);
        assert_eq!(report.entry("calls").unwrap().registers, 8);
        assert!(report.entry("helper").is_none());
        assert!(report.warnings.is_empty());
    }

    #[test]
    fn histogram_of_real_sass() {
        let histogram = sass_histogram(SASS_SM90_WGMMA);
        let counts: Vec<String> = histogram
            .iter()
            .map(|(op, n)| format!("{op}={n}"))
            .collect();
        assert_eq!(
            counts.join(" "),
            "BAR=1 BRA=4 EXIT=1 FADD=3 HGMMA=1 IMAD=1 ISETP=1 LDC=2 NOP=8 S2R=1 S2UR=1 SHF=1 \
             STG=1 SYNCS=4 UIADD3=2 ULDC=1 ULEA=2 ULOP3=1 UMOV=5 USHF=3 VOTEU=2 WARPGROUP=2"
        );
        assert_eq!(
            histogram.values().sum::<usize>(),
            48,
            "one per offset 0x000..=0x2f0"
        );
    }

    #[test]
    fn histogram_strips_predicates_modifiers_and_braces() {
        let sass = "        /*0100*/ @!UP0 UTCHMMA.2CTA gdesc[UR4], tmem[UR8] ;\n\
                    .L_x_1:\n\
                    /*0008*/ { IADD3 R1, R1, 0x1, RZ ;\n\
                    /*zz*/ NOP ;\n";
        let histogram = sass_histogram(sass);
        assert_eq!(
            histogram.into_iter().collect::<Vec<_>>(),
            [("IADD3".to_owned(), 1), ("UTCHMMA".to_owned(), 1)]
        );
    }

    #[test]
    fn explicit_variable_must_point_at_a_file() {
        let missing = OsString::from("/nonexistent/ptxas");
        let error = locate("ptxas", "TIRX_PTXAS", Some(missing), &[], None).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("$TIRX_PTXAS is set to `/nonexistent/ptxas`"),
            "{text}"
        );
        assert!(text.contains("cargo xtask install-tools"), "{text}");

        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let found = locate(
            "ptxas",
            "TIRX_PTXAS",
            Some(manifest.clone().into()),
            &[],
            None,
        );
        assert_eq!(found.unwrap(), manifest);
    }

    #[test]
    fn missing_everywhere_says_how_to_install() {
        let cache = [PathBuf::from("/nonexistent/tirx-tools/bin/nvdisasm")];
        let path = Some(OsString::from("/nonexistent/bin"));
        let error = locate("nvdisasm", "TIRX_NVDISASM", None, &cache, path).unwrap_err();
        assert!(matches!(
            error,
            ToolError::NotFound {
                tool: "nvdisasm",
                ..
            }
        ));
        let text = error.to_string();
        assert!(
            text.contains("/nonexistent/tirx-tools/bin/nvdisasm"),
            "{text}"
        );
        assert!(text.contains("run `cargo xtask install-tools`"), "{text}");
    }

    #[test]
    fn path_is_searched_after_the_cache() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let path = Some(dir.as_os_str().to_owned());
        let found = locate("Cargo.toml", "UNUSED", None, &[], path).unwrap();
        assert_eq!(found, dir.join("Cargo.toml"));
    }

    #[test]
    fn ptxas_assembles_tiny_kernel() {
        if tool_for_test(find_ptxas()).is_none() {
            return;
        }
        for arch in ["sm_90a", "sm_100a"] {
            let report = ptxas(&tiny_ptx(arch), arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
            let add_one = report.entry("add_one").expect("add_one reported");
            assert!(add_one.registers > 0, "{arch}: {add_one:?}");
            assert_eq!((add_one.smem_bytes, add_one.barriers), (1024, 1), "{arch}");
            assert!(
                !add_one.spills() && report.warnings.is_empty(),
                "{arch}: {report:?}"
            );
            assert!(
                report.cubin.starts_with(b"\x7fELF"),
                "{arch}: cubin is an ELF file"
            );
        }
    }

    #[test]
    fn ptxas_error_names_the_line() {
        if tool_for_test(find_ptxas()).is_none() {
            return;
        }
        match ptxas(BROKEN_PTX, "sm_90a") {
            Err(ToolError::Ptxas { stderr }) => {
                assert!(stderr.contains("kernel.ptx, line 7; error"), "{stderr}");
                assert!(stderr.contains("'bogus'"), "{stderr}");
            }
            other => panic!("expected a ptxas error, got {other:?}"),
        }
    }

    #[test]
    fn nvdisasm_shows_the_sass_of_a_real_cubin() {
        if tool_for_test(find_ptxas()).is_none() || tool_for_test(find_nvdisasm()).is_none() {
            return;
        }
        let report = ptxas(&tiny_ptx("sm_90a"), "sm_90a").unwrap();
        let sass = nvdisasm(&report.cubin).unwrap();
        let histogram = sass_histogram(&sass);
        for op in ["STS", "BAR", "LDS", "STG"] {
            assert_eq!(histogram.get(op), Some(&1), "{op} in {histogram:?}\n{sass}");
        }
        // One `@P0 EXIT` for the threads past `n`, one at the end.
        assert_eq!(histogram.get("EXIT"), Some(&2), "{histogram:?}\n{sass}");
        assert!(matches!(
            nvdisasm(b"not an elf"),
            Err(ToolError::Nvdisasm { .. })
        ));
    }
}
