use tirx::prelude::*;

// A tile function takes the kernel's `f32` arguments as `f32` parameters, by name. They
// only scale a copy: arithmetic on one, a u32 passed for one, and a tile function that
// reaches for the caller's argument without a parameter are errors at the user's tokens.
#[tile_module]
mod epi {
    use tirx::prelude::*;

    /// Scales the accumulator into the staging tile.
    #[tile_fn]
    fn scale(d_s: Smem, acc: Regs, a: f32, b: f32) {
        copy(d_s, acc, alpha = a, beta = b);
    }

    /// Reads the caller's `alpha` without taking it.
    #[tile_fn]
    fn hidden(d_s: Smem, acc: Regs) {
        copy(d_s, acc, alpha = alpha);
    }

    #[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
    pub fn k(#[shape(M, N)] d: Tensor<bf16>, alpha: f32, beta: f32) {
        let acc = regs::<f32>([64, 64]);
        let d_s = smem::<bf16>([1, 64, 64], swizzle = B128);
        scale(d_s, acc, alpha, beta);
        scale(d_s, acc, alpha, 1);
        hidden(d_s, acc);
        let x = alpha + 1;
    }
}

fn main() {}
