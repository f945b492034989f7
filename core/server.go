package core

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/procdir"
	"github.com/tritonhost/tritonhost/internal/repofile"
)

// Options configure a Server.
type Options struct {
	// ModelRepositories are the directories holding one subdirectory per
	// model, laid out as Triton's model repository.
	ModelRepositories []string
	// Backends loads the backends that run the models. Required.
	Backends BackendProvider
	// Schedulers makes the scheduler of each model version as it loads
	// (core/scheduling's New picks the one its configuration asks for).
	// Required.
	Schedulers SchedulerFactory
	// GPUs are the CUDA device ids the server may use (empty: CPU only).
	// When Devices is set and GPUs is not, they are Devices.IDs().
	GPUs []int
	// Devices are the server's GPUs (nil: none), for the backend provider
	// (package abi takes them too).
	Devices Devices
	// Logger receives the server's log (default: discarded).
	Logger *serverlog.Logger
	// ExplicitModelControl, as --model-control-mode=explicit: only the models
	// in StartupModels load at start ("*" for all), and LoadModel and
	// UnloadModel may change the set later. Otherwise every model loads at
	// start and the set is fixed.
	ExplicitModelControl bool
	StartupModels        []string
	// PollModelControl, as --model-control-mode=poll: every model loads at
	// start, as without explicit control, and Poll loads, reloads and
	// unloads models as the repositories changed since (see Server.Poll).
	// It excludes ExplicitModelControl.
	PollModelControl bool
	// RepositoryPollInterval, under PollModelControl, has the server poll
	// its repositories this often (--repository-poll-secs); 0 polls only
	// when Poll is called, as an application embedding Triton polls with
	// TRITONSERVER_ServerPollModelRepository.
	RepositoryPollInterval time.Duration
	// LoadConcurrency bounds how many models load at once (default 4,
	// Triton's --model-load-thread-count).
	LoadConcurrency int
	// LoadRetries is how many more times a model version that failed to
	// load is tried before it is given up (Triton's
	// --model-load-retry-count; default 0). A load the server gave up on
	// (a backend call past BackendCallTimeout) or one refused before the
	// backend was called is not tried again (load_retry.go).
	LoadRetries int
	// HostPolicies are the server's host policies by name (Triton's
	// --host-policy): an instance whose host policy name has one runs its
	// initialization and executions as it says (host_policy.go).
	HostPolicies map[string]HostPolicy
	// ModelConfigName, if set, makes a model read
	// configs/<ModelConfigName>.pbtxt in its directory in place of
	// config.pbtxt when it has that file (Triton's --model-config-name).
	ModelConfigName string
	// ModelNamespacing makes each model repository a namespace of its own
	// (Triton's --model-namespacing): models of the same name in different
	// repositories are different models, a request naming a name that
	// several repositories hold is refused as ambiguous, and an ensemble's
	// steps run the models of its own repository first (namespace.go).
	// Without it, a name found in two repositories is refused as a
	// duplicate.
	ModelNamespacing bool
	// Tracer, if set, picks requests to trace and receives their traces.
	Tracer Tracer
	// MaxTensorBytes is the largest input, output or state value, in bytes,
	// that the server holds (default DefaultMaxTensorBytes, 256 MiB; a
	// server behind gRPC sets it to its maximum message size). A request
	// with a larger input is refused (CodeInvalidArg, naming the model and
	// the input); a response with a larger output becomes an error
	// response; a backend's larger state update is refused; and a model
	// whose sequence state starts larger (its dims, or its initial_state,
	// zeros or a file) does not load. Sizes are computed with
	// overflow-checked arithmetic, before anything is allocated.
	MaxTensorBytes int64
	// MaxTensorBytesSetting names the setting that sets MaxTensorBytes
	// (a command-line flag), for the messages that refuse a tensor
	// (default "MaxTensorBytes").
	MaxTensorBytesSetting string
	// BackendCallTimeout bounds each call into a backend that loads or
	// unloads a model version: BackendProvider.LoadModel,
	// BackendModel.NewInstance, BackendInstance.Finalize and
	// BackendModel.Finalize (default DefaultBackendCallTimeout, 10
	// minutes). When a call does not return in time, the server logs which
	// call of which model and backend it is, and goes on: a load fails
	// (that version is unavailable, with the reason), an unload is reported
	// unfinished. The call itself cannot be interrupted (a backend stuck in
	// C code stays stuck): its goroutine is left running, and what it
	// returns late is dealt with then (a model or instance created for a
	// load that failed meanwhile is finalized; an unload carries on in its
	// order). Executions are not bounded by it.
	BackendCallTimeout time.Duration
	// BackendCallTimeoutSetting names the setting that sets
	// BackendCallTimeout, for the messages of calls given up on (default
	// "BackendCallTimeout").
	BackendCallTimeoutSetting string
	// EnsembleStepWait bounds how long an ensemble waits for a free slot
	// of a step that has max_inflight_requests in flight (default
	// DefaultEnsembleStepWait, Triton's 300 s); the step then goes ahead
	// past the bound, with an error logged, rather than risk a deadlock.
	EnsembleStepWait time.Duration
	// EnsembleStepWaitSetting names the setting that sets
	// EnsembleStepWait, for the message of a wait that ran out (default
	// "EnsembleStepWait").
	EnsembleStepWaitSetting string
	// DisableAutoCompleteConfig is --disable-auto-complete-config: a model
	// directory without config.pbtxt fails to load, and a configuration
	// is not completed from the model's files (the loader keeps backends
	// from completing it too). By default, as in Triton, such a directory
	// loads from its model file and what its backend completes.
	DisableAutoCompleteConfig bool
	// LoadFiles bounds the model files that load requests send, and says
	// where they are kept.
	LoadFiles LoadFilesLimits
	// RepositoryFiles bounds the server's reads of the files of its model
	// repositories.
	RepositoryFiles RepositoryFileLimits
	// MaxModels bounds the models loaded at once (those with a version
	// loaded, and those loading for the first time); a load past it is
	// refused (CodeUnavailable) until a model is unloaded (default
	// DefaultMaxModels). A reload of a loaded model is not refused.
	MaxModels int
	// MaxModelsSetting names the setting that sets MaxModels, for the
	// refusal (default "MaxModels").
	MaxModelsSetting string

	// ResponseCache, if set, is the server's response cache, which the
	// models whose configuration enables response_cache use (see
	// cache_submit.go). Stop closes it.
	ResponseCache ResponseCache
	// CacheCallTimeout bounds how long a request waits for its lookup; a
	// lookup that takes longer is a miss (default
	// DefaultCacheCallTimeout).
	CacheCallTimeout time.Duration
	// CacheMaxCalls bounds the cache calls (lookups and inserts) running at
	// once; a lookup that finds none free is a miss (default
	// DefaultCacheMaxCalls).
	CacheMaxCalls int
	// CacheMaxBytes bounds the bytes of the responses the cache path
	// holds: waiting to be inserted, being inserted, or being copied out of
	// the cache. An insert past it is dropped (and counted), a lookup past
	// it is a miss (default DefaultCacheMaxBytes).
	CacheMaxBytes int64
	// RepoAgents, if set, starts the repository agents that model
	// configurations name (model_repository_agents); without it, such a
	// model fails to load.
	RepoAgents RepoAgentProvider
	// StatisticsObserver, if set, receives every statistics report the
	// backends make, besides the server's own record of it.
	StatisticsObserver StatisticsObserver
	// RemoteRepositories, if set, keeps the local copies of the
	// repositories in object storage (s3://, gs://, as:// paths among
	// ModelRepositories, or registered), which the server reads in their
	// place (remote_repository.go). Without it every path is a local
	// directory.
	RemoteRepositories RemoteRepositories
	// RateLimiter, if set, is the server's rate limiter
	// (--rate-limit=execution_count): every active instance executes only
	// once the resources its instance_group's rate_limiter lists are
	// allocated to it, in the limiter's order (see rate_limit.go and
	// package ratelimit). Nil: off, each instance executes as soon as it
	// has work.
	RateLimiter *ratelimit.Limiter
}

// Server hosts the models of a repository and runs inference on them. All
// methods are safe for concurrent use.
type Server struct {
	opts Options
	log  *serverlog.Logger

	mu     sync.RWMutex
	models map[string]*modelEntry
	locks  map[string]*modelLock // by model name, while held or awaited (guarded by mu)
	// filesBytes counts the model files that load requests sent and
	// models hold, against Options.LoadFiles.MaxBytes (guarded by mu).
	filesBytes int64
	// firstLoads counts the loads of models that have no version loaded,
	// which count against Options.MaxModels (guarded by mu).
	firstLoads int

	files   *repofile.Reader // the repositories' files, read with bounds
	uploads *procdir.Dir     // the files of load requests go under it; nil without explicit control

	lifecycles lifecycleSet // loads and unloads whose steps have not finished
	stopping   atomic.Bool
	inflight   inflightCounter
	cache      *cachePath // nil without Options.ResponseCache

	repos repositorySet // the repositories, which explicit control may change (repository_set.go)
	poll  *poller       // model control POLL; nil otherwise

	// remoteErr is why the last full refresh of the remote repositories
	// could not read one of them (guarded by mu; nil: all read).
	remoteErr error
}

// VersionStatus is one line of the repository index.
type VersionStatus struct {
	Name      string
	Version   string // "" when no version could be determined
	Readiness ModelReadiness
	Reason    string
}

// NewServer scans the repositories and loads the models (all of them, or
// StartupModels under explicit control). A model that fails to load is
// recorded with its error and does not stop the others; NewServer fails only
// if a repository cannot be read.
func NewServer(opts Options) (*Server, error) {
	if opts.Backends == nil {
		return nil, errors.New("core: Options.Backends is required")
	}
	if opts.Schedulers == nil {
		return nil, errors.New("core: Options.Schedulers is required")
	}
	if opts.ExplicitModelControl && opts.PollModelControl {
		return nil, errors.New("core: Options.ExplicitModelControl and PollModelControl exclude each other")
	}
	if opts.Logger == nil {
		opts.Logger = serverlog.Discard()
	}
	if opts.LoadConcurrency <= 0 {
		opts.LoadConcurrency = 4
	}
	if opts.MaxTensorBytes <= 0 {
		opts.MaxTensorBytes = DefaultMaxTensorBytes
	}
	if opts.BackendCallTimeoutSetting == "" {
		opts.BackendCallTimeoutSetting = "BackendCallTimeout"
	}
	if opts.MaxTensorBytesSetting == "" {
		opts.MaxTensorBytesSetting = "MaxTensorBytes"
	}
	if opts.BackendCallTimeout <= 0 {
		opts.BackendCallTimeout = DefaultBackendCallTimeout
	}
	if opts.EnsembleStepWait <= 0 {
		opts.EnsembleStepWait = DefaultEnsembleStepWait
	}
	if opts.EnsembleStepWaitSetting == "" {
		opts.EnsembleStepWaitSetting = "EnsembleStepWait"
	}
	opts.LoadFiles.setDefaults()
	opts.RepositoryFiles.setDefaults()
	if opts.MaxModels <= 0 {
		opts.MaxModels = DefaultMaxModels
	}
	if opts.MaxModelsSetting == "" {
		opts.MaxModelsSetting = "MaxModels"
	}
	if opts.GPUs == nil && opts.Devices != nil {
		opts.GPUs = opts.Devices.IDs()
	}
	opts.cacheDefaults()
	s := &Server{opts: opts, log: opts.Logger, models: map[string]*modelEntry{}, locks: map[string]*modelLock{},
		files: opts.RepositoryFiles.reader()}
	if opts.ExplicitModelControl {
		if err := s.openUploads(); err != nil {
			return nil, err
		}
	}
	if opts.ResponseCache != nil {
		s.cache = newCachePath(opts.ResponseCache, &opts, opts.Logger)
	}
	s.repos.paths = slices.Clone(opts.ModelRepositories)
	s.repos.namespacing = opts.ModelNamespacing
	var remoteErrs map[string]error
	err := s.localRepositories()
	if err == nil {
		remoteErrs = s.refreshRemote(s.startupNames())
	}
	dirs, dupes, err := s.scanRepositoriesAfter(err)
	if err != nil {
		if s.cache != nil {
			_ = s.cache.close(context.Background())
		}
		s.closeUploads()
		return nil, err
	}
	for name, err := range dupes {
		s.models[name] = &modelEntry{name: name, err: err, status: []VersionStatus{{Name: name, Readiness: ModelUnavailable, Reason: err.Error()}}}
		s.log.Errorf("%v", err)
		delete(dirs, name)
	}
	for name, err := range remoteErrs {
		if dupes[name] == nil {
			s.models[name] = remoteFailure(name, err)
			delete(dirs, name)
		}
	}
	var names []string
	for name := range dirs {
		if s.startsWithServer(name) {
			names = append(names, name)
		}
	}
	names = s.withSteps(names, dirs) // an ensemble loads the models it runs
	for name := range dirs {
		if !slices.Contains(names, name) {
			s.models[name] = &modelEntry{name: name, dir: dirs[name]}
		}
	}
	s.loadInOrder(names, dirs)
	if opts.PollModelControl {
		s.startPolling()
	}
	return s, nil
}

func (s *Server) modelEnv() modelEnv {
	return modelEnv{gpus: s.opts.GPUs, log: s.log, maxTensor: tensorLimit{s.opts.MaxTensorBytes, s.opts.MaxTensorBytesSetting},
		callTimeout: s.opts.BackendCallTimeout, callTimeoutSetting: s.opts.BackendCallTimeoutSetting, lifecycles: &s.lifecycles, srv: s}
}

func (s *Server) startsWithServer(name string) bool {
	if !s.opts.ExplicitModelControl {
		return true
	}
	for _, m := range s.opts.StartupModels {
		if m == "*" || m == s.modelName(name) {
			return true
		}
	}
	return false
}

// Logger returns the server's logger.
func (s *Server) Logger() *serverlog.Logger { return s.log }

// EnsembleStepWait returns Options.EnsembleStepWait, the longest an
// ensemble waits for a free slot of a step, and the name of the setting
// that sets it, for the message of a wait that ran out.
func (s *Server) EnsembleStepWait() (wait time.Duration, setting string) {
	return s.opts.EnsembleStepWait, s.opts.EnsembleStepWaitSetting
}

// Infer resolves the model version req names and submits req to it: it is
// Model followed by Submit. Validation errors (unknown model or version, bad
// inputs) are returned at once and fn is never called. Otherwise Infer
// returns nil and fn receives every response, the last with final set (see
// ResponseFunc). Cancelling ctx cancels the request: queued, it completes
// with a CodeCancelled error; inside a backend, the backend sees
// TRITONBACKEND_RequestIsCancelled / ResponseFactoryIsCancelled.
func (s *Server) Infer(ctx context.Context, req *Submission, fn ResponseFunc) error {
	m, err := s.Model(req.Model, req.Version)
	if err != nil {
		return err
	}
	return s.Submit(ctx, m, req, fn)
}

// Submit validates req against m, a version that Model returned, and queues
// it there; req.Model and req.Version are not looked at again. A frontend
// that needs the version before any response can arrive (to label the
// responses) resolves it once with Model and then submits with Submit.
// Errors and fn behave as for Infer.
func (s *Server) Submit(ctx context.Context, m *Model, req *Submission, fn ResponseFunc) error {
	_, err := s.SubmitCancelable(ctx, m, req, fn)
	return err
}

// SubmitCancelable is Submit, and also returns what cancels the accepted
// request as a cancelled ctx would: for a submitter that stops waiting for
// a reason of its own (a deadline it keeps, the server aborting) without a
// context of its own to cancel.
func (s *Server) SubmitCancelable(ctx context.Context, m *Model, req *Submission, fn ResponseFunc) (Cancellation, error) {
	if fn == nil {
		return Cancellation{}, Errorf(CodeInvalidArg, "infer: a response function is required")
	}
	if s.stopping.Load() {
		return Cancellation{}, errShuttingDown()
	}
	r, err := s.submit(ctx, m, req, fn, nil, nil)
	if err != nil {
		return Cancellation{}, err
	}
	return Cancellation{p: r.responder}, nil
}

// Cancellation cancels a request SubmitCancelable accepted.
type Cancellation struct{ p *Responder }

// Cancel cancels the request as its client would: the backend's
// cancellation checks see it, and its cancel hooks run, once. Cancelling
// the zero Cancellation does nothing.
func (c Cancellation) Cancel() {
	if c.p != nil {
		c.p.cancel()
	}
}

// SubmitStep submits req to m as a step of a request the server accepted
// before (an ensemble's): as Submit, but accepted while the server stops.
// The step's compute times add up in times (nil: nowhere), and finished,
// if not nil, runs once the step's request has finished (final response
// delivered, released by its backend), on the goroutine or backend thread
// that finished it.
func (s *Server) SubmitStep(ctx context.Context, m *Model, req *Submission, fn ResponseFunc, times *StepTimes, finished func()) error {
	if fn == nil {
		return Errorf(CodeInvalidArg, "infer: a response function is required")
	}
	_, err := s.submit(ctx, m, req, fn, times, finished)
	return err
}

// submit is Submit without the shutdown check, returning the accepted
// request; times and finished are SubmitStep's.
func (s *Server) submit(ctx context.Context, m *Model, req *Submission, fn ResponseFunc, times *StepTimes, finished func()) (*Request, error) {
	if m.Readiness() != ModelReady {
		if next := s.successor(m); next != nil {
			m = next // m was reloaded since the caller looked it up
		}
	}
	cs, fn := s.cacheFor(m, fn)
	r, err := m.newRequest(req, fn)
	if err != nil {
		return nil, err
	}
	r.responder.start = r.requestStart
	switch t := s.opts.Tracer; {
	case req.Trace != nil:
		// The submitter's own trace: an application's, or the child a
		// backend spawned from the trace of the request it serves.
		r.trace = req.Trace
		r.trace.bind(m, req.ID)
		if t != nil {
			adoptTrace(t, m, req)
		}
	case t != nil:
		if r.trace = startTrace(t, m, req); r.trace != nil && r.trace.finish == nil {
			r.trace.finish = t.Finish
		}
	}
	if r.trace != nil {
		r.responder.trace = r.trace
		r.trace.Report(TraceRequestStart, r.requestStart)
	}
	s.inflight.add()
	r.inflight = &s.inflight
	r.stepOf = times
	if finished != nil {
		r.onFinished = func(*Request) { finished() }
	}
	if ctx.Done() != nil {
		if ctx.Err() != nil {
			s.inflight.done()
			return nil, Errorf(CodeCancelled, "request %q to model %q: %w", req.ID, m.name, ctx.Err())
		}
		r.stopCancel = context.AfterFunc(ctx, r.responder.cancel)
	}
	if cs != nil && s.answerFromCache(r, cs) {
		return r, nil
	}
	if err := m.enqueue(r); err != nil {
		if r.stopCancel != nil {
			r.stopCancel()
		}
		s.inflight.done()
		return nil, err
	}
	return r, nil
}

// LiveRequests returns how many accepted requests are not finished (final
// response delivered and released by the backend).
func (s *Server) LiveRequests() int { return s.inflight.count() }

// Ready reports whether the server is up and every model it tried to load
// loaded.
func (s *Server) Ready() bool {
	if s.stopping.Load() {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.remoteErr != nil {
		return false
	}
	for _, e := range s.models {
		if e.err != nil && !e.orphaned {
			return false
		}
	}
	return true
}

// Live reports whether the server accepts requests.
func (s *Server) Live() bool { return !s.stopping.Load() }

// RepositoryIndex lists every model of the repositories with the state of
// each version, sorted by name and version. With Options.ModelNamespacing,
// a name that several repositories hold is listed once for each.
func (s *Server) RepositoryIndex() []VersionStatus {
	s.mu.RLock()
	var out []VersionStatus
	for _, e := range s.models {
		if len(e.status) == 0 {
			out = append(out, VersionStatus{Name: e.name, Readiness: ModelUnavailable, Reason: "not loaded"})
		}
		for _, st := range e.status {
			if v, err := strconv.ParseInt(st.Version, 10, 64); err == nil {
				if m := e.versions[v]; m != nil {
					st.Readiness = m.Readiness()
				}
			}
			out = append(out, st)
		}
	}
	s.mu.RUnlock()
	for i := range out {
		out[i].Name = s.modelName(out[i].Name)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Version < out[j].Version
	})
	return out
}

// Statistics returns the statistics of a model's loaded versions (all
// models when name is ""; all versions when version <= 0). Their size does
// not grow with the requests served: per-response statistics have at most
// ResponseStatsCap+1 keys (see ModelStatistics.Responses). With
// Options.ModelNamespacing, a name must be unambiguous, as for Model.
func (s *Server) Statistics(name string, version int64) ([]ModelStatistics, error) {
	if name != "" {
		key, err := s.resolveModel(name) // with namespacing, the name must be unambiguous
		if err != nil {
			return nil, err
		}
		name = key
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []ModelStatistics
	for n, e := range s.models {
		if name != "" && n != name {
			continue
		}
		for v, m := range e.versions {
			if version <= 0 || v == version {
				out = append(out, m.Statistics())
			}
		}
	}
	if name != "" && len(out) == 0 {
		return nil, Errorf(CodeNotFound, "model %q (version %d) has no loaded version to report statistics for", s.modelName(name), version)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Version < out[j].Version
	})
	return out, nil
}
