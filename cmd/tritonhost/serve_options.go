package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	"github.com/tritonhost/tritonhost/internal/frontend/tlsfiles"
	"github.com/tritonhost/tritonhost/internal/objstore"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/trace"
)

// Backend API versions, as the headers in include/ define them.
const (
	backendAPIMajor = 1
	backendAPIMinor = 19
	serverAPIMajor  = 1
	serverAPIMinor  = 34
)

// serveOptions are the serve command's flags, named as Triton's.
type serveOptions struct {
	ID                  string
	ModelRepositories   []string
	BackendDirectory    string
	BackendConfig       []string
	GRPCAddress         string
	GRPCPort            int
	MaxMessageBytes     int
	LogVerbose          int
	LogInfo             bool
	LogWarning          bool
	LogError            bool
	LogFormat           string
	ModelControlMode    string
	RepositoryPollSecs  int
	LoadModels          []string
	AllowFileLibraries  bool
	ModelFilesMaxSize   int64
	ExitTimeoutSecs     int
	ExitOnError         bool
	StrictReadiness     bool
	DisableAutoComplete bool
	BackendCallSecs     int
	EnsembleStepWait    int
	ShmMaxRegions       int
	DebugAddress        string
	OutputCacheBytes    int64
	SSLReloadMs         int
	GRPC                grpcFlags
	HTTP                httpFlags
	Metrics             metricsFlags
	GPU                 gpuFlags
	InProcess           inprocessFlags
	GC                  gcFlags
	Trace               traceFlags
	Plugins             pluginFlags
	Repository          repositoryFlags
	RateLimit           rateLimitFlags
	Isolation           isolationFlags
	ObjStore            objstoreFlags
	Triton              tritonFlags // Triton's options of no other group (triton_flags.go)

	backendConfig map[string]map[string]string
	devices       core.Devices   // the GPUs instances may be placed on (Run)
	tracer        *trace.Manager // the server's tracer (Run)
	// backendFamilies serves the metric families of isolated backends
	// (Run; nil without isolation).
	backendFamilies prometheus.Collector
}

func newServeCommand() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve --model-repository DIR [flags]",
		Short: "Serve a model repository over Triton's gRPC and HTTP/REST protocols, with Prometheus metrics",
		Example: `  tritonhost serve --model-repository examples/models --backend-directory backends
  tritonhost serve --model-repository /models --model-control-mode explicit --load-model square_int32`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return o.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.ID, "id", grpcserver.DefaultServerName, "identifier of this server, as ServerMetadata reports it")
	f.StringArrayVar(&o.ModelRepositories, "model-repository", nil, "model repository directory (repeatable)")
	f.StringArrayVar(&o.Triton.ModelStore, "model-store", nil, "the same as --model-repository (Triton's older name)")
	f.StringVar(&o.BackendDirectory, "backend-directory", "", "directory holding <backend>/libtriton_<backend>.so (default: backends/ next to the binary's directory, else /opt/tritonserver/backends)")
	f.StringArrayVar(&o.BackendConfig, "backend-config", nil, "backend setting <backend>,<key>=<value>, or <key>=<value> for every backend (repeatable)")
	f.StringVar(&o.GRPCAddress, "grpc-address", "0.0.0.0", "address to listen on for gRPC")
	f.IntVar(&o.GRPCPort, "grpc-port", 8001, "port to listen on for gRPC (0: any free port)")
	f.IntVar(&o.MaxMessageBytes, "grpc-max-message-size", grpcserver.DefaultMaxMessageBytes, "largest gRPC message accepted or sent, in bytes")
	f.IntVar(&o.LogVerbose, "log-verbose", 0, "verbose logging level (0: off)")
	f.BoolVar(&o.LogInfo, "log-info", true, "log informational messages")
	f.BoolVar(&o.LogWarning, "log-warning", true, "log warnings")
	f.BoolVar(&o.LogError, "log-error", true, "log errors")
	f.StringVar(&o.LogFormat, "log-format", "default", `log line format: "default" or "ISO8601"`)
	f.StringVar(&o.ModelControlMode, "model-control-mode", "none",
		`"none": load every model at start; "explicit": load --load-model models, then on request; "poll": load every model, then follow the repository's changes`)
	f.IntVar(&o.RepositoryPollSecs, "repository-poll-secs", 15, "with --model-control-mode=poll, seconds between two scans of the model repositories")
	f.StringArrayVar(&o.LoadModels, "load-model", nil, `model to load at start under explicit control ("*" for all; repeatable)`)
	f.BoolVar(&o.AllowFileLibraries, "allow-model-file-libraries", false, "let load requests send shared libraries among their model files (file:...), which the server would then run as code")
	f.Int64Var(&o.ModelFilesMaxSize, "model-files-max-size", core.DefaultMaxLoadFilesBytes, "bytes of model files that load requests sent which the loaded models may keep on disk, all together")
	f.IntVar(&o.ExitTimeoutSecs, "exit-timeout-secs", 30, "on SIGINT/SIGTERM, seconds the whole shutdown may take; work still running then is abandoned and the exit status is 1")
	f.BoolVar(&o.ExitOnError, "exit-on-error", true, "exit if a model fails to load")
	f.BoolVar(&o.StrictReadiness, "strict-readiness", true, "report ready only when every model loaded")
	f.BoolVar(&o.DisableAutoComplete, "disable-auto-complete-config", false, "do not complete model configurations: a model directory without config.pbtxt fails to load, and backends may not complete a configuration")
	f.IntVar(&o.BackendCallSecs, "backend-call-timeout-secs", int(core.DefaultBackendCallTimeout/time.Second), "seconds a backend may take to initialize or finalize a model or instance; then that model fails and the others go on")
	f.IntVar(&o.EnsembleStepWait, "ensemble-step-wait-secs", int(core.DefaultEnsembleStepWait/time.Second), "seconds an ensemble step at its max_inflight_requests waits for a slot; then it goes ahead past the bound, with an error logged")
	f.IntVar(&o.ShmMaxRegions, "system-shm-max-regions", sharedmem.DefaultMaxRegions, "system shared-memory regions clients may have registered at once")
	f.Int64Var(&o.OutputCacheBytes, "output-buffer-cache-byte-size", abi.DefaultOutputCacheBytes,
		"host memory kept from sent responses for the outputs of the next ones (0: none)")
	f.StringVar(&o.DebugAddress, "debug-address", "", "serve Go's pprof profiles (goroutines, heap, CPU) on this host:port for diagnosis; off when empty; bind it to loopback")
	o.GRPC.bind(f)
	o.HTTP.bind(f)
	o.Metrics.bind(f)
	f.IntVar(&o.SSLReloadMs, "ssl-reload-interval", int(tlsfiles.DefaultCheckInterval/time.Millisecond), "ms between checks of the TLS certificate files for changes (made by a new connection, at most this often)")
	o.GPU.bind(f)
	o.InProcess.bind(f)
	o.GC.bind(f)
	o.Trace.bind(f)
	o.Plugins.bind(f)
	o.Repository.bind(f)
	o.RateLimit.bind(f)
	o.Isolation.bind(f)
	o.ObjStore.bind(f)
	o.Triton.bind(f)
	tritonCommandLine(cmd) // Triton's syntax (triton_flags.go)
	return cmd
}

// Complete fills defaults and parses compound flags.
func (o *serveOptions) Complete() error {
	if err := o.Triton.complete(o); err != nil {
		return err
	}
	if o.BackendDirectory == "" {
		o.BackendDirectory = defaultBackendDirectory()
	}
	o.backendConfig = map[string]map[string]string{}
	for _, s := range o.BackendConfig {
		backend, setting := "", s
		if i := strings.IndexByte(s, ','); i >= 0 {
			backend, setting = s[:i], s[i+1:]
		}
		k, v, ok := strings.Cut(setting, "=")
		if !ok || k == "" {
			return fmt.Errorf("--backend-config %q: want <backend>,<key>=<value> or <key>=<value>", s)
		}
		if o.backendConfig[backend] == nil {
			o.backendConfig[backend] = map[string]string{}
		}
		o.backendConfig[backend][k] = v
	}
	if err := o.Trace.complete(); err != nil {
		return err
	}
	if err := o.Plugins.complete(); err != nil {
		return err
	}
	return o.GPU.complete()
}

func defaultBackendDirectory() string {
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Join(filepath.Dir(filepath.Dir(exe)), "backends")
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
	}
	return "/opt/tritonserver/backends"
}

// Validate checks the flags before anything starts.
// outputCache is --output-buffer-cache-byte-size as abi.HostOptions takes
// it: there 0 means the default, and none is negative.
func (o *serveOptions) outputCache() int64 {
	if o.OutputCacheBytes == 0 {
		return -1
	}
	return o.OutputCacheBytes
}

func (o *serveOptions) Validate() error {
	if len(o.ModelRepositories) == 0 {
		return errors.New("--model-repository is required")
	}
	for _, r := range o.ModelRepositories {
		if objstore.IsRemote(r) {
			continue // checked by o.ObjStore.validate
		}
		if st, err := os.Stat(r); err != nil || !st.IsDir() {
			return fmt.Errorf("--model-repository %q is not a directory", r)
		}
	}
	o.ModelControlMode = strings.ToLower(o.ModelControlMode)
	switch o.ModelControlMode {
	case "none", "explicit":
	case "poll":
		if o.RepositoryPollSecs <= 0 {
			return fmt.Errorf("--repository-poll-secs must be positive with --model-control-mode=poll, not %d", o.RepositoryPollSecs)
		}
	default:
		return fmt.Errorf("--model-control-mode %q: want none, explicit or poll", o.ModelControlMode)
	}
	if len(o.LoadModels) > 0 && o.ModelControlMode != "explicit" {
		return errors.New("Error: Use of '--load-model' requires setting '--model-control-mode=explicit' as well.")
	}
	if o.GRPCPort < 0 || o.GRPCPort > 65535 {
		return fmt.Errorf("--grpc-port %d is out of range", o.GRPCPort)
	}
	if o.MaxMessageBytes <= 0 {
		return fmt.Errorf("--grpc-max-message-size must be positive")
	}
	if o.LogFormat != string(serverlog.FormatDefault) && o.LogFormat != string(serverlog.FormatISO8601) {
		return fmt.Errorf("--log-format %q: want default or ISO8601", o.LogFormat)
	}
	if o.ModelFilesMaxSize <= 0 {
		return fmt.Errorf("--model-files-max-size must be positive, not %d", o.ModelFilesMaxSize)
	}
	if o.ExitTimeoutSecs < 0 {
		return errors.New("--exit-timeout-secs must not be negative")
	}
	if o.OutputCacheBytes < 0 {
		return errors.New("--output-buffer-cache-byte-size must not be negative")
	}
	if o.BackendCallSecs <= 0 {
		return errors.New("--backend-call-timeout-secs must be positive")
	}
	if err := o.HTTP.validate(); err != nil {
		return err
	}
	if err := o.Metrics.validate(); err != nil {
		return err
	}
	if o.EnsembleStepWait <= 0 {
		return errors.New("--ensemble-step-wait-secs must be positive")
	}
	if o.ShmMaxRegions <= 0 {
		return errors.New("--system-shm-max-regions must be positive")
	}
	if o.SSLReloadMs <= 0 {
		return errors.New("--ssl-reload-interval must be positive")
	}
	if err := o.InProcess.validate(); err != nil {
		return err
	}
	if err := o.GC.validate(); err != nil {
		return err
	}
	if err := o.Plugins.validate(); err != nil {
		return err
	}
	if err := o.Repository.validate(); err != nil {
		return err
	}
	if err := o.RateLimit.validate(); err != nil {
		return err
	}
	if err := o.Isolation.validate(); err != nil {
		return err
	}
	if err := o.ObjStore.validate(o.ModelRepositories); err != nil {
		return err
	}
	if err := o.GRPC.validate(); err != nil {
		return err
	}
	return o.Triton.validate(o)
}

func (o *serveOptions) logger() *serverlog.Logger {
	l := serverlog.New(o.Triton.logOutput()) // --log-file, else standard error
	l.SetVerbose(o.LogVerbose)
	l.SetEnabled(serverlog.Info, o.LogInfo)
	l.SetEnabled(serverlog.Warning, o.LogWarning)
	l.SetEnabled(serverlog.Error, o.LogError)
	l.SetFormat(serverlog.Format(o.LogFormat))
	return l
}
