//! The Fast DDS profile the node runs with, chosen before ROS starts.
//!
//! Fast DDS drops a service response when the client's response reader is not matched within the
//! response writer's `max_blocking_time` (100 ms by default): `rmw_send_response` returns
//! `RMW_RET_TIMEOUT` and the client waits forever (ros2/rmw_fastrtps#467, #704). A client
//! announces its request writer and its response reader on two separate discovery channels, so
//! on a busy machine a goal request can arrive before the reader is known; an action client that
//! sends the moment `wait_for_server` returns (Nav2's behaviour tree does) then never hears that
//! its goal was accepted. `config/fastdds_service_responses.xml` (embedded here) sets the profile
//! named `service`, which rmw_fastrtps applies to every service's response writer, to wait up to
//! [`SERVICE_WAIT`] instead; the wait ends as soon as the reader matches. That covers any service
//! the node does not answer itself.
//!
//! The node's own services (its actions, `is_path_valid`, the lifecycle and parameter services)
//! answer through
//! `responder`, which sends a refused response again; for them a long wait is harm without gain:
//! r2r holds the service's lock while the rmw waits, and r2r's executor (`Node::spin_once`) takes
//! every service's lock on every spin, so the whole node waits with it. The profile the node
//! writes therefore also names each of them (rmw_fastrtps looks a response writer's profile up by
//! its topic, "rr" + the service's full name + "Reply", before `service`), at [`RESPONSE_WAIT`]
//! per attempt. Their full names come from the command line's `__node` and `__ns` remaps
//! ([`OwnServices::from_args`]); a name missed (a remap of a service itself) falls back to
//! `service`'s wait.
//!
//! [`choose`] runs first thing in `main`, before any thread exists: when the user has no Fast DDS
//! profiles file of their own (`FASTRTPS_DEFAULT_PROFILES_FILE`) and the rmw is Fast DDS, it
//! writes the profile under `$ROS_HOME` (default `~/.ros`) and points that variable at it. A
//! user's own file is kept; the node warns when it has no `service` data-writer profile.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The profile (XML), as installed to `share/blockstar_planner/config`.
pub const PROFILE_XML: &str = include_str!("../../config/fastdds_service_responses.xml");
/// How long one attempt to send a response of the node's own services waits for the client's
/// reader to match: short, since the node's every input waits as long (see the module doc).
pub const RESPONSE_WAIT: Duration = Duration::from_millis(20);
/// How long a response of any other service waits (the `service` profile's value): a service the
/// node's names miss (one remapped by itself), or any node's, rclcpp's included, that reads the
/// installed file.
pub const SERVICE_WAIT: Duration = Duration::from_secs(5);

/// The node's own services, by the names their responses are sent under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnServices {
    /// The node's namespace (`/` or `/a/b`).
    namespace: String,
    /// The node's name.
    name: String,
}

impl OwnServices {
    /// The node's namespace and name as rcl makes them from `args` (the process's arguments): the
    /// first `-r`/`--remap` rule `__node:=` (or `__name:=`) and `__ns:=` inside a `--ros-args`
    /// section, plain or for `planner_node:`; else `planner_node` in `/`.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Self {
        let (mut namespace, mut name) = (None, None);
        let (mut in_ros_args, mut remap_next) = (false, false);
        for arg in args {
            if arg == "--ros-args" {
                in_ros_args = true;
            } else if arg == "--" {
                in_ros_args = false;
            } else if in_ros_args && (arg == "-r" || arg == "--remap") {
                remap_next = true;
                continue;
            } else if remap_next {
                let rule = arg.strip_prefix(&format!("{}:", super::node::NODE_NAME)).unwrap_or(&arg);
                if let Some(v) = rule.strip_prefix("__node:=").or_else(|| rule.strip_prefix("__name:=")) {
                    name.get_or_insert_with(|| v.to_string());
                } else if let Some(v) = rule.strip_prefix("__ns:=") {
                    namespace.get_or_insert_with(|| format!("/{}", v.trim_matches('/')));
                }
            }
            remap_next = false;
        }
        Self {
            namespace: namespace.unwrap_or_else(|| "/".into()),
            name: name.unwrap_or_else(|| super::node::NODE_NAME.into()),
        }
    }

    /// Full service names: relative ones in the namespace, `~/` ones under the node.
    fn full(&self, service: &str) -> String {
        let base = match service.strip_prefix("~/") {
            Some(_) => format!("{}/{}", self.namespace.trim_end_matches('/'), self.name),
            None => self.namespace.trim_end_matches('/').to_string(),
        };
        format!("{base}/{}", service.trim_start_matches("~/"))
    }

    /// The response topics of the node's own services, as rmw_fastrtps names them.
    pub fn response_topics(&self) -> Vec<String> {
        let mut services: Vec<String> = Vec::new();
        for action in ["compute_path_to_pose", "compute_path_through_poses", "~/compute_path"] {
            for part in ["send_goal", "cancel_goal", "get_result"] {
                services.push(format!("{action}/_action/{part}"));
            }
        }
        services.push("is_path_valid".into());
        services.extend(super::lifecycle::SERVICES.map(String::from));
        services.extend(super::param_services::SERVICES.map(String::from));
        services.iter().map(|s| format!("rr{}Reply", self.full(s))).collect()
    }

    /// [`PROFILE_XML`] with a data-writer profile per own response topic at [`RESPONSE_WAIT`].
    pub fn profile(&self) -> String {
        let wait = |d: Duration| format!("<sec>{}</sec><nanosec>{}</nanosec>", d.as_secs(), d.subsec_nanos());
        let own: String = self
            .response_topics()
            .iter()
            .map(|topic| {
                format!(
                    "    <data_writer profile_name=\"{topic}\"><qos><reliability><kind>RELIABLE</kind>\
                     <max_blocking_time>{}</max_blocking_time></reliability></qos></data_writer>\n",
                    wait(RESPONSE_WAIT)
                )
            })
            .collect();
        PROFILE_XML.replacen("  </profiles>", &format!("{own}  </profiles>"), 1)
    }

    /// The file the profile is written to under `dir`: one per node name, so nodes of other names
    /// starting beside this one do not overwrite it.
    fn file_in(&self, dir: &Path) -> PathBuf {
        let fqn = self.full("~/").trim_end_matches('/').replace('/', "_");
        dir.join(format!("fastdds_service_responses{fqn}.xml"))
    }
}
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
pub fn decide(
    env: &dyn Fn(&str) -> Option<String>,
    ros_home: &Path,
    own: &OwnServices,
) -> (Choice, Option<(String, PathBuf)>) {
    let rmw = env("RMW_IMPLEMENTATION").unwrap_or_default();
    if !rmw.is_empty() && !rmw.starts_with("rmw_fastrtps") {
        return (Choice::OtherRmw(rmw), None);
    }
    if let Some(path) = env(PROFILES_VARIABLE).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        let has_service_profile = std::fs::read_to_string(&path).is_ok_and(|xml| names_service_profile(&xml));
        return (Choice::Users { path, has_service_profile }, None);
    }
    match write_profile(ros_home, own) {
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
    let (choice, variable) = decide(&env, &ros_home, &OwnServices::from_args(std::env::args()));
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

/// Writes [`OwnServices::profile`] to `<ros_home>/blockstar_planner/` unless the file holds
/// that already (atomically: nodes starting together each rename a whole file).
fn write_profile(ros_home: &Path, own: &OwnServices) -> Result<PathBuf, String> {
    let dir = ros_home.join("blockstar_planner");
    let path = own.file_in(&dir);
    let xml = own.profile();
    if std::fs::read_to_string(&path).is_ok_and(|held| held == xml) {
        return Ok(path);
    }
    let fail = |what: &str, e: std::io::Error| format!("{what} {}: {e}", dir.display());
    std::fs::create_dir_all(&dir).map_err(|e| fail("cannot create", e))?;
    let partial = dir.join(format!(".fastdds_service_responses.{}.xml", std::process::id()));
    std::fs::write(&partial, &xml).map_err(|e| fail("cannot write in", e))?;
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

    fn own(args: &[&str]) -> OwnServices {
        OwnServices::from_args(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn the_embedded_profile_names_service_and_the_stated_wait() {
        assert!(names_service_profile(PROFILE_XML));
        assert!(PROFILE_XML.contains(&format!("<sec>{}</sec>", SERVICE_WAIT.as_secs())));
    }

    #[test]
    fn the_nodes_names_come_from_its_remaps_as_rcl_makes_them() {
        let names = |o: OwnServices| (o.namespace, o.name);
        assert_eq!(names(own(&["planner_node"])), ("/".into(), "planner_node".into()));
        // What `ros2 launch` passes for Node(name=..., namespace=...).
        let launched = own(&["planner_node", "--ros-args", "-r", "__node:=planner", "-r", "__ns:=/robot1/"]);
        assert_eq!(names(launched), ("/robot1".into(), "planner".into()));
        // For this node by name, the first rule winning; another node's rules, and rules outside
        // --ros-args, not.
        let args = [
            "x",
            "-r",
            "__ns:=/outside",
            "--ros-args",
            "--remap",
            "other:__node:=no",
            "-r",
            "planner_node:__name:=first",
            "-r",
            "__node:=second",
            "-r",
            "__ns:=a/b",
            "--",
            "-r",
            "__ns:=/after",
        ];
        assert_eq!(names(own(&args)), ("/a/b".into(), "first".into()));
    }

    #[test]
    fn the_written_profile_names_each_own_service_at_the_short_wait() {
        let o = own(&["planner_node", "--ros-args", "-r", "__ns:=/fleet", "-r", "__node:=planner"]);
        let topics = o.response_topics();
        assert_eq!(topics.len(), 3 * 3 + 1 + 5 + 6);
        for expected in [
            "rr/fleet/compute_path_to_pose/_action/send_goalReply",
            "rr/fleet/planner/compute_path/_action/get_resultReply",
            "rr/fleet/is_path_validReply",
            "rr/fleet/planner/change_stateReply",
            "rr/fleet/planner/set_parametersReply",
            "rr/fleet/planner/describe_parametersReply",
        ] {
            assert!(topics.iter().any(|t| t == expected), "{expected} in {topics:?}");
        }
        assert!(own(&["planner_node"]).response_topics().iter().any(|t| t == "rr/planner_node/get_stateReply"));
        let xml = o.profile();
        assert!(
            names_service_profile(&xml) && xml.starts_with(&PROFILE_XML[..PROFILE_XML.find("  </profiles>").unwrap()])
        );
        let short = format!("<sec>0</sec><nanosec>{}</nanosec>", RESPONSE_WAIT.subsec_nanos());
        assert_eq!(xml.matches(&short).count(), topics.len());
        for topic in &topics {
            assert!(xml.contains(&format!("profile_name=\"{topic}\"")), "{topic}");
        }
        assert!(xml.trim_end().ends_with("</profiles>\n</dds>"), "{xml}");
    }

    #[test]
    fn without_a_users_file_ours_is_written_once_and_chosen() {
        let home = scratch("ours");
        let plain = own(&["planner_node"]);
        let (choice, variable) = decide(&env_of(&[]), &home, &plain);
        let Choice::Ours(path) = choice else { panic!("{choice:?}") };
        assert_eq!(std::fs::read_to_string(&path).unwrap(), plain.profile());
        assert_eq!(variable, Some((PROFILES_VARIABLE.to_string(), path.clone())));
        // Again: the same file, still whole; a stale one is replaced.
        std::fs::write(&path, "old").unwrap();
        let (again, _) = decide(&env_of(&[("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")]), &home, &plain);
        assert_eq!(again, Choice::Ours(path.clone()));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), plain.profile());
        // Another node's name: a file of its own, this one left alone.
        let other = own(&["planner_node", "--ros-args", "-r", "__ns:=/r2"]);
        let (theirs, _) = decide(&env_of(&[]), &home, &other);
        assert_ne!(theirs, Choice::Ours(path.clone()));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), plain.profile());
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_users_file_is_kept_and_checked_for_the_service_profile() {
        let home = scratch("users");
        std::fs::create_dir_all(&home).unwrap();
        let theirs = home.join("theirs.xml");
        std::fs::write(&theirs, "<dds><profiles><data_writer profile_name=\"other\"/></profiles></dds>").unwrap();
        let (choice, variable) =
            decide(&env_of(&[(PROFILES_VARIABLE, theirs.to_str().unwrap())]), &home, &own(&["planner_node"]));
        assert_eq!(choice, Choice::Users { path: theirs.clone(), has_service_profile: false });
        assert!(variable.is_none());
        assert!(!choice.message().0, "a file without the profile is warned about");
        std::fs::write(&theirs, PROFILE_XML).unwrap();
        let (choice, _) =
            decide(&env_of(&[(PROFILES_VARIABLE, theirs.to_str().unwrap())]), &home, &own(&["planner_node"]));
        assert_eq!(choice, Choice::Users { path: theirs, has_service_profile: true });
        assert!(!home.join("blockstar_planner").exists(), "nothing of ours written");
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn another_rmw_gets_nothing_and_an_unwritable_home_is_reported() {
        let home = scratch("other");
        let (choice, variable) =
            decide(&env_of(&[("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp")]), &home, &own(&["planner_node"]));
        assert_eq!((choice, variable), (Choice::OtherRmw("rmw_cyclonedds_cpp".into()), None));
        // A file where the directory should be.
        std::fs::write(&home, "not a directory").unwrap();
        let (choice, variable) = decide(&env_of(&[]), &home, &own(&["planner_node"]));
        assert!(matches!(choice, Choice::Failed(_)) && variable.is_none(), "{choice:?}");
        let _ = std::fs::remove_file(&home);
    }
}
