//! The stable text form: every shipped kernel's IR parses back to the same text, and running
//! the pipeline on the parsed IR gives exactly the PTX the macro emitted (so `tirx explain`
//! shows the real compilation).

use tirx_ir::parse::parse_module;
use tirx_kernels::catalogue;

#[test]
fn shipped_ir_prints_parses_and_recompiles_to_the_same_ptx() {
    // The catalogue's kernels, and the variable-length and paged attention kernels (no
    // problems of the dispatcher's: their host entries call them), whose tiles at element offsets print as
    // `global_at x[…] within […]`.
    let varlen = &tirx_kernels::attention::hopper_varlen::kernels::attention_sm90_varlen::KERNEL;
    let paged = &tirx_kernels::attention::hopper_paged::kernels::attention_sm90_paged::KERNEL;
    assert!(
        [varlen, paged]
            .iter()
            .all(|k| k.artifacts.iter().all(|a| a.ir.contains("global_at")))
    );
    use tirx_kernels::attention::hopper_decode::kernels as decode;
    let decode = [
        &decode::attention_sm90_decode::KERNEL,
        &decode::attention_sm90_decode_gqa::KERNEL,
        &decode::attention_decode_combine::KERNEL,
    ];
    for k in catalogue::all()
        .into_iter()
        .chain([varlen, paged])
        .chain(decode)
    {
        for a in k.artifacts {
            let m = parse_module(a.ir).unwrap_or_else(|e| panic!("{} {}: {e}", k.name, a.config));
            assert_eq!(
                m.to_string(),
                a.ir,
                "{} {} {}: print(parse(ir)) differs",
                k.name,
                a.config,
                a.target.name()
            );
            let kernel = m.kernels.into_iter().next().expect("one kernel");
            let (lowered, snaps) = tirx_ir::passes::run_pipeline(kernel, true).expect("compiles");
            assert_eq!(snaps.len(), tirx_ir::passes::PIPELINE.len() + 1);
            for s in &snaps {
                let again =
                    parse_module(&s.text).unwrap_or_else(|e| panic!("after {}: {e}", s.pass));
                assert_eq!(
                    again.to_string(),
                    s.text,
                    "IR after {} does not round-trip",
                    s.pass
                );
            }
            assert_eq!(tirx_ptx::write_string(&lowered).expect("prints"), a.ptx);
        }
    }
}
