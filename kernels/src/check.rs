//! `tirx check`: assembles every compiled kernel with ptxas, disassembles it with nvdisasm,
//! and checks what the PTX asked for is in the machine code: no spills, and for each async
//! instruction family the SASS opcode it must become (wgmma → `HGMMA`, FP8 `QGMMA`, TMA load → `UTMALDG`,
//! TMA store → `UTMASTG`, tcgen05.mma → `UTCHMMA`/`UTCQMMA`, tcgen05.ld → `LDTM`,
//! tcgen05.st → `STTM`, setmaxnreg → `USETMAXREG`; for
//! register tiles: `ex2.approx` → `MUFU.EX2`, `shfl.sync.bfly` → `SHFL.BFLY`, 16-byte
//! vector loads and stores → `LDG.E.128`/`STG.E.128`, `LDS.128`/`STS.128` in shared memory;
//! `ldmatrix`/`stmatrix` `.x4` → `LDSM.16.M88.4`/`STSM.16.M88.4`, `.x4.trans` →
//! `LDSM.16.MT88.4`/`STSM.16.MT88.4`). Where ptxas did not keep a wgmma pipeline as written it
//! says so, and the check notes it ([`Checked::pipeline_losses`]).

use std::collections::BTreeMap;
use tirx::KernelArtifact;
use tirx_ptx::tools::{self, ToolError};

/// The SASS opcodes a PTX text must produce: (PTX fragment, acceptable SASS opcodes).
pub const EXPECTED_SASS: &[(&str, &[&str])] = &[
    ("wgmma.mma_async", &["HGMMA", "QGMMA"]),
    (
        "cp.async.bulk.tensor.2d.shared::cluster.global",
        &["UTMALDG"],
    ),
    ("cp.async.bulk.tensor.2d.global.shared::cta", &["UTMASTG"]),
    // `UTCOMMA` is the FP4 kind (`kind::mxf4nvf4`, ptxas 13: `UTCOMMA.4X` / `.2X`), `UTCIMMA`
    // the integer kind (`kind::i8`).
    (
        "tcgen05.mma",
        &["UTCHMMA", "UTCQMMA", "UTCOMMA", "UTCIMMA", "UTCMMA"],
    ),
    ("tcgen05.ld", &["LDTM"]),
    ("tcgen05.st", &["STTM"]),
    // `setmaxnreg.dec` / `.inc` (PTX ISA §9.7.19.6) become `USETMAXREG.DEALLOC.CTAPOOL` /
    // `USETMAXREG.TRY` (ptxas 13, sm_90a and sm_100a); none at all when ptxas ignored them.
    ("setmaxnreg", &["USETMAXREG"]),
    ("mbarrier.try_wait", &["SYNCS"]),
    ("ex2.approx", &["MUFU.EX2"]),
    ("rsqrt.approx", &["MUFU.RSQ"]),
    ("rcp.approx", &["MUFU.RCP"]),
    ("tanh.approx", &["MUFU.TANH"]),
    ("shfl.sync.bfly", &["SHFL.BFLY"]),
    ("ld.global.v4", &["LDG.E.128", "LDG.E.128.CONSTANT"]),
    ("st.global.v4", &["STG.E.128"]),
    ("ld.shared.v4", &["LDS.128"]),
    ("st.shared.v4", &["STS.128"]),
    ("ldmatrix.sync.aligned.m8n8.x4.shared", &["LDSM.16.M88.4"]),
    ("stmatrix.sync.aligned.m8n8.x4.shared", &["STSM.16.M88.4"]),
    // The `.trans` forms (`copy(.., transpose = true)`): `MT88`, the transposed 8×8 matrices.
    ("ldmatrix.sync.aligned.m8n8.x4.trans", &["LDSM.16.MT88.4"]),
    ("stmatrix.sync.aligned.m8n8.x4.trans", &["STSM.16.MT88.4"]),
];

/// What ptxas prints when it does not keep a kernel's wgmma pipeline as written: "Potential
/// Performance Loss: wgmma.mma_async instructions are serialized due to …" (a wait after
/// every wgmma; ptxas 13.5 on 2026-12-06 said it of `attention_sm90_decode/d64`, C7519 "…
/// due to program dependence on compiler-inserted WG.AR in divergent path", until constant
/// loops were tested at the bottom: `tirx_ptx`'s writer, issue #31), and "(C7517)
/// wgmma.wait_group is injected in around line N by compiler to allow use of registers
/// defined by GMMA" (a register of an MMA in flight read before its `wait_group`).
pub const WGMMA_PIPELINE_LOSS: &[&str] = &[
    "wgmma.mma_async instructions are serialized",
    "wgmma.wait_group is injected",
];

/// The check of one artifact.
#[derive(Clone, Debug)]
pub struct Checked {
    /// Kernel name.
    pub kernel: &'static str,
    /// Config.
    pub config: &'static str,
    /// Target (`sm_90a`, …).
    pub target: &'static str,
    /// Registers per thread.
    pub registers: u32,
    /// Spill bytes (stores + loads).
    pub spills: u32,
    /// Static shared memory ptxas reports (dynamic comes from the signature).
    pub smem: u32,
    /// SASS opcode counts.
    pub sass: BTreeMap<String, usize>,
    /// Problems found (empty = passed).
    pub problems: Vec<String>,
    /// ptxas's notes that it did not keep the wgmma pipeline as written
    /// ([`WGMMA_PIPELINE_LOSS`]): correct code, slower than asked for.
    pub pipeline_losses: Vec<String>,
}

/// Assembles and inspects one artifact.
pub fn check_artifact(name: &'static str, a: &KernelArtifact) -> Result<Checked, ToolError> {
    let report = tools::ptxas(a.ptx, a.target.name())?;
    let entry = (a.signature)().entry;
    let f = report.entry(&entry).cloned().unwrap_or_default();
    let sass_text = tools::nvdisasm(&report.cubin)?;
    let mut sass = tools::sass_histogram(&sass_text);
    // Mnemonics with modifiers too (`MUFU.EX2`), so both forms can be asked for.
    for (k, n) in tools::sass_mnemonics(&sass_text) {
        if k.contains('.') {
            sass.insert(k, n);
        }
    }
    let mut problems = Vec::new();
    if f.spill_store_bytes + f.spill_load_bytes > 0 {
        problems.push(format!(
            "{} bytes spilled",
            f.spill_store_bytes + f.spill_load_bytes
        ));
    }
    if f.stack_frame_bytes > 0 {
        problems.push(format!(
            "{}-byte stack frame (local memory)",
            f.stack_frame_bytes
        ));
    }
    // ptxas keeps a wgmma pipeline only where it can prove the accumulators untouched until
    // their `wgmma.wait_group`; otherwise it waits where the code did not ask and says so in
    // an info line — correct code, so a note rather than a problem, but not the MMA overlap
    // the kernel was written for.
    let pipeline_losses = report
        .log
        .lines()
        .filter(|l| WGMMA_PIPELINE_LOSS.iter().any(|m| l.contains(m)))
        .map(|l| l.trim_start_matches("ptxas info    : ").to_owned())
        .collect();
    for (ptx, ops) in EXPECTED_SASS {
        if a.ptx.contains(ptx) && !ops.iter().any(|op| sass.contains_key(*op)) {
            problems.push(format!(
                "PTX has `{ptx}` but the SASS has none of {}",
                ops.join("/")
            ));
        }
    }
    Ok(Checked {
        kernel: name,
        config: a.config,
        target: a.target.name(),
        registers: f.registers,
        spills: f.spill_store_bytes + f.spill_load_bytes,
        smem: f.smem_bytes,
        sass,
        problems,
        pipeline_losses,
    })
}

/// The key SASS opcodes, for the summary line.
pub fn key_sass(c: &Checked) -> String {
    let keys = [
        "HGMMA",
        "UTCHMMA",
        "UTCQMMA",
        "UTCOMMA",
        "UTCIMMA",
        "UTMALDG",
        "UTMASTG",
        "LDTM",
        "STTM",
        "USETMAXREG",
        "SYNCS",
        "MUFU.EX2",
        "MUFU.RSQ",
        "SHFL.BFLY",
        "LDG.E.128",
        "STG.E.128",
        "LDS.128",
        "STS.128",
        "LDSM.16.M88.4",
        "STSM.16.M88.4",
        "LDSM.16.MT88.4",
        "STSM.16.MT88.4",
    ];
    keys.iter()
        .filter_map(|k| c.sass.get(*k).map(|n| format!("{k}×{n}")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Registers of one sm_90a/sm_100a SM (64 K 32-bit), split over its four sub-partitions.
const SM_REGISTERS: u32 = 65536;
/// Sub-partitions of an SM: a warp's registers come from one of them.
const SUB_PARTITIONS: u32 = 4;
/// Registers are allocated to a warp in units of 256 (8 a thread).
const REG_UNIT: u32 = 256;
/// Shared memory of one H100/H200 SM (228 KB), of which the driver reserves 1 KB a CTA.
const SM_SHARED_BYTES: u32 = 228 * 1024;
/// Threads and CTAs one SM holds at once (sm_90).
const SM_THREADS: u32 = 2048;
const SM_CTAS: u32 = 32;

/// The CTAs of `a` that reside on one SM at once by ptxas's registers (`c.registers`: a warp
/// takes `⌈32·regs⌉₂₅₆` from one sub-partition of 16 K), its shared memory (the signature's
/// dynamic bytes, ptxas's static ones and the driver's 1 KB a CTA, of 228 KB), its threads (of
/// 2048) and at most 32 CTAs — the occupancy calculator's rules (`cuda_occupancy.h`,
/// `cudaOccMaxBlocksPerSMRegsLimit`). A persistent grid of `SMS·W` CTAs needs `W` at most
/// this, else its last CTAs run in a second wave.
pub fn resident_ctas(c: &Checked, a: &KernelArtifact) -> u32 {
    let sig = a.sig();
    let warps = sig.threads.div_ceil(32).max(1);
    let per_warp = (c.registers * 32).div_ceil(REG_UNIT) * REG_UNIT;
    let by_regs = match per_warp {
        0 => SM_CTAS,
        r => (SM_REGISTERS / SUB_PARTITIONS / r) * SUB_PARTITIONS / warps,
    };
    let smem = (sig.smem_bytes + c.smem).div_ceil(128) * 128 + 1024;
    let by_smem = SM_SHARED_BYTES / smem;
    let by_threads = SM_THREADS / (warps * 32);
    by_regs.min(by_smem).min(by_threads).min(SM_CTAS)
}
