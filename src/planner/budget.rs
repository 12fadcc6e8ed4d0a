//! The time budget of one plan, and its cancellation by a newer request.

use super::{PlanError, StatusCode};
use crate::directional::tables::filling_time_on_this_thread;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// Stops a search when a deadline passes or a flag is raised (a newer goal arrived).
///
/// The deadline counts planning, not the one-off filling of Directional A*'s hit-check tables
/// for parameters the plan is the first to use ([`crate::directional::tables`]; Nav2's Smac
/// planners build their tables when configured, outside any plan's time): once bound to the
/// planning thread ([`Budget::on_this_thread`], which the library's planning entry points
/// [`crate::planner::Planner::plan`], [`crate::planner::Planner::plan_near`] and
/// [`crate::waypoints::plan_through`] do), the time that thread spends filling entries moves the
/// deadline back by as much. So a plan right after a change of footprint answers TIMEOUT only
/// when its search outlasts the budget. A cancel stops it whatever the filling.
#[derive(Debug, Clone)]
pub struct Budget {
    /// `None`: no deadline ([`Budget::without_deadline`]).
    deadline: Option<Instant>,
    cancel: Option<Arc<AtomicBool>>,
    /// The planning thread and its table-filling clock when bound ([`Budget::on_this_thread`]).
    bound: Option<(ThreadId, Duration)>,
}

impl Budget {
    /// A budget of `seconds` from now (an hour at most; a negative or NaN value is zero),
    /// optionally cancellable through `cancel`.
    pub fn new(seconds: f64, cancel: Option<Arc<AtomicBool>>) -> Self {
        let d = Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::from_secs(3600));
        Self { deadline: Some(Instant::now() + d), cancel, bound: None }
    }

    /// A budget with no deadline, optionally cancellable through `cancel`: the plan's outcome
    /// then depends on the map and the request alone, never on how busy the machine is (offline
    /// planning, and tests that compare or expect outcomes; a 10 s budget ran out under load in
    /// a hybrid search and turned a NO_VALID_PATH into a TIMEOUT).
    pub fn without_deadline(cancel: Option<Arc<AtomicBool>>) -> Self {
        Self { deadline: None, cancel, bound: None }
    }

    /// This budget bound to the calling thread, the one that plans: from now on the time this
    /// thread spends filling table entries does not count against the deadline. Binding again
    /// on the same thread keeps the first binding (a plan through several poses, or one that
    /// tries several goals within the tolerance, makes several plans under one budget, and
    /// filling in the first must not count in the next); binding on another thread starts
    /// afresh there. A bound budget polled on another thread counts every moment (it cannot
    /// see that thread's filling).
    pub fn on_this_thread(&self) -> Self {
        let here = std::thread::current().id();
        let bound = match self.bound {
            Some((thread, at)) if thread == here => Some((thread, at)),
            _ => Some((here, filling_time_on_this_thread())),
        };
        Self { bound, ..self.clone() }
    }

    /// How much table filling moved the deadline back: the bound thread's filling since it was
    /// bound; zero unbound or on another thread.
    pub fn table_filling(&self) -> Duration {
        match self.bound {
            Some((thread, at)) if std::thread::current().id() == thread => {
                filling_time_on_this_thread().saturating_sub(at)
            }
            _ => Duration::ZERO,
        }
    }

    /// True when the search must stop.
    pub fn should_stop(&self) -> bool {
        // The filling is looked up only past the deadline as set: most polls are before it.
        self.is_cancelled()
            || self.deadline.is_some_and(|d| {
                let now = Instant::now();
                now >= d && now >= d + self.table_filling()
            })
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

    /// Time the bound thread spends filling a cold table moves the deadline back by as much;
    /// nothing else does: the same budget unbound, polled on another thread, or after the
    /// filling ends and its own time passes.
    #[test]
    fn filling_tables_on_the_bound_thread_moves_the_deadline_back_and_nothing_else_does() {
        use crate::directional::footprint::Shape;
        use crate::directional::tables::{EdgeTable, TableKey};
        use crate::directional::{HeadingBins, MotionModel};
        // 16 bins, both gears: 25 088 entries, each made to take at least a millisecond more,
        // so filling them outlasts 0.3 s on any computer.
        crate::directional::tables::slow_filling_on_this_thread(Duration::from_millis(1));
        let key = TableKey { turning_radius: 6.0, footprint: Shape::Disk(2.0), spacing: 3, bins: HeadingBins::Sixteen };
        let table = EdgeTable::new(key, 3, MotionModel::ReedsShepp);
        let seconds = 0.2;
        let (bound, plain) = (Budget::new(seconds, None).on_this_thread(), Budget::new(seconds, None));
        let filling = Duration::from_secs_f64(1.5 * seconds);
        let t = Instant::now();
        let mut filled = 0;
        'fill: for gear in [crate::directional::Gear::Forward, crate::directional::Gear::Reverse] {
            for h0 in 0..16 {
                for h1 in 0..16 {
                    for (dx, dy) in (-3..=3).flat_map(|dy| (-3..=3).map(move |dx| (dx, dy))) {
                        if t.elapsed() >= filling {
                            break 'fill;
                        }
                        filled += usize::from(table.edge_in(gear, h0, h1, dx, dy).is_some());
                    }
                }
            }
        }
        assert!(t.elapsed() >= filling, "the table filled in {:?} ({filled} entries)", t.elapsed());
        assert!(plain.should_stop(), "unbound, the filling counts");
        assert!(!bound.should_stop(), "bound, it does not: {:?} of filling", bound.table_filling());
        assert!(bound.table_filling() >= filling.mul_f64(0.5), "{:?}", bound.table_filling());
        std::thread::scope(|s| {
            s.spawn(|| assert!(bound.should_stop() && bound.table_filling().is_zero(), "another thread counts it"));
        });
        assert_eq!(bound.on_this_thread().table_filling(), bound.table_filling(), "binding again keeps the first");
        std::thread::scope(|s| {
            s.spawn(|| assert!(bound.on_this_thread().table_filling().is_zero(), "elsewhere it starts afresh"));
        });
        std::thread::sleep(Duration::from_secs_f64(1.1 * seconds));
        assert!(bound.should_stop(), "its own time still runs out");
    }
}
