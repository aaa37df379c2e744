//! insta snapshots of the tile IR (the front end's output) and the PTX of every shipped
//! kernel × config × target. Review changes with `cargo insta review` like code.

use tirx_kernels::catalogue;

#[test]
fn ir_and_ptx_of_every_kernel() {
    for k in catalogue::all() {
        for a in k.artifacts {
            let stem = format!("{}__{}__{}", k.name, a.config, a.target.name());
            insta::assert_snapshot!(format!("{stem}__ir"), a.ir);
            insta::assert_snapshot!(format!("{stem}__ptx"), a.ptx);
        }
    }
}
