//! The integration tests, in one binary: snapshots of every shipped kernel's IR and PTX,
//! ptxas assembly and SASS checks of every kernel × target, the IR text round trip through
//! the pipeline, compile-fail cases of the macro, dispatch tables, and (feature `gpu`) runs
//! on a GPU against CPU references; the emulator's PTX front end on every shipped kernel.

mod arg_reduce;
mod assemble;
mod atomics;
mod block_scale;
mod block_scale_fp4;
mod block_scale_lang;
mod clc;
mod cluster_push;
mod contracts;
mod dispatch;
mod elem_types;
mod emu_io;
mod exp2_poly;
mod f16_acc;
mod fp4_store;
mod gather;
#[cfg(feature = "gpu")]
mod gpu;
#[cfg(feature = "gpu")]
mod gpu_arg_reduce;
#[cfg(feature = "gpu")]
mod gpu_atomics;
#[cfg(feature = "gpu")]
mod gpu_attention;
#[cfg(feature = "gpu")]
mod gpu_decode;
#[cfg(feature = "gpu")]
mod gpu_epilogue;
#[cfg(feature = "gpu")]
mod gpu_exp2_poly;
#[cfg(feature = "gpu")]
mod gpu_fp8;
#[cfg(feature = "gpu")]
mod gpu_fused;
#[cfg(feature = "gpu")]
mod gpu_gather;
#[cfg(feature = "gpu")]
mod gpu_gemv;
#[cfg(feature = "gpu")]
mod gpu_int64;
#[cfg(feature = "gpu")]
mod gpu_paged;
#[cfg(feature = "gpu")]
mod gpu_quant;
#[cfg(feature = "gpu")]
mod gpu_rows;
#[cfg(feature = "gpu")]
mod gpu_rs;
#[cfg(feature = "gpu")]
mod gpu_smem;
#[cfg(feature = "gpu")]
mod gpu_splitk;
#[cfg(feature = "gpu")]
mod gpu_transpose;
#[cfg(feature = "gpu")]
mod gpu_transposed;
mod griddep;
mod guide;
mod i8_saturate;
mod int64_tiles;
mod int_scalars;
mod int_tiles;
mod kinds;
mod pair_block_scale;
mod pair_m128;
mod pair_mma;
mod pair_multicast;
mod pair_tmem_a;
mod pipeline_counters;
mod quant;
mod regtile_lowering;
mod roundtrip;
mod rs_kernels;
mod shape_checks;
mod sim;
mod sim_attention;
mod sim_exec;
mod sim_fp8;
mod sim_fp8_block;
mod sim_fp8_block_mn;
mod sim_gemm;
mod sim_gemm_sm100;
mod sim_mn_major_a;
mod sim_mxfp8;
mod sim_mxfp8_prod;
mod sim_nvfp4;
mod sim_rows_pipe;
mod sim_rs;
mod sim_smem;
mod sim_splitk;
mod sim_timeline;
mod sim_transposed;
mod smem_kernels;
mod snapshots;
mod tcgen05_shift;
mod tmem_a;
mod tmem_regs;
mod tmem_shapes;
mod transpose;
mod ui;
mod warp_vote;
mod wgmma_fp8;
