//! The ROS 2 managed-node (lifecycle) state machine, free of any ROS library.
//!
//! States, transitions, ids and labels are exactly those of `lifecycle_msgs` and of rcl_lifecycle's
//! default state machine (`rcl_lifecycle/src/default_state_machine.c`), so the node can answer
//! `~/get_state`, `~/get_available_states`, `~/get_available_transitions`,
//! `~/get_transition_graph` and `~/change_state` and publish `~/transition_event` from this module
//! alone. See <https://design.ros2.org/articles/node_lifecycle.html>.
//!
//! A requested transition runs synchronously through [`LifecycleCallbacks`]: the machine enters
//! the transition state, calls the matching callback, and follows the result transition its
//! answer selects (`transition_success`, `transition_failure` or `transition_error`, the labels
//! rclcpp triggers); an error goes through `errorprocessing` and `on_error`. Every state change is
//! reported as one [`TransitionEvent`], as rcl publishes one event per change.

use std::fmt;

/// A lifecycle state; the discriminant is the `lifecycle_msgs/msg/State` constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum State {
    /// `PRIMARY_STATE_UNKNOWN` (0).
    Unknown = 0,
    /// `PRIMARY_STATE_UNCONFIGURED` (1): the state a node starts in.
    Unconfigured = 1,
    /// `PRIMARY_STATE_INACTIVE` (2).
    Inactive = 2,
    /// `PRIMARY_STATE_ACTIVE` (3).
    Active = 3,
    /// `PRIMARY_STATE_FINALIZED` (4): terminal, no transition leaves it.
    Finalized = 4,
    /// `TRANSITION_STATE_CONFIGURING` (10).
    Configuring = 10,
    /// `TRANSITION_STATE_CLEANINGUP` (11).
    CleaningUp = 11,
    /// `TRANSITION_STATE_SHUTTINGDOWN` (12).
    ShuttingDown = 12,
    /// `TRANSITION_STATE_ACTIVATING` (13).
    Activating = 13,
    /// `TRANSITION_STATE_DEACTIVATING` (14).
    Deactivating = 14,
    /// `TRANSITION_STATE_ERRORPROCESSING` (15).
    ErrorProcessing = 15,
}

impl State {
    /// All eleven states, in rcl_lifecycle's registration order (primary states, then transition
    /// states): the answer of `~/get_available_states`.
    pub const ALL: [State; 11] = [
        State::Unknown,
        State::Unconfigured,
        State::Inactive,
        State::Active,
        State::Finalized,
        State::Configuring,
        State::CleaningUp,
        State::ShuttingDown,
        State::Activating,
        State::Deactivating,
        State::ErrorProcessing,
    ];

    /// The `lifecycle_msgs/msg/State` id.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The label rcl_lifecycle gives the state (`unconfigured`, `errorprocessing`, ...).
    pub fn label(self) -> &'static str {
        match self {
            State::Unknown => "unknown",
            State::Unconfigured => "unconfigured",
            State::Inactive => "inactive",
            State::Active => "active",
            State::Finalized => "finalized",
            State::Configuring => "configuring",
            State::CleaningUp => "cleaningup",
            State::ShuttingDown => "shuttingdown",
            State::Activating => "activating",
            State::Deactivating => "deactivating",
            State::ErrorProcessing => "errorprocessing",
        }
    }

    /// The state with this id; `None` for an id that names no state.
    pub fn from_id(id: u8) -> Option<State> {
        State::ALL.into_iter().find(|s| s.id() == id)
    }

    /// True for the primary states (ids 0..=4), false for the transition states.
    pub fn is_primary(self) -> bool {
        self.id() <= 4
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.label(), self.id())
    }
}

/// A lifecycle transition; the discriminant is the `lifecycle_msgs/msg/Transition` constant.
///
/// Ids 1..=7 are the requestable transitions; 10..=62 are the result transitions a transition
/// state takes after its callback answered (internal: never requestable from a primary state).
/// `Create` (0) and `Destroy` (8) exist in the message but rcl_lifecycle's default state machine
/// registers no such edge, so they are never available.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Transition {
    /// `TRANSITION_CREATE` (0). In a `ChangeState` request, id 0 means "use the label".
    Create = 0,
    /// `TRANSITION_CONFIGURE` (1): unconfigured → configuring.
    Configure = 1,
    /// `TRANSITION_CLEANUP` (2): inactive → cleaningup.
    Cleanup = 2,
    /// `TRANSITION_ACTIVATE` (3): inactive → activating.
    Activate = 3,
    /// `TRANSITION_DEACTIVATE` (4): active → deactivating.
    Deactivate = 4,
    /// `TRANSITION_UNCONFIGURED_SHUTDOWN` (5): unconfigured → shuttingdown.
    UnconfiguredShutdown = 5,
    /// `TRANSITION_INACTIVE_SHUTDOWN` (6): inactive → shuttingdown.
    InactiveShutdown = 6,
    /// `TRANSITION_ACTIVE_SHUTDOWN` (7): active → shuttingdown.
    ActiveShutdown = 7,
    /// `TRANSITION_DESTROY` (8).
    Destroy = 8,
    /// `TRANSITION_ON_CONFIGURE_SUCCESS` (10): configuring → inactive.
    OnConfigureSuccess = 10,
    /// `TRANSITION_ON_CONFIGURE_FAILURE` (11): configuring → unconfigured.
    OnConfigureFailure = 11,
    /// `TRANSITION_ON_CONFIGURE_ERROR` (12): configuring → errorprocessing.
    OnConfigureError = 12,
    /// `TRANSITION_ON_CLEANUP_SUCCESS` (20): cleaningup → unconfigured.
    OnCleanupSuccess = 20,
    /// `TRANSITION_ON_CLEANUP_FAILURE` (21): cleaningup → inactive.
    OnCleanupFailure = 21,
    /// `TRANSITION_ON_CLEANUP_ERROR` (22): cleaningup → errorprocessing.
    OnCleanupError = 22,
    /// `TRANSITION_ON_ACTIVATE_SUCCESS` (30): activating → active.
    OnActivateSuccess = 30,
    /// `TRANSITION_ON_ACTIVATE_FAILURE` (31): activating → inactive.
    OnActivateFailure = 31,
    /// `TRANSITION_ON_ACTIVATE_ERROR` (32): activating → errorprocessing.
    OnActivateError = 32,
    /// `TRANSITION_ON_DEACTIVATE_SUCCESS` (40): deactivating → inactive.
    OnDeactivateSuccess = 40,
    /// `TRANSITION_ON_DEACTIVATE_FAILURE` (41): deactivating → active.
    OnDeactivateFailure = 41,
    /// `TRANSITION_ON_DEACTIVATE_ERROR` (42): deactivating → errorprocessing.
    OnDeactivateError = 42,
    /// `TRANSITION_ON_SHUTDOWN_SUCCESS` (50): shuttingdown → finalized.
    OnShutdownSuccess = 50,
    /// `TRANSITION_ON_SHUTDOWN_FAILURE` (51): shuttingdown → finalized (rcl_lifecycle finalizes
    /// on a failed shutdown too).
    OnShutdownFailure = 51,
    /// `TRANSITION_ON_SHUTDOWN_ERROR` (52): shuttingdown → errorprocessing.
    OnShutdownError = 52,
    /// `TRANSITION_ON_ERROR_SUCCESS` (60): errorprocessing → unconfigured.
    OnErrorSuccess = 60,
    /// `TRANSITION_ON_ERROR_FAILURE` (61): errorprocessing → finalized.
    OnErrorFailure = 61,
    /// `TRANSITION_ON_ERROR_ERROR` (62): errorprocessing → finalized.
    OnErrorError = 62,
}

impl Transition {
    /// Every transition with an id in `lifecycle_msgs/msg/Transition` (the callback result codes
    /// 97..=99 excepted), in id order.
    pub const ALL: [Transition; 27] = [
        Transition::Create,
        Transition::Configure,
        Transition::Cleanup,
        Transition::Activate,
        Transition::Deactivate,
        Transition::UnconfiguredShutdown,
        Transition::InactiveShutdown,
        Transition::ActiveShutdown,
        Transition::Destroy,
        Transition::OnConfigureSuccess,
        Transition::OnConfigureFailure,
        Transition::OnConfigureError,
        Transition::OnCleanupSuccess,
        Transition::OnCleanupFailure,
        Transition::OnCleanupError,
        Transition::OnActivateSuccess,
        Transition::OnActivateFailure,
        Transition::OnActivateError,
        Transition::OnDeactivateSuccess,
        Transition::OnDeactivateFailure,
        Transition::OnDeactivateError,
        Transition::OnShutdownSuccess,
        Transition::OnShutdownFailure,
        Transition::OnShutdownError,
        Transition::OnErrorSuccess,
        Transition::OnErrorFailure,
        Transition::OnErrorError,
    ];

    /// The `lifecycle_msgs/msg/Transition` id.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// The label rcl_lifecycle gives the transition: `configure`, `cleanup`, `activate`,
    /// `deactivate`, `shutdown` (all three shutdowns), and `transition_success`,
    /// `transition_failure`, `transition_error` for the result transitions. `create` and
    /// `destroy` are not registered by rcl_lifecycle; these names are for display.
    pub fn label(self) -> &'static str {
        use Transition::*;
        match self {
            Create => "create",
            Configure => "configure",
            Cleanup => "cleanup",
            Activate => "activate",
            Deactivate => "deactivate",
            UnconfiguredShutdown | InactiveShutdown | ActiveShutdown => "shutdown",
            Destroy => "destroy",
            OnConfigureSuccess | OnCleanupSuccess | OnActivateSuccess | OnDeactivateSuccess | OnShutdownSuccess
            | OnErrorSuccess => CallbackResult::Success.label(),
            OnConfigureFailure | OnCleanupFailure | OnActivateFailure | OnDeactivateFailure | OnShutdownFailure
            | OnErrorFailure => CallbackResult::Failure.label(),
            OnConfigureError | OnCleanupError | OnActivateError | OnDeactivateError | OnShutdownError
            | OnErrorError => CallbackResult::Error.label(),
        }
    }

    /// The transition with this id; `None` for an id that names no transition.
    pub fn from_id(id: u8) -> Option<Transition> {
        Transition::ALL.into_iter().find(|t| t.id() == id)
    }

    /// The edge of the default state machine this transition is, `None` for `Create` and
    /// `Destroy` (not registered).
    pub fn description(self) -> Option<TransitionDescription> {
        TRANSITION_GRAPH.iter().copied().find(|d| d.transition == self)
    }
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.label(), self.id())
    }
}

/// One edge of the state machine, as `lifecycle_msgs/msg/TransitionDescription`: the transition
/// (id and label) and the states it leaves and enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TransitionDescription {
    /// The transition taken.
    pub transition: Transition,
    /// The state it leaves (`start_state`).
    pub start: State,
    /// The state it enters (`goal_state`).
    pub goal: State,
}

impl TransitionDescription {
    /// The transition's id.
    pub fn id(&self) -> u8 {
        self.transition.id()
    }

    /// The transition's label.
    pub fn label(&self) -> &'static str {
        self.transition.label()
    }
}

impl fmt::Display for TransitionDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} -> {}", self.transition, self.start.label(), self.goal.label())
    }
}

/// One state change, as published on `~/transition_event` (`lifecycle_msgs/msg/TransitionEvent`
/// without its timestamp, which the node stamps).
pub type TransitionEvent = TransitionDescription;

const fn edge(transition: Transition, start: State, goal: State) -> TransitionDescription {
    TransitionDescription { transition, start, goal }
}

/// The 25 edges of rcl_lifecycle's default state machine, in its registration order: the answer
/// of `~/get_transition_graph`.
pub const TRANSITION_GRAPH: [TransitionDescription; 25] = {
    use State::*;
    use Transition::*;
    [
        edge(Configure, Unconfigured, Configuring),
        edge(OnConfigureSuccess, Configuring, Inactive),
        edge(OnConfigureFailure, Configuring, Unconfigured),
        edge(OnConfigureError, Configuring, ErrorProcessing),
        edge(Cleanup, Inactive, CleaningUp),
        edge(OnCleanupSuccess, CleaningUp, Unconfigured),
        edge(OnCleanupFailure, CleaningUp, Inactive),
        edge(OnCleanupError, CleaningUp, ErrorProcessing),
        edge(Activate, Inactive, Activating),
        edge(OnActivateSuccess, Activating, Active),
        edge(OnActivateFailure, Activating, Inactive),
        edge(OnActivateError, Activating, ErrorProcessing),
        edge(Deactivate, Active, Deactivating),
        edge(OnDeactivateSuccess, Deactivating, Inactive),
        edge(OnDeactivateFailure, Deactivating, Active),
        edge(OnDeactivateError, Deactivating, ErrorProcessing),
        edge(UnconfiguredShutdown, Unconfigured, ShuttingDown),
        edge(InactiveShutdown, Inactive, ShuttingDown),
        edge(ActiveShutdown, Active, ShuttingDown),
        edge(OnShutdownSuccess, ShuttingDown, Finalized),
        edge(OnShutdownFailure, ShuttingDown, Finalized),
        edge(OnShutdownError, ShuttingDown, ErrorProcessing),
        edge(OnErrorSuccess, ErrorProcessing, Unconfigured),
        edge(OnErrorFailure, ErrorProcessing, Finalized),
        edge(OnErrorError, ErrorProcessing, Finalized),
    ]
};

/// What a lifecycle callback answered (rclcpp's `CallbackReturn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallbackResult {
    /// The step succeeded: the transition reaches its goal state.
    Success,
    /// The step was refused: back to the start state (a shutdown finalizes anyway; an error
    /// handler that fails finalizes).
    Failure,
    /// The step failed badly: error processing follows (`on_error`).
    Error,
}

impl CallbackResult {
    /// The label of the result transition this answer selects (`transition_success`,
    /// `transition_failure`, `transition_error`).
    pub fn label(self) -> &'static str {
        match self {
            CallbackResult::Success => "transition_success",
            CallbackResult::Failure => "transition_failure",
            CallbackResult::Error => "transition_error",
        }
    }
}

/// The node's side of a transition. Each callback runs while the machine is in the transition
/// state and its answer picks the result transition.
pub trait LifecycleCallbacks {
    /// `configuring` (from `unconfigured`): load parameters, create resources.
    fn on_configure(&mut self) -> CallbackResult;
    /// `cleaningup` (from `inactive`): release what `on_configure` created.
    fn on_cleanup(&mut self) -> CallbackResult;
    /// `activating` (from `inactive`): start serving.
    fn on_activate(&mut self) -> CallbackResult;
    /// `deactivating` (from `active`): stop serving.
    fn on_deactivate(&mut self) -> CallbackResult;
    /// `shuttingdown`, entered from the primary state `from`. Success and failure both finalize.
    fn on_shutdown(&mut self, from: State) -> CallbackResult;
    /// `errorprocessing`, after a callback answered [`CallbackResult::Error`] in a transition that
    /// started at the primary state `from`. Success leads to `unconfigured`, anything else to
    /// `finalized`.
    fn on_error(&mut self, from: State) -> CallbackResult;
}

/// A transition request, as `lifecycle_msgs/srv/ChangeState` carries it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TransitionRequest {
    /// By id (`lifecycle_msgs/msg/Transition` constant). Id 0 (`create`) is never available;
    /// use [`TransitionRequest::from_msg`] for the message's rule (a label wins over the id).
    Id(u8),
    /// By label (exact, case-sensitive, as rcl compares), among the transitions available from
    /// the current state: `shutdown` picks whichever of 5, 6, 7 leaves it.
    Label(String),
}

impl TransitionRequest {
    /// The request a `ChangeState` message means: rclcpp looks the label up whenever it is not
    /// empty ("the label takes precedence": a service call that names only the label leaves the
    /// id at 0), and uses the id otherwise.
    pub fn from_msg(id: u8, label: &str) -> Self {
        if label.is_empty() {
            TransitionRequest::Id(id)
        } else {
            TransitionRequest::Label(label.to_string())
        }
    }
}

impl fmt::Display for TransitionRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransitionRequest::Id(id) => match Transition::from_id(*id) {
                Some(t) => write!(f, "transition {t}"),
                None => write!(f, "transition id {id}"),
            },
            TransitionRequest::Label(l) => write!(f, "transition '{l}'"),
        }
    }
}

/// A refused request: the transition is not available from the current state (unknown id or
/// label, a result transition, or a transition leaving another state). Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{requested} is not available from state '{}'; available: {}", state.label(), list_available(available))]
pub struct LifecycleError {
    /// What was asked.
    pub requested: TransitionRequest,
    /// The state the machine is (still) in.
    pub state: State,
    /// The transitions available from it (empty in `finalized`).
    pub available: Vec<TransitionDescription>,
}

fn list_available(available: &[TransitionDescription]) -> String {
    if available.is_empty() {
        return "none".to_string();
    }
    available.iter().map(|d| format!("{} ({})", d.label(), d.id())).collect::<Vec<_>>().join(", ")
}

/// The result of a transition that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeOutcome {
    /// The requested transition (from the former primary state into the transition state).
    pub transition: TransitionDescription,
    /// What the transition's callback answered.
    pub result: CallbackResult,
    /// What `on_error` answered, when error processing ran.
    pub error_result: Option<CallbackResult>,
    /// Every state change, in order, one per `~/transition_event` message: the request's edge
    /// into the transition state, the result edge, and, after an error, the edge out of
    /// `errorprocessing`.
    pub events: Vec<TransitionEvent>,
    /// The primary state now held.
    pub state: State,
}

impl ChangeOutcome {
    /// The `success` field of the `ChangeState` response: true only when the transition's
    /// callback answered [`CallbackResult::Success`] (rclcpp's rule).
    pub fn success(&self) -> bool {
        self.result == CallbackResult::Success
    }
}

/// A managed node's lifecycle: the current primary state and the transitions between them.
/// Starts `unconfigured`, as rcl_lifecycle's default state machine does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleMachine {
    state: State,
}

impl Default for LifecycleMachine {
    fn default() -> Self {
        Self::new()
    }
}

impl LifecycleMachine {
    /// A machine in `unconfigured`.
    pub fn new() -> Self {
        Self { state: State::Unconfigured }
    }

    /// The current primary state (`~/get_state`). A transition runs inside
    /// [`LifecycleMachine::change`], so a transition state is never observed here.
    pub fn state(&self) -> State {
        self.state
    }

    /// All eleven states (`~/get_available_states`), see [`State::ALL`].
    pub fn available_states() -> &'static [State] {
        &State::ALL
    }

    /// The whole graph (`~/get_transition_graph`), see [`TRANSITION_GRAPH`].
    pub fn transition_graph() -> &'static [TransitionDescription] {
        &TRANSITION_GRAPH
    }

    /// The transitions that may be requested now (`~/get_available_transitions`), in
    /// rcl_lifecycle's order: from `unconfigured` configure and shutdown (5); from `inactive`
    /// cleanup, activate and shutdown (6); from `active` deactivate and shutdown (7); none from
    /// `finalized`.
    pub fn available_transitions(&self) -> Vec<TransitionDescription> {
        TRANSITION_GRAPH.iter().copied().filter(|d| d.start == self.state).collect()
    }

    /// The available transition a request names, if any.
    fn resolve(&self, request: &TransitionRequest) -> Option<TransitionDescription> {
        let mut available = TRANSITION_GRAPH.iter().copied().filter(|d| d.start == self.state);
        match request {
            TransitionRequest::Id(id) => available.find(|d| d.id() == *id),
            TransitionRequest::Label(label) => available.find(|d| d.label() == label),
        }
    }

    /// Runs the transition `request` names through `callbacks` and returns every state change.
    ///
    /// The machine enters the transition state, calls its callback (`on_configure`,
    /// `on_cleanup`, `on_activate`, `on_deactivate`, or `on_shutdown(from)`), and takes the result
    /// transition the answer selects: success reaches the goal state, failure goes back to the
    /// start state (a shutdown finalizes either way), error enters `errorprocessing` and calls
    /// `on_error(from)`, whose success leads to `unconfigured` and anything else to `finalized`.
    ///
    /// Fails with [`LifecycleError`] (naming the current state and what is available from it),
    /// calling no callback and changing nothing, when the transition is not available from the
    /// current state.
    pub fn change(
        &mut self,
        request: TransitionRequest,
        callbacks: &mut impl LifecycleCallbacks,
    ) -> Result<ChangeOutcome, LifecycleError> {
        let from = self.state;
        let Some(first) = self.resolve(&request) else {
            return Err(LifecycleError { requested: request, state: from, available: self.available_transitions() });
        };
        let result = match first.goal {
            State::Configuring => callbacks.on_configure(),
            State::CleaningUp => callbacks.on_cleanup(),
            State::Activating => callbacks.on_activate(),
            State::Deactivating => callbacks.on_deactivate(),
            State::ShuttingDown => callbacks.on_shutdown(from),
            // Every requestable edge of the graph enters one of the five states above.
            other => unreachable!("requestable transition into {other}"),
        };
        let mut events = vec![first];
        let second = result_edge(first.goal, result);
        events.push(second);
        let mut error_result = None;
        if second.goal == State::ErrorProcessing {
            let handled = callbacks.on_error(from);
            error_result = Some(handled);
            events.push(result_edge(State::ErrorProcessing, handled));
        }
        self.state = events.last().map_or(from, |e| e.goal);
        Ok(ChangeOutcome { transition: first, result, error_result, events, state: self.state })
    }
}

/// The result edge leaving transition state `state` for callback answer `result` (looked up by
/// label, as rclcpp triggers it).
fn result_edge(state: State, result: CallbackResult) -> TransitionDescription {
    TRANSITION_GRAPH
        .iter()
        .copied()
        .find(|d| d.start == state && d.label() == result.label())
        // Every transition state has one edge per label in the graph.
        .unwrap_or_else(|| unreachable!("no {} edge leaves {state}", result.label()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Callbacks answering from a script, recording what was called.
    #[derive(Default)]
    struct Script {
        /// Answer of every transition callback (default success).
        answer: Option<CallbackResult>,
        /// Answer of `on_error` (default success).
        on_error: Option<CallbackResult>,
        calls: Vec<String>,
    }

    impl Script {
        fn answering(answer: CallbackResult) -> Self {
            Self { answer: Some(answer), ..Self::default() }
        }

        fn answer(&mut self, name: &str) -> CallbackResult {
            self.calls.push(name.to_string());
            self.answer.unwrap_or(CallbackResult::Success)
        }
    }

    impl LifecycleCallbacks for Script {
        fn on_configure(&mut self) -> CallbackResult {
            self.answer("configure")
        }
        fn on_cleanup(&mut self) -> CallbackResult {
            self.answer("cleanup")
        }
        fn on_activate(&mut self) -> CallbackResult {
            self.answer("activate")
        }
        fn on_deactivate(&mut self) -> CallbackResult {
            self.answer("deactivate")
        }
        fn on_shutdown(&mut self, from: State) -> CallbackResult {
            self.answer(&format!("shutdown from {}", from.label()))
        }
        fn on_error(&mut self, from: State) -> CallbackResult {
            self.calls.push(format!("error from {}", from.label()));
            self.on_error.unwrap_or(CallbackResult::Success)
        }
    }

    fn id(t: Transition) -> TransitionRequest {
        TransitionRequest::Id(t.id())
    }

    fn label(l: &str) -> TransitionRequest {
        TransitionRequest::Label(l.to_string())
    }

    /// (transition id, start id, goal id) of each event.
    fn ids(events: &[TransitionEvent]) -> Vec<(u8, u8, u8)> {
        events.iter().map(|e| (e.id(), e.start.id(), e.goal.id())).collect()
    }

    fn machine_in(state: State) -> LifecycleMachine {
        LifecycleMachine { state }
    }

    #[test]
    fn ids_and_labels_are_those_of_lifecycle_msgs_and_rcl() {
        let states: Vec<(u8, &str)> = State::ALL.iter().map(|s| (s.id(), s.label())).collect();
        assert_eq!(
            states,
            [
                (0, "unknown"),
                (1, "unconfigured"),
                (2, "inactive"),
                (3, "active"),
                (4, "finalized"),
                (10, "configuring"),
                (11, "cleaningup"),
                (12, "shuttingdown"),
                (13, "activating"),
                (14, "deactivating"),
                (15, "errorprocessing"),
            ]
        );
        let requestable: Vec<(u8, &str)> = Transition::ALL[..9].iter().map(|t| (t.id(), t.label())).collect();
        assert_eq!(
            requestable,
            [
                (0, "create"),
                (1, "configure"),
                (2, "cleanup"),
                (3, "activate"),
                (4, "deactivate"),
                (5, "shutdown"),
                (6, "shutdown"),
                (7, "shutdown"),
                (8, "destroy"),
            ]
        );
        let results: Vec<u8> = Transition::ALL[9..].iter().map(|t| t.id()).collect();
        assert_eq!(results, [10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42, 50, 51, 52, 60, 61, 62]);
        for t in &Transition::ALL[9..] {
            let expected = ["transition_success", "transition_failure", "transition_error"][t.id() as usize % 10];
            assert_eq!(t.label(), expected, "{t:?}");
        }
        for s in State::ALL {
            assert_eq!(State::from_id(s.id()), Some(s));
            assert_eq!(s.is_primary(), s.id() <= 4);
        }
        for t in Transition::ALL {
            assert_eq!(Transition::from_id(t.id()), Some(t));
        }
        assert_eq!(State::from_id(5), None);
        assert_eq!(Transition::from_id(9), None);
        assert_eq!(Transition::from_id(97), None);
        assert_eq!(LifecycleMachine::available_states(), &State::ALL);
    }

    #[test]
    fn the_graph_has_one_edge_per_result_of_every_transition_state() {
        let graph = LifecycleMachine::transition_graph();
        assert_eq!(graph.len(), 25);
        for state in State::ALL.into_iter().filter(|s| !s.is_primary()) {
            let labels: Vec<&str> = graph.iter().filter(|d| d.start == state).map(|d| d.label()).collect();
            assert_eq!(labels, ["transition_success", "transition_failure", "transition_error"], "{state}");
        }
        // Every requestable edge leaves a primary state for a transition state.
        for d in graph.iter().filter(|d| d.id() < 10) {
            assert!(d.start.is_primary() && !d.goal.is_primary(), "{d}");
        }
        assert_eq!(Transition::Create.description(), None);
        assert_eq!(Transition::Destroy.description(), None);
        assert_eq!(
            Transition::OnShutdownFailure.description(),
            Some(edge(Transition::OnShutdownFailure, State::ShuttingDown, State::Finalized))
        );
    }

    #[test]
    fn available_transitions_per_primary_state() {
        let avail = |s: State| -> Vec<(u8, &'static str, u8)> {
            machine_in(s).available_transitions().iter().map(|d| (d.id(), d.label(), d.goal.id())).collect()
        };
        assert_eq!(LifecycleMachine::new().state(), State::Unconfigured);
        assert_eq!(avail(State::Unconfigured), [(1, "configure", 10), (5, "shutdown", 12)]);
        assert_eq!(avail(State::Inactive), [(2, "cleanup", 11), (3, "activate", 13), (6, "shutdown", 12)]);
        assert_eq!(avail(State::Active), [(4, "deactivate", 14), (7, "shutdown", 12)]);
        assert_eq!(avail(State::Finalized), []);
        for d in machine_in(State::Inactive).available_transitions() {
            assert_eq!(d.start, State::Inactive);
        }
    }

    #[test]
    fn the_full_cycle_publishes_two_events_per_transition() {
        let mut m = LifecycleMachine::new();
        let mut cb = Script::default();
        let out = m.change(id(Transition::Configure), &mut cb).unwrap();
        assert!(out.success());
        assert_eq!(out.state, State::Inactive);
        assert_eq!(ids(&out.events), [(1, 1, 10), (10, 10, 2)]);
        assert_eq!(out.events[1].label(), "transition_success");
        assert_eq!(out.error_result, None);

        let out = m.change(id(Transition::Activate), &mut cb).unwrap();
        assert_eq!((out.state, m.state()), (State::Active, State::Active));
        assert_eq!(ids(&out.events), [(3, 2, 13), (30, 13, 3)]);

        let out = m.change(id(Transition::Deactivate), &mut cb).unwrap();
        assert_eq!(m.state(), State::Inactive);
        assert_eq!(ids(&out.events), [(4, 3, 14), (40, 14, 2)]);

        let out = m.change(id(Transition::Cleanup), &mut cb).unwrap();
        assert_eq!(m.state(), State::Unconfigured);
        assert_eq!(ids(&out.events), [(2, 2, 11), (20, 11, 1)]);
        assert_eq!(cb.calls, ["configure", "activate", "deactivate", "cleanup"]);
    }

    #[test]
    fn each_of_the_three_shutdowns_finalizes() {
        let cases = [
            (State::Unconfigured, Transition::UnconfiguredShutdown),
            (State::Inactive, Transition::InactiveShutdown),
            (State::Active, Transition::ActiveShutdown),
        ];
        for (from, t) in cases {
            let mut m = machine_in(from);
            let mut cb = Script::default();
            let out = m.change(id(t), &mut cb).unwrap();
            assert!(out.success());
            assert_eq!(m.state(), State::Finalized);
            assert_eq!(ids(&out.events), [(t.id(), from.id(), 12), (50, 12, 4)]);
            assert_eq!(cb.calls, [format!("shutdown from {}", from.label())]);
            // The other shutdowns' ids are not available from this state.
            for other in cases.iter().map(|c| c.1).filter(|&o| o != t) {
                let e = machine_in(from).change(id(other), &mut Script::default()).unwrap_err();
                assert_eq!(e.state, from);
            }
        }
    }

    #[test]
    fn requests_by_label_and_by_message() {
        let mut m = LifecycleMachine::new();
        let mut cb = Script::default();
        m.change(label("configure"), &mut cb).unwrap();
        m.change(TransitionRequest::from_msg(0, "activate"), &mut cb).unwrap();
        assert_eq!(m.state(), State::Active);
        // A label wins over the id, as in rclcpp; an empty label leaves the id.
        assert_eq!(TransitionRequest::from_msg(3, "deactivate"), TransitionRequest::Label("deactivate".into()));
        m.change(TransitionRequest::from_msg(3, "deactivate"), &mut cb).unwrap();
        assert_eq!(m.state(), State::Inactive);
        assert_eq!(TransitionRequest::from_msg(3, ""), TransitionRequest::Id(3));
        // "shutdown" resolves to the shutdown leaving the current state.
        let out = m.change(label("shutdown"), &mut cb).unwrap();
        assert_eq!(out.transition.transition, Transition::InactiveShutdown);
        assert_eq!(m.state(), State::Finalized);
        // Labels are exact: rcl compares with strcmp.
        let e = LifecycleMachine::new().change(label("Configure"), &mut cb).unwrap_err();
        assert_eq!(e.state, State::Unconfigured);
    }

    #[test]
    fn refused_requests_change_nothing_and_name_the_alternatives() {
        let refused: [(State, TransitionRequest); 9] = [
            (State::Unconfigured, id(Transition::Activate)),
            (State::Unconfigured, id(Transition::Cleanup)),
            (State::Unconfigured, id(Transition::Create)),
            (State::Inactive, id(Transition::Configure)),
            (State::Inactive, id(Transition::Deactivate)),
            (State::Active, id(Transition::Activate)),
            (State::Active, label("cleanup")),
            (State::Active, id(Transition::OnActivateSuccess)),
            (State::Inactive, TransitionRequest::Id(200)),
        ];
        for (state, request) in refused {
            let mut m = machine_in(state);
            let mut cb = Script::default();
            let e = m.change(request.clone(), &mut cb).unwrap_err();
            assert_eq!(m.state(), state);
            assert!(cb.calls.is_empty(), "{:?}", cb.calls);
            assert_eq!(e.state, state);
            assert_eq!(e.requested, request);
            assert_eq!(e.available, m.available_transitions());
            let msg = e.to_string();
            assert!(msg.contains(&format!("state '{}'", state.label())), "{msg}");
            for d in &e.available {
                assert!(msg.contains(&format!("{} ({})", d.label(), d.id())), "{msg}");
            }
        }
        let e = machine_in(State::Active).change(label("cleanup"), &mut Script::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "transition 'cleanup' is not available from state 'active'; available: deactivate (4), shutdown (7)"
        );
    }

    #[test]
    fn finalized_accepts_nothing() {
        let mut m = machine_in(State::Finalized);
        assert!(m.available_transitions().is_empty());
        for t in Transition::ALL {
            let mut cb = Script::default();
            let e = m.change(id(t), &mut cb).unwrap_err();
            assert_eq!((e.state, m.state()), (State::Finalized, State::Finalized));
            assert!(e.available.is_empty());
            assert!(e.to_string().ends_with("available: none"), "{e}");
            assert!(cb.calls.is_empty());
        }
        for l in ["configure", "shutdown", "destroy", "transition_success"] {
            assert!(m.change(label(l), &mut Script::default()).is_err());
        }
    }

    #[test]
    fn a_failing_callback_returns_to_the_start_state() {
        let mut cb = Script::answering(CallbackResult::Failure);
        let cases = [
            (State::Unconfigured, Transition::Configure, 11),
            (State::Inactive, Transition::Activate, 31),
            (State::Active, Transition::Deactivate, 41),
            (State::Inactive, Transition::Cleanup, 21),
        ];
        for (from, t, result_id) in cases {
            let mut m = machine_in(from);
            let out = m.change(id(t), &mut cb).unwrap();
            assert!(!out.success());
            assert_eq!(out.result, CallbackResult::Failure);
            assert_eq!(m.state(), from);
            let via = out.transition.goal.id();
            assert_eq!(ids(&out.events), [(t.id(), from.id(), via), (result_id, via, from.id())]);
            assert_eq!(out.events[1].label(), "transition_failure");
        }
        // rcl_lifecycle finalizes on a failed shutdown.
        let mut m = machine_in(State::Active);
        let out = m.change(id(Transition::ActiveShutdown), &mut cb).unwrap();
        assert!(!out.success());
        assert_eq!(m.state(), State::Finalized);
        assert_eq!(ids(&out.events), [(7, 3, 12), (51, 12, 4)]);
    }

    #[test]
    fn an_error_goes_through_error_processing_both_ways() {
        // on_error succeeds: back to unconfigured, whatever the start state.
        let mut cb = Script::answering(CallbackResult::Error);
        let mut m = machine_in(State::Inactive);
        let out = m.change(id(Transition::Activate), &mut cb).unwrap();
        assert!(!out.success());
        assert_eq!((out.result, out.error_result), (CallbackResult::Error, Some(CallbackResult::Success)));
        assert_eq!(m.state(), State::Unconfigured);
        assert_eq!(ids(&out.events), [(3, 2, 13), (32, 13, 15), (60, 15, 1)]);
        assert_eq!(
            out.events.iter().map(|e| e.label()).collect::<Vec<_>>(),
            ["activate", "transition_error", "transition_success"]
        );
        assert_eq!(cb.calls, ["activate", "error from inactive"]);

        // on_error fails or errs: finalized.
        for (handler, result_id) in [(CallbackResult::Failure, 61), (CallbackResult::Error, 62)] {
            let mut cb = Script { answer: Some(CallbackResult::Error), on_error: Some(handler), calls: Vec::new() };
            let mut m = LifecycleMachine::new();
            let out = m.change(id(Transition::Configure), &mut cb).unwrap();
            assert_eq!(m.state(), State::Finalized);
            assert_eq!(out.error_result, Some(handler));
            assert_eq!(ids(&out.events), [(1, 1, 10), (12, 10, 15), (result_id, 15, 4)]);
            assert_eq!(cb.calls, ["configure", "error from unconfigured"]);
        }

        // Every transition state's error edge leads to errorprocessing.
        let cases = [
            (State::Active, Transition::Deactivate, 42),
            (State::Inactive, Transition::Cleanup, 22),
            (State::Active, Transition::ActiveShutdown, 52),
        ];
        for (from, t, error_id) in cases {
            let mut cb = Script::answering(CallbackResult::Error);
            let mut m = machine_in(from);
            let out = m.change(id(t), &mut cb).unwrap();
            assert_eq!(out.events[1].id(), error_id);
            assert_eq!(out.events[1].goal, State::ErrorProcessing);
            assert_eq!(m.state(), State::Unconfigured);
            assert_eq!(cb.calls.last().unwrap(), &format!("error from {}", from.label()));
        }
    }

    #[test]
    fn events_chain_from_the_old_state_to_the_new_one() {
        for answer in [CallbackResult::Success, CallbackResult::Failure, CallbackResult::Error] {
            for start in [State::Unconfigured, State::Inactive, State::Active] {
                for d in machine_in(start).available_transitions() {
                    let mut m = machine_in(start);
                    let out = m.change(id(d.transition), &mut Script::answering(answer)).unwrap();
                    assert_eq!(out.events[0], d);
                    assert_eq!(out.events[0].start, start);
                    for w in out.events.windows(2) {
                        assert_eq!(w[0].goal, w[1].start);
                    }
                    assert_eq!(out.events.last().unwrap().goal, m.state());
                    assert!(m.state().is_primary());
                    // Every event is an edge of the graph.
                    for e in &out.events {
                        assert!(TRANSITION_GRAPH.contains(e), "{e}");
                    }
                }
            }
        }
    }
}
