//! Service responses, sent off the node's async runtime and resent while the client's response
//! reader has not matched.
//!
//! Fast DDS blocks a service response until the client's response reader is matched, for up to
//! the writer's blocking time (20 ms for the node's own services under its profile,
//! `dds_profile`), then refuses it with `RCL_RET_TIMEOUT` (ros2/rmw_fastrtps#467): a client that
//! sends the moment it discovers the node may not have been discovered back yet. Sent from the runtime's one worker thread, that
//! wait held every action server and the node's loop. Here every response goes to a few
//! responder threads ([`RESPONDER_THREADS`]); a refused one is sent again ([`RETRY`]: bounded in
//! time and in attempts) and logged once, when it finally arrives late or is given up. Each
//! attempt is kept short and the pauses between them long, because r2r holds the service's lock
//! while the rmw waits and the executor takes every service's lock on every spin: the node's
//! every input waits for an attempt, and none for a pause.
//!
//! A response still being retried when the node stops is abandoned at its next attempt.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Threads sending responses: one client whose reader never matches holds one of them for
/// [`RetryPolicy::give_up_after`] at most, the others go on answering.
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

/// Sends with `attempt` until it succeeds, fails with anything but a timeout, `stopping` is
/// raised, or `policy` says to give up.
pub fn send_with_retries(
    policy: RetryPolicy,
    stopping: &AtomicBool,
    mut attempt: impl FnMut() -> r2r::Result<()>,
) -> Delivery {
    let started = Instant::now();
    let mut first_wait = None;
    let mut attempts = 0;
    loop {
        let tried = Instant::now();
        attempts += 1;
        let error = match attempt() {
            Ok(()) => return Delivery::Sent { attempts },
            Err(e) => e,
        };
        let first_wait = *first_wait.get_or_insert(tried.elapsed());
        let retry = matches!(error, r2r::Error::RCL_RET_TIMEOUT)
            && attempts < policy.max_attempts
            && started.elapsed() + policy.pause < policy.give_up_after
            && !stopping.load(Ordering::Relaxed);
        if !retry {
            return Delivery::Lost { error: error.to_string(), attempts, first_wait, elapsed: started.elapsed() };
        }
        std::thread::sleep(policy.pause);
    }
}

/// One response to send: `what` names it in the log ("a send_goal request of
/// compute_path_to_pose"); `on_lost` runs when it is given up.
struct Job {
    what: String,
    attempt: Box<dyn FnMut() -> r2r::Result<()> + Send>,
    on_lost: Option<Box<dyn FnOnce() + Send>>,
}

/// Sends service responses on the responder threads (clone it freely).
#[derive(Clone)]
pub struct Responder {
    jobs: std_mpsc::Sender<Job>,
}

/// The responder threads, stopped and joined by [`ResponderThreads::stop`].
pub struct ResponderThreads {
    stopping: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Responder {
    /// Starts the responder threads; they log on `logger`.
    pub fn start(logger: &str) -> std::io::Result<(Responder, ResponderThreads)> {
        let (jobs, queue) = std_mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let stopping = Arc::new(AtomicBool::new(false));
        let threads = (0..RESPONDER_THREADS)
            .map(|n| {
                let (queue, stopping, logger) = (queue.clone(), stopping.clone(), logger.to_string());
                std::thread::Builder::new()
                    .name(format!("responder-{n}"))
                    .spawn(move || serve(&queue, &stopping, &logger))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok((Responder { jobs }, ResponderThreads { stopping, threads }))
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
        let attempt = Box::new(move || request.clone().respond(response.clone()));
        // The threads gone (the node stopping): nobody is left to answer.
        let _ = self.jobs.send(Job { what: what.into(), attempt, on_lost: Some(Box::new(on_lost)) });
    }
}

fn serve(queue: &Mutex<std_mpsc::Receiver<Job>>, stopping: &AtomicBool, logger: &str) {
    while !stopping.load(Ordering::Relaxed) {
        // Polled, so a raised `stopping` ends the thread though senders live on (in goal
        // handles held by abandoned plans).
        let job = match queue.lock() {
            Ok(queue) => queue.recv_timeout(Duration::from_millis(100)),
            Err(_) => return,
        };
        let mut job = match job {
            Ok(job) => job,
            Err(std_mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std_mpsc::RecvTimeoutError::Disconnected) => return,
        };
        let started = Instant::now();
        match send_with_retries(RETRY, stopping, &mut job.attempt) {
            Delivery::Sent { attempts: 1 } => {}
            Delivery::Sent { attempts } => r2r::log_warn!(
                logger,
                "answered {} at attempt {attempts}, after {:.1} s: the client's response reader matched late",
                job.what,
                started.elapsed().as_secs_f64()
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
    /// Abandons responses still being retried and joins the threads (each within one attempt,
    /// the rmw's blocking time at most). Call it while the node still exists.
    pub fn stop(self) {
        self.stopping.store(true, Ordering::Relaxed);
        for thread in self.threads {
            // A panicked responder has nothing left to send.
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: RetryPolicy =
        RetryPolicy { give_up_after: Duration::from_millis(200), pause: Duration::from_millis(1), max_attempts: 5 };

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
