package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/tritonhost/tritonhost/core/serverlog"
)

// startDiagnostics serves Go's runtime profiles (net/http/pprof: goroutines,
// heap, CPU, threads) on addr, for an operator chasing a leak or a stall.
// It is off unless --debug-address names an address; the profiles reveal
// the process's internals, so bind it to loopback. The returned function
// closes the listener and waits up to a second for open profiles.
func startDiagnostics(addr string, log *serverlog.Logger) (func(), error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warnf("diagnostics server: %v", err)
		}
	}()
	log.Infof("Started diagnostics (pprof) at %s", lis.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
