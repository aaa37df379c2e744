//! tirx-kernels: the shipped kernels, written in the tirx language, and their host-side
//! checks. Every kernel is an ordinary user of `#[tile_kernel]`.

pub mod copy {
    //! Data movement.
    pub mod tma_copy;
}
pub mod gemm {
    //! The GEMM ladder.
    pub mod level_01_sync;
    pub mod level_02_tma;
    pub mod level_03_pipeline_tcgen05;
    pub mod level_03_pipeline_wgmma;
    pub mod level_05_two_consumers;
    pub mod level_06_persistent_ws;
    pub mod level_07_cluster_multicast;
    pub mod level_08_tma_store_epilogue;
}
pub mod bench;
pub mod check;
pub mod reference;
pub mod registry;
