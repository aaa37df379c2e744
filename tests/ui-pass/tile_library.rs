//! A tile library shared by a module in another place (here another module of the file: the
//! library's macro is named by path, as a file of its own would be), and one kernel that takes
//! B given N×K or K×N by one config entry: the same `tma::load` fills a K-major tile in one
//! box and an MN-major one in a box per 64-column chunk.
use tirx::prelude::*;

pub mod pieces {
    use tirx::prelude::*;

    #[tile_module(library)]
    mod shared {
        use tirx::prelude::*;

        /// One tile's K loop.
        #[tile_fn]
        fn load_k(pipe: Pipe, a_s: Smem, b_s: Smem, a: Global, b: Global, m: u32, n: u32, k_tiles: u32) {
            for k in 0..k_tiles {
                let s = pipe.producer_acquire(k);
                tma::load(a_s[s], a.tile(m, k), pipe.full(s));
                tma::load(b_s[s], b.tile(n, k), pipe.full(s));
            }
        }
    }
}

#[tile_module(uses(crate::pieces::shared))]
pub mod kernels {
    use tirx::prelude::*;

    #[tile_kernel(
        solves = gemm,
        target = sm_90a,
        threads = 256,
        grid = (cdiv(N, BN), cdiv(M, BM)),
        configs(product(
            layout(default = (MB = k), nn = (MB = mn)),
            with = (BM = 128, BN = 128, BK = 64, STAGES = 4),
        )),
    )]
    pub fn gemm(
        #[shape(M, K)] a: Tensor<bf16>,
        #[shape(N, K)]
        #[major(MB)]
        b: Tensor<bf16>,
        #[shape(M, N)] d: Tensor<bf16>,
    ) {
        let a_s = smem::<bf16>([STAGES, BM, BK], swizzle = B128);
        let b_s = smem::<bf16>([STAGES, BN, BK], swizzle = B128, major = MB);
        let acc = regs::<f32>([BM, BN]);
        let pipe = pipeline::<STAGES>(consumers = 1);
        let k_tiles = cdiv(K, BK);
        #[scope(warp = 0, elect)]
        {
            load_k(pipe, a_s, b_s, a, b, cta.y, cta.x, k_tiles);
        }
        #[scope(warpgroup = 1)]
        {
            for k in 0..k_tiles {
                let s = pipe.consumer_wait(k);
                wgmma::fence();
                wgmma::mma(acc, a_s[s], b_s[s], accumulate = k > 0);
                wgmma::commit();
                wgmma::wait(0);
                #[scope(thread = 128)]
                {
                    pipe.consumer_release(s);
                }
            }
            copy(d.tile(cta.y, cta.x), acc);
        }
    }
}

fn main() {
    use tirx::problem::{BLayout, Problem};
    let arts = kernels::gemm::ARTIFACTS;
    assert_eq!(arts.len(), 2);
    let layout = |config: &str| {
        let a = arts.iter().find(|a| a.config == config).expect("compiled");
        match a.problem {
            Some(Problem::Gemm(g)) => g.b,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(layout("default"), BLayout::Tn);
    assert_eq!(layout("nn"), BLayout::Nn);
    // B as stored: N×K for `default`, K×N for `nn`.
    let b_shape = |config: &str| {
        let a = arts.iter().find(|a| a.config == config).expect("compiled");
        (a.signature)().tensors[1].shape.clone()
    };
    assert_eq!(b_shape("default"), ["N", "K"]);
    assert_eq!(b_shape("nn"), ["K", "N"]);
    // The MN-major B is loaded in two [BK, 64] boxes per stage.
    let nn = arts.iter().find(|a| a.config == "nn").unwrap();
    assert_eq!(nn.ptx.matches("cp.async.bulk.tensor").count(), 2);
}
