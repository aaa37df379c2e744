//! tirx-kernels: the shipped kernels, written in the tirx language, and their host-side
//! checks. Every kernel is an ordinary user of `#[tile_kernel]`.

pub mod attention {
    //! Attention: two MMAs with the softmax between them.
    pub mod blackwell;
    pub mod family;
    pub mod hopper;
    pub mod hopper_persistent;
    pub mod host;
    pub mod reference;
    pub mod request;
}
pub mod copy {
    //! Data movement.
    pub mod family;
    pub mod tma_copy;
}
pub mod gemm {
    //! The GEMM ladder, and the GEMM family's host side (`family`, `request`, `host`,
    //! `check`, `reference`).
    pub mod check;
    pub mod family;
    pub mod fp8;
    pub mod fp8_pingpong;
    pub mod fp8_ref;
    pub mod fused;
    pub mod host;
    pub mod level_01_sync;
    pub mod level_02_tma;
    pub mod level_03_pipeline_tcgen05;
    pub mod level_03_pipeline_wgmma;
    pub mod level_04_ws1;
    pub mod level_04_ws_tcgen05;
    pub mod level_05_2wg;
    pub mod level_06_persistent;
    pub mod level_06_persistent_tcgen05;
    pub mod level_07_cluster;
    pub mod level_07_pair_tcgen05;
    pub mod level_08_clc_tcgen05;
    pub mod level_08_tma_epi;
    pub mod level_09_tma_epi_tcgen05;
    pub mod level_10_epi_tcgen05;
    pub mod level_10_prod_tcgen05;
    pub mod mxfp8_tcgen05;
    pub mod nvfp4_tcgen05;
    pub mod pair_n;
    pub mod pieces;
    pub mod pieces_sm100;
    pub mod reference;
    pub mod request;
    pub mod scaled;
    pub mod split;
    pub mod splitk;
}
pub mod row_kernels {
    //! Row kernels: register tiles that compute.
    pub mod cluster;
    pub mod family;
    pub mod host;
    pub mod layernorm;
    pub mod norm_long;
    pub mod request;
    pub mod rmsnorm;
    pub mod softmax;
    pub mod softmax_long;
    pub mod staged;
    pub mod swiglu;
}
pub mod bench;
pub mod catalogue;
pub mod check;
pub mod dispatch;
pub mod family;
pub mod reference;
pub mod rows;
pub mod simulate;
pub mod timeline;
