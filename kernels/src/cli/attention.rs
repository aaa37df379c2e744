//! `tirx bench attention [--quick | --shape B,HQ,HKV,SQ,SK,D[,causal]… [--varlen | --paged
//! PAGE | --decode [SPLITS] [--unpacked]]] [--kernel TILE]… [--peers PATH] [--json PATH] [--dump DIR]`: the
//! attention sweep ([`tirx_kernels::bench::attention`]), or the shapes given (as packed
//! variable-length batches with `--varlen`, over a paged K/V cache with `--paged`, through the
//! split-KV decode path with `--decode`), against the peers file's
//! numbers; with `--kernel`, each named tile entry of the configs forced in turn where it has
//! the shape's head dim.

use std::path::Path;

use tirx::Runtime;
use tirx_kernels::bench::attention::{Form, PeersFile, Shape, run_attention_bench, sweep};

/// What to measure: the sweep (`--quick`: its short form), or the shapes given, dense,
/// (`varlen`) as packed variable-length batches, or (`paged`) over a paged K/V cache.
pub struct Points<'a> {
    /// `--quick`.
    pub quick: bool,
    /// `--shape`, in order.
    pub shapes: &'a [Shape],
    /// `--varlen`.
    pub varlen: bool,
    /// `--paged PAGE`.
    pub paged: Option<usize>,
    /// `--decode [SPLITS]` (0: the host's split).
    pub decode: Option<usize>,
    /// `--unpacked`: no GQA packing on the decode path.
    pub unpacked: bool,
}

/// Runs the bench; `Ok(true)` when every point ran and passed its check.
pub fn bench_attention(
    rt: &Runtime,
    Points {
        quick,
        shapes,
        varlen,
        paged,
        decode,
        unpacked,
    }: Points<'_>,
    tiles: &[String],
    peers: Option<&Path>,
    json: Option<&Path>,
    dump: Option<&Path>,
) -> Result<bool, String> {
    let peers = peers.map(PeersFile::read).transpose()?;
    if let Some(p) = &peers {
        println!("peers: {} on {}, {}", p.format, p.device, p.date);
    }
    let shapes = if shapes.is_empty() {
        sweep(quick)
    } else {
        shapes.to_vec()
    };
    let form = match (varlen, paged, decode) {
        (_, _, Some(splits)) => Form::Decode(tirx_kernels::attention::decode::Ask {
            splits: (splits > 0).then_some(splits),
            pack: !unpacked,
        }),
        (_, Some(page), None) => Form::Paged(page),
        (true, None, None) => Form::Varlen,
        (false, None, None) => Form::Dense,
    };
    run_attention_bench(rt, &shapes, tiles, peers.as_ref(), json, dump, form)
        .map(|_| true)
        .map_err(|e| e.to_string())
}
