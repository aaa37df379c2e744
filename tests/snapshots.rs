//! insta snapshots of the tile IR (the front end's output) and the PTX of every shipped
//! kernel × config × target. Review changes with `cargo insta review` like code, or write
//! them with `INSTA_UPDATE=always cargo test -p tirx-tests --test main snapshots`.

use tirx_kernels::catalogue;

#[test]
fn ir_and_ptx_of_every_kernel() {
    // The catalogue's kernels, and the variable-length attention kernel (no problem of the
    // dispatcher's: its host entry, `attention::varlen`, calls it).
    let varlen = &tirx_kernels::attention::hopper_varlen::kernels::attention_sm90_varlen::KERNEL;
    for k in catalogue::all().into_iter().chain([varlen]) {
        for a in k.artifacts {
            let stem = format!("{}__{}__{}", k.name, a.config, a.target.name());
            insta::assert_snapshot!(format!("{stem}__ir"), a.ir);
            insta::assert_snapshot!(format!("{stem}__ptx"), a.ptx);
        }
    }
}
