//! The time budget of one plan, and its cancellation by a newer request.

use super::{PlanError, StatusCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Stops a search when a deadline passes or a flag is raised (a newer goal arrived).
#[derive(Debug, Clone)]
pub struct Budget {
    /// `None`: no deadline ([`Budget::without_deadline`]).
    deadline: Option<Instant>,
    cancel: Option<Arc<AtomicBool>>,
}

impl Budget {
    /// A budget of `seconds` from now (an hour at most; a negative or NaN value is zero),
    /// optionally cancellable through `cancel`.
    pub fn new(seconds: f64, cancel: Option<Arc<AtomicBool>>) -> Self {
        let d = Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::from_secs(3600));
        Self { deadline: Some(Instant::now() + d), cancel }
    }

    /// A budget with no deadline, optionally cancellable through `cancel`: the plan's outcome
    /// then depends on the map and the request alone, never on how busy the machine is (offline
    /// planning, and tests that compare or expect outcomes; a 10 s budget ran out under load in
    /// a hybrid search and turned a NO_VALID_PATH into a TIMEOUT).
    pub fn without_deadline(cancel: Option<Arc<AtomicBool>>) -> Self {
        Self { deadline: None, cancel }
    }

    /// True when the search must stop.
    pub fn should_stop(&self) -> bool {
        self.is_cancelled() || self.deadline.is_some_and(|d| Instant::now() >= d)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_stops_at_its_deadline_or_when_cancelled_and_one_without_only_when_cancelled() {
        assert!(Budget::new(0.0, None).should_stop());
        assert!(Budget::new(f64::NAN, None).should_stop());
        assert!(!Budget::new(60.0, None).should_stop());
        let flag = Arc::new(AtomicBool::new(false));
        let open = Budget::without_deadline(Some(flag.clone()));
        assert!(!open.should_stop());
        flag.store(true, Ordering::Relaxed);
        assert!(open.should_stop() && open.stop_error().code == StatusCode::Superseded);
    }
}
