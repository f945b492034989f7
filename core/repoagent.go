package core

// RepoAction is what happens to a model, as a repository agent is told
// (numbered as TRITONREPOAGENT_ActionType).
type RepoAction int

// The actions, in the orders an agent model sees them:
// Load, LoadComplete, Unload, UnloadComplete; or Load, LoadFail.
const (
	RepoActionLoad RepoAction = iota
	RepoActionLoadComplete
	RepoActionLoadFail
	RepoActionUnload
	RepoActionUnloadComplete
)

// String returns the action's name in tritonrepoagent.h.
func (a RepoAction) String() string {
	names := [...]string{"TRITONREPOAGENT_ACTION_LOAD", "TRITONREPOAGENT_ACTION_LOAD_COMPLETE",
		"TRITONREPOAGENT_ACTION_LOAD_FAIL", "TRITONREPOAGENT_ACTION_UNLOAD", "TRITONREPOAGENT_ACTION_UNLOAD_COMPLETE"}
	if a >= 0 && int(a) < len(names) {
		return names[a]
	}
	return "unknown repository agent action"
}

// RepoAgentProvider starts the repository agents a model's configuration
// names (model_repository_agents): package loader for Triton's agent
// libraries, libtritonrepoagent_<name>.so, or a Go-native one.
type RepoAgentProvider interface {
	// NewModel starts agent name's part in one load of a model: opens the
	// agent if no other model uses it, and makes its agent model
	// (TRITONREPOAGENT_ModelInitialize). The server then calls the agent
	// model's Action with the lifecycle's actions, and Finalize last. An
	// error fails the load.
	NewModel(name string, spec RepoAgentModelSpec) (RepoAgentModel, error)
}

// RepoAgentModelSpec is what an agent model is made with.
type RepoAgentModelSpec struct {
	Model      string             // the model's name
	Location   string             // the directory of the model's files
	Config     []byte             // the model's configuration, as JSON
	Parameters []RepoAgentSetting // the agent's parameters, sorted by name
}

// RepoAgentSetting is one parameter of an agent's entry in
// model_repository_agents.
type RepoAgentSetting struct {
	Name, Value string
}

// RepoAgentModel is one agent's part in one load of a model. Its calls
// never overlap; the server bounds each by Options.BackendCallTimeout.
type RepoAgentModel interface {
	// Action tells the agent what happens to the model. An error for
	// RepoActionLoad fails the load with its message; for the others it is
	// logged.
	Action(a RepoAction) error
	// Location is where the model's files are now: Spec.Location, or what
	// the agent replaced it with during RepoActionLoad.
	Location() string
	// Finalize ends the agent model (TRITONREPOAGENT_ModelFinalize),
	// removes the directory it acquired, and lets go of the agent, whose
	// last model closes it. Called once, last.
	Finalize() error
}
