//! How the searches poll their `should_stop` callback.

/// Polls a `should_stop` callback once every `period` steps of a search loop.
///
/// Every step counts, not only expansions: an open list with lazy deletion can surface millions
/// of stale entries between two expansions on a large map (a cost plateau), and a search that
/// polled per expansion then answered a cancel or a spent budget 160 ms late. Reading the clock
/// costs about 25 ns, so a period of a few to a few thousand steps (by what a step costs) keeps
/// the poll a small share of the search while bounding the work between two polls.
///
/// A search whose step takes the goal off the list answers with the path even when that step's
/// poll says stop: the path is in hand.
///
/// ```
/// use blockstar_planner::search::poll::StopPoll;
/// let mut calls = 0;
/// let mut poll = StopPoll::new(4, || {
///     calls += 1;
///     calls == 2
/// });
/// let stopped_at = (1..=100).find(|_| poll.stop());
/// assert_eq!(stopped_at, Some(8)); // polled at steps 4 and 8; the second poll said stop
/// ```
pub struct StopPoll<F> {
    should_stop: F,
    period: u32,
    countdown: u32,
}

impl<F: FnMut() -> bool> StopPoll<F> {
    /// Polls `should_stop` on every `period`-th call of [`StopPoll::stop`] (a period of 0 is
    /// read as 1).
    pub fn new(period: u32, should_stop: F) -> Self {
        let period = period.max(1);
        Self { should_stop, period, countdown: period }
    }

    /// One step of the loop: true when this step polled and the callback asked to stop.
    #[inline(always)]
    pub fn stop(&mut self) -> bool {
        self.countdown -= 1;
        if self.countdown > 0 {
            return false;
        }
        self.countdown = self.period;
        (self.should_stop)()
    }

    /// Polls now, whatever the countdown, and starts it again: for a loop whose last step was
    /// much dearer than its steps usually are.
    #[inline]
    pub fn stop_now(&mut self) -> bool {
        self.countdown = self.period;
        (self.should_stop)()
    }
}
