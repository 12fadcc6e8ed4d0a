//! A transform buffer in the manner of tf2's `BufferCore`, without ROS: named frames joined into
//! trees by rigid transforms (nalgebra [`Isometry3`]), static or time-stamped, and lookups that
//! compose them through the frames' common ancestor at a given time.
//!
//! Conventions (those of tf2):
//! - The edge `parent -> child` holds the transform that maps points expressed in `child` into
//!   `parent` (the `transform` of a `geometry_msgs/TransformStamped` whose `header.frame_id` is
//!   the parent and `child_frame_id` the child). Units are the caller's (metres in ROS).
//! - [`TransformBuffer::lookup`]`(target, source, ..)` maps points expressed in `source` into
//!   `target` (tf2 `lookupTransform(target_frame, source_frame, time)`).
//! - Times are [`Stamp`]s, nanoseconds of ROS time; [`Stamp::LATEST`] (zero) asks for the latest
//!   time at which every edge of the chain is known.
//! - Frame names lose one leading `/` (tf2 does the same); empty names are refused.
//!
//! Differences from tf2, on purpose: a frame keeps the parent it was first given (tf2 lets the
//! parent change over time; here a second parent is an error, so the frames form a forest and a
//! lookup is a walk up two chains), a duplicate stamp replaces the held value, and the memory held
//! is bounded whatever publishers do ([`MAX_FRAMES`], [`MAX_ENTRIES_PER_EDGE`], [`MAX_ENTRIES`],
//! [`MAX_FRAME_NAME_BYTES`]).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::time::Duration;

use nalgebra::{Isometry3, Translation3, Vector3};
use thiserror::Error;

use crate::geometry::{unit_quaternion, Number};

const NANOS_PER_SEC: i64 = 1_000_000_000;

/// A point in ROS time, in nanoseconds (`sec * 1e9 + nanosec` of a `builtin_interfaces/Time`).
///
/// [`Stamp::LATEST`] (zero, as an unset ROS stamp) is not a time but a request for the latest
/// common time of a lookup's chain, as in tf2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Stamp(i64);

impl Stamp {
    /// "The latest time at which every edge of the chain is known" in a lookup (tf2's time 0).
    pub const LATEST: Stamp = Stamp(0);

    /// The stamp `nanos` nanoseconds after the clock's epoch (negative: before it).
    pub const fn from_nanos(nanos: i64) -> Stamp {
        Stamp(nanos)
    }

    /// The stamp of a ROS `builtin_interfaces/Time` (`sec`, `nanosec`). A `nanosec` of a second
    /// or more carries into the seconds (`i64` holds every `(i32, u32)` pair exactly).
    pub const fn from_sec_nanosec(sec: i32, nanosec: u32) -> Stamp {
        Stamp(sec as i64 * NANOS_PER_SEC + nanosec as i64)
    }

    /// Nanoseconds since the clock's epoch.
    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    /// Seconds since the clock's epoch (rounded to the nearest `f64`: about 0.2 us for wall-clock
    /// times of today).
    pub fn as_secs_f64(self) -> f64 {
        // Whole seconds and the fraction apart, so the fraction is not lost in one big product.
        self.0.div_euclid(NANOS_PER_SEC) as f64 + self.0.rem_euclid(NANOS_PER_SEC) as f64 * 1e-9
    }
}

impl fmt::Display for Stamp {
    /// Seconds with all nine decimals (`12.500000000`), exact.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let per_sec = NANOS_PER_SEC as u64;
        write!(f, "{sign}{}.{:09}", abs / per_sec, abs % per_sec)
    }
}

/// How long a dynamic edge keeps entries behind its newest one unless told otherwise (tf2's
/// default cache time).
pub const DEFAULT_CACHE_TIME: Duration = Duration::from_secs(10);

/// Most entries one dynamic edge keeps, whatever its cache time: 10 000 entries of
/// [`ENTRY_BYTES`] = 640 kB held (1 MiB allocated at most: the queue grows by doubling), enough
/// for a 1 kHz publisher over the default 10 s. Past it the oldest entries are dropped.
pub const MAX_ENTRIES_PER_EDGE: usize = 10_000;

/// Most entries the whole buffer keeps (a static edge counts one): 500 000 entries of
/// [`ENTRY_BYTES`] = 32 MB held (a robot with 50 dynamic edges at 100 Hz over 10 s holds 50 000).
/// At the limit a dynamic edge that already exists keeps taking newer values by dropping its own
/// oldest, and a new edge is refused with [`TransformError::Full`].
///
/// Worst case of memory, whatever publishers send: held entries take at most 32 MB; their queues
/// at most `4 * entries + 64` slots per edge (a queue shrinks when it falls below a quarter of its
/// capacity), so at most about 170 MB allocated; frames and their names add at most about 7 MB
/// ([`MAX_FRAMES`] records of two names up to [`MAX_FRAME_NAME_BYTES`] each).
pub const MAX_ENTRIES: usize = 500_000;

/// Most frames the buffer knows. An edge that would add a frame past it is refused with
/// [`TransformError::Full`]; edges between known frames keep working.
pub const MAX_FRAMES: usize = 10_000;

/// Longest frame name, in bytes after normalisation; longer names are refused with
/// [`TransformError::Invalid`].
pub const MAX_FRAME_NAME_BYTES: usize = 256;

/// Bytes of one stored entry (a stamp and an [`Isometry3<f64>`]), the unit of the limits above.
pub const ENTRY_BYTES: usize = 64;

/// Why a transform was refused or a lookup failed. Frames are quoted, times in seconds.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TransformError {
    /// The frame was never part of a transform given to the buffer.
    #[error("frame \"{0}\" does not exist in the transform buffer")]
    UnknownFrame(String),
    /// Both frames exist but belong to different trees.
    #[error(
        "frames \"{target_frame}\" and \"{source_frame}\" are not connected: \"{target_frame}\" is in the tree \
         rooted at \"{target_root}\", \"{source_frame}\" in the tree rooted at \"{source_root}\""
    )]
    NotConnected {
        /// The lookup's target frame (not named `target`/`source`: thiserror takes a field named
        /// `source` for the underlying error).
        target_frame: String,
        /// The lookup's source frame.
        source_frame: String,
        /// Root of the tree holding `target`.
        target_root: String,
        /// Root of the tree holding `source`.
        source_root: String,
    },
    /// The lookup time lies outside the data of an edge of the chain by more than the tolerance.
    #[error(
        "lookup would require extrapolation into the {}: edge \"{parent}\" -> \"{child}\" has data from \
         {oldest} s to {newest} s, requested time {requested} s",
        past_or_future(.requested, .oldest)
    )]
    Extrapolation {
        /// Parent frame of the edge.
        parent: String,
        /// Child frame of the edge.
        child: String,
        /// The time the edge was needed at.
        requested: Stamp,
        /// Oldest stamp the edge holds.
        oldest: Stamp,
        /// Newest stamp the edge holds.
        newest: Stamp,
    },
    /// The child already has another parent (a frame has one parent in a tf tree).
    #[error(
        "frame \"{child}\" already has parent \"{parent}\"; refusing the transform from parent \
         \"{new_parent}\" (a frame has one parent)"
    )]
    SecondParent {
        /// The frame given a second parent.
        child: String,
        /// Its parent.
        parent: String,
        /// The refused parent.
        new_parent: String,
    },
    /// The edge would close a loop: the parent is the child or one of its descendants.
    #[error(
        "transform \"{parent}\" -> \"{child}\" would create a loop: \"{parent}\" is \"{child}\" or one of \
         its descendants"
    )]
    Loop {
        /// Parent frame of the refused edge.
        parent: String,
        /// Child frame of the refused edge.
        child: String,
    },
    /// A dynamic value older than what its edge keeps (tf2's `TF_OLD_DATA`): older than the
    /// cache time behind the edge's newest entry, or older than everything a full edge holds.
    #[error(
        "transform \"{parent}\" -> \"{child}\" at {stamp} s is older than the data kept for that edge \
         ({oldest} s to {newest} s); ignored"
    )]
    OldData {
        /// Parent frame of the edge.
        parent: String,
        /// Child frame of the edge.
        child: String,
        /// Stamp of the refused value.
        stamp: Stamp,
        /// Oldest stamp the edge holds.
        oldest: Stamp,
        /// Newest stamp the edge holds.
        newest: Stamp,
    },
    /// Malformed input: an empty or too long frame name, a non-finite or non-unit transform.
    #[error("invalid transform input: {0}")]
    Invalid(String),
    /// A memory limit of the buffer ([`MAX_FRAMES`], [`MAX_ENTRIES`]) would be exceeded.
    #[error("transform buffer full: {0}")]
    Full(String),
}

/// The word of the extrapolation message: the requested time is before or after the data.
fn past_or_future(requested: &Stamp, oldest: &Stamp) -> &'static str {
    if requested < oldest {
        "past"
    } else {
        "future"
    }
}

/// One value of a dynamic edge.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    stamp: Stamp,
    value: Isometry3<f64>,
}

/// Why a dynamic value was not stored: it is older than what the edge keeps.
struct Stale {
    oldest: Stamp,
    newest: Stamp,
}

/// The time-ordered values of a dynamic edge (never empty, stamps strictly increasing).
#[derive(Debug, Clone, PartialEq)]
struct Cache {
    entries: VecDeque<Entry>,
}

impl Cache {
    fn new(entry: Entry) -> Cache {
        Cache { entries: VecDeque::from([entry]) }
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn oldest(&self) -> Stamp {
        self.entries.front().map_or(Stamp::LATEST, |e| e.stamp)
    }

    fn newest(&self) -> Stamp {
        self.entries.back().map_or(Stamp::LATEST, |e| e.stamp)
    }

    /// Stores `entry` in stamp order (a duplicate stamp replaces the value), drops what falls more
    /// than `cache_ns` behind the newest entry, then the oldest entries past `room`. Refuses, with
    /// the cache unchanged, a value that would be dropped at once.
    fn insert(&mut self, entry: Entry, cache_ns: i64, room: usize) -> Result<(), Stale> {
        let stale = Stale { oldest: self.oldest(), newest: self.newest() };
        if entry.stamp.0 < self.newest().0.saturating_sub(cache_ns) {
            return Err(stale);
        }
        match self.entries.binary_search_by_key(&entry.stamp, |e| e.stamp) {
            Ok(i) => self.entries[i] = entry,
            // Older than everything and no room: it would be the first one dropped.
            Err(0) if self.len() >= room => return Err(stale),
            Err(i) => {
                self.entries.insert(i, entry);
                let keep_from = self.newest().0.saturating_sub(cache_ns);
                while self.entries.front().is_some_and(|e| e.stamp.0 < keep_from) {
                    self.entries.pop_front();
                }
                while self.entries.len() > room {
                    self.entries.pop_front();
                }
                self.bound_capacity();
            }
        }
        Ok(())
    }

    /// Returns memory when trimming left the queue under a quarter full, so the allocation stays
    /// within `4 * len + 64` slots (the figure of [`MAX_ENTRIES`]). Halving the slack each time
    /// keeps the cost amortised constant.
    fn bound_capacity(&mut self) {
        let len = self.entries.len();
        if self.entries.capacity() > 4 * len + 64 {
            self.entries.shrink_to(2 * len + 16);
        }
    }

    /// The value at `at`: interpolated between the bracketing entries, or the nearest end when
    /// `at` lies outside the data by at most `tolerance`; else `Err` with the data interval.
    fn sample(&self, at: Stamp, tolerance: Duration) -> Result<Isometry3<f64>, Stale> {
        let (oldest, newest) = (self.oldest(), self.newest());
        // In 128 bits: neither the gap between two i64 stamps nor a Duration overflows there.
        let outside = |gap: i128| gap.unsigned_abs() > tolerance.as_nanos();
        if at < oldest || at > newest {
            let (gap, end) = if at < oldest {
                (i128::from(oldest.0) - i128::from(at.0), self.entries.front())
            } else {
                (i128::from(at.0) - i128::from(newest.0), self.entries.back())
            };
            return match end {
                Some(e) if !outside(gap) => Ok(e.value),
                _ => Err(Stale { oldest, newest }),
            };
        }
        let i = self.entries.partition_point(|e| e.stamp < at);
        let after = &self.entries[i];
        if after.stamp == at || i == 0 {
            return Ok(after.value);
        }
        let before = &self.entries[i - 1];
        let span = (after.stamp.0 - before.stamp.0) as f64;
        let ratio = (at.0 - before.stamp.0) as f64 / span;
        Ok(interpolate(&before.value, &after.value, ratio))
    }
}

/// Linear interpolation of the translation and spherical (slerp, shortest arc) of the rotation,
/// `ratio` 0 giving `a` and 1 giving `b`.
fn interpolate(a: &Isometry3<f64>, b: &Isometry3<f64>, ratio: f64) -> Isometry3<f64> {
    let translation = a.translation.vector.lerp(&b.translation.vector, ratio);
    // try_slerp gives up only when the two rotations agree to ~1e-8 rad, where `a` is as good.
    let rotation = a.rotation.try_slerp(&b.rotation, ratio, f64::EPSILON).unwrap_or(a.rotation);
    Isometry3::from_parts(Translation3::from(translation), rotation)
}

/// The transform of one edge: one value valid at all times, or values over time.
#[derive(Debug, Clone, PartialEq)]
enum Edge {
    Static(Isometry3<f64>),
    Dynamic(Cache),
}

impl Edge {
    /// Entries held, for [`MAX_ENTRIES`] (a static edge counts one).
    fn len(&self) -> usize {
        match self {
            Edge::Static(_) => 1,
            Edge::Dynamic(cache) => cache.len(),
        }
    }
}

/// A frame and the edge to its parent (none for a root).
#[derive(Debug, Clone, PartialEq)]
struct Frame {
    name: String,
    parent: Option<(usize, Edge)>,
}

/// The buffer's memory limits; the public constants outside tests.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Limits {
    frames: usize,
    entries: usize,
    per_edge: usize,
}

impl Limits {
    const DEFAULT: Limits = Limits { frames: MAX_FRAMES, entries: MAX_ENTRIES, per_edge: MAX_ENTRIES_PER_EDGE };
}

/// The frames below the common ancestor on each side of a lookup, each standing for its edge to
/// its parent, listed from the leaf up.
struct Path {
    from_target: Vec<usize>,
    from_source: Vec<usize>,
}

/// Named frames joined into trees by static and time-stamped rigid transforms (see the module
/// documentation for the conventions and limits).
#[derive(Debug, Clone, PartialEq)]
pub struct TransformBuffer {
    /// How far behind its newest entry a dynamic edge keeps entries, in nanoseconds.
    cache_ns: i64,
    limits: Limits,
    index: HashMap<String, usize>,
    frames: Vec<Frame>,
    /// Entries held over all edges.
    entries: usize,
}

impl Default for TransformBuffer {
    /// An empty buffer with the [`DEFAULT_CACHE_TIME`].
    fn default() -> Self {
        TransformBuffer::new(DEFAULT_CACHE_TIME)
    }
}

impl TransformBuffer {
    /// An empty buffer whose dynamic edges keep entries up to `cache_time` behind their newest
    /// one (durations past `i64::MAX` nanoseconds, about 292 years, mean "keep everything", still
    /// within the entry limits).
    pub fn new(cache_time: Duration) -> TransformBuffer {
        TransformBuffer::with_limits(cache_time, Limits::DEFAULT)
    }

    fn with_limits(cache_time: Duration, limits: Limits) -> TransformBuffer {
        TransformBuffer {
            cache_ns: nanos_of(cache_time),
            limits,
            index: HashMap::new(),
            frames: Vec::new(),
            entries: 0,
        }
    }

    /// How long dynamic edges keep entries behind their newest one.
    pub fn cache_time(&self) -> Duration {
        Duration::from_nanos(self.cache_ns.unsigned_abs())
    }

    /// Number of frames known (at most [`MAX_FRAMES`]).
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// Number of transforms held over all edges, a static edge counting one (at most
    /// [`MAX_ENTRIES`]).
    pub fn len(&self) -> usize {
        self.entries
    }

    /// True when no transform is held.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// True when `frame` (normalised: one leading `/` dropped) is known.
    pub fn has_frame(&self, frame: &str) -> bool {
        normalise(frame).is_ok_and(|name| self.index.contains_key(name))
    }

    /// The parent of `frame`, `None` for the root of a tree.
    ///
    /// Errors: [`TransformError::Invalid`] for an empty name, [`TransformError::UnknownFrame`].
    pub fn parent(&self, frame: &str) -> Result<Option<&str>, TransformError> {
        let id = self.frame_id(frame)?;
        Ok(self.frames[id].parent.as_ref().map(|(p, _)| self.frames[*p].name.as_str()))
    }

    /// Forgets every frame and transform.
    pub fn clear(&mut self) {
        self.index.clear();
        self.frames.clear();
        self.entries = 0;
    }

    /// Forgets every dynamic transform and keeps the static ones (what tf2 does when ROS time
    /// jumps back: a static transform holds at all times, and its latched publisher will not send
    /// it again). Frames left with no edge are forgotten too.
    pub fn clear_dynamic(&mut self) {
        let statics: Vec<(String, String, Isometry3<f64>)> = self
            .frames
            .iter()
            .filter_map(|f| match &f.parent {
                Some((p, Edge::Static(value))) => Some((self.frames[*p].name.clone(), f.name.clone(), *value)),
                _ => None,
            })
            .collect();
        self.clear();
        for (parent, child, value) in statics {
            // Re-adding edges that were valid together (same names, values and tree): cannot fail.
            let _ = self.set_transform(&parent, &child, Stamp::from_nanos(0), value, true);
        }
    }

    /// Stores the transform of the edge `parent -> child` (mapping points of `child` into
    /// `parent`) at `stamp`, or for all times when `is_static`.
    ///
    /// A dynamic value joins the edge's time-ordered cache (out-of-order arrivals are sorted in; a
    /// duplicate stamp replaces the value) and entries more than the cache time behind the
    /// edge's newest one are dropped. A call of the other kind than the edge holds replaces the
    /// edge's whole content (the newer call wins, as in tf2).
    ///
    /// Errors, with the buffer unchanged: [`TransformError::Invalid`] (an empty or too long frame
    /// name, a non-finite translation, a rotation that is not finite or whose quaternion norm
    /// differs from 1 by more than 1e-3; within that it is renormalised),
    /// [`TransformError::Loop`] (`parent` is `child` or a descendant of it),
    /// [`TransformError::SecondParent`], [`TransformError::OldData`] and
    /// [`TransformError::Full`] (see [`MAX_FRAMES`] and [`MAX_ENTRIES`]).
    pub fn set_transform(
        &mut self,
        parent: &str,
        child: &str,
        stamp: Stamp,
        transform: Isometry3<f64>,
        is_static: bool,
    ) -> Result<(), TransformError> {
        let (parent, child) = (normalise(parent)?, normalise(child)?);
        let transform = validated(parent, child, transform)?;
        let (parent_id, child_id) = self.check_edge(parent, child)?;
        match (parent_id, child_id) {
            (Some(p), Some(c)) => self.update_edge(p, c, stamp, transform, is_static),
            _ => {
                self.check_room(parent_id.is_none() as usize + child_id.is_none() as usize, parent, child)?;
                let p = parent_id.unwrap_or_else(|| self.add_frame(parent));
                let c = child_id.unwrap_or_else(|| self.add_frame(child));
                self.attach(p, c, new_edge(stamp, transform, is_static));
                Ok(())
            }
        }
    }

    /// [`TransformBuffer::set_transform`] from the fields of a `geometry_msgs/Transform`:
    /// `translation` `[x, y, z]` and `rotation` `[x, y, z, w]` (ROS order), checked with the rule
    /// of [`crate::geometry::unit_quaternion`]. Same errors, buffer unchanged on error.
    pub fn set_transform_parts(
        &mut self,
        parent: &str,
        child: &str,
        stamp: Stamp,
        translation: [f64; 3],
        rotation: [f64; 4],
        is_static: bool,
    ) -> Result<(), TransformError> {
        let [qx, qy, qz, qw] = rotation;
        let rotation = unit_quaternion(qx, qy, qz, qw).ok_or_else(|| {
            TransformError::Invalid(format!(
                "transform \"{parent}\" -> \"{child}\": rotation {rotation:?} (x, y, z, w) is not a finite unit \
                 quaternion"
            ))
        })?;
        let [x, y, z] = translation;
        let transform = Isometry3::from_parts(Translation3::new(x, y, z), rotation);
        self.set_transform(parent, child, stamp, transform, is_static)
    }

    /// The transform that maps points expressed in `source` into `target` at `time` (tf2
    /// `lookupTransform(target, source, time)`), composed through the frames' common ancestor.
    ///
    /// Dynamic edges are interpolated between the two entries around `time` (linearly for the
    /// translation, slerp for the rotation); a `time` outside an edge's data by at most
    /// `tolerance` takes the nearest end's value. Static edges hold at all times.
    /// [`Stamp::LATEST`] uses [`TransformBuffer::latest_common_time`]. Equal frames give the
    /// identity (if the frame is known).
    ///
    /// Errors: [`TransformError::Invalid`] (empty name), [`TransformError::UnknownFrame`],
    /// [`TransformError::NotConnected`], [`TransformError::Extrapolation`] naming the first edge
    /// (from `source` up, then from `target` up) whose data does not cover `time`.
    pub fn lookup(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
        tolerance: Duration,
    ) -> Result<Isometry3<f64>, TransformError> {
        let path = self.path(target, source)?;
        let at = if time == Stamp::LATEST { self.common_time(&path) } else { time };
        let ancestor_from_source = self.compose_up(&path.from_source, at, tolerance)?;
        let ancestor_from_target = self.compose_up(&path.from_target, at, tolerance)?;
        Ok(ancestor_from_target.inverse() * ancestor_from_source)
    }

    /// The latest time at which every edge between `target` and `source` is known: the minimum
    /// over the chain's dynamic edges of their newest stamp. [`Stamp::LATEST`] when the chain has
    /// no dynamic edge (it holds at all times), which includes `target == source`.
    ///
    /// Errors: [`TransformError::Invalid`] (empty name), [`TransformError::UnknownFrame`],
    /// [`TransformError::NotConnected`].
    pub fn latest_common_time(&self, target: &str, source: &str) -> Result<Stamp, TransformError> {
        Ok(self.common_time(&self.path(target, source)?))
    }

    /// `pose`, expressed in `source`, expressed in `target` at `time`: [`TransformBuffer::lookup`]
    /// composed with it. Same errors.
    pub fn transform_pose(
        &self,
        target: &str,
        source: &str,
        time: Stamp,
        tolerance: Duration,
        pose: &Isometry3<f64>,
    ) -> Result<Isometry3<f64>, TransformError> {
        Ok(self.lookup(target, source, time, tolerance)? * pose)
    }

    /// The index of a known frame.
    fn frame_id(&self, frame: &str) -> Result<usize, TransformError> {
        let name = normalise(frame)?;
        self.index.get(name).copied().ok_or_else(|| TransformError::UnknownFrame(name.to_string()))
    }

    /// The indices of an edge's frames (`None`: not known yet), after refusing a self edge, a
    /// second parent and a loop.
    fn check_edge(&self, parent: &str, child: &str) -> Result<(Option<usize>, Option<usize>), TransformError> {
        let loop_error = || TransformError::Loop { parent: parent.to_string(), child: child.to_string() };
        if parent == child {
            return Err(loop_error());
        }
        let (parent_id, child_id) = (self.index.get(parent).copied(), self.index.get(child).copied());
        if let Some(c) = child_id {
            if let Some((held, _)) = &self.frames[c].parent {
                if Some(*held) != parent_id {
                    return Err(TransformError::SecondParent {
                        child: child.to_string(),
                        parent: self.frames[*held].name.clone(),
                        new_parent: parent.to_string(),
                    });
                }
            }
        }
        if let (Some(p), Some(c)) = (parent_id, child_id) {
            if self.ancestors(p).contains(&c) {
                return Err(loop_error());
            }
        }
        Ok((parent_id, child_id))
    }

    /// Refuses an edge adding `new_frames` frames, and so one new entry, past the limits.
    fn check_room(&self, new_frames: usize, parent: &str, child: &str) -> Result<(), TransformError> {
        if self.frames.len() + new_frames > self.limits.frames {
            return Err(TransformError::Full(format!(
                "{} frames, the most it keeps; refusing transform \"{parent}\" -> \"{child}\" that adds a frame",
                self.limits.frames
            )));
        }
        if self.entries >= self.limits.entries {
            return Err(TransformError::Full(format!(
                "{} transforms held, the most it keeps; refusing the new edge \"{parent}\" -> \"{child}\"",
                self.limits.entries
            )));
        }
        Ok(())
    }

    fn add_frame(&mut self, name: &str) -> usize {
        let id = self.frames.len();
        self.frames.push(Frame { name: name.to_string(), parent: None });
        self.index.insert(name.to_string(), id);
        id
    }

    /// Sets the edge of `child` (a root until now, or already a child of `parent`) to `edge`.
    fn attach(&mut self, parent: usize, child: usize, edge: Edge) {
        let added = edge.len();
        let removed = self.frames[child].parent.replace((parent, edge)).map_or(0, |(_, old)| old.len());
        self.entries = self.entries + added - removed;
    }

    /// Stores a value on the edge between two known frames (new, or held with the same parent).
    fn update_edge(
        &mut self,
        parent: usize,
        child: usize,
        stamp: Stamp,
        transform: Isometry3<f64>,
        is_static: bool,
    ) -> Result<(), TransformError> {
        let free = self.limits.entries - self.entries;
        let per_edge = self.limits.per_edge;
        let cache_ns = self.cache_ns;
        let held = self.frames[child].parent.as_mut().map(|(_, edge)| edge);
        let Some(Edge::Dynamic(cache)) = held.filter(|_| !is_static) else {
            // A new edge between roots, a static value, or a switch of kind: one entry replaces all.
            let held_len = self.frames[child].parent.as_ref().map_or(0, |(_, edge)| edge.len());
            if held_len == 0 {
                self.check_room(0, &self.frames[parent].name, &self.frames[child].name)?;
            }
            self.attach(parent, child, new_edge(stamp, transform, is_static));
            return Ok(());
        };
        let before = cache.len();
        // The edge may grow into the buffer's free entries, up to its own limit.
        let room = per_edge.min(before + free);
        match cache.insert(Entry { stamp, value: transform }, cache_ns, room) {
            Ok(()) => {
                self.entries = self.entries + cache.len() - before;
                Ok(())
            }
            Err(Stale { oldest, newest }) => Err(TransformError::OldData {
                parent: self.frames[parent].name.clone(),
                child: self.frames[child].name.clone(),
                stamp,
                oldest,
                newest,
            }),
        }
    }

    /// `frame` and its ancestors, up to its tree's root.
    fn ancestors(&self, frame: usize) -> Vec<usize> {
        let mut chain = vec![frame];
        let mut at = frame;
        while let Some((parent, _)) = &self.frames[at].parent {
            chain.push(*parent);
            at = *parent;
        }
        chain
    }

    /// The edges between `target` and `source`, below their common ancestor.
    fn path(&self, target: &str, source: &str) -> Result<Path, TransformError> {
        let (target_id, source_id) = (self.frame_id(target)?, self.frame_id(source)?);
        let mut from_target = self.ancestors(target_id);
        let mut from_source = self.ancestors(source_id);
        let (target_root, source_root) = (from_target[from_target.len() - 1], from_source[from_source.len() - 1]);
        if target_root != source_root {
            return Err(TransformError::NotConnected {
                target_frame: self.frames[target_id].name.clone(),
                source_frame: self.frames[source_id].name.clone(),
                target_root: self.frames[target_root].name.clone(),
                source_root: self.frames[source_root].name.clone(),
            });
        }
        // Drop the shared part of the two chains: the common ancestor and everything above it.
        while from_target.last().is_some() && from_target.last() == from_source.last() {
            from_target.pop();
            from_source.pop();
        }
        Ok(Path { from_target, from_source })
    }

    /// Minimum newest stamp over the path's dynamic edges ([`Stamp::LATEST`] when none).
    fn common_time(&self, path: &Path) -> Stamp {
        let newest = path.from_target.iter().chain(&path.from_source).filter_map(|&f| match &self.frames[f].parent {
            Some((_, Edge::Dynamic(cache))) => Some(cache.newest()),
            _ => None,
        });
        newest.min().unwrap_or(Stamp::LATEST)
    }

    /// The transform from the first frame of `chain` into the parent of its last, at `at`.
    fn compose_up(&self, chain: &[usize], at: Stamp, tolerance: Duration) -> Result<Isometry3<f64>, TransformError> {
        let mut acc = Isometry3::identity();
        for &frame in chain {
            acc = self.edge_value(frame, at, tolerance)? * acc;
        }
        Ok(acc)
    }

    /// The transform of the edge from `child` to its parent at `at`.
    fn edge_value(&self, child: usize, at: Stamp, tolerance: Duration) -> Result<Isometry3<f64>, TransformError> {
        match &self.frames[child].parent {
            Some((_, Edge::Static(value))) => Ok(*value),
            Some((parent, Edge::Dynamic(cache))) => {
                cache.sample(at, tolerance).map_err(|Stale { oldest, newest }| TransformError::Extrapolation {
                    parent: self.frames[*parent].name.clone(),
                    child: self.frames[child].name.clone(),
                    requested: at,
                    oldest,
                    newest,
                })
            }
            // Paths only list frames below the common ancestor, which all have a parent.
            None => Ok(Isometry3::identity()),
        }
    }
}

/// A fresh edge holding one value.
fn new_edge(stamp: Stamp, transform: Isometry3<f64>, is_static: bool) -> Edge {
    if is_static {
        Edge::Static(transform)
    } else {
        Edge::Dynamic(Cache::new(Entry { stamp, value: transform }))
    }
}

/// `frame` without one leading `/`, refused when empty or longer than [`MAX_FRAME_NAME_BYTES`].
fn normalise(frame: &str) -> Result<&str, TransformError> {
    let name = frame.strip_prefix('/').unwrap_or(frame);
    if name.is_empty() {
        return Err(TransformError::Invalid(format!("empty frame name {frame:?}")));
    }
    if name.len() > MAX_FRAME_NAME_BYTES {
        return Err(TransformError::Invalid(format!(
            "frame name of {} bytes, longer than {MAX_FRAME_NAME_BYTES}",
            name.len()
        )));
    }
    Ok(name)
}

/// `transform` with its rotation renormalised, refused when not finite or not (nearly) unit.
fn validated(parent: &str, child: &str, transform: Isometry3<f64>) -> Result<Isometry3<f64>, TransformError> {
    let t: Vector3<f64> = transform.translation.vector;
    if !t.iter().all(|v| v.is_finite()) {
        return Err(TransformError::Invalid(format!(
            "transform \"{parent}\" -> \"{child}\": translation ({}, {}, {}) is not finite",
            Number(t.x),
            Number(t.y),
            Number(t.z)
        )));
    }
    let q = transform.rotation.quaternion();
    let rotation = unit_quaternion(q.i, q.j, q.k, q.w).ok_or_else(|| {
        TransformError::Invalid(format!(
            "transform \"{parent}\" -> \"{child}\": rotation ({}, {}, {}, {}) (x, y, z, w) is not a finite unit \
             quaternion",
            Number(q.i),
            Number(q.j),
            Number(q.k),
            Number(q.w)
        ))
    })?;
    Ok(Isometry3::from_parts(transform.translation, rotation))
}

/// Nanoseconds of `d`, saturated at `i64::MAX`.
fn nanos_of(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Point3, UnitQuaternion};
    use proptest::prelude::*;
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

    const NO_TOLERANCE: Duration = Duration::ZERO;

    fn secs(s: f64) -> Stamp {
        Stamp::from_nanos((s * 1e9).round() as i64)
    }

    /// Translation `(x, y, z)`, rotation from roll, pitch, yaw (applied in that order).
    fn iso(x: f64, y: f64, z: f64, roll: f64, pitch: f64, yaw: f64) -> Isometry3<f64> {
        Isometry3::from_parts(Translation3::new(x, y, z), UnitQuaternion::from_euler_angles(roll, pitch, yaw))
    }

    fn yaw_iso(x: f64, y: f64, yaw: f64) -> Isometry3<f64> {
        iso(x, y, 0.0, 0.0, 0.0, yaw)
    }

    /// Largest difference between the two transforms: translation, and quaternion coordinates up
    /// to sign (well conditioned near the identity, unlike an angle from `acos`).
    fn distance(a: &Isometry3<f64>, b: &Isometry3<f64>) -> f64 {
        let dt = (a.translation.vector - b.translation.vector).norm();
        let (qa, qb) = (a.rotation.coords, b.rotation.coords);
        dt.max((qa - qb).norm().min((qa + qb).norm()))
    }

    fn assert_close(a: &Isometry3<f64>, b: &Isometry3<f64>, tolerance: f64) {
        let d = distance(a, b);
        assert!(d <= tolerance, "differ by {d:e}:\n{a}\n{b}");
    }

    fn set(buffer: &mut TransformBuffer, parent: &str, child: &str, at: f64, value: Isometry3<f64>) {
        buffer.set_transform(parent, child, secs(at), value, false).unwrap();
    }

    fn set_static(buffer: &mut TransformBuffer, parent: &str, child: &str, value: Isometry3<f64>) {
        buffer.set_transform(parent, child, Stamp::LATEST, value, true).unwrap();
    }

    fn at(buffer: &TransformBuffer, target: &str, source: &str, t: f64) -> Isometry3<f64> {
        buffer.lookup(target, source, secs(t), NO_TOLERANCE).unwrap()
    }

    #[test]
    fn stamp_from_ros_time_and_in_seconds() {
        let s = Stamp::from_sec_nanosec(1, 500_000_000);
        assert_eq!(s.as_nanos(), 1_500_000_000);
        assert_eq!(s.as_secs_f64(), 1.5);
        assert_eq!(s.to_string(), "1.500000000");
        let wall = Stamp::from_sec_nanosec(1_700_000_000, 123_456_789);
        assert_eq!(wall.as_nanos(), 1_700_000_000_123_456_789);
        assert_eq!(wall.to_string(), "1700000000.123456789");
        assert!((wall.as_secs_f64() - 1_700_000_000.123_456_7).abs() < 1e-6);
        let negative = Stamp::from_sec_nanosec(-2, 500_000_000);
        assert_eq!(negative.as_nanos(), -1_500_000_000);
        assert_eq!(negative.as_secs_f64(), -1.5);
        assert_eq!(negative.to_string(), "-1.500000000");
        // A nanosecond field of a second or more carries into the seconds.
        assert_eq!(Stamp::from_sec_nanosec(1, 2_000_000_000).as_nanos(), 3_000_000_000);
        assert_eq!(
            Stamp::from_sec_nanosec(i32::MAX, u32::MAX).as_nanos(),
            i32::MAX as i64 * 1_000_000_000 + u32::MAX as i64
        );
        assert_eq!(Stamp::LATEST.as_nanos(), 0);
        assert_eq!(std::mem::size_of::<Entry>(), ENTRY_BYTES);
    }

    #[test]
    fn frame_names_lose_one_leading_slash_and_empty_ones_are_refused() {
        let mut buffer = TransformBuffer::default();
        set_static(&mut buffer, "/map", "odom", yaw_iso(1.0, 0.0, 0.0));
        assert!(buffer.has_frame("map") && buffer.has_frame("/map") && buffer.has_frame("/odom"));
        assert_close(
            &buffer.lookup("map", "/odom", Stamp::LATEST, NO_TOLERANCE).unwrap(),
            &yaw_iso(1.0, 0.0, 0.0),
            0.0,
        );
        // Only one slash goes: "//map" is the frame "/map", another frame.
        assert!(!buffer.has_frame("//map"));
        assert_eq!(
            buffer.lookup("//map", "odom", Stamp::LATEST, NO_TOLERANCE),
            Err(TransformError::UnknownFrame("/map".into()))
        );
        let before = buffer.clone();
        for bad in ["", "/"] {
            assert!(matches!(
                buffer.set_transform(bad, "odom", Stamp::LATEST, yaw_iso(0.0, 0.0, 0.0), true),
                Err(TransformError::Invalid(_))
            ));
            assert!(matches!(
                buffer.set_transform("map", bad, Stamp::LATEST, yaw_iso(0.0, 0.0, 0.0), true),
                Err(TransformError::Invalid(_))
            ));
            assert!(matches!(buffer.lookup(bad, "odom", Stamp::LATEST, NO_TOLERANCE), Err(TransformError::Invalid(_))));
            assert!(matches!(buffer.lookup("map", bad, Stamp::LATEST, NO_TOLERANCE), Err(TransformError::Invalid(_))));
        }
        let long = "f".repeat(MAX_FRAME_NAME_BYTES + 1);
        assert!(matches!(
            buffer.set_transform("map", &long, Stamp::LATEST, yaw_iso(0.0, 0.0, 0.0), true),
            Err(TransformError::Invalid(_))
        ));
        assert_eq!(buffer, before);
        buffer.set_transform("map", &long[1..], Stamp::LATEST, yaw_iso(0.0, 0.0, 0.0), true).unwrap();
    }

    #[test]
    fn equal_frames_give_identity_only_when_known() {
        let mut buffer = TransformBuffer::default();
        set(&mut buffer, "odom", "base_link", 5.0, yaw_iso(1.0, 2.0, 0.3));
        for frame in ["odom", "base_link"] {
            // Even at a time no edge covers: no edge is involved.
            assert_eq!(buffer.lookup(frame, frame, secs(100.0), NO_TOLERANCE), Ok(Isometry3::identity()));
            assert_eq!(buffer.latest_common_time(frame, frame), Ok(Stamp::LATEST));
        }
        assert_eq!(
            buffer.lookup("map", "map", Stamp::LATEST, NO_TOLERANCE),
            Err(TransformError::UnknownFrame("map".into()))
        );
        assert_eq!(
            buffer.lookup("map", "odom", Stamp::LATEST, NO_TOLERANCE),
            Err(TransformError::UnknownFrame("map".into()))
        );
        assert_eq!(
            buffer.lookup("odom", "map", Stamp::LATEST, NO_TOLERANCE),
            Err(TransformError::UnknownFrame("map".into()))
        );
        let message = TransformError::UnknownFrame("map".into()).to_string();
        assert_eq!(message, "frame \"map\" does not exist in the transform buffer");
    }

    #[test]
    fn lookup_maps_source_points_into_target() {
        // tf2's direction: lookup(target = odom, source = base_link) takes base_link points to odom.
        let mut buffer = TransformBuffer::default();
        set_static(&mut buffer, "odom", "base_link", yaw_iso(1.0, 2.0, FRAC_PI_2));
        let odom_from_base = at(&buffer, "odom", "base_link", 0.0);
        let p = odom_from_base * Point3::new(1.0, 0.0, 0.0);
        assert!((p - Point3::new(1.0, 3.0, 0.0)).norm() < 1e-12, "{p}");
        let q = at(&buffer, "base_link", "odom", 0.0) * Point3::new(1.0, 3.0, 0.0);
        assert!((q - Point3::new(1.0, 0.0, 0.0)).norm() < 1e-12, "{q}");
        assert_eq!(buffer.parent("base_link"), Ok(Some("odom")));
        assert_eq!(buffer.parent("/odom"), Ok(None));
        assert_eq!(buffer.parent("map"), Err(TransformError::UnknownFrame("map".into())));
    }

    /// map -> odom (dynamic) -> base_link (dynamic) -> { laser (static), camera (static) ->
    /// camera_optical (static) }, plus base_link -> wheel (dynamic).
    fn robot() -> (TransformBuffer, [Isometry3<f64>; 6]) {
        let map_odom = iso(0.5, -1.0, 0.0, 0.0, 0.0, 0.2);
        let odom_base = iso(3.0, 4.0, 0.1, 0.01, -0.02, 1.3);
        let base_laser = iso(0.2, 0.0, 0.3, 0.0, 0.0, PI);
        let base_camera = iso(0.25, 0.05, 0.5, 0.0, 0.3, 0.0);
        let camera_optical = iso(0.0, 0.0, 0.0, -FRAC_PI_2, 0.0, -FRAC_PI_2);
        let base_wheel = iso(0.0, 0.3, -0.1, 0.7, 0.0, 0.0);
        let mut buffer = TransformBuffer::default();
        // Children first for some edges: frames may arrive in any order.
        set_static(&mut buffer, "camera", "camera_optical", camera_optical);
        set_static(&mut buffer, "base_link", "camera", base_camera);
        set(&mut buffer, "map", "odom", 1.0, map_odom);
        set(&mut buffer, "odom", "base_link", 1.0, odom_base);
        set_static(&mut buffer, "base_link", "laser", base_laser);
        set(&mut buffer, "base_link", "wheel", 1.0, base_wheel);
        (buffer, [map_odom, odom_base, base_laser, base_camera, camera_optical, base_wheel])
    }

    #[test]
    fn chain_of_four_frames_matches_hand_composition() {
        let (buffer, [map_odom, odom_base, base_laser, ..]) = robot();
        assert_eq!(buffer.frames(), 7);
        assert_eq!(buffer.len(), 6);
        let map_laser = map_odom * odom_base * base_laser;
        assert_close(&at(&buffer, "map", "laser", 1.0), &map_laser, 1e-12);
        assert_close(&at(&buffer, "laser", "map", 1.0), &map_laser.inverse(), 1e-12);
        assert_close(&at(&buffer, "odom", "laser", 1.0), &(odom_base * base_laser), 1e-12);
        assert_close(&at(&buffer, "laser", "odom", 1.0), &(odom_base * base_laser).inverse(), 1e-12);
    }

    #[test]
    fn branches_compose_through_the_common_ancestor_both_ways() {
        let (buffer, [_, _, base_laser, base_camera, camera_optical, base_wheel]) = robot();
        let laser_from_optical = base_laser.inverse() * base_camera * camera_optical;
        assert_close(&at(&buffer, "laser", "camera_optical", 1.0), &laser_from_optical, 1e-12);
        assert_close(&at(&buffer, "camera_optical", "laser", 1.0), &laser_from_optical.inverse(), 1e-12);
        // Static and dynamic mixed on one path: the wheel edge is dynamic, the camera ones static.
        let wheel_from_optical = base_wheel.inverse() * base_camera * camera_optical;
        assert_close(&at(&buffer, "wheel", "camera_optical", 1.0), &wheel_from_optical, 1e-12);
        assert_close(&at(&buffer, "camera_optical", "wheel", 1.0), &wheel_from_optical.inverse(), 1e-12);
        // An ancestor as the target: only the source side has edges.
        assert_close(&at(&buffer, "base_link", "camera_optical", 1.0), &(base_camera * camera_optical), 1e-12);
        assert_close(
            &at(&buffer, "camera_optical", "base_link", 1.0),
            &(base_camera * camera_optical).inverse(),
            1e-12,
        );
    }

    #[test]
    fn static_edges_hold_at_all_times_and_dynamic_ones_only_on_their_data() {
        let (mut buffer, [map_odom, odom_base, base_laser, base_camera, ..]) = robot();
        set(&mut buffer, "odom", "base_link", 3.0, odom_base);
        set(&mut buffer, "map", "odom", 3.0, map_odom);
        // Static only: any time, no tolerance needed.
        for t in [-5.0, 0.0, 2.0, 1e6] {
            assert_close(&at(&buffer, "laser", "camera", t), &(base_laser.inverse() * base_camera), 1e-12);
        }
        assert_close(&at(&buffer, "map", "laser", 2.0), &(map_odom * odom_base * base_laser), 1e-12);
        let late = buffer.lookup("map", "laser", secs(4.0), NO_TOLERANCE).unwrap_err();
        assert!(matches!(late, TransformError::Extrapolation { .. }), "{late}");
    }

    #[test]
    fn interpolation_is_linear_in_translation() {
        let mut buffer = TransformBuffer::default();
        set(&mut buffer, "odom", "base_link", 1.0, yaw_iso(0.0, 0.0, 0.0));
        set(&mut buffer, "odom", "base_link", 3.0, iso(2.0, 4.0, -6.0, 0.0, 0.0, 0.0));
        assert_close(&at(&buffer, "odom", "base_link", 2.0), &iso(1.0, 2.0, -3.0, 0.0, 0.0, 0.0), 1e-12);
        assert_close(&at(&buffer, "odom", "base_link", 1.5), &iso(0.5, 1.0, -1.5, 0.0, 0.0, 0.0), 1e-12);
        assert_close(&at(&buffer, "odom", "base_link", 3.0), &iso(2.0, 4.0, -6.0, 0.0, 0.0, 0.0), 1e-15);
    }

    #[test]
    fn interpolation_slerps_the_rotation() {
        let mut buffer = TransformBuffer::default();
        set(&mut buffer, "odom", "base_link", 1.0, yaw_iso(0.0, 0.0, 0.0));
        set(&mut buffer, "odom", "base_link", 3.0, yaw_iso(0.0, 0.0, FRAC_PI_2));
        let mid = at(&buffer, "odom", "base_link", 2.0);
        // Closed form: a rotation of 45 degrees about +z is (0, 0, sin 22.5, cos 22.5).
        let half = FRAC_PI_4 / 2.0;
        let q = mid.rotation.coords;
        assert!(
            (q.x.abs() + q.y.abs()) < 1e-15 && (q.z - half.sin()).abs() < 1e-14 && (q.w - half.cos()).abs() < 1e-14,
            "{q}"
        );
        let quarter = at(&buffer, "odom", "base_link", 1.5);
        assert!((quarter.rotation.angle() - FRAC_PI_2 / 4.0).abs() < 1e-12);
        // The short way round: from 170 to -170 degrees passes through 180, not through 0.
        let mut wrap = TransformBuffer::default();
        set(&mut wrap, "a", "b", 0.0, yaw_iso(0.0, 0.0, 170f64.to_radians()));
        set(&mut wrap, "a", "b", 2.0, yaw_iso(0.0, 0.0, -170f64.to_radians()));
        let through = at(&wrap, "a", "b", 1.0);
        assert_close(&through, &yaw_iso(0.0, 0.0, PI), 1e-12);
    }

    #[test]
    fn out_of_order_inserts_are_sorted_in() {
        let mut buffer = TransformBuffer::default();
        for t in [3.0, 1.0, 2.0, 5.0, 4.0] {
            set(&mut buffer, "odom", "base_link", t, yaw_iso(t, 0.0, 0.0));
        }
        assert_eq!(buffer.len(), 5);
        for t in [1.0, 1.5, 2.25, 3.0, 3.5, 4.75, 5.0] {
            assert_close(&at(&buffer, "odom", "base_link", t), &yaw_iso(t, 0.0, 0.0), 1e-12);
        }
    }

    #[test]
    fn a_duplicate_stamp_replaces_the_value() {
        let mut buffer = TransformBuffer::default();
        for t in [1.0, 2.0, 3.0] {
            set(&mut buffer, "odom", "base_link", t, yaw_iso(t, 0.0, 0.0));
        }
        set(&mut buffer, "odom", "base_link", 2.0, yaw_iso(20.0, 0.0, 0.0));
        assert_eq!(buffer.len(), 3);
        assert_close(&at(&buffer, "odom", "base_link", 2.0), &yaw_iso(20.0, 0.0, 0.0), 1e-15);
        assert_close(&at(&buffer, "odom", "base_link", 1.5), &yaw_iso(10.5, 0.0, 0.0), 1e-12);
    }

    #[test]
    fn extrapolation_past_and_future_beyond_tolerance_is_refused() {
        let mut buffer = TransformBuffer::default();
        set(&mut buffer, "odom", "base_link", 1.0, yaw_iso(1.0, 0.0, 0.0));
        set(&mut buffer, "odom", "base_link", 3.0, yaw_iso(3.0, 0.0, 0.0));
        let future = buffer.lookup("odom", "base_link", secs(3.5), NO_TOLERANCE).unwrap_err();
        assert_eq!(
            future,
            TransformError::Extrapolation {
                parent: "odom".into(),
                child: "base_link".into(),
                requested: secs(3.5),
                oldest: secs(1.0),
                newest: secs(3.0),
            }
        );
        assert_eq!(
            future.to_string(),
            "lookup would require extrapolation into the future: edge \"odom\" -> \"base_link\" has data from \
             1.000000000 s to 3.000000000 s, requested time 3.500000000 s"
        );
        // Through a chain, from the other side, the error names the edge, not the lookup's frames.
        set_static(&mut buffer, "base_link", "laser", yaw_iso(0.0, 1.0, 0.0));
        let past = buffer.lookup("laser", "odom", secs(0.5), Duration::from_millis(499)).unwrap_err();
        assert!(
            matches!(&past, TransformError::Extrapolation { parent, child, requested, .. }
            if parent == "odom" && child == "base_link" && *requested == secs(0.5)),
            "{past}"
        );
        assert!(past.to_string().contains("into the past"), "{past}");
    }

    #[test]
    fn extrapolation_within_tolerance_takes_the_nearest_end() {
        let mut buffer = TransformBuffer::default();
        set(&mut buffer, "odom", "base_link", 1.0, yaw_iso(1.0, 0.0, 0.1));
        set(&mut buffer, "odom", "base_link", 3.0, yaw_iso(3.0, 0.0, 0.3));
        let half = Duration::from_millis(500);
        let future = buffer.lookup("odom", "base_link", secs(3.5), half).unwrap();
        assert_close(&future, &yaw_iso(3.0, 0.0, 0.3), 1e-15);
        let past = buffer.lookup("odom", "base_link", secs(0.5), half).unwrap();
        assert_close(&past, &yaw_iso(1.0, 0.0, 0.1), 1e-15);
        // The tolerance bound is inclusive, to the nanosecond.
        let just_over = Duration::from_nanos(499_999_999);
        assert!(buffer.lookup("odom", "base_link", secs(3.5), just_over).is_err());
        assert!(buffer.lookup("odom", "base_link", secs(0.5), just_over).is_err());
        // A single entry is a zero-length interval: only its stamp, or within the tolerance.
        let mut single = TransformBuffer::default();
        set(&mut single, "a", "b", 2.0, yaw_iso(7.0, 0.0, 0.0));
        assert!(single.lookup("a", "b", secs(2.0), NO_TOLERANCE).is_ok());
        assert!(single.lookup("a", "b", secs(2.001), NO_TOLERANCE).is_err());
        assert!(single.lookup("a", "b", secs(2.001), Duration::from_millis(1)).is_ok());
        // Extreme times do not overflow.
        assert!(single.lookup("a", "b", Stamp::from_nanos(i64::MIN), Duration::MAX).is_ok());
        assert!(single.lookup("a", "b", Stamp::from_nanos(i64::MAX), Duration::from_secs(1)).is_err());
    }

    #[test]
    fn latest_uses_the_latest_common_time_of_the_chain() {
        let mut buffer = TransformBuffer::default();
        for t in [1.0, 2.0, 3.0] {
            set(&mut buffer, "map", "odom", t, yaw_iso(t, 0.0, 0.1 * t));
        }
        for t in [1.0, 1.5, 2.0] {
            set(&mut buffer, "odom", "base_link", t, yaw_iso(0.0, t, -0.2 * t));
        }
        set_static(&mut buffer, "base_link", "laser", yaw_iso(0.1, 0.0, PI));
        assert_eq!(buffer.latest_common_time("map", "laser"), Ok(secs(2.0)));
        assert_eq!(buffer.latest_common_time("laser", "map"), Ok(secs(2.0)));
        assert_eq!(buffer.latest_common_time("map", "odom"), Ok(secs(3.0)));
        assert_eq!(buffer.latest_common_time("laser", "base_link"), Ok(Stamp::LATEST));
        let latest = buffer.lookup("map", "laser", Stamp::LATEST, NO_TOLERANCE).unwrap();
        assert_close(&latest, &at(&buffer, "map", "laser", 2.0), 1e-15);
        let expected = yaw_iso(2.0, 0.0, 0.2) * yaw_iso(0.0, 2.0, -0.4) * yaw_iso(0.1, 0.0, PI);
        assert_close(&latest, &expected, 1e-12);
        // map -> odom alone goes to its own newest stamp, 3 s.
        assert_close(
            &buffer.lookup("map", "odom", Stamp::LATEST, NO_TOLERANCE).unwrap(),
            &yaw_iso(3.0, 0.0, 0.3),
            1e-15,
        );
        // Static-only chains answer at any time.
        assert!(buffer.lookup("laser", "base_link", Stamp::LATEST, NO_TOLERANCE).is_ok());
    }

    #[test]
    fn latest_common_time_can_lie_before_an_edge_data() {
        // As in tf2: edges whose data do not overlap have no common time to look up at.
        let mut buffer = TransformBuffer::default();
        set(&mut buffer, "map", "odom", 5.0, yaw_iso(0.0, 0.0, 0.0));
        set(&mut buffer, "map", "odom", 6.0, yaw_iso(0.0, 0.0, 0.0));
        set(&mut buffer, "odom", "base_link", 1.0, yaw_iso(0.0, 0.0, 0.0));
        set(&mut buffer, "odom", "base_link", 2.0, yaw_iso(0.0, 0.0, 0.0));
        assert_eq!(buffer.latest_common_time("map", "base_link"), Ok(secs(2.0)));
        let e = buffer.lookup("map", "base_link", Stamp::LATEST, NO_TOLERANCE).unwrap_err();
        assert!(
            matches!(&e, TransformError::Extrapolation { parent, requested, .. }
            if parent == "map" && *requested == secs(2.0)),
            "{e}"
        );
        assert!(e.to_string().contains("into the past"), "{e}");
    }

    #[test]
    fn unconnected_trees_name_both_roots() {
        let (mut buffer, _) = robot();
        set_static(&mut buffer, "world", "dock", yaw_iso(0.0, 0.0, 0.0));
        let e = buffer.lookup("laser", "dock", Stamp::LATEST, NO_TOLERANCE).unwrap_err();
        assert_eq!(
            e,
            TransformError::NotConnected {
                target_frame: "laser".into(),
                source_frame: "dock".into(),
                target_root: "map".into(),
                source_root: "world".into(),
            }
        );
        assert_eq!(
            e.to_string(),
            "frames \"laser\" and \"dock\" are not connected: \"laser\" is in the tree rooted at \"map\", \
             \"dock\" in the tree rooted at \"world\""
        );
        assert!(matches!(buffer.latest_common_time("dock", "map"), Err(TransformError::NotConnected { .. })));
        // Joining the trees (world becomes a child of map) connects them.
        set_static(&mut buffer, "map", "world", yaw_iso(10.0, 0.0, 0.0));
        assert!(buffer.lookup("laser", "dock", secs(1.0), NO_TOLERANCE).is_ok());
    }

    #[test]
    fn a_loop_is_refused_and_changes_nothing() {
        let (mut buffer, _) = robot();
        let before = buffer.clone();
        let cases = [
            ("camera_optical", "map"),
            ("base_link", "odom"),
            ("laser", "base_link"),
            ("odom", "odom"),
            ("/map", "map"),
        ];
        for (parent, child) in cases {
            for is_static in [false, true] {
                let e = buffer.set_transform(parent, child, secs(1.5), yaw_iso(0.0, 0.0, 0.0), is_static).unwrap_err();
                match &e {
                    // base_link -> odom and laser -> base_link: odom and base_link have parents already.
                    TransformError::SecondParent { .. } => assert!(child != "map" && parent != child),
                    TransformError::Loop { .. } => {}
                    other => panic!("{parent} -> {child}: {other}"),
                }
                assert_eq!(buffer, before, "{parent} -> {child}");
            }
        }
        let e = buffer.set_transform("camera_optical", "map", secs(1.5), yaw_iso(0.0, 0.0, 0.0), false).unwrap_err();
        assert_eq!(e, TransformError::Loop { parent: "camera_optical".into(), child: "map".into() });
        assert_eq!(
            e.to_string(),
            "transform \"camera_optical\" -> \"map\" would create a loop: \"camera_optical\" is \"map\" or one of its \
             descendants"
        );
        // A new frame cannot close a loop: it has no descendants.
        buffer.set_transform("earth", "map", secs(1.5), yaw_iso(0.0, 0.0, 0.0), true).unwrap();
        assert_eq!(buffer.parent("map"), Ok(Some("earth")));
    }

    #[test]
    fn a_second_parent_is_refused_and_changes_nothing() {
        let (mut buffer, _) = robot();
        let before = buffer.clone();
        let e = buffer.set_transform("world", "odom", secs(1.0), yaw_iso(0.0, 0.0, 0.0), true).unwrap_err();
        assert_eq!(
            e,
            TransformError::SecondParent { child: "odom".into(), parent: "map".into(), new_parent: "world".into() }
        );
        assert_eq!(
            e.to_string(),
            "frame \"odom\" already has parent \"map\"; refusing the transform from parent \"world\" (a frame has \
             one parent)"
        );
        // The unknown parent was not created.
        assert_eq!(buffer, before);
        assert!(!buffer.has_frame("world"));
        // Between known frames too.
        assert!(matches!(
            buffer.set_transform("laser", "camera", secs(1.0), yaw_iso(0.0, 0.0, 0.0), false),
            Err(TransformError::SecondParent { .. })
        ));
        assert_eq!(buffer, before);
    }

    #[test]
    fn bad_transforms_are_refused_and_change_nothing() {
        let (mut buffer, _) = robot();
        let before = buffer.clone();
        let identity = [0.0, 0.0, 0.0, 1.0];
        let bad_rotations = [
            [0.0; 4],
            [f64::NAN, 0.0, 0.0, 1.0],
            [0.0, 0.0, 0.0, 1.01],
            [0.0, 0.0, 0.0, f64::INFINITY],
            [1.0, 1.0, 0.0, 0.0],
        ];
        for q in bad_rotations {
            let e = buffer.set_transform_parts("odom", "base_link", secs(1.5), [0.0; 3], q, false).unwrap_err();
            assert!(matches!(&e, TransformError::Invalid(m) if m.contains("\"odom\" -> \"base_link\"")), "{e}");
            assert!(buffer.set_transform_parts("odom", "new_frame", secs(1.5), [0.0; 3], q, true).is_err());
        }
        for t in [[f64::NAN, 0.0, 0.0], [0.0, f64::INFINITY, 0.0], [0.0, 0.0, f64::NEG_INFINITY]] {
            assert!(matches!(
                buffer.set_transform_parts("odom", "base_link", secs(1.5), t, identity, false),
                Err(TransformError::Invalid(_))
            ));
        }
        // An Isometry3 built around an unchecked, non-unit quaternion.
        let stretched = UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(2.0, 0.0, 0.0, 0.0));
        let e = buffer.set_transform(
            "odom",
            "base_link",
            secs(1.5),
            Isometry3::from_parts(Translation3::identity(), stretched),
            false,
        );
        assert!(matches!(e, Err(TransformError::Invalid(_))));
        assert_eq!(buffer, before);
        // Nearly unit quaternions (a message rounded to a few digits) are kept, renormalised.
        let h = std::f64::consts::FRAC_1_SQRT_2 * 1.0005;
        buffer.set_transform_parts("odom", "base_link", secs(1.5), [1.0, 2.0, 3.0], [0.0, 0.0, h, h], false).unwrap();
        let got = at(&buffer, "odom", "base_link", 1.5);
        assert!((got.rotation.coords.norm() - 1.0).abs() < 1e-15);
        assert_close(&got, &iso(1.0, 2.0, 3.0, 0.0, 0.0, FRAC_PI_2), 1e-12);
    }

    #[test]
    fn cache_time_drops_entries_behind_the_newest() {
        let mut buffer = TransformBuffer::default();
        assert_eq!(buffer.cache_time(), DEFAULT_CACHE_TIME);
        set(&mut buffer, "map", "odom", 0.0, yaw_iso(0.0, 0.0, 0.0));
        for i in 0..=20 {
            set(&mut buffer, "odom", "base_link", i as f64, yaw_iso(i as f64, 0.0, 0.0));
        }
        // 10 s to 20 s are kept (the bound is inclusive, as in tf2); the other edge is untouched.
        assert_eq!(buffer.len(), 11 + 1);
        let e = buffer.lookup("odom", "base_link", secs(9.5), NO_TOLERANCE).unwrap_err();
        assert!(
            matches!(e, TransformError::Extrapolation { oldest, newest, .. } if oldest == secs(10.0) && newest == secs(20.0))
        );
        assert!(buffer.lookup("map", "odom", secs(0.0), NO_TOLERANCE).is_ok());
        // Older than the window: refused (tf2's TF_OLD_DATA); inside it: kept.
        let before = buffer.clone();
        let old = buffer.set_transform("odom", "base_link", secs(9.9), yaw_iso(0.0, 0.0, 0.0), false).unwrap_err();
        assert_eq!(
            old,
            TransformError::OldData {
                parent: "odom".into(),
                child: "base_link".into(),
                stamp: secs(9.9),
                oldest: secs(10.0),
                newest: secs(20.0),
            }
        );
        assert!(old.to_string().contains("older than the data kept"), "{old}");
        assert_eq!(buffer, before);
        set(&mut buffer, "odom", "base_link", 10.5, yaw_iso(-1.0, 0.0, 0.0));
        assert_eq!(buffer.len(), 13);
        // A short cache time.
        let mut short = TransformBuffer::new(Duration::from_millis(2500));
        for i in 0..10 {
            set(&mut short, "a", "b", i as f64, yaw_iso(0.0, 0.0, 0.0));
        }
        assert_eq!(short.len(), 3);
        assert_eq!(
            short.lookup("a", "b", secs(6.0), NO_TOLERANCE).map(|_| ()),
            Err(TransformError::Extrapolation {
                parent: "a".into(),
                child: "b".into(),
                requested: secs(6.0),
                oldest: secs(7.0),
                newest: secs(9.0),
            })
        );
    }

    #[test]
    fn switching_between_static_and_dynamic_keeps_the_newer_call() {
        let mut buffer = TransformBuffer::default();
        set(&mut buffer, "odom", "base_link", 1.0, yaw_iso(1.0, 0.0, 0.0));
        set(&mut buffer, "odom", "base_link", 2.0, yaw_iso(2.0, 0.0, 0.0));
        assert_eq!(buffer.len(), 2);
        set_static(&mut buffer, "odom", "base_link", yaw_iso(5.0, 0.0, 0.0));
        assert_eq!(buffer.len(), 1);
        assert_close(&at(&buffer, "odom", "base_link", 100.0), &yaw_iso(5.0, 0.0, 0.0), 1e-15);
        set_static(&mut buffer, "odom", "base_link", yaw_iso(6.0, 0.0, 0.0));
        assert_close(&at(&buffer, "odom", "base_link", -3.0), &yaw_iso(6.0, 0.0, 0.0), 1e-15);
        set(&mut buffer, "odom", "base_link", 7.0, yaw_iso(7.0, 0.0, 0.0));
        assert_eq!(buffer.len(), 1);
        assert_close(&at(&buffer, "odom", "base_link", 7.0), &yaw_iso(7.0, 0.0, 0.0), 1e-15);
        assert!(buffer.lookup("odom", "base_link", secs(8.0), NO_TOLERANCE).is_err());
        // A dynamic value older than the static one's call is still newer as a call: it wins.
        set_static(&mut buffer, "odom", "base_link", yaw_iso(8.0, 0.0, 0.0));
        set(&mut buffer, "odom", "base_link", 0.5, yaw_iso(0.5, 0.0, 0.0));
        assert_eq!(buffer.latest_common_time("odom", "base_link"), Ok(secs(0.5)));
    }

    #[test]
    fn an_edge_keeps_at_most_max_entries_per_edge() {
        let mut buffer = TransformBuffer::default();
        // From 1 s (0 is Stamp::LATEST) every 0.1 ms: 10 500 entries span 1.05 s, inside the cache time.
        let nth = |i: i64| Stamp::from_nanos(1_000_000_000 + i * 100_000);
        let total = MAX_ENTRIES_PER_EDGE + 500;
        for i in 0..total as i64 {
            buffer.set_transform("odom", "base_link", nth(i), yaw_iso(i as f64, 0.0, 0.0), false).unwrap();
        }
        assert_eq!(buffer.len(), MAX_ENTRIES_PER_EDGE);
        let oldest = nth(500);
        let newest = nth(total as i64 - 1);
        let e = buffer.lookup("odom", "base_link", nth(0), NO_TOLERANCE).unwrap_err();
        assert!(
            matches!(e, TransformError::Extrapolation { oldest: o, newest: n, .. } if o == oldest && n == newest),
            "{e}"
        );
        // Older than everything a full edge holds: refused, nothing changes.
        let before = buffer.clone();
        let old = buffer.set_transform("odom", "base_link", nth(499), yaw_iso(0.0, 0.0, 0.0), false);
        assert!(matches!(old, Err(TransformError::OldData { .. })));
        assert_eq!(buffer, before);
        // A value inside the data of a full edge goes in and pushes out the oldest.
        buffer
            .set_transform(
                "odom",
                "base_link",
                Stamp::from_nanos(nth(600).as_nanos() + 1),
                yaw_iso(0.0, 0.0, 0.0),
                false,
            )
            .unwrap();
        assert_eq!(buffer.len(), MAX_ENTRIES_PER_EDGE);
        assert!(buffer.lookup("odom", "base_link", oldest, NO_TOLERANCE).is_err());
        // The queue never grew past the next power of two: 1 MiB at most.
        let Some((_, Edge::Dynamic(cache))) = &buffer.frames[buffer.index["base_link"]].parent else { panic!() };
        assert!(cache.entries.capacity() * ENTRY_BYTES <= 1 << 20, "{}", cache.entries.capacity());
        // A jump far ahead trims all but one entry, and the allocation follows.
        buffer.set_transform("odom", "base_link", secs(3600.0), yaw_iso(0.0, 0.0, 0.0), false).unwrap();
        assert_eq!(buffer.len(), 1);
        let Some((_, Edge::Dynamic(cache))) = &buffer.frames[buffer.index["base_link"]].parent else { panic!() };
        assert!(cache.entries.capacity() <= 4 + 64, "{}", cache.entries.capacity());
    }

    #[test]
    fn the_buffer_keeps_at_most_max_frames() {
        let mut buffer = TransformBuffer::default();
        for i in 1..MAX_FRAMES {
            buffer.set_transform("root", &format!("f{i}"), Stamp::LATEST, yaw_iso(i as f64, 0.0, 0.0), true).unwrap();
        }
        assert_eq!(buffer.frames(), MAX_FRAMES);
        let before = buffer.clone();
        let e = buffer.set_transform("root", "one_too_many", secs(1.0), yaw_iso(0.0, 0.0, 0.0), false).unwrap_err();
        assert!(matches!(&e, TransformError::Full(m) if m.contains("10000 frames")), "{e}");
        let e = buffer.set_transform("f1", "one_too_many", Stamp::LATEST, yaw_iso(0.0, 0.0, 0.0), true).unwrap_err();
        assert!(matches!(e, TransformError::Full(_)), "{e}");
        assert_eq!(buffer, before);
        // Known frames keep working: new values on their edges.
        buffer.set_transform("root", "f2", secs(1.0), yaw_iso(0.0, 0.0, 0.0), false).unwrap();
        assert_eq!(buffer.frames(), MAX_FRAMES);
        assert_close(&at(&buffer, "f3", "root", 0.0), &yaw_iso(-3.0, 0.0, 0.0), 1e-12);
    }

    #[test]
    fn the_buffer_keeps_at_most_max_entries() {
        assert_eq!(TransformBuffer::default().limits, Limits::DEFAULT);
        // The real limit is 500 000 entries; the rule is the same at 50.
        let limits = Limits { frames: 100, entries: 51, per_edge: 20 };
        let mut buffer = TransformBuffer::with_limits(DEFAULT_CACHE_TIME, limits);
        set_static(&mut buffer, "root2", "e", yaw_iso(0.0, 0.0, 0.0));
        for edge in ["a", "b", "c"] {
            for i in 0..30 {
                set(&mut buffer, "root", edge, i as f64 * 0.01, yaw_iso(i as f64, 0.0, 0.0));
                assert!(buffer.len() <= 51);
            }
        }
        // a and b filled to their own limit of 20; c got the 10 left and keeps the newest 10.
        assert_eq!(buffer.len(), 51);
        assert_eq!(buffer.latest_common_time("root", "c"), Ok(secs(0.29)));
        assert!(buffer.lookup("root", "c", secs(0.2), NO_TOLERANCE).is_ok());
        assert!(buffer.lookup("root", "c", secs(0.19), NO_TOLERANCE).is_err());
        // Full: a new edge (dynamic or static) is refused, whether it adds frames or not.
        let before = buffer.clone();
        for is_static in [false, true] {
            let e = buffer.set_transform("root", "d", secs(1.0), yaw_iso(0.0, 0.0, 0.0), is_static).unwrap_err();
            assert!(matches!(&e, TransformError::Full(m) if m.contains("51 transforms")), "{e}");
            // Between two known frames (root2 is a root) too.
            let e = buffer.set_transform("a", "root2", secs(1.0), yaw_iso(0.0, 0.0, 0.0), is_static);
            assert!(matches!(e, Err(TransformError::Full(_))), "{e:?}");
            assert_eq!(buffer, before);
        }
        // ... but the existing edges keep taking newer values, dropping their oldest.
        set(&mut buffer, "root", "c", 5.0, yaw_iso(0.0, 0.0, 0.0));
        set(&mut buffer, "root", "a", 5.0, yaw_iso(0.0, 0.0, 0.0));
        assert_eq!(buffer.len(), 51);
        assert_eq!(buffer.latest_common_time("root", "c"), Ok(secs(5.0)));
        assert!(buffer.lookup("root", "c", secs(0.2), NO_TOLERANCE).is_err());
        // Replacing a dynamic edge by a static one frees entries for new edges.
        set_static(&mut buffer, "root", "a", yaw_iso(0.0, 0.0, 0.0));
        assert_eq!(buffer.len(), 32);
        set(&mut buffer, "root", "d", 1.0, yaw_iso(0.0, 0.0, 0.0));
        assert_eq!(buffer.len(), 33);
    }

    #[test]
    fn transform_pose_composes_the_lookup_with_the_pose() {
        let mut buffer = TransformBuffer::default();
        set_static(&mut buffer, "map", "base_link", yaw_iso(1.0, 2.0, FRAC_PI_2));
        let pose_in_base = yaw_iso(1.0, 0.0, FRAC_PI_2);
        let in_map = buffer.transform_pose("map", "base_link", Stamp::LATEST, NO_TOLERANCE, &pose_in_base).unwrap();
        assert_close(&in_map, &yaw_iso(1.0, 3.0, PI), 1e-12);
        assert!(buffer.transform_pose("map", "nowhere", Stamp::LATEST, NO_TOLERANCE, &pose_in_base).is_err());
    }

    #[test]
    fn clear_dynamic_keeps_the_static_edges_only() {
        let mut buffer = TransformBuffer::default();
        let iso = |x: f64| Isometry3::translation(x, 0.0, 0.0);
        buffer.set_transform("map", "odom", Stamp::from_nanos(0), iso(1.0), true).unwrap();
        buffer.set_transform("odom", "base_link", Stamp::from_nanos(5), iso(2.0), false).unwrap();
        buffer.set_transform("base_link", "laser", Stamp::from_nanos(0), iso(0.5), true).unwrap();
        buffer.clear_dynamic();
        assert!(buffer.has_frame("map") && buffer.has_frame("odom") && buffer.has_frame("laser"));
        assert_eq!(buffer.parent("laser").unwrap(), Some("base_link"));
        assert_eq!(buffer.parent("odom").unwrap(), Some("map"));
        assert_eq!(buffer.len(), 2, "the two static edges");
        // odom -> base_link is gone until odometry sends it again; then map -> laser composes.
        assert!(buffer.lookup("map", "laser", Stamp::from_nanos(7), Duration::ZERO).is_err());
        buffer.set_transform("odom", "base_link", Stamp::from_nanos(7), iso(3.0), false).unwrap();
        let t = buffer.lookup("map", "laser", Stamp::from_nanos(7), Duration::ZERO).unwrap();
        assert!((t.translation.vector.x - 4.5).abs() < 1e-12);
    }

    #[test]
    fn clear_forgets_everything() {
        let (mut buffer, _) = robot();
        buffer.clear();
        assert_eq!((buffer.frames(), buffer.len(), buffer.is_empty()), (0, 0, true));
        assert_eq!(buffer, TransformBuffer::default());
        assert!(!buffer.has_frame("map"));
    }

    /// A random tree: frame `i > 0` hangs under a frame `< i`, by a static edge or a dynamic one
    /// with values at 1 s and 3 s.
    fn random_tree() -> impl Strategy<Value = (TransformBuffer, usize)> {
        let value = || (-10.0..10.0f64, -10.0..10.0f64, -10.0..10.0f64, -PI..PI, -PI..PI, -PI..PI);
        let edge = (any::<prop::sample::Index>(), any::<bool>(), value(), value());
        prop::collection::vec(edge, 1..12).prop_map(|edges| {
            let mut buffer = TransformBuffer::default();
            for (i, (parent, is_static, v1, v3)) in edges.iter().enumerate() {
                let child = i + 1;
                let parent = format!("f{}", parent.index(child));
                let (first, last) = (iso(v1.0, v1.1, v1.2, v1.3, v1.4, v1.5), iso(v3.0, v3.1, v3.2, v3.3, v3.4, v3.5));
                if *is_static {
                    set_static(&mut buffer, &parent, &format!("f{child}"), first);
                } else {
                    set(&mut buffer, &parent, &format!("f{child}"), 1.0, first);
                    set(&mut buffer, &parent, &format!("f{child}"), 3.0, last);
                }
            }
            let frames = edges.len() + 1;
            (buffer, frames)
        })
    }

    proptest! {
        #[test]
        fn lookups_on_random_trees_invert_and_compose(
            (buffer, frames) in random_tree(),
            picks in (any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<prop::sample::Index>()),
            t in 1.0..3.0f64,
        ) {
            let [a, b, c] = [picks.0, picks.1, picks.2].map(|p| format!("f{}", p.index(frames)));
            let t = secs(t);
            let look = |x: &str, y: &str| buffer.lookup(x, y, t, NO_TOLERANCE).unwrap();
            let round_trip = look(&a, &b) * look(&b, &a);
            prop_assert!(distance(&round_trip, &Isometry3::identity()) < 1e-9, "{round_trip}");
            let direct = look(&a, &c);
            let through_b = look(&a, &b) * look(&b, &c);
            prop_assert!(distance(&direct, &through_b) < 1e-9, "{direct}\n{through_b}");
            // LATEST on these trees is 3 s when a dynamic edge is involved, and agrees with it.
            let latest = buffer.latest_common_time(&a, &c).unwrap();
            prop_assert!(latest == Stamp::LATEST || latest == secs(3.0));
            let at_latest = buffer.lookup(&a, &c, Stamp::LATEST, NO_TOLERANCE).unwrap();
            prop_assert!(distance(&at_latest, &buffer.lookup(&a, &c, secs(3.0), NO_TOLERANCE).unwrap()) < 1e-12);
        }
    }
}
