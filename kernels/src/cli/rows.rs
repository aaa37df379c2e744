//! `tirx bench rows`: the row ops and shapes a command asks for, the peers file it names, and
//! the bench over them ([`tirx_kernels::bench::rows`]).

use std::path::Path;

use tirx::Runtime;
use tirx_kernels::bench::rows::peers::PeersFile;
use tirx_kernels::bench::rows::{DEFAULT_SHAPES, RowsBench, run_rows_bench};
use tirx_kernels::rows::RowOp;

use super::gemm::parse_shape;

/// `--op NAME`…: the ops in the order given, each once; none means every op ([`RowOp::ALL`]).
pub fn parse_ops(ops: &[String]) -> Result<Vec<RowOp>, String> {
    if ops.is_empty() {
        return Ok(RowOp::ALL.to_vec());
    }
    let mut out = Vec::new();
    for s in ops {
        let op = RowOp::parse(s).ok_or_else(|| {
            let all: Vec<&str> = RowOp::ALL.iter().map(|o| o.name()).collect();
            format!("unknown row op `{s}`: {}", all.join(", "))
        })?;
        if !out.contains(&op) {
            out.push(op);
        }
    }
    Ok(out)
}

/// `--shape ROWS,COLS`…: the shapes in the order given; none means [`DEFAULT_SHAPES`].
pub fn parse_row_shapes(shapes: &[String]) -> Result<Vec<(usize, usize)>, String> {
    if shapes.is_empty() {
        return Ok(DEFAULT_SHAPES.to_vec());
    }
    shapes
        .iter()
        .map(|s| {
            let v = parse_shape(s, 2)?;
            if v.contains(&0) {
                return Err(format!(
                    "bad shape `{s}`: rows and columns must be at least 1"
                ));
            }
            Ok((v[0], v[1]))
        })
        .collect()
}

/// `tirx bench rows [--shape R,C]… [--op NAME]… [--kernel NAME]… [--peers PATH] [--json PATH]`:
/// our row ops against the copy roof and the peers file's numbers — through the host-side
/// choice (`tirx_kernels::rows::run`), or with `--kernel NAME`, every sm_90a config of the named
/// row kernels forced in turn (`--kernel NAME/CONFIG`: that config) (each config's JSON goes to `PATH` with `-<kernel>-<config>`).
pub fn bench_rows(
    rt: &Runtime,
    shapes: &[String],
    ops: &[String],
    kernels: &[String],
    peers: Option<&Path>,
    json: Option<&Path>,
) -> Result<bool, String> {
    let peers = peers
        .map(PeersFile::load)
        .transpose()
        .map_err(|e| e.to_string())?;
    let bench = RowsBench {
        ops: parse_ops(ops)?,
        shapes: parse_row_shapes(shapes)?,
        ..RowsBench::new(peers.as_ref())
    };
    if kernels.is_empty() {
        return run_rows_bench(rt, &bench, json, None).map_err(|e| e.to_string());
    }
    let mut ok = true;
    for given in kernels {
        // `NAME` forces every config of the kernel in turn, `NAME/CONFIG` that one.
        let (name, config) = given
            .split_once('/')
            .map_or((given.as_str(), None), |(n, c)| (n, Some(c)));
        let k = tirx_kernels::catalogue::find(name)
            .ok_or_else(|| format!("unknown kernel `{name}`"))?;
        if let Some(c) = config
            && !k.artifacts.iter().any(|a| a.config == c)
        {
            return Err(format!("`{name}` has no config `{c}`"));
        }
        for a in k
            .artifacts
            .iter()
            .filter(|a| a.target == tirx::Target::Sm90a && config.is_none_or(|c| a.config == c))
        {
            let Some(tirx::problem::Problem::Row(op)) = a.problem else {
                return Err(format!("`{name}` is not a row kernel"));
            };
            let Some(cap) = tirx_kernels::row_kernels::host::capacity(a) else {
                continue;
            };
            let launch = |rt: &Runtime,
                          p: &tirx_kernels::rows::RowProblem,
                          x: &tirx::Tensor<half::bf16>,
                          w: Option<&tirx::Tensor<half::bf16>>,
                          b: Option<&tirx::Tensor<half::bf16>>,
                          y: &mut tirx::Tensor<half::bf16>| {
                let args = tirx_kernels::row_kernels::host::RowArgs {
                    x,
                    w,
                    b,
                    eps: p.eps,
                };
                tirx_kernels::row_kernels::host::launch(rt, a, &args, y)
            };
            let forced = RowsBench {
                launch: &launch,
                ops: vec![op],
                shapes: bench
                    .shapes
                    .iter()
                    .copied()
                    .filter(|&(_, c)| c <= cap)
                    .collect(),
                ..bench.clone()
            };
            if forced.shapes.is_empty() {
                continue;
            }
            println!("== {} {} (rows up to {cap} columns)", k.name, a.config);
            let path = json.map_or_else(
                || std::path::PathBuf::from(format!("bench-rows-{}-{}.json", k.name, a.config)),
                |p| {
                    let stem = p
                        .file_stem()
                        .and_then(|s| s.to_str())
                        .unwrap_or("bench-rows");
                    p.with_file_name(format!("{stem}-{}-{}.json", k.name, a.config))
                },
            );
            ok &= run_rows_bench(rt, &forced, Some(&path), None).map_err(|e| e.to_string())?;
        }
    }
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ops_parse_in_order_once_each() {
        assert_eq!(parse_ops(&[]).unwrap(), RowOp::ALL);
        let ops = parse_ops(&strings(&["layernorm", "softmax", "layernorm"])).unwrap();
        assert_eq!(ops, [RowOp::LayerNorm, RowOp::Softmax]);
        let e = parse_ops(&strings(&["gelu"])).unwrap_err();
        assert_eq!(e, "unknown row op `gelu`: softmax, rmsnorm, layernorm");
    }

    #[test]
    fn shapes_parse_as_rows_and_columns() {
        assert_eq!(parse_row_shapes(&[]).unwrap(), DEFAULT_SHAPES);
        let s = parse_row_shapes(&strings(&["4096,1024", " 3 , 5 "])).unwrap();
        assert_eq!(s, [(4096, 1024), (3, 5)]);
        for bad in ["4096", "1,2,3", "a,b", "0,8", "-1,4"] {
            assert!(parse_row_shapes(&strings(&[bad])).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_command_line_reaches_the_bench() {
        let cli = crate::Cli::try_parse_from([
            "tirx",
            "bench",
            "rows",
            "--shape",
            "1024,4096",
            "--shape",
            "8,8",
            "--op",
            "rmsnorm",
            "--peers",
            "peers.json",
            "--json",
            "out.json",
        ])
        .unwrap();
        let Some(crate::Cmd::Bench(crate::cli::bench::BenchCmd::Rows {
            shapes,
            ops,
            peers,
            json,
            ..
        })) = cli.cmd
        else {
            panic!("not a bench rows command");
        };
        assert_eq!(parse_row_shapes(&shapes).unwrap(), [(1024, 4096), (8, 8)]);
        assert_eq!(parse_ops(&ops).unwrap(), [RowOp::RmsNorm]);
        assert_eq!(peers.as_deref(), Some(Path::new("peers.json")));
        assert_eq!(json.as_deref(), Some(Path::new("out.json")));
    }
}
