package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"tritonhost/abi"
	"tritonhost/core"
	"tritonhost/core/serverlog"
	"tritonhost/frontend/grpcserver"
	"tritonhost/loader"
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
	LoadModels          []string
	ExitTimeoutSecs     int
	ExitOnError         bool
	StrictReadiness     bool
	DisableAutoComplete bool
	GRPC                grpcFlags

	backendConfig map[string]map[string]string
}

func newServeCommand() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve --model-repository DIR [flags]",
		Short: "Serve a model repository over Triton's gRPC protocol",
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
	f.StringSliceVar(&o.ModelRepositories, "model-repository", nil, "model repository directory (repeatable)")
	f.StringSliceVar(&o.ModelRepositories, "model-store", nil, "alias of --model-repository")
	_ = f.MarkHidden("model-store")
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
	f.StringVar(&o.ModelControlMode, "model-control-mode", "none", `"none": load every model at start; "explicit": load --load-model models, then on request`)
	f.StringArrayVar(&o.LoadModels, "load-model", nil, `model to load at start under explicit control ("*" for all; repeatable)`)
	f.IntVar(&o.ExitTimeoutSecs, "exit-timeout-secs", 30, "on SIGINT/SIGTERM, seconds the whole shutdown may take; work still running then is abandoned and the exit status is 1")
	f.BoolVar(&o.ExitOnError, "exit-on-error", true, "exit if a model fails to load")
	f.BoolVar(&o.StrictReadiness, "strict-readiness", true, "report ready only when every model loaded")
	f.BoolVar(&o.DisableAutoComplete, "disable-auto-complete-config", false, "do not let backends complete model configurations")
	o.GRPC.bind(f)
	return cmd
}

// Complete fills defaults and parses compound flags.
func (o *serveOptions) Complete() error {
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
	return nil
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
func (o *serveOptions) Validate() error {
	if len(o.ModelRepositories) == 0 {
		return errors.New("--model-repository is required")
	}
	for _, r := range o.ModelRepositories {
		if st, err := os.Stat(r); err != nil || !st.IsDir() {
			return fmt.Errorf("--model-repository %q is not a directory", r)
		}
	}
	switch o.ModelControlMode {
	case "none", "explicit":
	case "poll":
		return errors.New("--model-control-mode=poll is not supported; use none or explicit")
	default:
		return fmt.Errorf("--model-control-mode %q: want none or explicit", o.ModelControlMode)
	}
	if len(o.LoadModels) > 0 && o.ModelControlMode != "explicit" {
		return errors.New("--load-model needs --model-control-mode=explicit")
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
	if o.ExitTimeoutSecs < 0 {
		return errors.New("--exit-timeout-secs must not be negative")
	}
	return o.GRPC.validate()
}

func (o *serveOptions) logger() *serverlog.Logger {
	l := serverlog.New(os.Stderr)
	l.SetVerbose(o.LogVerbose)
	l.SetEnabled(serverlog.Info, o.LogInfo)
	l.SetEnabled(serverlog.Warning, o.LogWarning)
	l.SetEnabled(serverlog.Error, o.LogError)
	l.SetFormat(serverlog.Format(o.LogFormat))
	return l
}

// Run serves until ctx ends, then shuts down: new requests are refused,
// in-flight requests finish, streams close and every model is unloaded, all
// within --exit-timeout-secs; whatever is still running then is abandoned
// and Run returns an error (exit status 1). A signal during start-up stops
// it at once.
func (o *serveOptions) Run(ctx context.Context) error {
	log := o.logger()
	o.GRPC.warn(log)
	host := abi.NewHost(abi.HostOptions{Logger: log})
	defer host.Close()
	provider := loader.New(loader.Options{
		Opener:              host,
		BackendDirectory:    o.BackendDirectory,
		BackendConfig:       o.backendConfig,
		DisableAutoComplete: o.DisableAutoComplete,
		Logger:              log,
	})
	srv, err := o.start(ctx, log, provider)
	if err != nil {
		return err
	}
	for _, st := range srv.RepositoryIndex() {
		log.Infof("model %q version %q: %s %s", st.Name, st.Version, st.Readiness, st.Reason)
	}
	if o.ExitOnError && !srv.Ready() {
		_ = o.stopWithin(log, srv.Stop)
		return errors.New("a model failed to load (see the log); pass --exit-on-error=false to serve the others")
	}

	streams, conns := o.GRPC.options()
	svc := grpcserver.New(srv, grpcserver.Options{ServerVersion: buildVersion(), MaxMessageBytes: o.MaxMessageBytes,
		StrictReadiness: o.StrictReadiness, Stream: streams, Connection: conns, AllowLogFile: o.GRPC.AllowLogFileSetting})
	g := svc.NewGRPCServer()
	lis, err := net.Listen("tcp", net.JoinHostPort(o.GRPCAddress, strconv.Itoa(o.GRPCPort)))
	if err != nil {
		_ = o.stopWithin(log, srv.Stop)
		return fmt.Errorf("listen for gRPC: %w", err)
	}
	log.Infof("Started GRPCInferenceService at %s", lis.Addr())
	serveErr := make(chan error, 1)
	go func() { serveErr <- g.Serve(lis) }()

	select {
	case err := <-serveErr:
		_ = o.stopWithin(log, srv.Stop)
		return fmt.Errorf("gRPC server: %w", err)
	case <-ctx.Done():
	}
	err = o.stopWithin(log, func(deadline context.Context) error {
		svc.Drain()
		stopped := make(chan struct{})
		go func() { g.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-deadline.Done():
			log.Warnf("exit timeout reached; closing the remaining streams")
			g.Stop()
			<-stopped
		}
		return srv.Stop(deadline)
	})
	if live := host.Live(); !live.Zero() {
		log.Warnf("backend API objects still live at exit: %v", live)
	}
	if err != nil {
		return err
	}
	log.Infof("stopped")
	return nil
}

// start loads the models; a signal (ctx ending) while they load ends the
// start-up at once, leaving a model stuck in its backend behind.
func (o *serveOptions) start(ctx context.Context, log *serverlog.Logger, provider core.BackendProvider) (*core.Server, error) {
	type started struct {
		srv *core.Server
		err error
	}
	done := make(chan started, 1)
	go func() {
		srv, err := core.NewServer(core.Options{
			ModelRepositories:    o.ModelRepositories,
			Backends:             provider,
			Logger:               log,
			ExplicitModelControl: o.ModelControlMode == "explicit",
			StartupModels:        o.LoadModels,
		})
		done <- started{srv, err}
	}()
	select {
	case s := <-done:
		return s.srv, s.err
	case <-ctx.Done():
		log.Warnf("interrupted while loading models; exiting without waiting for them")
		return nil, errors.New("interrupted during start-up")
	}
}

// stopWithin runs stop with a context that ends after --exit-timeout-secs,
// and returns at that deadline (plus a second for stop to report) whatever
// stop is still doing: the shutdown is bounded even if a backend never
// returns.
func (o *serveOptions) stopWithin(log *serverlog.Logger, stop func(context.Context) error) error {
	timeout := time.Duration(o.ExitTimeoutSecs) * time.Second
	log.Infof("shutting down: waiting up to %s for in-flight requests", timeout)
	deadline, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stop(deadline) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("shutdown within --exit-timeout-secs=%d left work behind: %w", o.ExitTimeoutSecs, err)
		}
		return nil
	case <-time.After(timeout + time.Second):
		return fmt.Errorf("shutdown did not finish within --exit-timeout-secs=%d; exiting with work abandoned", o.ExitTimeoutSecs)
	}
}
