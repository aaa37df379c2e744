//! tirx-runtime
