use tirx::prelude::*;

#[tile_module]
mod gemm {
    use tirx::prelude::*;

    /// The producer loop over K.
    #[tile_fn]
    fn load_k(pipe: Pipe, a_s: Smem, a: Global, m: u32, k_tiles: u32) {
        for k in 0..k_tiles {
            let s = pipe.producer_acquire(k);
            tma::load(a_s[s], a.tile(m, k), pipe.full(s));
        }
    }

    #[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
    pub fn k(#[shape(M, K)] a: Tensor<bf16>) {
        let a_s = smem::<bf16>([2, 64, 64], swizzle = B128);
        let acc = tmem::<f32>([128, 64]);
        let pipe = pipeline::<2>();
        #[scope(warp = 0, elect)]
        {
            load_k(pipe, acc, a, cta.x, a_s);
        }
    }
}

fn main() {}
