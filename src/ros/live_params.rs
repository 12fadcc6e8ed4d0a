//! Parameters changed at run time (`ros2 param set`): r2r's parameter services call this
//! [`r2r::RosParams`] implementation, which validates each change with the range checks of
//! [`NodeParams::with_change`] and refuses a bad value with the reason (the old value stays).
//! Accepted changes reach the node's loop through r2r's parameter event stream.

use crate::params::{runtime_params, NodeParams, ParamValue};

/// The parameters the running node works with, shared with r2r's parameter services.
#[derive(Debug, Clone)]
pub struct LiveParams {
    /// The values in force (or about to be: the node applies them off the planning path).
    pub params: NodeParams,
}

/// An r2r parameter value in the library's terms.
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

fn to_r2r(v: ParamValue) -> r2r::ParameterValue {
    match v {
        ParamValue::Bool(b) => r2r::ParameterValue::Bool(b),
        ParamValue::Integer(i) => r2r::ParameterValue::Integer(i),
        ParamValue::Double(d) => r2r::ParameterValue::Double(d),
        ParamValue::String(s) => r2r::ParameterValue::String(s),
        ParamValue::Strings(v) => r2r::ParameterValue::StringArray(v),
        ParamValue::Other(_) => r2r::ParameterValue::NotSet,
    }
}

impl LiveParams {
    fn changed(&self, name: &str, value: &r2r::ParameterValue) -> r2r::Result<NodeParams> {
        let v = from_r2r(value).ok_or_else(|| r2r::Error::ParameterValueConv {
            name: name.to_string(),
            msg: "a value is required".into(),
        })?;
        self.params
            .with_change(name, &v)
            .map_err(|e| r2r::Error::ParameterValueConv { name: name.to_string(), msg: e.message })
    }
}

impl r2r::RosParams for LiveParams {
    fn register_parameters(
        &mut self,
        _prefix: &str,
        _param: Option<r2r::Parameter>,
        params: &mut indexmap::IndexMap<String, r2r::Parameter>,
    ) -> r2r::Result<()> {
        // The values from the parameters file were read already (NodeParams::from_lookup); list
        // the run-time parameters with the values in force so `ros2 param get` shows them.
        // Each with its description from the parameter table, for `ros2 param describe`.
        for spec in runtime_params() {
            let parameter = r2r::Parameter { value: to_r2r(spec.read(&self.params)), description: spec.description() };
            params.insert(spec.name().to_string(), parameter);
        }
        // Each profile after the first: its own copy of every run-time planner parameter.
        for (name, description) in self.params.profile_runtime_names() {
            if let Some(value) = self.params.runtime_value(&name) {
                params.insert(name, r2r::Parameter { value: to_r2r(value), description });
            }
        }
        Ok(())
    }

    fn get_parameter(&mut self, name: &str) -> r2r::Result<r2r::ParameterValue> {
        self.params
            .runtime_value(name)
            .map(to_r2r)
            .ok_or_else(|| r2r::Error::InvalidParameterName { name: name.to_string() })
    }

    fn set_parameter(&mut self, name: &str, value: &r2r::ParameterValue) -> r2r::Result<()> {
        self.params = self.changed(name, value)?;
        Ok(())
    }

    fn check_parameter(&self, name: &str, value: &r2r::ParameterValue) -> r2r::Result<()> {
        self.changed(name, value).map(|_| ())
    }
}
