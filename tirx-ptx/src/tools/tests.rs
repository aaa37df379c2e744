//! Unit tests of the tools: report and histogram parsing on recorded ptxas and nvdisasm
//! output, the lookup order, and (where the tools are installed) real runs.

use super::lookup::locate;
use super::*;
use std::ffi::OsString;

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
fn mnemonics_keep_their_modifiers() {
    let sass = "        /*0100*/ @!P0 MUFU.EX2 R4, R5 ;\n\
                    /*0110*/ SHFL.BFLY PT, R2, R3, 0x1, 0x1f ;\n\
                    /*0120*/ MUFU.EX2 R6, R7 ;\n";
    let m = sass_mnemonics(sass);
    assert_eq!(
        m.into_iter().collect::<Vec<_>>(),
        [("MUFU.EX2".to_owned(), 2), ("SHFL.BFLY".to_owned(), 1)]
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
