//! The time budget of one plan, and its cancellation by a newer request.

use super::{PlanError, StatusCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Stops a search when a deadline passes or a flag is raised (a newer goal arrived).
#[derive(Debug, Clone)]
pub struct Budget {
    deadline: Instant,
    cancel: Option<Arc<AtomicBool>>,
}

impl Budget {
    /// A budget of `seconds` from now, optionally cancellable through `cancel`.
    pub fn new(seconds: f64, cancel: Option<Arc<AtomicBool>>) -> Self {
        let d = Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::from_secs(3600));
        Self { deadline: Instant::now() + d, cancel }
    }

    /// True when the search must stop.
    pub fn should_stop(&self) -> bool {
        self.is_cancelled() || Instant::now() >= self.deadline
    }

    /// True when the request was cancelled (rather than timed out).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// The error to report after `should_stop()` ended a search.
    pub fn stop_error(&self) -> PlanError {
        if self.is_cancelled() {
            PlanError::new(StatusCode::Superseded, "a newer goal replaced this one")
        } else {
            PlanError::new(StatusCode::Timeout, "the planning time budget ran out")
        }
    }
}
