//! Pacing of rcl's executor by every consumer of r2r's channels.
//!
//! r2r's `spin_once` takes at most one request per service (and one message per subscription)
//! and pushes it into a channel 10 deep; a full channel drops it (`could not send service
//! request`), and a client whose goal request is dropped waits for its acceptance forever. The
//! node therefore spins only when every task that reads those channels has found all of its own
//! empty since the last spin: the node's loop and each action server's task. Each consumer takes
//! its acknowledgement branch last in a biased `select!`, so acknowledging means its streams were
//! polled empty. A backlog then waits in the middleware's queues, whose depth the QoS sets.
//!
//! A consumer that does not acknowledge within [`ACK_TIMEOUT`] (blocked in a response that waits
//! for a client's reader, see `action_server::respond`) does not stop the executor: the spin goes
//! on, and its channels gain at most one entry per [`ACK_TIMEOUT`] until it catches up, so it may
//! stall for 10 s before one is dropped. Acknowledgements carry the spin they answer, so a late
//! one never counts for another consumer.
//!
//! [`GateStop::stop`] ends the executor's wait at once, so the node can join its executor thread
//! (and drop the rcl node on it) before the process exits: a thread still inside rcl while the
//! middleware's statics are destroyed aborts the process ("The futex facility returned an
//! unexpected error code", seen once in a clean-checkout run of the tests).

use std::sync::mpsc as std_mpsc;
use std::time::Duration;
use tokio::sync::watch;

/// How long a spin waits for a consumer's acknowledgement before it goes on without it.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(1);

/// The executor's side: announces each spin and waits for the consumers.
pub struct SpinGate {
    spins: watch::Sender<u64>,
    acks: std_mpsc::Receiver<Signal>,
    ack_tx: std_mpsc::Sender<Signal>,
    consumers: usize,
}

/// What the executor's side hears: a consumer's acknowledgement of a spin, or the node ending.
enum Signal {
    Ack(u64),
    Stop,
}

/// Ends the executor's loop: [`SpinGate::after_spin`] returns false from the next signal on.
pub struct GateStop(std_mpsc::Sender<Signal>);

impl GateStop {
    /// Tells the executor to stop after its current spin (within one `spin_once` timeout).
    pub fn stop(&self) {
        // The executor already gone: nothing to stop.
        let _ = self.0.send(Signal::Stop);
    }
}

/// A consumer's side: [`SpinAck::spun`] resolves after each spin, with the [`Spun`] to
/// acknowledge it by.
pub struct SpinAck {
    spins: watch::Receiver<u64>,
    ack: std_mpsc::Sender<Signal>,
}

/// One spin seen by a consumer: [`Spun::ack`] tells the executor its channels are empty.
pub struct Spun {
    spin: u64,
    ack: std_mpsc::Sender<Signal>,
}

impl SpinGate {
    /// A gate with no consumers yet.
    pub fn new() -> Self {
        let (spins, _) = watch::channel(0);
        let (ack_tx, acks) = std_mpsc::channel();
        Self { spins, acks, ack_tx, consumers: 0 }
    }

    /// A new consumer, which must acknowledge every spin from now on.
    pub fn consumer(&mut self) -> SpinAck {
        self.consumers += 1;
        SpinAck { spins: self.spins.subscribe(), ack: self.ack_tx.clone() }
    }

    /// The handle that stops the executor (see [`GateStop`]).
    pub fn stopper(&self) -> GateStop {
        GateStop(self.ack_tx.clone())
    }

    /// Announces a spin and blocks until every consumer has acknowledged it, waiting at most
    /// [`ACK_TIMEOUT`] for each acknowledgement. An acknowledgement counts for the spin its
    /// consumer saw: a late one, for a spin that went on without it, does not stand in for
    /// another consumer's now. Returns false when every consumer is gone or [`GateStop::stop`]
    /// was called (the node is ending).
    pub fn after_spin(&self) -> bool {
        let mut spin = 0;
        self.spins.send_modify(|n| {
            *n += 1;
            spin = *n;
        });
        if self.spins.receiver_count() == 0 {
            return false;
        }
        let mut acknowledged = 0;
        while acknowledged < self.consumers {
            match self.acks.recv_timeout(ACK_TIMEOUT) {
                Ok(Signal::Stop) => return false,
                Ok(Signal::Ack(seen)) if seen == spin => acknowledged += 1,
                Ok(Signal::Ack(_)) => {}
                Err(std_mpsc::RecvTimeoutError::Timeout) => return true,
                Err(std_mpsc::RecvTimeoutError::Disconnected) => return false,
            }
        }
        true
    }
}

impl Default for SpinGate {
    fn default() -> Self {
        Self::new()
    }
}

impl SpinAck {
    /// Resolves when a spin has happened since the last call (put it last in a biased
    /// `select!`, so that it resolves only when the consumer's streams are empty); `None` when
    /// the executor is gone.
    pub async fn spun(&mut self) -> Option<Spun> {
        self.spins.changed().await.ok()?;
        let spin = *self.spins.borrow_and_update();
        Some(Spun { spin, ack: self.ack.clone() })
    }
}

impl Spun {
    /// Tells the executor this consumer's channels are empty.
    pub fn ack(self) {
        // The executor gone: nothing to tell.
        let _ = self.ack.send(Signal::Ack(self.spin));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// One spin announced on a blocking thread, as the executor's thread does; the gate back.
    async fn spin(gate: SpinGate) -> SpinGate {
        tokio::task::spawn_blocking(move || {
            assert!(gate.after_spin());
            gate
        })
        .await
        .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_spin_waits_for_every_consumer_and_not_forever() {
        let mut gate = SpinGate::new();
        let mut a = gate.consumer();
        let b = gate.consumer();
        let acked = Arc::new(AtomicUsize::new(0));
        let counted = acked.clone();
        tokio::spawn(async move {
            while let Some(spun) = a.spun().await {
                counted.fetch_add(1, Ordering::SeqCst);
                spun.ack();
            }
        });
        // b never acknowledges this spin: it goes on after the timeout all the same.
        let gate = spin(gate).await;
        assert_eq!(acked.load(Ordering::SeqCst), 1);
        // b acknowledges the next one as it should, once the spin is announced.
        let mut b = b;
        // (A late acknowledgement of the first spin does not count for the second.)
        gate.ack_tx.send(Signal::Ack(1)).unwrap();
        let b_task = tokio::spawn(async move {
            let spun = b.spun().await.expect("a spin");
            spun.ack();
            b
        });
        let gate = spin(gate).await;
        assert_eq!(acked.load(Ordering::SeqCst), 2);
        drop(b_task.await.unwrap());
        drop(gate);
    }

    #[test]
    fn a_stop_ends_the_wait_at_once_even_with_consumers_silent() {
        let mut gate = SpinGate::new();
        let _silent = gate.consumer();
        let stop = gate.stopper();
        let waiting = std::thread::spawn(move || gate.after_spin());
        stop.stop();
        // Without the stop, a silent consumer's timeout would let the spin go on (true).
        assert!(!waiting.join().unwrap());
    }

    #[test]
    fn with_every_consumer_gone_the_spin_says_so() {
        let mut gate = SpinGate::new();
        drop(gate.consumer());
        assert!(!gate.after_spin());
    }
}
