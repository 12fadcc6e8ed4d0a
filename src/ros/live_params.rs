//! The parameters the running node works with, and the one rule for changing them at run time
//! (`ros2 param set`): each change is checked with the range checks of
//! [`NodeParams::with_change`] and refused with the reason (the old value stays). The parameter
//! services (`param_services`) list, read and change them here; the node state applies what
//! they accept.

use crate::params::{Listed, NodeParams, ParamValue, Range};
use crate::planner::PlannerConfig;

/// The parameters the running node works with, shared by the parameter services and the node
/// state.
#[derive(Debug, Clone)]
pub struct LiveParams {
    /// The values in force (or about to be: the node applies them off the planning path).
    pub params: NodeParams,
    /// Whether the node runs on simulated time (fixed at start).
    pub use_sim_time: bool,
}

/// An r2r parameter value in the library's terms (None: not set).
pub fn from_r2r(v: &r2r::ParameterValue) -> Option<ParamValue> {
    match v {
        r2r::ParameterValue::NotSet => None,
        r2r::ParameterValue::Bool(b) => Some(ParamValue::Bool(*b)),
        r2r::ParameterValue::Integer(i) => Some(ParamValue::Integer(*i)),
        r2r::ParameterValue::Double(d) => Some(ParamValue::Double(*d)),
        r2r::ParameterValue::String(s) => Some(ParamValue::String(s.clone())),
        r2r::ParameterValue::StringArray(v) => Some(ParamValue::Strings(v.clone())),
        _ => Some(ParamValue::Other("an array")),
    }
}

/// ROS's standard parameter for simulated time. The node lists it (with the value it started
/// with) and reads it once at start (`clock`), so a change is refused with that reason rather
/// than as an unknown name, and setting the value in force is accepted.
const USE_SIM_TIME: &str = "use_sim_time";

impl LiveParams {
    /// Every parameter, as `ros2 param list`, `get` and `describe` show it:
    /// [`NodeParams::listing`] and `use_sim_time`.
    pub fn listing(&self) -> Vec<Listed> {
        let mut listing = self.params.listing();
        listing.push(Listed {
            name: USE_SIM_TIME.into(),
            value: ParamValue::Bool(self.use_sim_time),
            description: "Take time from /clock (read at start; restart the node to change it).",
            range: Range::Any,
            unit: "",
            runtime: false,
        });
        listing
    }

    /// The parameters with `name` set to `value` at run time; `self` is never changed. Fails
    /// with the reason, naming the parameter, when the name is unknown, the value is missing, of
    /// the wrong type or out of range, or the parameter is read only at start.
    pub fn changed(&self, name: &str, value: Option<&ParamValue>) -> Result<NodeParams, String> {
        self.changed_together(&[(name.to_string(), value.cloned())])
    }

    /// The parameters with every `(name, value)` of `requested` set at once, checked as a whole
    /// ([`NodeParams::with_changes`]: `set_parameters_atomically`); `self` is never changed.
    /// Fails as [`LiveParams::changed`] does, for the first parameter refused, or with the
    /// whole's reason.
    pub fn changed_together(&self, requested: &[(String, Option<ParamValue>)]) -> Result<NodeParams, String> {
        let mut changes = Vec::with_capacity(requested.len());
        for (name, value) in requested {
            let value = value.as_ref().ok_or_else(|| format!("parameter {name}: a value is required"))?;
            if name == USE_SIM_TIME {
                if *value != ParamValue::Bool(self.use_sim_time) {
                    return Err(format!(
                        "use_sim_time is read when the node starts and stays {}: restart the node with the value \
                         you need (launch argument use_sim_time)",
                        self.use_sim_time
                    ));
                }
                continue;
            }
            changes.push((name.as_str(), value));
        }
        self.params.with_changes(&changes).map_err(|e| e.message)
    }

    /// After a batch that tried the planner parameters `attempted` (one per profile) left
    /// `in_force`: the parameters with each one that still holds the value the batch tried put
    /// back to the value in force, and those put back with that value (to announce). One set
    /// since the batch began (its value no longer the tried one) is kept: its own change is on
    /// its way. Should the values kept and those put back not hold together, every planner
    /// parameter is put back.
    pub fn undo(
        &self,
        attempted: &[PlannerConfig],
        in_force: &[PlannerConfig],
    ) -> (NodeParams, Vec<(String, ParamValue)>) {
        let now = self.params.listing();
        let with = |configs: &[PlannerConfig]| {
            let mut p = self.params.clone();
            if let Some((first, rest)) = configs.split_first() {
                if rest.len() == p.profiles.len() {
                    p.planner = first.clone();
                    p.profiles = rest.to_vec();
                }
            }
            p
        };
        let (tried, wholesale) = (with(attempted).listing(), with(in_force));
        let kept = wholesale.listing();
        let put_back: Vec<(&str, &ParamValue)> = now
            .iter()
            .zip(&tried)
            .zip(&kept)
            .filter(|((n, t), k)| n.value == t.value && t.value != k.value)
            .map(|((n, _), k)| (n.name.as_str(), &k.value))
            .collect();
        let next = self.params.with_values(&put_back).unwrap_or(wholesale);
        let undone = super::param_services::changed_between(&now, &next.listing());
        (next, undone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_sim_time_keeps_its_start_value_and_says_why() {
        let live = LiveParams { params: NodeParams::default(), use_sim_time: true };
        assert!(live.changed(USE_SIM_TIME, Some(&ParamValue::Bool(true))).is_ok(), "the value in force");
        let refused = live.changed(USE_SIM_TIME, Some(&ParamValue::Bool(false))).unwrap_err();
        assert!(refused.contains("read when the node starts and stays true"), "{refused}");
        assert!(live.changed(USE_SIM_TIME, Some(&ParamValue::Integer(1))).is_err());
        assert!(live.changed(USE_SIM_TIME, None).is_err());
        // Other names go through the parameter table.
        assert!(live.changed("robot_radius", Some(&ParamValue::Double(0.3))).is_ok());
        assert!(live.changed("robot_radius", Some(&ParamValue::Double(-1.0))).is_err());
        assert!(live.changed("robot_radius", None).unwrap_err().contains("robot_radius"));
        let listed = live.listing();
        let sim = listed.iter().find(|l| l.name == USE_SIM_TIME).unwrap();
        assert_eq!((sim.value.clone(), sim.runtime), (ParamValue::Bool(true), false));
    }

    fn set(live: &mut LiveParams, name: &str, value: ParamValue) {
        live.params = live.changed(name, Some(&value)).unwrap();
    }

    fn value(live: &LiveParams, name: &str) -> ParamValue {
        live.listing().into_iter().find(|l| l.name == name).unwrap().value
    }

    #[test]
    fn a_refused_rebuild_puts_back_only_what_it_tried_and_keeps_a_later_set() {
        let mut live = LiveParams { params: NodeParams::default(), use_sim_time: false };
        let in_force = vec![live.params.planner.clone()];
        // heading_bins 16 is tried (and, say, refused); robot_radius is set while it runs.
        set(&mut live, "heading_bins", ParamValue::Integer(16));
        let attempted = vec![live.params.planner.clone()];
        set(&mut live, "robot_radius", ParamValue::Double(0.3));
        let (kept, undone) = live.undo(&attempted, &in_force);
        assert_eq!(undone, vec![("heading_bins".to_string(), ParamValue::Integer(8))]);
        let after = LiveParams { params: kept, use_sim_time: false };
        assert_eq!(value(&after, "heading_bins"), ParamValue::Integer(8));
        assert_eq!(value(&after, "robot_radius"), ParamValue::Double(0.3), "the later set is kept");
        // Set back to the tried value since: it is the tried value, so it goes back too.
        let mut again = after.clone();
        set(&mut again, "heading_bins", ParamValue::Integer(16));
        let tried_again = vec![again.params.planner.clone()];
        let (kept, undone) = again.undo(&tried_again, &in_force);
        let names: Vec<&str> = undone.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["robot_radius", "heading_bins"]);
        assert_eq!(kept, NodeParams::default());
    }

    #[test]
    fn an_undo_that_would_not_hold_together_puts_back_every_planner_parameter() {
        // In force: a rectangle padded 0.3 m. The batch tries the padding 0; while it runs, a
        // footprint with a notch is set, which holds with no padding but not with 0.3 m (the
        // padding widens the notch over the vehicle).
        let notched = "[[1, 1], [0.2, 1], [0.2, 0.5], [-0.2, 0.5], [-0.2, 1], [-1, 1], [-1, -1], [1, -1]]";
        let mut live = LiveParams { params: NodeParams::default(), use_sim_time: false };
        set(&mut live, "footprint", ParamValue::String("[[0.5, 0.3], [0.5, -0.3], [-0.5, -0.3], [-0.5, 0.3]]".into()));
        set(&mut live, "footprint_padding", ParamValue::Double(0.3));
        let in_force = vec![live.params.planner.clone()];
        set(&mut live, "footprint_padding", ParamValue::Double(0.0));
        let attempted = vec![live.params.planner.clone()];
        set(&mut live, "footprint", ParamValue::String(notched.into()));
        assert!(live.params.with_values(&[("footprint_padding", &ParamValue::Double(0.3))]).is_err());
        let (kept, undone) = live.undo(&attempted, &in_force);
        assert_eq!(kept.planner, in_force[0]);
        let names: Vec<&str> = undone.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["footprint", "footprint_padding"]);
    }
}
