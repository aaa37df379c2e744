//! Descriptor encoders.
