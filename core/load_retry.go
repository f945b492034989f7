package core

import (
	"errors"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// loadVersionRetrying makes version v of the model e describes and loads
// it, trying again up to Options.LoadRetries more times when the load
// fails (Triton's --model-load-retry-count), each time with a new Model,
// as the failed one finalized what it had created. A load the server gave
// up on (a backend call past Options.BackendCallTimeout, whose call may
// still run) is not tried again, nor is one that failed before the backend
// was called (the configuration was refused), nor one made while the
// server stops. It returns the loaded version, or the last error.
func (s *Server) loadVersionRetrying(e *modelEntry, v int64, dir string, raw, cfg *configpb.ModelConfig, ensemble bool) (*Model, error) {
	for attempt := 0; ; attempt++ {
		m, err := newModel(s.modelName(e.name), v, dir, raw, cloneConfig(cfg), s.modelEnv())
		if err != nil {
			return nil, err
		}
		if attempt == 0 {
			s.log.Infof("loading: %s:%d", e.name, v)
		}
		err = s.loadVersion(m, ensemble)
		if err == nil {
			return m, nil
		}
		if attempt >= s.opts.LoadRetries || !retryableLoad(err) || s.stopping.Load() {
			return nil, err
		}
		s.log.Warnf("failed to load '%s' version %d: %v; retrying (retry %d of %d)", e.name, v, err, attempt+1, s.opts.LoadRetries)
	}
}

// retryableLoad reports whether a version whose load failed with err may
// be tried again at once: not when the server gave up waiting for the
// backend (its call may still run).
func retryableLoad(err error) bool {
	var given *givenUpError
	return !errors.As(err, &given) && !errors.Is(err, errGivenUp)
}
