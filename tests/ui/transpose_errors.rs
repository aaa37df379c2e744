use tirx::prelude::*;

// A transposing copy (`transpose = true`) is `ldmatrix`/`stmatrix` `.trans`: a register tile in
// the wgmma fragment layout to or from a 16-bit shared tile holding its transpose. A copy between
// other memories, a `transpose` not `true`/`false`, other options or a barrier beside it, an f32
// shared tile, a register tile of another 16-bit type, a shared tile of the untransposed shape, a
// register tile outside the fragment layout and one not a multiple of 8 columns wide (the
// fragment's 8-column blocks) are errors at the user's token.
#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn global(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>) {
    let t = regs::<bf16>([64, 64]);
    copy(t, x.tile(cta.y, cta.x), transpose = true);
    copy(y.tile(cta.x, cta.y), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn not_a_bool(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>) {
    let s = smem::<bf16>([64, 64]);
    copy(s, x.tile(cta.y, cta.x));
    sync_threads();
    let t = regs::<bf16>([64, 64]);
    copy(t, s, transpose = 1);
    copy(y.tile(cta.x, cta.y), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn with_alpha(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>, a: f32) {
    let s = smem::<bf16>([64, 64]);
    copy(s, x.tile(cta.y, cta.x));
    sync_threads();
    let t = regs::<bf16>([64, 64]);
    copy(t, s, transpose = true, alpha = a);
    copy(y.tile(cta.x, cta.y), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn with_barrier(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>) {
    let s = smem::<bf16>([64, 64]);
    let bar = mbarrier();
    copy(s, x.tile(cta.y, cta.x));
    sync_threads();
    let t = regs::<bf16>([64, 64]);
    copy(t, s, bar, transpose = true);
    copy(y.tile(cta.x, cta.y), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn f32_smem(#[shape(N, M)] y: Tensor<f32>) {
    let s = smem::<f32>([64, 64]);
    let t = regs::<f32>([64, 64]);
    copy(t, s, transpose = true);
    copy(y.tile(cta.x, cta.y), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn f16_into_bf16(#[shape(M, N)] x: Tensor<f16>) {
    let t = regs::<f16>([64, 64]);
    copy(t, x.tile(cta.y, cta.x));
    let s = smem::<bf16>([64, 64]);
    copy(s, t, transpose = true);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 128), cdiv(M, 64)))]
pub fn untransposed(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>) {
    let s = smem::<bf16>([64, 128]);
    copy(s, x.tile(cta.y, cta.x));
    sync_threads();
    let t = regs::<bf16>([64, 128]);
    copy(t, s, transpose = true);
    copy(y.tile(cta.x, cta.y), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn blocked(#[shape(M, N)] x: Tensor<bf16>, #[shape(N, M)] y: Tensor<bf16>) {
    let s = smem::<bf16>([64, 64]);
    copy(s, x.tile(cta.y, cta.x));
    sync_threads();
    let t = regs::<bf16>([64, 64], layout = blocked(vec = 8));
    copy(t, s, transpose = true);
    copy(y.tile(cta.x, cta.y), t);
}

#[tile_kernel(target = sm_90a, threads = 128, grid = (cdiv(N, 64), cdiv(M, 64)))]
pub fn not_whole_blocks(#[shape(M, N)] x: Tensor<bf16>) {
    let t = regs::<bf16>([64, 68]);
    copy(t, x.tile(cta.y, cta.x));
    let s = smem::<bf16>([68, 64]);
    copy(s, t, transpose = true);
}

fn main() {}
