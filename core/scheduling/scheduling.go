// Package scheduling picks the scheduler of a model version from its
// configuration, as Triton does: New is the core.SchedulerFactory that a
// server is given (core.Options.Schedulers). It is the one place that
// knows every scheduler tritonhost has; core knows none of them.
package scheduling

import (
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/dynbatch"
	"github.com/tritonhost/tritonhost/core/ensemble"
	"github.com/tritonhost/tritonhost/core/seqbatch"
)

var _ core.SchedulerFactory = New

// New returns the scheduler m's configuration asks for: the ensemble
// scheduler for ensemble_scheduling (core/ensemble), the sequence batcher
// for sequence_batching (core/seqbatch), otherwise one queue with dynamic batching
// when the configuration has dynamic_batching (core/dynbatch). An error
// means that the configuration cannot be served, and m does not load.
func New(srv *core.Server, m *core.Model) (core.Scheduler, error) {
	cfg := m.Config()
	if cfg.GetEnsembleScheduling() != nil {
		return ensemble.New(srv, m), nil
	}
	if cfg.GetSequenceBatching() != nil {
		s, err := seqbatch.New(m)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return dynbatch.New(m), nil
}
