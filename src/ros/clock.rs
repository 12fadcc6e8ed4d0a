//! The node's ROS time: the system clock, or with `use_sim_time` the last time on `/clock`.
//!
//! Why the node keeps simulated time itself: r2r 0.9.7 drives a node's ROS clock from `/clock`
//! only when it was compiled with the cfg `r2r__rosgraph_msgs__msg__Clock`, and its build script
//! prints that cfg only while it generates its bindings, not when it reuses the bindings an
//! earlier build cached for the same environment. A workspace built again after its environment
//! changed and changed back (a shell with the workspace's `install/setup.bash` sourced, then one
//! without: ROS users do this every day) got a node that silently ran on the wall clock: with a
//! simulator or a bag, every TF pose was "1.8e9 s old" and every goal TF_ERROR. Reading `/clock`
//! here makes simulated time a property of the node, not of how its dependency was cached
//! (`tests/ros/test_sim_time.py`).
//!
//! Semantics follow rclcpp's time source: with `use_sim_time`, time is zero until the first
//! `/clock` message, then the last one received (jumps back included: TF notes them, see
//! `frames`). `use_sim_time` is read when the node starts; `live_params` refuses a later change
//! with that reason.

use r2r::builtin_interfaces::msg::Time;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

/// The node's ROS time. Cheap to clone; clones share the time.
#[derive(Clone)]
pub enum NodeClock {
    /// r2r's ROS clock (the system time).
    System(Arc<Mutex<r2r::Clock>>),
    /// Simulated time: the last `/clock` message, in nanoseconds (0 before the first).
    Simulated(Arc<AtomicI64>),
}

impl NodeClock {
    /// The node's clock: simulated when `use_sim_time` is set, else r2r's ROS clock of `node`.
    pub fn new(node: &r2r::Node, use_sim_time: bool) -> Self {
        match use_sim_time {
            true => Self::Simulated(Arc::new(AtomicI64::new(0))),
            false => Self::System(node.get_ros_clock()),
        }
    }

    /// Whether time comes from `/clock`.
    pub fn is_simulated(&self) -> bool {
        matches!(self, Self::Simulated(_))
    }

    /// Now, as a message stamp; zero when the system clock cannot be read.
    pub fn now(&self) -> Time {
        match self {
            Self::System(clock) => {
                let now = clock.lock().ok().and_then(|mut c| c.get_now().ok());
                now.map(|d| r2r::Clock::to_builtin_time(&d)).unwrap_or_default()
            }
            Self::Simulated(nanos) => time_of(nanos.load(Ordering::Acquire)),
        }
    }

    /// Takes a `/clock` message's time (ignored by a system clock). A negative time, or one whose
    /// nanoseconds are not below 10^9, is not a time and is ignored; returns whether it was taken.
    pub fn on_clock(&self, t: &Time) -> bool {
        let Self::Simulated(nanos) = self else { return false };
        if t.sec < 0 || t.nanosec >= 1_000_000_000 {
            return false;
        }
        nanos.store(super::frames::stamp_of(t).as_nanos(), Ordering::Release);
        true
    }
}

/// A time of `nanos` (never negative: [`NodeClock::on_clock`] takes none) as a message stamp.
fn time_of(nanos: i64) -> Time {
    r2r::Clock::to_builtin_time(&std::time::Duration::from_nanos(nanos.max(0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simulated() -> NodeClock {
        NodeClock::Simulated(Arc::new(AtomicI64::new(0)))
    }

    #[test]
    fn simulated_time_is_zero_until_the_first_clock_then_the_last_even_back() {
        let clock = simulated();
        assert_eq!(clock.now(), Time { sec: 0, nanosec: 0 });
        assert!(clock.on_clock(&Time { sec: 1000, nanosec: 250_000_000 }));
        assert_eq!(clock.clone().now(), Time { sec: 1000, nanosec: 250_000_000 }, "clones share the time");
        assert!(clock.on_clock(&Time { sec: 970, nanosec: 5 }));
        assert_eq!(clock.now(), Time { sec: 970, nanosec: 5 }, "a looping bag jumps back");
    }

    /// The point of this module holds only while nothing else reads r2r's ROS clock: a new
    /// reader would be on the wall clock in the builds described above, and no test built the
    /// usual way would notice. (`lifecycle` stamps its transition events with a system clock of
    /// its own, as wall time.)
    #[test]
    fn nothing_else_in_the_node_reads_r2rs_ros_clock() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ros");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".rs") || name == "clock.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(!text.contains("get_ros_clock"), "{name} reads r2r's ROS clock: use NodeClock");
            if name != "lifecycle.rs" {
                assert!(!text.contains("get_now("), "{name} reads an r2r clock: use NodeClock");
            }
        }
    }

    #[test]
    fn a_clock_message_that_is_not_a_time_is_ignored() {
        let clock = simulated();
        clock.on_clock(&Time { sec: 7, nanosec: 1 });
        assert!(!clock.on_clock(&Time { sec: -1, nanosec: 0 }));
        assert!(!clock.on_clock(&Time { sec: 8, nanosec: 1_000_000_000 }));
        assert_eq!(clock.now(), Time { sec: 7, nanosec: 1 });
    }
}
