//! The node's parameter interface as rclcpp's nodes offer it: the services `~/list_parameters`,
//! `~/get_parameters`, `~/get_parameter_types`, `~/describe_parameters`, `~/set_parameters` and
//! `~/set_parameters_atomically` (what `ros2 param`, rqt_reconfigure and Nav2's tools call), and
//! events on `/parameter_events`. Requests are taken on a task of their own (so they are answered
//! while the node's loop waits), checked and applied to the [`LiveParams`], and answered through
//! the responder; the loop hears that accepted changes wait to be applied.
//!
//! Why not r2r's own services (`Node::make_derived_parameter_handler`): they answer on the async
//! runtime and end on the first refused answer (`respond(..).expect(..)`), so one client that
//! went away before its answer (a `ros2 param get` stopped with Ctrl-C, a tool that crashed)
//! ended the task serving all six, and the node had no parameter services for the rest of its
//! life; and each such answer waited the `service` profile's 5 s, the node's every input with it
//! (see `dds_profile`). Here a refused answer is resent for a while, at the node's short wait per
//! attempt, then given up and logged, and the services go on. Descriptions also carry what
//! rclcpp's do: read-only parameters, ranges and constraints.
//!
//! Semantics follow rclcpp's `ParameterService`: `set_parameters` applies each parameter on its
//! own, in order, and answers one result per parameter; `set_parameters_atomically` applies all
//! or none; a name the node does not have is refused with that reason; `list_parameters` filters
//! by prefixes and depth as rclcpp does. `get_parameters`, `get_parameter_types` and
//! `describe_parameters` answer one entry per name asked, `NOT_SET` for a name the node does not
//! have (as r2r's did, and rclcpp's with undeclared parameters allowed; rclcpp's default answers
//! nothing at all then). The node lists its own parameters only: a name in a parameters file that
//! it does not read (Nav2's `expected_planner_frequency`, `GridBased.plugin`) has no effect here
//! and is not listed (r2r listed every name given).

use super::clock::NodeClock;
use super::live_params::LiveParams;
use super::responder::Responder;
use super::spin_gate::SpinAck;
use crate::params::{Listed, NodeParams, ParamValue, Range};
use futures::StreamExt;
use r2r::rcl_interfaces::msg as rcl;
use r2r::rcl_interfaces::srv;
use r2r::QosProfile;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// The services, relative to the node (`~/`): named once here for their creation and for the
/// node's Fast DDS profile (`dds_profile`).
pub const SERVICES: [&str; 6] = [
    "~/list_parameters",
    "~/get_parameters",
    "~/get_parameter_types",
    "~/describe_parameters",
    "~/set_parameters",
    "~/set_parameters_atomically",
];

/// The topic parameter changes are announced on (rclcpp's, absolute: one for all nodes).
pub const EVENTS_TOPIC: &str = "/parameter_events";

/// Answers the parameter services from the node's [`LiveParams`].
struct Parameters {
    live: Arc<Mutex<LiveParams>>,
    events: Announcer,
    responder: Responder,
    logger: String,
}

/// Publishes `/parameter_events` for the node (clone it freely): whatever changes a parameter
/// announces it, the parameter services and a change undone alike.
#[derive(Clone)]
pub struct Announcer {
    publisher: Arc<Mutex<r2r::Publisher<rcl::ParameterEvent>>>,
    node: String,
    clock: NodeClock,
    logger: String,
}

impl Announcer {
    /// Announces `changed` (name, new value) as changed; nothing when it is empty.
    pub fn changed(&self, changed: &[(String, ParamValue)]) {
        if !changed.is_empty() {
            self.publish(Vec::new(), changed);
        }
    }

    fn publish(&self, new: Vec<(String, ParamValue)>, changed: &[(String, ParamValue)]) {
        let msgs = |list: &[(String, ParamValue)]| -> Vec<rcl::Parameter> {
            list.iter().map(|(name, v)| rcl::Parameter { name: name.clone(), value: to_msg(Some(v)) }).collect()
        };
        let event = rcl::ParameterEvent {
            stamp: self.clock.now(),
            node: self.node.clone(),
            new_parameters: msgs(&new),
            changed_parameters: msgs(changed),
            deleted_parameters: Vec::new(),
        };
        let published = self
            .publisher
            .lock()
            .map_err(|_| "lock poisoned".to_string())
            .and_then(|p| p.publish(&event).map_err(|e| e.to_string()));
        if let Err(e) = published {
            r2r::log_warn!(&self.logger, "could not publish a parameter event: {e}");
        }
    }
}

/// The parameter services' task, to spawn on the node's runtime.
pub type ServicesTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Creates the services and the `/parameter_events` publisher on `node` and announces every
/// parameter there as new (rclcpp does so as each is declared). Returns the services' task
/// (acknowledging each of the executor's spins through `gate`), the announcer, and the channel
/// on which the task says that accepted changes wait in `live` to be applied: one signal holds
/// them all (the loop reads `live` as it is then), so a burst of sets while the loop is busy
/// queues one signal, not one each.
pub fn create(
    node: &mut r2r::Node,
    live: Arc<Mutex<LiveParams>>,
    clock: NodeClock,
    responder: Responder,
    logger: &str,
    mut gate: SpinAck,
) -> r2r::Result<(ServicesTask, Announcer, mpsc::Receiver<()>)> {
    let qos = super::node::service_qos;
    let [list, get, get_types, describe, set, set_atomically] = SERVICES;
    let mut list = node.create_service::<srv::ListParameters::Service>(list, qos())?;
    let mut get = node.create_service::<srv::GetParameters::Service>(get, qos())?;
    let mut get_types = node.create_service::<srv::GetParameterTypes::Service>(get_types, qos())?;
    let mut describe = node.create_service::<srv::DescribeParameters::Service>(describe, qos())?;
    let mut set = node.create_service::<srv::SetParameters::Service>(set, qos())?;
    let mut set_atomically = node.create_service::<srv::SetParametersAtomically::Service>(set_atomically, qos())?;
    // rclcpp's ParameterEventsQoS: reliable, volatile, a deep queue.
    let publisher = node.create_publisher(EVENTS_TOPIC, QosProfile::default().reliable().keep_last(1000))?;
    let events = Announcer {
        publisher: Arc::new(Mutex::new(publisher)),
        node: node.fully_qualified_name()?,
        clock,
        logger: logger.to_owned(),
    };
    let parameters = Parameters { live, events: events.clone(), responder, logger: logger.to_owned() };
    let listing = parameters.listing();
    events.publish(listing.into_iter().map(|l| (l.name, l.value)).collect(), &[]);
    let (changes, changed) = mpsc::channel(1);
    let task = async move {
        loop {
            // Biased: the spin is acknowledged (last) only when no request waits (`spin_gate`).
            let accepted = tokio::select! {
                biased;
                Some(r) = list.next() => parameters.on_list(r),
                Some(r) = get.next() => parameters.on_get(r),
                Some(r) = get_types.next() => parameters.on_get_types(r),
                Some(r) = describe.next() => parameters.on_describe(r),
                Some(r) = set.next() => parameters.on_set(r),
                Some(r) = set_atomically.next() => parameters.on_set_atomically(r),
                Some(spun) = gate.spun() => {
                    spun.ack();
                    Accepted::Nothing
                }
                else => return,
            };
            // A signal already waiting covers this change too.
            if accepted == Accepted::Changes
                && matches!(changes.try_send(()), Err(mpsc::error::TrySendError::Closed(())))
            {
                return;
            }
        }
    };
    Ok((Box::pin(task), events, changed))
}

/// Whether a request changed a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accepted {
    Changes,
    Nothing,
}

impl Parameters {
    fn listing(&self) -> Vec<Listed> {
        match self.live.lock() {
            Ok(live) => live.listing(),
            Err(_) => Vec::new(),
        }
    }

    /// Answers `~/list_parameters`.
    fn on_list(&self, req: r2r::ServiceRequest<srv::ListParameters::Service>) -> Accepted {
        let names: Vec<String> = self.listing().into_iter().map(|l| l.name).collect();
        let result = list_names(&names, &req.message.prefixes, req.message.depth);
        self.responder.respond("a list_parameters request", req, srv::ListParameters::Response { result });
        Accepted::Nothing
    }

    /// The listed parameter of each name, in order (None: the node has no such parameter).
    fn each_named<T>(&self, names: &[String], f: impl Fn(&String, Option<&Listed>) -> T) -> Vec<T> {
        let listing = self.listing();
        names.iter().map(|name| f(name, listing.iter().find(|l| &l.name == name))).collect()
    }

    /// Answers `~/get_parameters`: one value per name asked, `NOT_SET` for an unknown name.
    fn on_get(&self, req: r2r::ServiceRequest<srv::GetParameters::Service>) -> Accepted {
        let values = self.each_named(&req.message.names, |_, l| to_msg(l.map(|l| &l.value)));
        self.responder.respond("a get_parameters request", req, srv::GetParameters::Response { values });
        Accepted::Nothing
    }

    /// Answers `~/get_parameter_types`: one type per name asked, `NOT_SET` for an unknown name.
    fn on_get_types(&self, req: r2r::ServiceRequest<srv::GetParameterTypes::Service>) -> Accepted {
        let types = self.each_named(&req.message.names, |_, l| to_msg(l.map(|l| &l.value)).type_);
        self.responder.respond("a get_parameter_types request", req, srv::GetParameterTypes::Response { types });
        Accepted::Nothing
    }

    /// Answers `~/describe_parameters`: one descriptor per name asked (only the name, type
    /// `NOT_SET`, for an unknown one).
    fn on_describe(&self, req: r2r::ServiceRequest<srv::DescribeParameters::Service>) -> Accepted {
        let descriptors = self.each_named(&req.message.names, |name, l| match l {
            Some(l) => descriptor(l),
            None => rcl::ParameterDescriptor { name: name.clone(), ..Default::default() },
        });
        self.responder.respond("a describe_parameters request", req, srv::DescribeParameters::Response { descriptors });
        Accepted::Nothing
    }

    /// Answers `~/set_parameters`, each parameter on its own.
    fn on_set(&self, req: r2r::ServiceRequest<srv::SetParameters::Service>) -> Accepted {
        let (results, changed) = self.apply(&req.message.parameters, false);
        self.responder.respond("a set_parameters request", req, srv::SetParameters::Response { results });
        changed
    }

    /// Answers `~/set_parameters_atomically`: all or none.
    fn on_set_atomically(&self, req: r2r::ServiceRequest<srv::SetParametersAtomically::Service>) -> Accepted {
        let (mut results, changed) = self.apply(&req.message.parameters, true);
        let result = results.pop().unwrap_or(rcl::SetParametersResult { successful: false, reason: String::new() });
        self.responder.respond(
            "a set_parameters_atomically request",
            req,
            srv::SetParametersAtomically::Response { result },
        );
        changed
    }

    /// Applies `requested` to the live parameters ([`apply_changes`]), logs and announces each
    /// change. The results are one per parameter, or one for all when `atomic`.
    fn apply(&self, requested: &[rcl::Parameter], atomic: bool) -> (Vec<rcl::SetParametersResult>, Accepted) {
        let requested: Vec<(String, Option<ParamValue>)> =
            requested.iter().map(|p| (p.name.clone(), from_msg(&p.value))).collect();
        let Ok(mut live) = self.live.lock() else {
            let refused = rcl::SetParametersResult { successful: false, reason: "parameter lock poisoned".into() };
            return (vec![refused; if atomic { 1 } else { requested.len() }], Accepted::Nothing);
        };
        let outcome = apply_changes(&live, &requested, atomic);
        live.params = outcome.params;
        // Announced under the lock, so the events go out in the order the values change (the
        // node's loop undoes a refused change under it too).
        self.events.changed(&outcome.changed);
        drop(live);
        for (name, value) in &outcome.changed {
            r2r::log_info!(&self.logger, "parameter {name} set to {value}");
        }
        let results = outcome
            .results
            .into_iter()
            .map(|r| match r {
                Ok(()) => rcl::SetParametersResult { successful: true, reason: String::new() },
                Err(reason) => rcl::SetParametersResult { successful: false, reason },
            })
            .collect();
        let accepted = if outcome.changed.is_empty() { Accepted::Nothing } else { Accepted::Changes };
        (results, accepted)
    }
}

/// What a set request does to the parameters.
#[derive(Debug)]
pub struct Applied {
    /// The parameters after the request.
    pub params: NodeParams,
    /// One result per parameter asked (one for all when atomic): `Err` with the reason.
    pub results: Vec<Result<(), String>>,
    /// The parameters whose value changed, with the new value, in request order.
    pub changed: Vec<(String, ParamValue)>,
}

/// Applies `requested` (name, value; None: no value) to `live`'s parameters in order. Not
/// `atomic`: each on its own, a refused one changes nothing and the next is applied to the
/// result so far (rclcpp's `set_parameters`). `atomic`: all or none, one result, which names
/// the first refused parameter.
pub fn apply_changes(live: &LiveParams, requested: &[(String, Option<ParamValue>)], atomic: bool) -> Applied {
    if atomic {
        return apply_together(live, requested);
    }
    let mut working = live.clone();
    let mut results = Vec::new();
    let mut changed: Vec<(String, ParamValue)> = Vec::new();
    for (name, value) in requested {
        match working.changed(name, value.as_ref()) {
            Ok(next) => {
                if next != working.params {
                    // As the parameter reads now (`1` given for a number reads `1.0`).
                    let now = next.runtime_value(name).or_else(|| value.clone());
                    changed.retain(|(n, _)| n != name);
                    changed.extend(now.map(|v| (name.clone(), v)));
                }
                working.params = next;
                results.push(Ok(()));
            }
            Err(reason) => results.push(Err(reason)),
        }
    }
    Applied { params: working.params, results, changed }
}

/// [`apply_changes`] when atomic: every parameter written, then the whole checked once (so
/// parameters checked against each other may change together in any order); an empty request
/// is refused, as rclcpp refuses it.
fn apply_together(live: &LiveParams, requested: &[(String, Option<ParamValue>)]) -> Applied {
    let refused =
        |reason: String| Applied { params: live.params.clone(), results: vec![Err(reason)], changed: Vec::new() };
    if requested.is_empty() {
        return refused("nothing was set: the request names no parameter".into());
    }
    match live.changed_together(requested) {
        Ok(next) => {
            let mut changed: Vec<(String, ParamValue)> = Vec::new();
            for (name, _) in requested {
                let now = next.runtime_value(name);
                if now.is_some() && now != live.params.runtime_value(name) {
                    changed.retain(|(n, _)| n != name);
                    changed.extend(now.map(|v| (name.clone(), v)));
                }
            }
            Applied { params: next, results: vec![Ok(())], changed }
        }
        Err(reason) => refused(format!("nothing was set: {reason}")),
    }
}

/// The parameters whose value differs between two listings of the same node, with their value
/// in `after`, in `after`'s order (a change undone: what to announce).
pub fn changed_between(before: &[Listed], after: &[Listed]) -> Vec<(String, ParamValue)> {
    after
        .iter()
        .filter(|a| before.iter().find(|b| b.name == a.name).is_none_or(|b| b.value != a.value))
        .map(|a| (a.name.clone(), a.value.clone()))
        .collect()
}

/// The names of `names` that `prefixes` and `depth` select, and the prefixes among them, as
/// rclcpp's `list_parameters` answers (depth 0: any depth; a name's depth is its count of `.`).
pub fn list_names(names: &[String], prefixes: &[String], depth: u64) -> rcl::ListParametersResult {
    const SEPARATOR: char = '.';
    let recursive = depth == srv::ListParameters::Request::DEPTH_RECURSIVE as u64;
    let shallow = |s: &str| recursive || (s.matches(SEPARATOR).count() as u64) < depth;
    let mut result = rcl::ListParametersResult { names: Vec::new(), prefixes: Vec::new() };
    for name in names {
        let all = prefixes.is_empty() && shallow(name);
        let by_prefix = prefixes.iter().any(|prefix| {
            name == prefix
                || name
                    .strip_prefix(prefix.as_str())
                    .is_some_and(|rest| rest.starts_with(SEPARATOR) && shallow(&rest[1..]))
        });
        if all || by_prefix {
            result.names.push(name.clone());
            if let Some((prefix, _)) = name.rsplit_once(SEPARATOR) {
                if !result.prefixes.iter().any(|p| p == prefix) {
                    result.prefixes.push(prefix.to_string());
                }
            }
        }
    }
    result
}

/// A parameter's descriptor: its type, description, unit, whether it is read only (set only at
/// start), and its range (a closed interval as rclcpp's range, every range in words).
pub fn descriptor(l: &Listed) -> rcl::ParameterDescriptor {
    // The unit, unless the description already gives it ("... (m).").
    let said = l.unit.is_empty() || l.description.contains(&format!("({}", l.unit));
    let unit = if said { String::new() } else { format!(" ({})", l.unit) };
    let mut d = rcl::ParameterDescriptor {
        name: l.name.clone(),
        type_: to_msg(Some(&l.value)).type_,
        description: format!("{}{unit}", l.description),
        additional_constraints: l.range.wanted(l.unit),
        read_only: !l.runtime,
        ..Default::default()
    };
    if let Range::Within(from_value, to_value) = l.range {
        match l.value {
            ParamValue::Double(_) => {
                d.floating_point_range = vec![rcl::FloatingPointRange { from_value, to_value, step: 0.0 }]
            }
            ParamValue::Integer(_) => {
                d.integer_range =
                    vec![rcl::IntegerRange { from_value: from_value as i64, to_value: to_value as i64, step: 1 }]
            }
            _ => {}
        }
    }
    d
}

/// A message value as the library's (None: `NOT_SET`; arrays other than of strings are
/// [`ParamValue::Other`], which every parameter refuses).
pub fn from_msg(v: &rcl::ParameterValue) -> Option<ParamValue> {
    use rcl::ParameterType as T;
    match v.type_ {
        t if t == T::PARAMETER_NOT_SET as u8 => None,
        t if t == T::PARAMETER_BOOL as u8 => Some(ParamValue::Bool(v.bool_value)),
        t if t == T::PARAMETER_INTEGER as u8 => Some(ParamValue::Integer(v.integer_value)),
        t if t == T::PARAMETER_DOUBLE as u8 => Some(ParamValue::Double(v.double_value)),
        t if t == T::PARAMETER_STRING as u8 => Some(ParamValue::String(v.string_value.clone())),
        t if t == T::PARAMETER_STRING_ARRAY as u8 => Some(ParamValue::Strings(v.string_array_value.clone())),
        t if t == T::PARAMETER_BYTE_ARRAY as u8 => Some(ParamValue::Other("a byte array")),
        t if t == T::PARAMETER_BOOL_ARRAY as u8 => Some(ParamValue::Other("a bool array")),
        t if t == T::PARAMETER_INTEGER_ARRAY as u8 => Some(ParamValue::Other("an integer array")),
        t if t == T::PARAMETER_DOUBLE_ARRAY as u8 => Some(ParamValue::Other("a double array")),
        _ => Some(ParamValue::Other("a value of an unknown type")),
    }
}

/// The library's value as a message (None or [`ParamValue::Other`]: `NOT_SET`).
pub fn to_msg(v: Option<&ParamValue>) -> rcl::ParameterValue {
    use rcl::ParameterType as T;
    let mut m = rcl::ParameterValue::default();
    match v {
        None | Some(ParamValue::Other(_)) => m.type_ = T::PARAMETER_NOT_SET as u8,
        Some(ParamValue::Bool(b)) => (m.type_, m.bool_value) = (T::PARAMETER_BOOL as u8, *b),
        Some(ParamValue::Integer(i)) => (m.type_, m.integer_value) = (T::PARAMETER_INTEGER as u8, *i),
        Some(ParamValue::Double(d)) => (m.type_, m.double_value) = (T::PARAMETER_DOUBLE as u8, *d),
        Some(ParamValue::String(s)) => (m.type_, m.string_value) = (T::PARAMETER_STRING as u8, s.clone()),
        Some(ParamValue::Strings(v)) => (m.type_, m.string_array_value) = (T::PARAMETER_STRING_ARRAY as u8, v.clone()),
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live() -> LiveParams {
        LiveParams { params: NodeParams::default(), use_sim_time: false }
    }

    fn d(v: f64) -> Option<ParamValue> {
        Some(ParamValue::Double(v))
    }

    #[test]
    fn each_parameter_is_set_on_its_own_in_order_and_a_refusal_changes_nothing_of_it() {
        let live = live();
        let asked = [
            ("robot_radius".to_string(), d(0.3)),
            ("robot_radius".to_string(), d(-1.0)),
            ("global_frame".to_string(), Some(ParamValue::String("odom".into()))),
            ("no_such".to_string(), d(1.0)),
            ("min_turning_radius".to_string(), d(live.params.planner.min_turning_radius)),
            ("replan_period".to_string(), None),
            ("robot_radius".to_string(), d(0.35)),
        ];
        let out = apply_changes(&live, &asked, false);
        let ok: Vec<bool> = out.results.iter().map(Result::is_ok).collect();
        assert_eq!(ok, [true, false, false, false, true, false, true]);
        assert!(out.results[1].as_ref().unwrap_err().contains("robot_radius must be >= 0 m"), "{:?}", out.results);
        assert!(out.results[2].as_ref().unwrap_err().contains("cannot be changed at run time"));
        assert!(out.results[3].as_ref().unwrap_err().contains("there is no parameter no_such"));
        assert!(out.results[5].as_ref().unwrap_err().contains("a value is required"));
        assert_eq!(out.params.planner.robot_radius, 0.35);
        // A value set to what it was is no change; a name set twice is announced once, last value.
        assert_eq!(out.changed, [("robot_radius".to_string(), ParamValue::Double(0.35))]);
        assert_eq!(out.params, live.params.with_change("robot_radius", &ParamValue::Double(0.35)).unwrap());
    }

    #[test]
    fn an_atomic_set_is_all_or_none() {
        let live = live();
        let good = [("robot_radius".to_string(), d(0.3)), ("tolerance".to_string(), d(0.5))];
        let out = apply_changes(&live, &good, true);
        assert_eq!(out.results, [Ok(())]);
        assert_eq!((out.params.planner.robot_radius, out.params.tolerance), (0.3, 0.5));
        assert_eq!(out.changed.len(), 2);
        let bad = [good[0].clone(), ("heading_bins".to_string(), Some(ParamValue::Integer(12)))];
        let out = apply_changes(&live, &bad, true);
        assert_eq!(out.results.len(), 1);
        assert!(
            out.results[0].as_ref().unwrap_err().contains("heading_bins must be one of 8, 16"),
            "{:?}",
            out.results
        );
        assert_eq!(out.params, live.params);
        assert!(out.changed.is_empty());
    }

    #[test]
    fn an_atomic_set_checks_its_parameters_together_and_an_empty_one_sets_nothing() {
        // A rectangle padded 0.3 m in force; a footprint with a notch holds only without padding
        // (the padding widens the notch over the vehicle), so the two change together, in either
        // order, or not at all.
        let mut live = live();
        live.params = live
            .params
            .with_change(
                "footprint",
                &ParamValue::String("[[0.5, 0.3], [0.5, -0.3], [-0.5, -0.3], [-0.5, 0.3]]".into()),
            )
            .and_then(|p| p.with_change("footprint_padding", &ParamValue::Double(0.3)))
            .unwrap();
        let notched = Some(ParamValue::String(
            "[[1, 1], [0.2, 1], [0.2, 0.5], [-0.2, 0.5], [-0.2, 1], [-1, 1], [-1, -1], [1, -1]]".into(),
        ));
        let footprint = ("footprint".to_string(), notched);
        let padding = ("footprint_padding".to_string(), d(0.0));
        assert!(
            apply_changes(&live, std::slice::from_ref(&footprint), true).results[0].is_err(),
            "the notched footprint padded"
        );
        for asked in [[footprint.clone(), padding.clone()], [padding, footprint]] {
            let out = apply_changes(&live, &asked, true);
            assert_eq!(out.results, [Ok(())], "{asked:?}");
            assert_eq!(out.params.planner.footprint_padding, 0.0);
            assert_eq!(out.changed.len(), 2);
        }
        let out = apply_changes(&live, &[], true);
        assert!(out.results[0].as_ref().is_err_and(|e| e.contains("names no parameter")), "{:?}", out.results);
        assert_eq!(out.params, live.params);
    }

    #[test]
    fn a_change_undone_is_the_difference_between_the_listings() {
        let before = live();
        let mut after = before.clone();
        after.params = after.params.with_change("robot_radius", &ParamValue::Double(0.3)).unwrap();
        let changed = changed_between(&before.listing(), &after.listing());
        assert_eq!(changed, [("robot_radius".to_string(), ParamValue::Double(0.3))]);
        assert!(changed_between(&after.listing(), &after.listing()).is_empty());
    }

    #[test]
    fn listing_filters_by_prefix_and_depth_as_rclcpp_does() {
        let names: Vec<String> = ["a", "b.c", "b.d.e", "bb.f"].iter().map(|s| s.to_string()).collect();
        let list = |prefixes: &[&str], depth| {
            let prefixes: Vec<String> = prefixes.iter().map(|s| s.to_string()).collect();
            let r = list_names(&names, &prefixes, depth);
            (r.names, r.prefixes)
        };
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(list(&[], 0), (names.clone(), s(&["b", "b.d", "bb"])));
        assert_eq!(list(&[], 1), (s(&["a"]), s(&[])));
        assert_eq!(list(&[], 2), (s(&["a", "b.c", "bb.f"]), s(&["b", "bb"])));
        // A prefix matches itself and what follows it after a separator, not "bb".
        assert_eq!(list(&["b"], 0), (s(&["b.c", "b.d.e"]), s(&["b", "b.d"])));
        assert_eq!(list(&["b"], 1), (s(&["b.c"]), s(&["b"])));
        assert_eq!(list(&["a"], 0), (s(&["a"]), s(&[])));
    }

    #[test]
    fn descriptors_say_what_may_change_and_within_what() {
        let listing = live().listing();
        let find = |n: &str| descriptor(listing.iter().find(|l| l.name == n).unwrap());
        let radius = find("robot_radius");
        assert_eq!(radius.type_, rcl::ParameterType::PARAMETER_DOUBLE as u8);
        assert!(!radius.read_only);
        assert_eq!(radius.additional_constraints, ">= 0 m");
        assert!(radius.description.contains("(m"), "{}", radius.description);
        // Each description gives its unit once.
        for l in listing.iter().filter(|l| !l.unit.is_empty()) {
            let d = descriptor(l).description;
            assert_eq!(d.matches(&format!("({}", l.unit)).count(), 1, "{}: {d}", l.name);
        }
        assert!(find("global_frame").read_only);
        assert_eq!(find("use_sim_time").type_, rcl::ParameterType::PARAMETER_BOOL as u8);
        let within =
            listing.iter().find(|l| matches!(l.range, Range::Within(..)) && matches!(l.value, ParamValue::Double(_)));
        let within = descriptor(within.expect("a parameter with a closed range"));
        assert_eq!(within.floating_point_range.len(), 1);
    }

    #[test]
    fn values_survive_the_message_both_ways() {
        for v in [
            ParamValue::Bool(true),
            ParamValue::Integer(-3),
            ParamValue::Double(0.25),
            ParamValue::String("map".into()),
            ParamValue::Strings(vec!["A".into(), "B".into()]),
        ] {
            assert_eq!(from_msg(&to_msg(Some(&v))), Some(v));
        }
        assert_eq!(from_msg(&to_msg(None)), None);
        let mut doubles =
            rcl::ParameterValue { type_: rcl::ParameterType::PARAMETER_DOUBLE_ARRAY as u8, ..Default::default() };
        doubles.double_array_value = vec![1.0];
        assert_eq!(from_msg(&doubles), Some(ParamValue::Other("a double array")));
    }
}
