use tirx::prelude::*;

// One config whose layout is bad (`narrow`: 12 columns are not whole runs of 8) is reported
// once, at the layout, for that config; the valid statements that use the tile are not blamed.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (cdiv(N, BN), cdiv(M, BM)),
    configs(default = (BM = 64, BN = 64), narrow = (BM = 64, BN = 12))
)]
pub fn scale_rows(#[shape(M, N)] x: Tensor<bf16>, #[shape(M, N)] y: Tensor<bf16>) {
    let t = regs::<f32>([BM, BN], layout = blocked(vec = 8));
    copy(t, x.tile(cta.y, cta.x));
    let inside = col_index(t) < N;
    let m = reduce_max(select(inside, t, f32::NEG_INFINITY), axis = 1);
    copy(y.tile(cta.y, cta.x), t * 2.0 - m);
}

// Without `layout = …` a register tile is a wgmma accumulator fragment: a config where it
// cannot be one (`short`: 48 rows) is an error at the shape, not at the statements using it.
#[tile_kernel(
    target = sm_90a,
    threads = 128,
    grid = (1, 1),
    configs(default = (R = 64), short = (R = 48))
)]
pub fn fill(#[shape(M, N)] d: Tensor<f32>) {
    let acc = regs::<f32>([R, 64]);
    acc = 0.0;
    copy(d.tile(0, 0), acc + 1.0);
}

fn main() {}
