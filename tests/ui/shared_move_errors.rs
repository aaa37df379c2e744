use tirx::prelude::*;

// Register ↔ shared moves that no variant can do: a shared tile of another shape, a 16-bit
// tile from f32 shared memory (ldmatrix wants the fragment layout, the generic path a
// lossless type), and a fragment moved by fewer threads than own it.
#[tile_kernel(target = sm_90a, threads = 128, grid = (1, 1))]
pub fn k(#[shape(M, N)] x: Tensor<bf16>) {
    let xs = smem::<bf16>([2, 512]);
    let t = regs::<f32>([1, 1024], layout = blocked(vec = 8));
    copy(t, xs);
    let fs = smem::<f32>([1, 1024]);
    let h = regs::<bf16>([1, 1024], layout = blocked(vec = 8));
    copy(h, fs);
    let ps = smem::<bf16>([64, 64]);
    let p = regs::<bf16>([64, 64]);
    #[scope(warp = 0)]
    {
        copy(p, ps);
    }
}

fn main() {}
