//! A per-thread memo of [`dubins_candidate`]: the shortest Dubins word depends only on the
//! offset between the two poses, their headings and the radius (the closed forms see nothing
//! else), so a planner that keeps linking cell centres in a few heading bins solves the same
//! relative problems again and again, within a plan and across plans. A hit costs one hash
//! lookup instead of a dozen trigonometric calls, and returns exactly what a fresh solve would.
//!
//! Memory: a fixed table of [`SETS`] x [`WAYS`] entries ([`MEMO_BYTES`] per thread, allocated at
//! the thread's first call and never grown), freed when the thread ends. It replaces a `HashMap`
//! emptied at 2^18 entries, whose `clear` kept the capacity (about 38 MB per thread, 57 MB while
//! it resized): on a node planning on short-lived pool threads that grew with the goals.

use super::dubins::{dubins_candidate, DubinsCurve, DubinsWord};
use crate::geometry::Pose2;
use std::cell::RefCell;

/// Sets of the table (a power of two).
pub const SETS: usize = 1 << 14;
/// Entries per set: a new answer goes to the first way, the one there moves to the second, the
/// second's is forgotten (the older of the two).
pub const WAYS: usize = 2;
/// Bytes of one entry (key, answer and tag).
pub const ENTRY_BYTES: usize = std::mem::size_of::<Option<(Key, Solved)>>();
/// Bytes of the table of one thread: 32 768 entries of [`ENTRY_BYTES`] (2.5 MiB).
pub const MEMO_BYTES: usize = SETS * WAYS * ENTRY_BYTES;
// The stated bound, checked at compile time.
const _: () = assert!(MEMO_BYTES <= 3 << 20, "the Dubins memo outgrew its stated 3 MiB per thread");

/// `(dx, dy, start yaw, goal yaw, radius)`, all as bit patterns: exact equality, no rounding.
type Key = [u64; 5];

/// The remembered answer: the word and its piece lengths, or none.
type Solved = Option<(DubinsWord, [f64; 3])>;

/// The set of a key among `sets` (a power of two): a multiply-xorshift hash of its words.
fn set_of(key: &[u64], sets: usize) -> usize {
    let mut h = 0u64;
    for &v in key {
        let x = (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h = x ^ (x >> 29);
    }
    (h as usize) & (sets - 1)
}

/// A fixed set-associative table of answers `V` keyed by `N` words (bit patterns), [`WAYS`]
/// entries per set: a new answer goes to the first way, the one there moves on, the last one's
/// is forgotten. Allocated at the first lookup, never grown. The Dubins memo here and the
/// Reeds-Shepp memo ([`super::reeds_shepp`]) are two of these.
pub(crate) struct Memo<const N: usize, V: Copy> {
    sets: usize,
    entries: Vec<Option<([u64; N], V)>>,
}

impl<const N: usize, V: Copy> Memo<N, V> {
    /// An empty table of `sets` (a power of two) sets.
    pub(crate) const fn new(sets: usize) -> Self {
        Self { sets, entries: Vec::new() }
    }

    /// The answer remembered for `key`.
    pub(crate) fn get(&mut self, key: &[u64; N]) -> Option<V> {
        let base = set_of(key, self.sets) * WAYS;
        if self.entries.is_empty() {
            self.entries = vec![None; self.sets * WAYS];
        }
        self.entries[base..base + WAYS].iter().flatten().find(|e| e.0 == *key).map(|e| e.1)
    }

    /// Remembers `value` for `key` (after a [`Memo::get`], which allocates the table).
    pub(crate) fn insert(&mut self, key: [u64; N], value: V) {
        let base = set_of(&key, self.sets) * WAYS;
        self.entries.copy_within(base..base + WAYS - 1, base + 1);
        self.entries[base] = Some((key, value));
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Option<([u64; N], V)>>()
    }
}

thread_local! {
    static MEMO: RefCell<Memo<5, Solved>> = const { RefCell::new(Memo::new(SETS)) };
}

/// [`dubins_candidate`] from `start` to `goal` with `radius`, remembered per thread by the exact
/// offset, headings and radius: equal to a fresh [`dubins_candidate`] bit for bit (the closed
/// forms only ever use `goal - start`, the two headings and the radius), with `start` as the
/// curve's start. `None` as for [`dubins_candidate`].
pub fn dubins_candidate_memo(start: Pose2, goal: Pose2, radius: f64) -> Option<DubinsCurve> {
    let (dx, dy) = (goal.x - start.x, goal.y - start.y);
    let key = [dx.to_bits(), dy.to_bits(), start.yaw.to_bits(), goal.yaw.to_bits(), radius.to_bits()];
    let found = MEMO.with(|m| m.borrow_mut().get(&key));
    let solved = match found {
        Some(v) => v,
        None => {
            // Solved at the origin: the closed forms see only the offset, so the word and lengths
            // are those of any start with this offset.
            let origin = Pose2::new(0.0, 0.0, start.yaw);
            let v = dubins_candidate(origin, Pose2::new(dx, dy, goal.yaw), radius).map(|c| (c.word, c.lengths));
            MEMO.with(|m| m.borrow_mut().insert(key, v));
            v
        }
    };
    solved.map(|(word, lengths)| DubinsCurve { start, radius, word, lengths })
}

/// Bytes the calling thread's memo holds now (0 before its first call, [`MEMO_BYTES`] after).
pub fn memo_bytes() -> usize {
    MEMO.with(|m| m.borrow().bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memo_answers_equal_fresh_solves_anywhere() {
        let mut seed = 5u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..500 {
            let (dx, dy) = ((next() * 40.0 - 20.0).round(), (next() * 40.0 - 20.0).round());
            let (ya, yb) = ((next() * 8.0).floor() * std::f64::consts::FRAC_PI_4, next() * 6.0 - 3.0);
            let r = if next() < 0.5 { 10.0 } else { 3.5 };
            for (x, y) in [(0.5, 0.5), (117.5, 33.5), (4000.5, 9.5)] {
                let a = Pose2::new(x, y, ya);
                let b = Pose2::new(x + dx, y + dy, yb);
                let fresh = dubins_candidate(a, b, r);
                // First call solves, second hits the memo: both equal the fresh solve.
                assert_eq!(dubins_candidate_memo(a, b, r), fresh);
                assert_eq!(dubins_candidate_memo(a, b, r), fresh);
            }
        }
    }

    #[test]
    fn the_memo_stays_at_its_fixed_size_however_many_problems_it_sees() {
        std::thread::spawn(|| {
            assert_eq!(memo_bytes(), 0, "allocated before the first call");
            let r = 3.0;
            // Four times as many distinct problems as the table holds.
            for i in 0..(4 * SETS * WAYS) {
                let b = Pose2::new((i % 1000) as f64, (i / 1000) as f64, 0.25);
                let got = dubins_candidate_memo(Pose2::new(0.0, 0.0, 0.0), b, r);
                assert_eq!(got, dubins_candidate(Pose2::new(0.0, 0.0, 0.0), b, r));
                assert_eq!(memo_bytes(), MEMO_BYTES);
            }
            // Recent problems are still remembered (the newest of each set is kept).
            let last = 4 * SETS * WAYS - 1;
            let key_pose = Pose2::new((last % 1000) as f64, (last / 1000) as f64, 0.25);
            let key = [key_pose.x.to_bits(), key_pose.y.to_bits(), 0f64.to_bits(), 0.25f64.to_bits(), r.to_bits()];
            assert!(MEMO.with(|m| m.borrow_mut().get(&key)).is_some());
        })
        .join()
        .unwrap();
    }
}
