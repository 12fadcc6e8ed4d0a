//! Clearance annotations (placeholder header, replaced below).
pub mod classes;
pub mod distance;
pub mod regions;
pub mod true_clearance;

/// Errors of the clearance module.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ClearanceError {
    /// A configuration value is out of range.
    #[error("invalid clearance configuration: {0}")]
    Config(String),
}
