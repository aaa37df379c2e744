use tirx::prelude::*;

// An unknown function lists the nearest names that exist: the functions on register tiles and
// the module's tile functions together, up to three, nearest first.
#[tile_module]
mod rows {
    use tirx::prelude::*;

    /// Row `r` of `x` scaled by two.
    #[tile_fn]
    fn scaled_row(t: Regs, x: Global, r: u32) {
        copy(t, x.tile(r, 0));
        t = t * 2.0;
    }

    /// Row `r` of `x` halved.
    #[tile_fn]
    fn halved_row(t: Regs, x: Global, r: u32) {
        copy(t, x.tile(r, 0));
        t = t * 0.5;
    }

    #[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 4), 1))]
    pub fn normalise(#[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
        let t = regs::<f32>([4, 512], layout = blocked(vec = 4));
        scale_row(t, x, cta.x);
        let m = reduce_mx(t, axis = 1);
        copy(y.tile(cta.x, 0), t - m);
    }
}

// Outside a module, a call of a function of the user's own says where such a function goes.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(M, 4), 1))]
pub fn lone(#[shape(M, N)] x: Tensor<f32>, #[shape(M, N)] y: Tensor<f32>) {
    let t = regs::<f32>([4, 512], layout = blocked(vec = 4));
    copy(t, x.tile(cta.x, 0));
    copy(y.tile(cta.x, 0), softmax(t));
}

fn main() {}
