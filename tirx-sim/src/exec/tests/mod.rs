//! Unit tests of the executor, one file per part: arithmetic and conversions (`alu.rs`),
//! warp collectives and barriers (`sync.rs`), TMA and swizzle (`tma.rs`), diagnostics
//! (`diag.rs`). Kernels are small hand-written PTX entries run through the public API.

mod alu;
mod atom;
mod clc;
mod cluster;
mod diag;
mod matrix;
mod setmaxnreg;
mod st_async;
mod sync;
mod tcgen05;
mod tcgen05_cp;
mod tcgen05_pair;
mod tcgen05_scale;
mod timeline;
mod tma;
mod wgmma;

use super::*;
use crate::ptx;

/// The registers every snippet may use.
const REGS: &str = "\t.reg .b32 %r<40>;\n\t.reg .b64 %rd<16>;\n\t.reg .pred %p<8>;\n\
                    \t.reg .f32 %f<16>;\n\t.reg .b16 %h<8>;\n";

/// A module with one entry `k(params)` whose body is `body` (the registers of [`REGS`]
/// declared).
pub(super) fn module(params: &str, body: &str) -> ptx::Module {
    let src = format!(
        ".version 8.7\n.target sm_90a\n.address_size 64\n\
         .extern .shared .align 1024 .b8 smem[];\n\
         .visible .entry k({params})\n.maxntid 1024, 1, 1\n{{\n{REGS}{body}}}\n"
    );
    match ptx::parse(&src) {
        Ok(m) => m,
        Err(e) => panic!("{e}\n{src}"),
    }
}

/// A 1-D launch of one CTA of `threads` threads with `smem` dynamic shared bytes.
pub(super) fn one_cta(threads: u32, smem: u32) -> Launch {
    Launch {
        grid: [1, 1, 1],
        cluster: [1, 1, 1],
        block: [threads, 1, 1],
        smem_bytes: smem,
    }
}

/// Runs `k` of `m` with one `.u64` output pointer parameter to `out_bytes` poisoned bytes;
/// returns the output or the error.
pub(super) fn run_out(
    m: &ptx::Module,
    launch: &Launch,
    out_bytes: usize,
    seed: u64,
) -> Result<Vec<u8>, SimError> {
    let mut dev = Device::new();
    let out = dev.alloc(out_bytes);
    dev.write(out, &vec![0xa5; out_bytes]).unwrap();
    run(m, "k", launch, &[ParamValue::U64(out)], &mut dev, seed)?;
    Ok(dev.read(out, out_bytes).unwrap())
}

/// `n` little-endian u32 from bytes.
pub(super) fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The body prologue: `%rd0` = the output pointer, `%r0` = `%tid.x`, `%rd1` = `%rd0 + 4·tid`.
pub(super) const PROLOGUE: &str = "\tld.param.u64 %rd0, [p_out];\n\tmov.u32 %r0, %tid.x;\n\
    \tmul.wide.u32 %rd1, %r0, 4;\n\tadd.u64 %rd1, %rd1, %rd0;\n";

/// The parameter list of [`run_out`].
pub(super) const OUT: &str = ".param .u64 p_out";
