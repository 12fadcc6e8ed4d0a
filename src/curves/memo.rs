//! A per-thread memo of [`dubins_candidate`]: the shortest Dubins word depends only on the
//! offset between the two poses, their headings and the radius (the closed forms see nothing
//! else), so a planner that keeps linking cell centres in a few heading bins solves the same
//! relative problems again and again, within a plan and across plans. A hit costs one hash
//! lookup instead of a dozen trigonometric calls, and returns exactly what a fresh solve would.

use super::dubins::{dubins_candidate, DubinsCurve, DubinsWord};
use crate::geometry::Pose2;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Entries kept per thread before the memo is emptied (about 60 bytes each).
const MAX_ENTRIES: usize = 1 << 18;

/// `(dx, dy, start yaw, goal yaw, radius)`, all as bit patterns: exact equality, no rounding.
type Key = [u64; 5];

/// A multiply-xorshift hasher for the fixed-size keys (std's SipHash would cost as much as a
/// part of the solve it saves).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut v = [0u8; 8];
            v[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(v));
        }
    }

    fn write_u64(&mut self, v: u64) {
        let x = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
}

/// The remembered answer: the word and its piece lengths, or none.
type Solved = Option<(DubinsWord, [f64; 3])>;

type Memo = HashMap<Key, Solved, BuildHasherDefault<KeyHasher>>;

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(HashMap::default());
}

/// [`dubins_candidate`] from `start` to `goal` with `radius`, remembered per thread by the exact
/// offset, headings and radius: equal to a fresh [`dubins_candidate`] bit for bit (the closed
/// forms only ever use `goal - start`, the two headings and the radius), with `start` as the
/// curve's start. `None` as for [`dubins_candidate`].
pub fn dubins_candidate_memo(start: Pose2, goal: Pose2, radius: f64) -> Option<DubinsCurve> {
    let (dx, dy) = (goal.x - start.x, goal.y - start.y);
    let key = [dx.to_bits(), dy.to_bits(), start.yaw.to_bits(), goal.yaw.to_bits(), radius.to_bits()];
    let found = MEMO.with(|m| m.borrow().get(&key).copied());
    let solved = match found {
        Some(v) => v,
        None => {
            // Solved at the origin: the closed forms see only the offset, so the word and lengths
            // are those of any start with this offset.
            let origin = Pose2::new(0.0, 0.0, start.yaw);
            let v = dubins_candidate(origin, Pose2::new(dx, dy, goal.yaw), radius).map(|c| (c.word, c.lengths));
            MEMO.with(|m| {
                let mut m = m.borrow_mut();
                if m.len() >= MAX_ENTRIES {
                    m.clear();
                }
                m.insert(key, v);
            });
            v
        }
    };
    solved.map(|(word, lengths)| DubinsCurve { start, radius, word, lengths })
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
}
