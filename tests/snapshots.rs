//! insta snapshots of the tile IR (the front end's output) and the PTX of every shipped
//! kernel × config × target. Review changes with `cargo insta review` like code, or write
//! them with `INSTA_UPDATE=always cargo test -p tirx-tests --test main snapshots`.

use tirx_kernels::catalogue;

#[test]
fn ir_and_ptx_of_every_kernel() {
    // The catalogue's kernels, and the variable-length, paged and decode attention kernels (no
    // problems of the dispatcher's: their host entries, `attention::varlen`,
    // `attention::paged` and `attention::decode`, call them).
    use tirx_kernels::attention::hopper_decode::kernels as decode;
    let varlen = &tirx_kernels::attention::hopper_varlen::kernels::attention_sm90_varlen::KERNEL;
    let paged = &tirx_kernels::attention::hopper_paged::kernels::attention_sm90_paged::KERNEL;
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
            let stem = format!("{}__{}__{}", k.name, a.config, a.target.name());
            insta::assert_snapshot!(format!("{stem}__ir"), a.ir);
            insta::assert_snapshot!(format!("{stem}__ptx"), a.ptx);
        }
    }
}
