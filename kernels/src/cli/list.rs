//! `tirx list`: one line per compiled artifact, or every artifact's metadata as JSON.

use std::io::Write;
use tirx::Kernel;
use tirx::problem::Problem as Solves;
use tirx_kernels::catalogue;

/// Prints the listing to stdout; a closed stdout (`tirx list | head`) ends it quietly.
pub fn list(json: bool) {
    let _ = write_list(&mut std::io::stdout().lock(), json);
}

/// The listing, written to `out`.
fn write_list(out: &mut impl Write, json: bool) -> std::io::Result<()> {
    if json {
        let all: Vec<serde_json::Value> = catalogue::all()
            .into_iter()
            .flat_map(|k| k.artifacts.iter().map(move |a| artifact_json(k, a)))
            .collect();
        let text = serde_json::to_string_pretty(&all).expect("JSON values serialize");
        return writeln!(out, "{text}");
    }
    for k in catalogue::all() {
        for a in k.artifacts {
            let s = (a.signature)();
            let [cx, cy, cz] = s.cluster;
            let problem = a.problem.map_or_else(|| "-".to_string(), |p| p.to_string());
            writeln!(
                out,
                "{:<12} {:<8} threads={:<4} cluster={cx}x{cy}x{cz} smem={:<7} tmem={:<4} config={:<14} {problem}",
                k.name,
                a.target.name(),
                s.threads,
                s.smem_bytes,
                s.tmem_cols,
                a.config
            )?;
        }
    }
    Ok(())
}

/// One artifact's metadata, as `tirx list --json` prints it.
fn artifact_json(k: &Kernel, a: &tirx::KernelArtifact) -> serde_json::Value {
    use tirx::abi::ConfigValue;
    let s = (a.signature)();
    let consts: serde_json::Map<String, serde_json::Value> = a
        .consts
        .iter()
        .map(|(n, v)| {
            let v = match v {
                ConfigValue::Int(i) => serde_json::json!(i),
                other => serde_json::json!(other.to_string()),
            };
            (n.to_string(), v)
        })
        .collect();
    let tensors: Vec<serde_json::Value> = s
        .tensors
        .iter()
        .map(|t| serde_json::json!({ "name": t.name, "elem": t.elem.name(), "shape": t.shape }))
        .collect();
    let tma: Vec<serde_json::Value> = s
        .params
        .iter()
        .filter_map(|p| match p {
            tirx::abi::AbiParam::TensorMap {
                tensor, box_dims, ..
            } => Some(serde_json::json!({ "tensor": tensor, "box": box_dims })),
            _ => None,
        })
        .collect();
    let problem = match a.problem {
        None => serde_json::Value::Null,
        Some(Solves::Copy) => serde_json::json!({ "kind": "copy" }),
        Some(Solves::Gemm(g)) => serde_json::json!({
            "kind": "gemm", "b": g.b.name(), "epilogue": g.epilogue.name()
        }),
        Some(Solves::Row(op)) => serde_json::json!({ "kind": op.name() }),
        Some(Solves::SiluMul) => serde_json::json!({ "kind": "silu_mul" }),
        Some(Solves::Attention) => serde_json::json!({ "kind": "attention" }),
    };
    serde_json::json!({
        "kernel": k.name,
        "config": a.config,
        "target": a.target.name(),
        "entry": s.entry,
        "problem": problem,
        "consts": consts,
        "tensors": tensors,
        "tma_boxes": tma,
        "scalars": s.scalars,
        "threads": s.threads,
        "cluster": s.cluster,
        "grid": s.grid.iter().map(|g| format!("{g:?}")).collect::<Vec<_>>(),
        "smem_bytes": s.smem_bytes,
        "tmem_cols": s.tmem_cols,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line per artifact, each naming its problem.
    #[test]
    fn the_listing_has_a_line_per_artifact() {
        let mut out = Vec::new();
        write_list(&mut out, false).expect("writes");
        let text = String::from_utf8(out).expect("utf-8");
        let count: usize = catalogue::all().iter().map(|k| k.artifacts.len()).sum();
        assert_eq!(text.lines().count(), count);
        assert!(
            text.lines().any(|l| l.starts_with("gemm_sm90_tma_epi ")
                && l.contains("config=nn ")
                && l.ends_with("gemm(b = nn, epilogue = plain)")),
            "{text}"
        );
    }

    /// The JSON carries what the host routes by, as data: problem, config entries, tensors.
    #[test]
    fn an_artifacts_metadata_is_json() {
        let k = catalogue::find("gemm_sm90_tma_epi").expect("shipped");
        let a = k
            .artifacts
            .iter()
            .find(|a| a.config == "nn_f16")
            .expect("compiled");
        let j = artifact_json(k, a);
        assert_eq!(j["kernel"], "gemm_sm90_tma_epi");
        assert_eq!(j["target"], "sm_90a");
        assert_eq!(j["problem"]["kind"], "gemm");
        assert_eq!(j["problem"]["b"], "nn");
        assert_eq!(j["problem"]["epilogue"], "plain");
        assert_eq!(j["consts"]["BN"], 256);
        assert_eq!(j["consts"]["TA"], "f16");
        assert_eq!(j["consts"]["MB"], "mn");
        assert_eq!(j["tensors"][1]["shape"], serde_json::json!(["K", "N"]));
        assert!(j["smem_bytes"].as_u64().is_some_and(|b| b > 0));
    }
}
