//! What a distribution's parameters can be wrong with: the error of
//! [`super::Sampler::new`], apart from `sampler/mod.rs` so that the alias
//! tables it builds on (alias.rs) can return it without importing it back.

/// A distribution parameter that cannot describe a distribution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SampleError {
    #[error("{family}: `{name}` must be {requirement}, got {value}")]
    InvalidParameter {
        family: &'static str,
        name: &'static str,
        requirement: &'static str,
        value: f64,
    },
    #[error("uniform: `min` ({min}) must not exceed `max` ({max}), and max − min must be finite")]
    UniformRange { min: f64, max: f64 },
    #[error("empirical: no values to resample")]
    EmptyEmpirical,
    #[error("empirical: value #{index} is not finite ({value})")]
    NonFiniteEmpirical { index: usize, value: f64 },
}
