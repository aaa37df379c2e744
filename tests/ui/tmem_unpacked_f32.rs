use tirx::prelude::*;

// `unpacked = true` spreads a 16-bit TMEM tile one element to a 32-bit cell (an f16
// accumulator's packing, PTX ISA §9.7.16.10.4.1); a 32-bit tile has one element a cell.
#[tile_kernel(target = sm_100a, threads = 128, grid = (1, 1))]
pub fn unpacked_f32(#[shape(M, N)] d: Tensor<f32>) {
    let wide = tmem::<f32>([128, 64], unpacked = true);
    #[scope(warp = 0)]
    {
        tcgen05::alloc(wide);
        tcgen05::dealloc(wide);
    }
}

fn main() {}
