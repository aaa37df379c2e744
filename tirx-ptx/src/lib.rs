//! tirx-ptx
