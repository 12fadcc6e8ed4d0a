//! Service responses, sent off the node's async runtime and resent while the client's response
//! reader has not matched.
//!
//! Fast DDS blocks a service response until the client's response reader is matched, for up to
//! the writer's blocking time (20 ms for the node's own services under its profile,
//! `dds_profile`), then refuses it with `RCL_RET_TIMEOUT` (ros2/rmw_fastrtps#467): a client that
//! sends the moment it discovers the node may not have been discovered back yet. Sent from the
//! runtime's one worker thread, that wait held every action server and the node's loop. Here
//! every response goes to a few responder threads ([`RESPONDER_THREADS`]); a refused one is sent
//! again ([`RETRY`]: bounded in time and in attempts) and logged once, when it finally arrives
//! late or is given up. Each attempt is kept short and the pauses between them long, because r2r
//! holds the service's lock while the rmw waits and the executor takes every service's lock on
//! every spin: the node's every input waits for an attempt, and none for a pause.
//!
//! The threads take responses from one queue: a response not yet tried first, then a refused one
//! whose pause is over, the longest due first. A client that never hears back (it died before
//! its answer) so holds a thread only during its attempts, never during its pauses, and never
//! ahead of a response not yet tried: however many such clients there are, the others are
//! answered at once. (Each thread used to keep its response until it was sent or given up: three
//! dead clients held every response of the node for 15 s.)
//!
//! Responses still waiting when the node stops are abandoned (counted in one line of the log).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Threads sending responses: attempts of different responses run side by side, so one slow
/// attempt (the rmw's wait) does not delay the others.
pub const RESPONDER_THREADS: usize = 3;

/// How a refused response is retried.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// No retry is begun once this long has passed since the first attempt (less the pause).
    pub give_up_after: Duration,
    /// The pause between a refused attempt and the next.
    pub pause: Duration,
    /// The most attempts, whatever the rmw's blocking time.
    pub max_attempts: u32,
}

/// The node's policy: attempts 100 ms apart for 15 s (about 125 of the node's 20 ms waits, 75 of
/// Fast DDS's default 100 ms), at most 150: a client's reader that matches within 15 s gets its
/// response, and each response to a client that will never hear holds the node's inputs about a
/// sixth of that time, 20 ms at a time.
pub const RETRY: RetryPolicy =
    RetryPolicy { give_up_after: Duration::from_secs(15), pause: Duration::from_millis(100), max_attempts: 150 };

/// How a response went.
#[derive(Debug, PartialEq)]
pub enum Delivery {
    /// Sent, at the given attempt (1: at once).
    Sent { attempts: u32 },
    /// Not sent: the rmw's last error, the attempts made, how long the first one waited and how
    /// long they took in all.
    Lost { error: String, attempts: u32, first_wait: Duration, elapsed: Duration },
}

/// The attempts made for one response: the one owner of "send again or give up".
#[derive(Debug, Default)]
struct Attempts {
    started: Option<Instant>,
    made: u32,
    first_wait: Option<Duration>,
}

impl Attempts {
    /// Makes one attempt with `attempt`. Returns the delivery when it is over: sent, or given up
    /// on an error other than a timeout, a raised `stopping`, or `policy`'s bounds; None when the
    /// response is to be sent again after `policy.pause`.
    fn make(
        &mut self,
        policy: RetryPolicy,
        stopping: &AtomicBool,
        attempt: &mut dyn FnMut() -> r2r::Result<()>,
    ) -> Option<Delivery> {
        let started = *self.started.get_or_insert_with(Instant::now);
        let tried = Instant::now();
        self.made += 1;
        let error = match attempt() {
            Ok(()) => return Some(Delivery::Sent { attempts: self.made }),
            Err(e) => e,
        };
        let first_wait = *self.first_wait.get_or_insert(tried.elapsed());
        let retry = matches!(error, r2r::Error::RCL_RET_TIMEOUT)
            && self.made < policy.max_attempts
            && started.elapsed() + policy.pause < policy.give_up_after
            && !stopping.load(Ordering::Relaxed);
        (!retry).then(|| Delivery::Lost {
            error: error.to_string(),
            attempts: self.made,
            first_wait,
            elapsed: started.elapsed(),
        })
    }
}

/// One response to send: `what` names it in the log ("a send_goal request of
/// compute_path_to_pose"); `on_lost` runs when it is given up.
struct Job {
    what: String,
    attempt: Box<dyn FnMut() -> r2r::Result<()> + Send>,
    on_lost: Option<Box<dyn FnOnce() + Send>>,
    attempts: Attempts,
}

/// The responses waiting for a thread (see the module doc for the order).
#[derive(Default)]
struct Queue {
    untried: VecDeque<Job>,
    again: Vec<(Instant, Job)>,
}

impl Queue {
    /// The next response to try now, or how long until one is due (None: none waits).
    fn take(&mut self, now: Instant) -> Result<Job, Option<Duration>> {
        if let Some(job) = self.untried.pop_front() {
            return Ok(job);
        }
        let soonest = self.again.iter().enumerate().min_by_key(|(_, (due, _))| *due).map(|(i, (due, _))| (i, *due));
        match soonest {
            Some((i, due)) if due <= now => Ok(self.again.swap_remove(i).1),
            Some((_, due)) => Err(Some(due - now)),
            None => Err(None),
        }
    }
}

/// What the responder threads and the senders share.
struct Shared {
    queue: Mutex<Queue>,
    changed: Condvar,
    stopping: AtomicBool,
    policy: RetryPolicy,
}

impl Shared {
    /// Waits for the next response to try; None once the node stops. Polls `stopping` at least
    /// every 100 ms.
    fn next(&self) -> Option<Job> {
        let mut queue = self.queue.lock().ok()?;
        loop {
            if self.stopping.load(Ordering::Relaxed) {
                return None;
            }
            let wait = match queue.take(Instant::now()) {
                Ok(job) => return Some(job),
                Err(due) => due.unwrap_or(Duration::MAX).min(Duration::from_millis(100)),
            };
            queue = self.changed.wait_timeout(queue, wait).ok()?.0;
        }
    }

    fn push(&self, job: Job, due: Option<Instant>) {
        // A poisoned queue: a responder thread panicked; nobody is left to answer.
        if let Ok(mut queue) = self.queue.lock() {
            match due {
                None => queue.untried.push_back(job),
                Some(due) => queue.again.push((due, job)),
            }
            self.changed.notify_one();
        }
    }
}

/// Sends service responses on the responder threads (clone it freely).
#[derive(Clone)]
pub struct Responder {
    shared: Arc<Shared>,
}

/// The responder threads, stopped and joined by [`ResponderThreads::stop`].
pub struct ResponderThreads {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Responder {
    /// Starts the responder threads with the node's [`RETRY`] policy; they log on `logger`.
    pub fn start(logger: &str) -> std::io::Result<(Responder, ResponderThreads)> {
        Self::start_with(RETRY, logger)
    }

    fn start_with(policy: RetryPolicy, logger: &str) -> std::io::Result<(Responder, ResponderThreads)> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            policy,
        });
        let threads = (0..RESPONDER_THREADS)
            .map(|n| {
                let (shared, logger) = (shared.clone(), logger.to_string());
                std::thread::Builder::new().name(format!("responder-{n}")).spawn(move || serve(&shared, &logger))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok((Responder { shared: shared.clone() }, ResponderThreads { shared, threads }))
    }

    /// Sends `response` to the client of `request` (see the module doc); `what` names the
    /// request in the log.
    pub fn respond<S>(&self, what: impl Into<String>, request: r2r::ServiceRequest<S>, response: S::Response)
    where
        S: r2r::WrappedServiceTypeSupport + 'static,
        S::Response: Clone + Send,
    {
        self.respond_or(what, request, response, || {});
    }

    /// As [`Responder::respond`], running `on_lost` if the response is given up.
    pub fn respond_or<S>(
        &self,
        what: impl Into<String>,
        request: r2r::ServiceRequest<S>,
        response: S::Response,
        on_lost: impl FnOnce() + Send + 'static,
    ) where
        S: r2r::WrappedServiceTypeSupport + 'static,
        S::Response: Clone + Send,
    {
        self.submit(what.into(), Box::new(move || request.clone().respond(response.clone())), Box::new(on_lost));
    }

    fn submit(
        &self,
        what: String,
        attempt: Box<dyn FnMut() -> r2r::Result<()> + Send>,
        on_lost: Box<dyn FnOnce() + Send>,
    ) {
        self.shared.push(Job { what, attempt, on_lost: Some(on_lost), attempts: Attempts::default() }, None);
    }
}

fn serve(shared: &Shared, logger: &str) {
    while let Some(mut job) = shared.next() {
        let delivery = match job.attempts.make(shared.policy, &shared.stopping, &mut job.attempt) {
            Some(delivery) => delivery,
            None => {
                shared.push(job, Some(Instant::now() + shared.policy.pause));
                continue;
            }
        };
        let elapsed = job.attempts.started.map(|t| t.elapsed()).unwrap_or_default();
        match delivery {
            Delivery::Sent { attempts: 1 } => {}
            Delivery::Sent { attempts } => r2r::log_warn!(
                logger,
                "answered {} at attempt {attempts}, after {:.1} s: the client's response reader matched late",
                job.what,
                elapsed.as_secs_f64()
            ),
            Delivery::Lost { error, attempts, first_wait, elapsed } => {
                r2r::log_error!(
                    logger,
                    "could not answer {}: {error} after waiting {} ms for the client's response reader \
                     ({attempts} attempts over {:.1} s)",
                    job.what,
                    first_wait.as_millis(),
                    elapsed.as_secs_f64()
                );
                if let Some(on_lost) = job.on_lost.take() {
                    on_lost();
                }
            }
        }
    }
}

impl ResponderThreads {
    /// Joins the threads (each within one attempt, the rmw's blocking time at most) and abandons
    /// the responses still waiting, saying how many in one line (each one's `on_lost` runs). Call
    /// it while the node still exists.
    pub fn stop(self, logger: &str) {
        if let Ok(_queue) = self.shared.queue.lock() {
            // Under the lock, so no thread is between its check and its wait.
            self.shared.stopping.store(true, Ordering::Relaxed);
            self.shared.changed.notify_all();
        }
        for thread in self.threads {
            // A panicked responder has nothing left to send.
            let _ = thread.join();
        }
        let abandoned: Vec<Job> = match self.shared.queue.lock() {
            Ok(mut queue) => {
                let Queue { untried, again } = &mut *queue;
                untried.drain(..).chain(again.drain(..).map(|(_, job)| job)).collect()
            }
            Err(_) => return,
        };
        if !abandoned.is_empty() {
            let tried = abandoned.iter().filter(|job| job.attempts.made > 0).count();
            r2r::log_warn!(
                logger,
                "stopping: {} responses not sent ({tried} of them refused so far: the client's reader had not matched)",
                abandoned.len()
            );
        }
        for mut job in abandoned {
            if let Some(on_lost) = job.on_lost.take() {
                on_lost();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: RetryPolicy =
        RetryPolicy { give_up_after: Duration::from_millis(200), pause: Duration::from_millis(1), max_attempts: 5 };

    /// Makes attempts as a responder thread does for one response, pausing between them.
    fn send_with_retries(
        policy: RetryPolicy,
        stopping: &AtomicBool,
        mut attempt: impl FnMut() -> r2r::Result<()>,
    ) -> Delivery {
        let mut attempts = Attempts::default();
        loop {
            if let Some(delivery) = attempts.make(policy, stopping, &mut attempt) {
                return delivery;
            }
            std::thread::sleep(policy.pause);
        }
    }

    /// Waits until `done` holds, failing the test after a minute (a bug must not hang it).
    fn wait_for(done: impl Fn() -> bool, what: &str) {
        let give_up = Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(Instant::now() < give_up, "waited a minute for {what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_response_not_yet_tried_never_waits_behind_clients_that_never_hear_back() {
        // Twice as many clients that never hear back as there are threads, each attempt waiting
        // as the rmw does, refused until the fresh response is sent (then given up at once, with
        // another error), however long that takes.
        let policy = RetryPolicy {
            give_up_after: Duration::from_secs(3600),
            pause: Duration::from_millis(2),
            max_attempts: u32::MAX,
        };
        let (responder, threads) = Responder::start_with(policy, "responder_test").unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let tried = Arc::new(Mutex::new(0u32));
        let fresh_sent = Arc::new(AtomicBool::new(false));
        let dead = 2 * RESPONDER_THREADS;
        for n in 0..dead {
            let (events, tried, fresh_sent) = (events.clone(), tried.clone(), fresh_sent.clone());
            let attempt = move || {
                *tried.lock().unwrap() += 1;
                std::thread::sleep(Duration::from_millis(1));
                match fresh_sent.load(Ordering::Relaxed) {
                    false => Err(r2r::Error::RCL_RET_TIMEOUT),
                    true => Err(r2r::Error::RCL_RET_ERROR),
                }
            };
            responder.submit(
                format!("dead {n}"),
                Box::new(attempt),
                Box::new(move || events.lock().unwrap().push("lost")),
            );
        }
        wait_for(|| *tried.lock().unwrap() >= 2 * dead as u32, "every dead client to be retried");
        let (sent, flag) = (events.clone(), fresh_sent.clone());
        responder.submit(
            "fresh".into(),
            Box::new(move || {
                sent.lock().unwrap().push("sent");
                flag.store(true, Ordering::Relaxed);
                Ok(())
            }),
            Box::new(|| {}),
        );
        wait_for(|| events.lock().unwrap().len() == dead + 1, "every response to be over");
        threads.stop("responder_test");
        // With each thread keeping its response until it was sent or given up, the fresh one
        // would wait for ever behind three dead ones. It goes first.
        assert_eq!(*events.lock().unwrap(), [vec!["sent"], vec!["lost"; dead]].concat());
    }

    #[test]
    fn responses_still_waiting_when_the_node_stops_are_abandoned_and_reported() {
        let policy = RetryPolicy {
            give_up_after: Duration::from_secs(3600),
            pause: Duration::from_secs(3600),
            max_attempts: u32::MAX,
        };
        let (responder, threads) = Responder::start_with(policy, "responder_test").unwrap();
        let lost = Arc::new(Mutex::new(0));
        let tried = Arc::new(Mutex::new(0));
        for _ in 0..4 {
            let (lost, tried) = (lost.clone(), tried.clone());
            let attempt = move || {
                *tried.lock().unwrap() += 1;
                Err(r2r::Error::RCL_RET_TIMEOUT)
            };
            responder.submit("a response".into(), Box::new(attempt), Box::new(move || *lost.lock().unwrap() += 1));
        }
        // Each refused once, then waiting out its (hour-long) pause.
        wait_for(|| *tried.lock().unwrap() == 4, "every response to be tried");
        threads.stop("responder_test");
        assert_eq!(*lost.lock().unwrap(), 4);
    }

    /// An rmw that refuses the first `refusals` attempts with `error`, counting them all.
    fn rmw(refusals: u32, error: r2r::Error) -> (impl FnMut() -> r2r::Result<()>, Arc<Mutex<u32>>) {
        let count = Arc::new(Mutex::new(0));
        let seen = count.clone();
        let attempt = move || {
            let mut n = seen.lock().unwrap();
            *n += 1;
            if *n <= refusals {
                Err(error.clone())
            } else {
                Ok(())
            }
        };
        (attempt, count)
    }

    #[test]
    fn a_response_refused_while_the_reader_matches_is_sent_again() {
        let (attempt, count) = rmw(2, r2r::Error::RCL_RET_TIMEOUT);
        assert_eq!(send_with_retries(QUICK, &AtomicBool::new(false), attempt), Delivery::Sent { attempts: 3 });
        assert_eq!(*count.lock().unwrap(), 3);
    }

    #[test]
    fn retries_stop_at_the_attempt_bound_and_say_what_failed() {
        let (attempt, count) = rmw(u32::MAX, r2r::Error::RCL_RET_TIMEOUT);
        let policy = RetryPolicy { give_up_after: Duration::from_secs(60), ..QUICK };
        match send_with_retries(policy, &AtomicBool::new(false), attempt) {
            Delivery::Lost { error, attempts, .. } => assert_eq!((error.as_str(), attempts), ("RCL_RET_TIMEOUT", 5)),
            sent => panic!("{sent:?}"),
        }
        assert_eq!(*count.lock().unwrap(), 5);
    }

    #[test]
    fn retries_stop_at_the_time_bound() {
        // Each refusal waits as an rmw's blocking time would: the time bound ends it first.
        let mut attempts = 0;
        let policy = RetryPolicy { max_attempts: 1000, ..QUICK };
        let lost = send_with_retries(policy, &AtomicBool::new(false), || {
            attempts += 1;
            std::thread::sleep(Duration::from_millis(30));
            Err(r2r::Error::RCL_RET_TIMEOUT)
        });
        let Delivery::Lost { attempts: made, first_wait, .. } = lost else { panic!("{lost:?}") };
        assert_eq!(made, attempts);
        // 200 ms of 30 ms refusals: the count bound of 1000 was never reached.
        assert!(made < 1000 && first_wait >= Duration::from_millis(30));
    }

    #[test]
    fn other_errors_and_a_stopping_node_are_not_retried() {
        let (attempt, count) = rmw(u32::MAX, r2r::Error::RCL_RET_ACTION_SERVER_INVALID);
        assert!(matches!(
            send_with_retries(QUICK, &AtomicBool::new(false), attempt),
            Delivery::Lost { attempts: 1, .. }
        ));
        assert_eq!(*count.lock().unwrap(), 1);
        let (attempt, count) = rmw(u32::MAX, r2r::Error::RCL_RET_TIMEOUT);
        assert!(matches!(
            send_with_retries(QUICK, &AtomicBool::new(true), attempt),
            Delivery::Lost { attempts: 1, .. }
        ));
        assert_eq!(*count.lock().unwrap(), 1);
    }
}
