package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/server"
)

// serveFlags are the serve command's flags: the server's configuration,
// which package server binds (server.Config.BindFlags), and Triton's two
// aliases of its flags.
type serveFlags struct {
	cfg               server.Config
	modelStore        []string // --model-store, merged into --model-repository
	strictModelConfig bool     // --strict-model-config, deprecated
	flags             *pflag.FlagSet
}

// bind adds the serve command's flags to f, with the serve command's
// defaults.
func (s *serveFlags) bind(f *pflag.FlagSet) {
	s.flags = f
	s.cfg = server.DefaultConfig()
	s.cfg.Version = buildVersion()
	s.cfg.Triton.AllowVertexAI = os.Getenv("AIP_MODE") == "PREDICTION" // Triton's default
	s.cfg.BindFlags(f)
	f.StringArrayVar(&s.modelStore, "model-store", nil, "the same as --model-repository (Triton's older name)")
	f.BoolVar(&s.strictModelConfig, "strict-model-config", false, "deprecated (Triton's): true is --disable-auto-complete-config")
}

// config returns the configuration the command line gives, once parsed:
// --model-store adds repositories, repeated repositories count once,
// --strict-model-config=true disables
// auto-complete (and --disable-auto-complete-config wins over =false, with
// Triton's warning); and it refuses what only the command line can get
// wrong.
func (s *serveFlags) config() (server.Config, error) {
	c := s.cfg
	var repos []string // a repository given twice counts once (Triton keeps a set)
	for _, r := range append(slices.Clone(c.Models.Repositories), s.modelStore...) {
		if !slices.Contains(repos, r) {
			repos = append(repos, r)
		}
	}
	c.Models.Repositories = repos
	if s.flags.Changed("strict-model-config") {
		fmt.Fprintln(os.Stderr, "Warning: '--strict-model-config' has been deprecated! Please use '--disable-auto-complete-config' instead.")
		switch {
		case c.Models.DisableAutoComplete && !s.strictModelConfig:
			fmt.Fprintln(os.Stderr, "Warning: Overriding deprecated '--strict-model-config' from False to True in favor of '--disable-auto-complete-config'!")
		case s.strictModelConfig:
			c.Models.DisableAutoComplete = true
		}
	}
	if s.flags.Changed("model-config-name") && c.Models.ConfigName == "" {
		return c, errors.New("Error: empty argument for --model-config-name")
	}
	return c, nil
}

// validate checks the configuration the command line gives (Validate),
// saying why Vertex AI is asked for when the command line does not.
func (s *serveFlags) validate(c server.Config) error {
	err := c.Validate()
	if errors.Is(err, server.ErrNoVertexAI) && !s.flags.Changed("allow-vertex-ai") {
		return server.VertexAIError("AIP_MODE=PREDICTION (where Triton serves Vertex AI by default)")
	}
	return err
}

func newServeCommand() *cobra.Command {
	s := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve --model-repository DIR [flags]",
		Short: "Serve a model repository over Triton's gRPC and HTTP/REST protocols, with Prometheus metrics",
		Example: `  tritonhost serve --model-repository examples/models --backend-directory backends
  tritonhost serve --model-repository /models --model-control-mode explicit --load-model square_int32`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := s.config()
			if err != nil {
				return err
			}
			if err := s.validate(cfg); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return serve(ctx, cfg)
		},
	}
	s.bind(cmd.Flags())
	tritonCommandLine(cmd) // Triton's syntax (triton_flags.go)
	return cmd
}

// serve runs a server until ctx ends, then shuts it down: new requests are
// refused, in-flight requests finish, streams close and every model is
// unloaded, all within --exit-timeout-secs (server.Server.Shutdown).
// Whatever is still running then is abandoned and serve returns an error
// (exit status 1); and a shutdown step stuck past the end does not keep
// the process (exitWatchdog). A signal during start-up stops it at once.
func serve(ctx context.Context, cfg server.Config) error {
	var w exitWatchdog
	defer w.stop()
	cfg.Lifecycle.ShutdownStarted = func(log *serverlog.Logger, deadline time.Time) {
		w.start(log, deadline, cfg.Lifecycle.ExitTimeoutSecs)
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	serveErr := srv.Serve(ctx)
	err = srv.Stop(context.Background())
	if serveErr != nil {
		if err != nil {
			srv.Logger().Errorf("%v", err)
		}
		return serveErr
	}
	return err
}

// exitSlack is how long past its deadline a shutdown may take to report
// and close what it holds before the watchdog ends the process.
const exitSlack = 400 * time.Millisecond

// exitWatchdog ends the process (status 1) exitSlack after a shutdown's
// deadline, if the shutdown has not returned by then: a backend stuck in
// a call, or a step of the shutdown that waits on one, cannot keep the
// process past --exit-timeout-secs.
type exitWatchdog struct {
	mu    sync.Mutex
	timer *time.Timer
}

// start arms the watchdog for a shutdown that must be over by deadline.
func (w *exitWatchdog) start(log *serverlog.Logger, deadline time.Time, exitTimeoutSecs int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = time.AfterFunc(time.Until(deadline)+exitSlack, func() {
		log.Errorf("shutdown did not finish within --exit-timeout-secs=%d; exiting with work abandoned", exitTimeoutSecs)
		os.Exit(1)
	})
}

// stop disarms the watchdog: the shutdown is over.
func (w *exitWatchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
}
