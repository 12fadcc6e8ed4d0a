//! The Fast DDS profile the node runs with, chosen before ROS starts.
//!
//! Fast DDS drops a service response when the client's response reader is not matched within the
//! response writer's `max_blocking_time` (100 ms by default): `rmw_send_response` returns
//! `RMW_RET_TIMEOUT` and the client waits forever (ros2/rmw_fastrtps#467, #704). A client
//! announces its request writer and its response reader on two separate discovery channels, so
//! on a busy machine a goal request can arrive before the reader is known; an action client that
//! sends the moment `wait_for_server` returns (Nav2's behaviour tree does) then never hears that
//! its goal was accepted. The node sends a refused response again (`responder`), so what matters
//! is how long each attempt waits: r2r holds the service's lock while the rmw waits, and rcl's
//! executor takes every service's lock on every spin, so the whole node waits with it.
//! `config/fastdds_service_responses.xml` (embedded here) sets the profile named `service`, which
//! rmw_fastrtps applies to every service's response writer, to wait [`RESPONSE_WAIT`] (the wait
//! ends as soon as the reader matches).
//!
//! [`choose`] runs first thing in `main`, before any thread exists: when the user has no Fast DDS
//! profiles file of their own (`FASTRTPS_DEFAULT_PROFILES_FILE`) and the rmw is Fast DDS, it
//! writes the embedded profile under `$ROS_HOME` (default `~/.ros`) and points that variable at
//! it. A user's own file is kept; the node warns when it has no `service` data-writer profile.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The profile (XML), as installed to `share/blockstar_planner/config`.
pub const PROFILE_XML: &str = include_str!("../../config/fastdds_service_responses.xml");
/// How long one attempt to send a service response waits for the client's reader to match (the
/// profile's value): short, since the node's every input waits as long (see the module doc).
pub const RESPONSE_WAIT: Duration = Duration::from_millis(20);
/// The environment variable Fast DDS 2.x (ROS 2 Jazzy) reads its profiles file from.
pub const PROFILES_VARIABLE: &str = "FASTRTPS_DEFAULT_PROFILES_FILE";

/// What [`choose`] did, to be logged once the node has a logger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The node's profile was written to this file and the variable points at it.
    Ours(PathBuf),
    /// The user's own profiles file.
    Users {
        /// Where it is.
        path: PathBuf,
        /// Whether it names a `service` data-writer profile.
        has_service_profile: bool,
    },
    /// Another rmw than Fast DDS: nothing to do.
    OtherRmw(String),
    /// The profile could not be written (the message says why); Fast DDS's defaults apply.
    Failed(String),
}

impl Choice {
    /// One line for the node's log: info when the responses are covered, a warning otherwise.
    pub fn message(&self) -> (bool, String) {
        match self {
            Choice::Ours(path) => (
                true,
                format!(
                    "service and action responses wait up to {} ms per attempt for a client's reader to match, \
                     sent again until it does (Fast DDS profile {})",
                    RESPONSE_WAIT.as_millis(),
                    path.display()
                ),
            ),
            Choice::Users { path, has_service_profile: true } => {
                (true, format!("Fast DDS profiles from {PROFILES_VARIABLE}={} (it sets `service`)", path.display()))
            }
            Choice::Users { path, has_service_profile: false } => (
                false,
                format!(
                    "{PROFILES_VARIABLE}={} has no data_writer profile named \"service\": a response to a client \
                     that sends before discovery completes may be lost after Fast DDS's 100 ms; add the one of \
                     config/fastdds_service_responses.xml (README, \"Action and service responses\")",
                    path.display()
                ),
            ),
            Choice::OtherRmw(rmw) => (true, format!("rmw {rmw}: no Fast DDS profile needed")),
            Choice::Failed(why) => (
                false,
                format!("cannot write the Fast DDS profile ({why}): responses wait only Fast DDS's default 100 ms"),
            ),
        }
    }
}

/// Chooses the profile from `env` (a variable's value by name) and, where the node's own is
/// used, writes it under `ros_home`; returns what was chosen and the variable to set, if any.
/// Pure apart from the file it writes, so it tests without touching the process environment.
pub fn decide(env: &dyn Fn(&str) -> Option<String>, ros_home: &Path) -> (Choice, Option<(String, PathBuf)>) {
    let rmw = env("RMW_IMPLEMENTATION").unwrap_or_default();
    if !rmw.is_empty() && !rmw.starts_with("rmw_fastrtps") {
        return (Choice::OtherRmw(rmw), None);
    }
    if let Some(path) = env(PROFILES_VARIABLE).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        let has_service_profile = std::fs::read_to_string(&path).is_ok_and(|xml| names_service_profile(&xml));
        return (Choice::Users { path, has_service_profile }, None);
    }
    match write_profile(ros_home) {
        Ok(path) => (Choice::Ours(path.clone()), Some((PROFILES_VARIABLE.to_string(), path))),
        Err(why) => (Choice::Failed(why), None),
    }
}

/// Applies [`decide`] to this process. Call before ROS is initialised and before any other
/// thread starts (it sets an environment variable).
pub fn choose() -> Choice {
    let env = |name: &str| std::env::var(name).ok();
    let ros_home = env("ROS_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").filter(|h| !h.is_empty()).map(|h| Path::new(&h).join(".ros")))
        .unwrap_or_else(std::env::temp_dir);
    let (choice, variable) = decide(&env, &ros_home);
    if let Some((name, path)) = variable {
        std::env::set_var(name, path);
    }
    choice
}

/// Whether a Fast DDS profiles file defines a data-writer profile named `service`.
fn names_service_profile(xml: &str) -> bool {
    xml.split("<data_writer").skip(1).any(|rest| {
        let tag = rest.split('>').next().unwrap_or("");
        tag.contains("profile_name=\"service\"") || tag.contains("profile_name='service'")
    })
}

/// Writes [`PROFILE_XML`] to `<ros_home>/blockstar_planner/fastdds_service_responses.xml` unless
/// it holds that already (atomically: nodes starting together each rename a whole file).
fn write_profile(ros_home: &Path) -> Result<PathBuf, String> {
    let dir = ros_home.join("blockstar_planner");
    let path = dir.join("fastdds_service_responses.xml");
    if std::fs::read_to_string(&path).is_ok_and(|held| held == PROFILE_XML) {
        return Ok(path);
    }
    let fail = |what: &str, e: std::io::Error| format!("{what} {}: {e}", dir.display());
    std::fs::create_dir_all(&dir).map_err(|e| fail("cannot create", e))?;
    let partial = dir.join(format!(".fastdds_service_responses.{}.xml", std::process::id()));
    std::fs::write(&partial, PROFILE_XML).map_err(|e| fail("cannot write in", e))?;
    std::fs::rename(&partial, &path).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        fail("cannot rename in", e)
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| vars.get(name).cloned()
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("blockstar-dds-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_embedded_profile_names_service_and_the_stated_wait() {
        assert!(names_service_profile(PROFILE_XML));
        let wait = format!("<sec>{}</sec>", RESPONSE_WAIT.as_secs());
        let nanos = format!("<nanosec>{}</nanosec>", RESPONSE_WAIT.subsec_nanos());
        assert!(PROFILE_XML.contains(&wait) && PROFILE_XML.contains(&nanos), "the profile's max_blocking_time");
    }

    #[test]
    fn without_a_users_file_ours_is_written_once_and_chosen() {
        let home = scratch("ours");
        let (choice, variable) = decide(&env_of(&[]), &home);
        let Choice::Ours(path) = choice else { panic!("{choice:?}") };
        assert_eq!(std::fs::read_to_string(&path).unwrap(), PROFILE_XML);
        assert_eq!(variable, Some((PROFILES_VARIABLE.to_string(), path.clone())));
        // Again: the same file, still whole; a stale one is replaced.
        std::fs::write(&path, "old").unwrap();
        let (again, _) = decide(&env_of(&[("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")]), &home);
        assert_eq!(again, Choice::Ours(path.clone()));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), PROFILE_XML);
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_users_file_is_kept_and_checked_for_the_service_profile() {
        let home = scratch("users");
        std::fs::create_dir_all(&home).unwrap();
        let theirs = home.join("theirs.xml");
        std::fs::write(&theirs, "<dds><profiles><data_writer profile_name=\"other\"/></profiles></dds>").unwrap();
        let (choice, variable) = decide(&env_of(&[(PROFILES_VARIABLE, theirs.to_str().unwrap())]), &home);
        assert_eq!(choice, Choice::Users { path: theirs.clone(), has_service_profile: false });
        assert!(variable.is_none());
        assert!(!choice.message().0, "a file without the profile is warned about");
        std::fs::write(&theirs, PROFILE_XML).unwrap();
        let (choice, _) = decide(&env_of(&[(PROFILES_VARIABLE, theirs.to_str().unwrap())]), &home);
        assert_eq!(choice, Choice::Users { path: theirs, has_service_profile: true });
        assert!(!home.join("blockstar_planner").exists(), "nothing of ours written");
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn another_rmw_gets_nothing_and_an_unwritable_home_is_reported() {
        let home = scratch("other");
        let (choice, variable) = decide(&env_of(&[("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp")]), &home);
        assert_eq!((choice, variable), (Choice::OtherRmw("rmw_cyclonedds_cpp".into()), None));
        // A file where the directory should be.
        std::fs::write(&home, "not a directory").unwrap();
        let (choice, variable) = decide(&env_of(&[]), &home);
        assert!(matches!(choice, Choice::Failed(_)) && variable.is_none(), "{choice:?}");
        let _ = std::fs::remove_file(&home);
    }
}
