use tirx::prelude::*;

// `tcgen05::shift` takes a tensor-memory tile of 32-bit cells, 8 columns wide at least (one
// `tcgen05.shift` moves 256 bits of each of 31 rows, PTX ISA §9.7.16.9.3); the scope is
// `ui/tcgen05_shift_scope.rs`'s.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn shift_errors(#[shape(M, N)] d: Tensor<f32>) {
    let s = smem::<f32>([128, 32]);
    let sf = tmem::<ue8m0>([128, 4]);
    let acc = tmem::<f32>([128, 32]);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(acc);
        tcgen05::alloc(sf);
    }
    #[scope(thread = 0)]
    {
        tcgen05::shift(s);
        tcgen05::shift(sf);
    }
    #[scope(warp = 0)]
    {
        tcgen05::dealloc(acc);
        tcgen05::dealloc(sf);
    }
}

fn main() {}
