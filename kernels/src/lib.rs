//! tirx-kernels
