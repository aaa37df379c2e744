//! `tirx bench quant`: the FP8 quantisers (`crate::row_kernels::quant`) against the device
//! copy of the same bytes, on `M × N` bf16 input.
//!
//! A quantiser reads `2·M·N` bytes and writes `M·N` (E4M3) plus its scales (f32, or MXFP8's
//! byte per 32); its rate is
//! those bytes over its median time, in TB/s, and so is the device copy's (`cuMemcpyDtoD`
//! of the bf16 input: `2·M·N` read, `2·M·N` written), so the ratio of the two rates is the
//! fraction of the copy's bandwidth the quantiser reaches (issue #29 asks ≥ 90%). Inputs are
//! rotated past L2 as `bench copy` does; the first set's output is checked bit for bit
//! against the CPU reference (`crate::rows::quant`) before any number is printed.

use half::bf16;
use tirx::{Runtime, RuntimeError, e4m3, ue8m0};

use super::{BenchError, Timing, alloc_sets, median, sweep, time_runs};
use crate::row_kernels::quant::mxfp8::quant_mxfp8;
use crate::row_kernels::quant::{quant_block, quant_rowwise};
use crate::rows::quant::{check_e4m3, mxfp8_image, quantise_mxfp8};

/// The `quant_rowwise` config for rows of `n` columns: the smallest capacity that holds them.
pub fn rowwise_config(n: usize) -> Option<&'static str> {
    [
        ("c1k", 1024),
        ("c2k", 2048),
        ("c4k", 4096),
        ("c8k", 8192),
        ("c16k", 16384),
    ]
    .into_iter()
    .find(|&(_, c)| n <= c)
    .map(|(name, _)| name)
}

/// Which quantiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Rowwise(&'static str),
    Block(&'static str),
}

/// Times one quantiser on `m × n`; checks its first output.
fn one(rt: &Runtime, which: Which, m: usize, n: usize) -> Result<Timing, BenchError> {
    let block = match which {
        Which::Rowwise(_) => n,
        Which::Block(_) => 128,
    };
    let nb = n.div_ceil(block);
    let moved = 3 * m * n + 4 * m * nb;
    let sets = sweep::rotation_within(moved, sweep::L2_BYTES, sweep::MEMORY_CAP);
    let host: Vec<bf16> = crate::reference::Rng::new(7)
        .bf16s(m * n)
        .iter()
        .map(|v| bf16::from_f32(v.to_f32() * 8.0))
        .collect();
    let xs = alloc_sets(sets, || rt.upload(&host, &[m, n]))?;
    let s_shape = match which {
        Which::Rowwise(_) => vec![m],
        Which::Block(_) => vec![m, nb],
    };
    let mut qs = (0..sets)
        .map(|_| rt.zeros::<e4m3>(&[m, n]))
        .collect::<Result<Vec<_>, RuntimeError>>()?;
    let mut ss = (0..sets)
        .map(|_| rt.zeros::<f32>(&s_shape))
        .collect::<Result<Vec<_>, RuntimeError>>()?;
    let times = time_runs(rt, sets, |i| {
        match which {
            Which::Rowwise(c) => quant_rowwise::launch(rt, c, &xs[i], &mut qs[i], &mut ss[i]),
            Which::Block(c) => quant_block::launch(rt, c, &xs[i], &mut qs[i], &mut ss[i]),
        }?;
        Ok(())
    })?;
    let q: Vec<u8> = rt.download(&qs[0])?.iter().map(|v| v.0).collect();
    let s = rt.download(&ss[0])?;
    let (name, config) = match which {
        Which::Rowwise(c) => ("quant_rowwise", c),
        Which::Block(c) => ("quant_block", c),
    };
    check_e4m3(&host, (&q, &s), m, n, block)
        .map_err(|e| BenchError::Wrong(format!("{name} {config} {m}x{n}: {e}")))?;
    let ms = median(times);
    Ok(Timing {
        what: format!("tirx {name} {config} {m}x{n}"),
        median_ms: ms,
        rate: moved as f64 / (ms * 1e-3) / 1e12,
    })
}

/// Times `quant_mxfp8` on `m × k` (the factor image zeroed once: the kernel rewrites the same
/// bytes every run); checks its first output's elements and factors.
fn mxfp8(rt: &Runtime, m: usize, k: usize) -> Result<Timing, BenchError> {
    let [ms, ks] = [m.div_ceil(128) * 32, k.div_ceil(128) * 16];
    let moved = 3 * m * k + m * k.div_ceil(32);
    let sets = sweep::rotation_within(moved, sweep::L2_BYTES, sweep::MEMORY_CAP);
    let host: Vec<bf16> = crate::reference::Rng::new(8).bf16s(m * k);
    let xs = alloc_sets(sets, || rt.upload(&host, &[m, k]))?;
    let mut qs = (0..sets)
        .map(|_| rt.zeros::<e4m3>(&[m, k]))
        .collect::<Result<Vec<_>, RuntimeError>>()?;
    let mut fs = (0..sets)
        .map(|_| rt.zeros::<ue8m0>(&[ms, ks]))
        .collect::<Result<Vec<_>, RuntimeError>>()?;
    let times = time_runs(rt, sets, |i| {
        quant_mxfp8::launch(rt, "default", &xs[i], &mut qs[i], &mut fs[i])?;
        Ok(())
    })?;
    let q: Vec<u8> = rt.download(&qs[0])?.iter().map(|v| v.0).collect();
    let img = rt.download(&fs[0])?;
    let (wq, wf) = quantise_mxfp8(&host, m, k);
    let want = mxfp8_image(&wf, m, k, ue8m0(0));
    if q != wq || img != want {
        return Err(BenchError::Wrong(format!(
            "quant_mxfp8 {m}x{k}: differs from the reference"
        )));
    }
    let t = median(times);
    Ok(Timing {
        what: format!("tirx quant_mxfp8 {m}x{k}"),
        median_ms: t,
        rate: moved as f64 / (t * 1e-3) / 1e12,
    })
}

/// The device copy of the `m × n` bf16 input (TB/s of bytes read and written).
fn device_copy(rt: &Runtime, m: usize, n: usize) -> Result<Timing, BenchError> {
    let bytes = 2 * m * n;
    let sets = sweep::rotation_within(2 * bytes, sweep::L2_BYTES, sweep::MEMORY_CAP);
    let host = crate::reference::Rng::new(1).bf16s(m * n);
    let srcs = alloc_sets(sets, || rt.upload(&host, &[m, n]))?;
    let mut dsts = alloc_sets(sets, || rt.zeros(&[m, n]))?;
    let times = time_runs(rt, sets, |i| {
        let (src, dst) = (srcs[i].buffer(), dsts[i].buffer_mut());
        rt.stream()
            .memcpy_dtod(src, dst)
            .map_err(|e| RuntimeError::from(e).into())
    })?;
    let ms = median(times);
    Ok(Timing {
        what: format!("device copy (cuMemcpyDtoD) {m}x{n} bf16"),
        median_ms: ms,
        rate: 2.0 * bytes as f64 / (ms * 1e-3) / 1e12,
    })
}

/// The quantisers on `m × n` (row-wise where a config holds the rows; both block configs;
/// MXFP8) and the device copy, in that order.
pub fn quant(rt: &Runtime, m: usize, n: usize) -> Result<Vec<Timing>, BenchError> {
    let mut out = Vec::new();
    if let Some(c) = rowwise_config(n) {
        out.push(one(rt, Which::Rowwise(c), m, n)?);
    }
    for c in ["r32", "r64"] {
        out.push(one(rt, Which::Block(c), m, n)?);
    }
    out.push(mxfp8(rt, m, n)?);
    out.push(device_copy(rt, m, n)?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rowwise_config_is_the_smallest_that_holds_the_row() {
        assert_eq!(rowwise_config(1000), Some("c1k"));
        assert_eq!(rowwise_config(1025), Some("c2k"));
        assert_eq!(rowwise_config(7168), Some("c8k"));
        assert_eq!(rowwise_config(16384), Some("c16k"));
        assert_eq!(rowwise_config(16385), None);
    }
}
