package server

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/internal/gpu"
	"github.com/tritonhost/tritonhost/internal/isolation"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/loader"
)

// BindFlags adds the `tritonhost serve` flags to f, each bound to its
// field of c: parsing f sets c. A flag's default is the field's value when
// BindFlags is called, so start from DefaultConfig to get the serve
// command's defaults. The settings that are nil until given (GC.Percent,
// the Triton options without effect, ...) stay nil unless their flag is on
// the command line.
//
// BindFlags binds every flag that has a field; the serve command adds the
// two aliases of other flags, --model-store (--model-repository) and
// --strict-model-config (--disable-auto-complete-config), and reads
// Triton's syntax of booleans (see `tritonhost serve --help`). A program
// that embeds a server may bind the same flags to its own command line.
func (c *Config) BindFlags(f *pflag.FlagSet) {
	f.StringVar(&c.ID, "id", c.ID, "identifier of this server, as ServerMetadata reports it")
	c.Models.bindFlags(f)
	c.Repository.bindFlags(f)
	c.ObjectStorage.bindFlags(f)
	c.Backends.bindFlags(f)
	c.Isolation.bindFlags(f)
	c.InProcess.bindFlags(f)
	c.Plugins.bindFlags(f)
	c.GPU.bindFlags(f)
	c.SharedMemory.bindFlags(f)
	c.Log.bindFlags(f)
	c.GRPC.bindFlags(f)
	c.HTTP.bindFlags(f)
	c.Metrics.bindFlags(f)
	c.Trace.bindFlags(f)
	c.RateLimit.bindFlags(f)
	c.GC.bindFlags(f)
	c.Lifecycle.bindFlags(f)
	c.Triton.bindFlags(f)
	f.IntVar(&c.SSLReloadMs, "ssl-reload-interval", c.SSLReloadMs, "ms between checks of the TLS certificate files for changes (made by a new connection, at most this often)")
	f.StringVar(&c.DebugAddress, "debug-address", c.DebugAddress, "serve Go's pprof profiles (goroutines, heap, CPU) on this host:port for diagnosis; off when empty; bind it to loopback")
}

func (m *ModelsConfig) bindFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&m.Repositories, "model-repository", m.Repositories, "model repository directory (repeatable)")
	f.StringVar(&m.ControlMode, "model-control-mode", m.ControlMode,
		`"none": load every model at start; "explicit": load --load-model models, then on request; "poll": load every model, then follow the repository's changes`)
	f.IntVar(&m.RepositoryPollSecs, "repository-poll-secs", m.RepositoryPollSecs, "with --model-control-mode=poll, seconds between two scans of the model repositories")
	f.StringArrayVar(&m.LoadModels, "load-model", m.LoadModels, `model to load at start under explicit control ("*" for all; repeatable)`)
	f.BoolVar(&m.DisableAutoComplete, "disable-auto-complete-config", m.DisableAutoComplete, "do not complete model configurations: a model directory without config.pbtxt fails to load, and backends may not complete a configuration")
	f.StringVar(&m.ConfigName, "model-config-name", m.ConfigName, "read configs/<name>.pbtxt in each model directory that has it, in place of config.pbtxt (e.g. h100)")
	f.IntVar(&m.LoadThreadCount, "model-load-thread-count", m.LoadThreadCount, "models loaded at once at start (0: 1)")
	f.IntVar(&m.LoadRetryCount, "model-load-retry-count", m.LoadRetryCount, "times a model version that failed to load is tried again at once")
	f.BoolVar(&m.Namespacing, "model-namespacing", m.Namespacing, "make each model repository a namespace: models of one name may be in several repositories, a request naming such a name is refused as ambiguous, and an ensemble runs the models of its own repository first (false: a name in two repositories is refused as a duplicate)")
}

func (r *RepositoryConfig) bindFlags(f *pflag.FlagSet) {
	f.BoolVar(&r.AllowFileLibraries, "allow-model-file-libraries", r.AllowFileLibraries, "let load requests send shared libraries among their model files (file:...), which the server would then run as code")
	f.Int64Var(&r.FilesMaxSize, "model-files-max-size", r.FilesMaxSize, "bytes of model files that load requests sent which the loaded models may keep on disk, all together")
	f.Int64Var(&r.ConfigMaxSize, "model-config-max-size", r.ConfigMaxSize,
		"largest config.pbtxt the server reads, in bytes; a larger one fails its model's load")
	f.IntVar(&r.ReadTimeoutMs, "repository-read-timeout", r.ReadTimeoutMs,
		"ms a read of a model repository's file may wait for its filesystem (a hung network mount); then the model fails to load")
	f.IntVar(&r.ModelMaxCount, "model-max-count", r.ModelMaxCount,
		"models loaded at once; past it a load is refused until one is unloaded")
	f.StringVar(&r.FilesDirectory, "model-files-directory", r.FilesDirectory,
		"directory under which the model files that load requests send are kept, in a directory of each server's own; those of servers that are gone are removed at start (default: tritonhost-uploads-<uid> under $TMPDIR or /tmp)")
}

func (o *ObjectStorageConfig) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.CacheDirectory, "repository-cache-directory", o.CacheDirectory,
		"directory under which the local copies of s3://, gs:// and as:// model repositories are kept, in a directory of each server's own, removed at exit; those of servers that are gone are removed at start (default: tritonhost-repocache-<uid> under $TMPDIR or /tmp)")
	fs.Int64Var(&o.CacheMaxSize, "repository-cache-max-size", o.CacheMaxSize,
		"bytes the local copies of remote model repositories may take on disk, downloads in progress included; a download past it fails its model's load")
	fs.Int64Var(&o.DownloadMaxSize, "repository-download-max-size", o.DownloadMaxSize,
		"largest model, in bytes, downloaded from a remote model repository; a larger one fails to load")
	fs.IntVar(&o.DownloadSecs, "repository-download-timeout-secs", o.DownloadSecs,
		"seconds the download of one model from a remote model repository may take; then its load fails and the version serving stays")
	fs.IntVar(&o.StallSecs, "repository-download-stall-secs", o.StallSecs,
		"seconds a download from a remote model repository may receive nothing before it is given up")
	fs.IntVar(&o.Concurrency, "repository-download-concurrency", o.Concurrency,
		"models downloaded from remote model repositories at once")
	fs.StringVar(&o.AzureEndpoint, "azure-storage-endpoint", o.AzureEndpoint,
		`blob service URL for as:// repositories, "{account}" standing for the path's account, for an emulator or another cloud (default https://{account}.blob.core.windows.net/)`)
}

func (b *BackendsConfig) bindFlags(f *pflag.FlagSet) {
	f.StringVar(&b.Directory, "backend-directory", b.Directory, "directory holding <backend>/libtriton_<backend>.so (default: backends/ next to the binary's directory, else /opt/tritonserver/backends)")
	f.StringArrayVar(&b.Config, "backend-config", b.Config, "backend setting <backend>,<key>=<value>, or <key>=<value> for every backend (repeatable)")
	f.IntVar(&b.CallTimeoutSecs, "backend-call-timeout-secs", b.CallTimeoutSecs, "seconds a backend may take to initialize or finalize a model or instance; then that model fails and the others go on")
	f.IntVar(&b.EnsembleStepWaitSecs, "ensemble-step-wait-secs", b.EnsembleStepWaitSecs, "seconds an ensemble step at its max_inflight_requests waits for a slot; then it goes ahead past the bound, with an error logged")
	f.Int64Var(&b.OutputBufferCacheBytes, "output-buffer-cache-byte-size", b.OutputBufferCacheBytes,
		"host memory kept from sent responses for the outputs of the next ones (0: none)")
	f.IntVar(&b.ExtraProcs, "backend-thread-extra-procs", b.ExtraProcs,
		fmt.Sprintf("Go processors added to the runtime's default while more of the backends' own threads (a decoupled backend's response threads) send responses at once than it has, taken away a second after (0 to %d; 0: none; GOMAXPROCS in the environment turns it off)", abi.MaxExtraProcs))
}

func (i *IsolationConfig) bindFlags(f *pflag.FlagSet) {
	f.StringVar(&i.Mode, "backend-isolation", i.Mode,
		"where backends run: none (in the server's process) or process (each model version in a worker process of its own, restarted when it dies); a model's parameter "+isolation.IsolationParameter+" overrides it")
	f.IntVar(&i.RestartBackoffMs, "backend-restart-backoff", i.RestartBackoffMs, "ms before a dead worker's first restart; doubled after each failed one")
	f.IntVar(&i.RestartBackoffMaxMs, "backend-restart-backoff-max", i.RestartBackoffMaxMs, "ms the restart backoff grows to at most")
	f.IntVar(&i.ExecuteTimeoutMs, "backend-execute-timeout", i.ExecuteTimeoutMs, "ms an isolated model's execution may take before its worker is killed and restarted (0: no bound)")
	f.IntVar(&i.MaxRequests, "backend-worker-max-requests", i.MaxRequests,
		"requests and calls an isolated backend may have in flight to the server at once (its BLS requests, model queries and loads); past it they fail with UNAVAILABLE")
	f.IntVar(&i.PipelineDepth, "backend-pipeline-depth", i.PipelineDepth,
		fmt.Sprintf("batches of one instance an isolated model's worker may hold at once, one running and the others waiting in the worker, where nothing between two executions depends on the first's end (1 to %d; 1: the next batch leaves once the last returned)", isolation.MaxPipelineDepth))
	f.Int64Var(&i.MemoryLimit, "backend-memory-limit", i.MemoryLimit, "bytes of address space each worker process may map beyond what it maps at its start, before its backend is loaded (RLIMIT_AS; 0: no bound)")
}

func (p *InProcessConfig) bindFlags(f *pflag.FlagSet) {
	f.IntVar(&p.MaxPending, "inprocess-max-pending-responses", p.MaxPending,
		"responses of one request a backend submitted to another model that may wait for its response callback")
	f.IntVar(&p.StallTimeoutMs, "inprocess-stall-timeout", p.StallTimeoutMs,
		"ms a model's response may wait for room among those; then its send fails and the request is cancelled")
	f.Int64Var(&p.MaxTensorSize, "inprocess-max-tensor-size", p.MaxTensorSize,
		"largest input or output, in bytes, of a request a backend submits to another model (the frontends' limits do not apply to it)")
}

func (p *PluginsConfig) bindFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&p.CacheConfig, "cache-config", p.CacheConfig,
		"response cache setting <cache>,<key>=<value> (repeatable, one cache): e.g. local,size=1048576 loads <cache-directory>/local/libtritoncache_local.so")
	f.Int64Var(&p.ResponseCacheByteSize, "response-cache-byte-size", p.ResponseCacheByteSize,
		"the older form of --cache-config local,size=<bytes> (0: no cache)")
	f.StringVar(&p.CacheDirectory, "cache-directory", p.CacheDirectory,
		"directory holding <cache>/libtritoncache_<cache>.so (default: caches/ next to the binary's directory, else "+loader.DefaultCacheDirectory+")")
	f.StringVar(&p.RepoAgentDirectory, "repoagent-directory", p.RepoAgentDirectory,
		"directory holding <agent>/libtritonrepoagent_<agent>.so (default: repoagents/ next to the binary's directory, else "+loader.DefaultRepoAgentDirectory+")")
	f.IntVar(&p.CacheCallTimeoutMs, "cache-call-timeout", p.CacheCallTimeoutMs,
		"ms a request waits for its response cache lookup; a slower lookup is a miss")
	f.IntVar(&p.CacheMaxCalls, "cache-max-calls", p.CacheMaxCalls,
		"response cache lookups and inserts running at once; a lookup past it is a miss")
	f.Int64Var(&p.CacheHeldBytes, "cache-held-byte-size", p.CacheHeldBytes,
		"bytes of responses held on their way into or out of the response cache; an insert past it is dropped and counted")
}

func (g *GPUConfig) bindFlags(f *pflag.FlagSet) {
	f.Float64Var(&g.MinComputeCapability, "min-supported-compute-capability", g.MinComputeCapability,
		"hide GPUs whose CUDA compute capability is lower")
	f.StringArrayVar(&g.CUDAPools, "cuda-memory-pool-byte-size", g.CUDAPools,
		fmt.Sprintf("<gpu>:<bytes>, the device memory pool of a GPU for backends (repeatable; default %d each)", gpu.DefaultCUDAPoolBytes))
	f.Int64Var(&g.PinnedPoolBytes, "pinned-memory-pool-byte-size", g.PinnedPoolBytes,
		"page-locked host memory pool for backends, in bytes (0: none)")
	f.BoolVar(&g.AllowMetrics, "allow-gpu-metrics", g.AllowMetrics, "report GPU utilization, memory, power and energy as metrics")
	f.StringVar(&g.DriverLibrary, "cuda-driver-library", g.DriverLibrary, "CUDA driver library to load (for tests: a fake driver)")
	f.StringVar(&g.NVMLLibrary, "nvml-library", g.NVMLLibrary, "NVML library to load (for tests: a fake NVML)")
	_ = f.MarkHidden("cuda-driver-library")
	_ = f.MarkHidden("nvml-library")
}

func (s *SharedMemoryConfig) bindFlags(f *pflag.FlagSet) {
	f.IntVar(&s.SystemMaxRegions, "system-shm-max-regions", s.SystemMaxRegions, "system shared-memory regions clients may have registered at once")
	f.IntVar(&s.CUDAMaxRegions, "cuda-shm-max-regions", s.CUDAMaxRegions, "CUDA shared-memory regions clients may have registered at once")
	f.BoolVar(&s.AllowClient, "allow-client-shm", s.AllowClient,
		"let clients register system and CUDA shared-memory regions and name them in requests (false: refused, as Triton's default since 26.04)")
}

func (l *LogConfig) bindFlags(f *pflag.FlagSet) {
	f.IntVar(&l.Verbose, "log-verbose", l.Verbose, "verbose logging level (0: off)")
	f.BoolVar(&l.Info, "log-info", l.Info, "log informational messages")
	f.BoolVar(&l.Warning, "log-warning", l.Warning, "log warnings")
	f.BoolVar(&l.Error, "log-error", l.Error, "log errors")
	f.StringVar(&l.Format, "log-format", l.Format, `log line format: "default" or "ISO8601"`)
	f.StringVar(&l.File, "log-file", l.File, "write the log to this file (appended to) instead of standard error")
}

// bindFlags binds one listener's TLS flags, named after prefix ("grpc",
// "http", "metrics"); own marks tritonhost's own TLS on a listener that
// Triton serves in plaintext only.
func (s *TLSConfig) bindFlags(f *pflag.FlagSet, prefix, listener string, own bool) {
	note := ""
	if own {
		note = " (tritonhost's own: Triton serves " + listener + " in plaintext only)"
	}
	f.BoolVar(&s.Use, prefix+"-use-ssl", s.Use, "serve "+listener+" over TLS, with --"+prefix+"-server-cert and --"+prefix+"-server-key"+note)
	f.BoolVar(&s.Mutual, prefix+"-use-ssl-mutual", s.Mutual, "serve "+listener+" over mutual TLS: clients must present a certificate signed by --"+prefix+"-root-cert (implies --"+prefix+"-use-ssl)"+note)
	f.StringVar(&s.Cert, prefix+"-server-cert", s.Cert, "PEM file of the "+listener+" server's certificate chain; reloaded when it changes")
	f.StringVar(&s.Key, prefix+"-server-key", s.Key, "PEM file of the "+listener+" server's private key; reloaded when it changes")
	f.StringVar(&s.Root, prefix+"-root-cert", s.Root, "PEM file of the authorities that sign "+listener+" client certificates under --"+prefix+"-use-ssl-mutual; reloaded when it changes")
}

// categoryList names the restricted-API categories, for --help.
func categoryList() string {
	var names []string
	for _, c := range protocol.Categories() {
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}

func (g *GRPCConfig) bindFlags(f *pflag.FlagSet) {
	f.StringVar(&g.Address, "grpc-address", g.Address, "address to listen on for gRPC")
	f.IntVar(&g.Port, "grpc-port", g.Port, "port to listen on for gRPC (0: any free port)")
	f.IntVar(&g.MaxMessageBytes, "grpc-max-message-size", g.MaxMessageBytes, "largest gRPC message accepted or sent, in bytes")
	f.IntVar(&g.KeepaliveTimeMs, "grpc-keepalive-time", g.KeepaliveTimeMs, "ms of silence on a connection after which the server pings it")
	f.IntVar(&g.KeepaliveTimeoutMs, "grpc-keepalive-timeout", g.KeepaliveTimeoutMs, "ms the server waits for a ping's answer before closing the connection")
	f.BoolVar(&g.KeepalivePermitWithout, "grpc-keepalive-permit-without-calls", g.KeepalivePermitWithout, "let clients ping with no call open (otherwise they are disconnected for it)")
	f.IntVar(&g.MaxPingsWithoutData, "grpc-http2-max-pings-without-data", g.MaxPingsWithoutData, "accepted for Triton compatibility; the server's own pings follow --grpc-keepalive-time")
	f.IntVar(&g.MinRecvPingIntervalMs, "grpc-http2-min-recv-ping-interval-without-data", g.MinRecvPingIntervalMs, "shortest interval, in ms, at which a client may ping; faster pings count as strikes")
	f.IntVar(&g.MaxPingStrikes, "grpc-http2-max-ping-strikes", g.MaxPingStrikes, "accepted for Triton compatibility; a client is disconnected after 2 strikes")
	f.IntVar(&g.MaxConcurrentStreams, "grpc-max-concurrent-streams", g.MaxConcurrentStreams, "calls (streams) one connection may have open at once")
	f.IntVar(&g.MaxHeaderListSize, "grpc-max-header-list-size", g.MaxHeaderListSize, "largest header list (metadata) of one call, in bytes as HTTP/2 counts them; a call past it is reset")
	f.IntVar(&g.MaxConnectionIdleMs, "grpc-max-connection-idle", g.MaxConnectionIdleMs, "ms after which a connection with no call open is closed (clients reconnect when they need to)")
	f.IntVar(&g.MaxConnections, "grpc-max-connections", g.MaxConnections, "gRPC connections open at once; past it new ones wait for one to close")
	f.IntVar(&g.MaxConnectionsPerClient, "grpc-max-connections-per-client", g.MaxConnectionsPerClient,
		"gRPC connections one client (source IP address) may have open at once; past it its new ones are closed at once (0: a quarter of --grpc-max-connections)")
	f.IntVar(&g.HandshakeTimeoutMs, "grpc-handshake-timeout", g.HandshakeTimeoutMs, "ms a new connection may take to finish TLS and send HTTP/2's preface and settings; then it is closed")
	f.IntVar(&g.MaxStreamPendingRequests, "grpc-max-stream-pending-requests", g.MaxStreamPendingRequests, "requests one ModelStreamInfer stream may have unanswered; then the server stops reading it")
	f.IntVar(&g.MaxResponsePoolSize, "grpc-max-response-pool-size", g.MaxResponsePoolSize, "responses one stream may hold for a client that reads slowly")
	f.IntVar(&g.MaxStreamResponseBytes, "grpc-max-stream-response-bytes", g.MaxStreamResponseBytes, "bytes of responses one stream may hold for a client that reads slowly (a single larger response still goes)")
	f.IntVar(&g.StreamStallTimeoutMs, "grpc-stream-stall-timeout", g.StreamStallTimeoutMs, "ms a response may wait for room in a full stream; then the stream is cut off and its requests cancelled")
	f.BoolVar(&g.AllowLogFileSetting, "allow-log-file-setting", g.AllowLogFileSetting, "let LogSettings clients send the log to a file they name on this machine")
	g.SSL.bindFlags(f, "grpc", "gRPC", false)
	f.StringArrayVar(&g.RestrictedProtocol, "grpc-restricted-protocol", g.RestrictedProtocol, "<category>[,<category>...]:<key>=<value>: those RPCs answer only calls with metadata triton-grpc-protocol-<key>: <value>; categories: "+categoryList()+" (repeatable)")
	f.BoolVar(&g.Allow, "allow-grpc", g.Allow, "serve Triton's gRPC protocol")
	f.BoolVar(&g.ReusePort, "reuse-grpc-port", g.ReusePort, "listen with SO_REUSEPORT, so that several servers (with the same models) share the gRPC port")
	f.StringVar(&g.HeaderForwardPattern, "grpc-header-forward-pattern", g.HeaderForwardPattern,
		"regular expression (RE2, case-insensitive, unanchored): call metadata whose keys match become string parameters of each inference request")
	f.Var(optional(&g.InferThreadCount, tritonGRPCInferThreads), "grpc-infer-thread-count", "2 to 128; accepted for Triton compatibility, without effect: requests run on goroutines")
	f.Var(optional(&g.InferAllocationPoolSize, tritonGRPCAllocPool), "grpc-infer-allocation-pool-size", "accepted for Triton compatibility, without effect: request states are not pooled")
	f.StringVar(&g.CompressionLevel, "grpc-infer-response-compression-level", g.CompressionLevel,
		`"none", "low", "medium" or "high": gzip the responses of ModelInfer and ModelStreamInfer at that level, for clients that accept gzip`)
	f.IntVar(&g.MaxConnectionAgeMs, "grpc-max-connection-age", g.MaxConnectionAgeMs, "ms after which a connection is closed gracefully (give or take 10%); 0: never")
	f.IntVar(&g.MaxConnectionAgeGraceMs, "grpc-max-connection-age-grace", g.MaxConnectionAgeGraceMs, "ms the calls of a connection closed for its age have to finish before it is cut; 0: as long as they take")
}

func (h *HTTPConfig) bindFlags(f *pflag.FlagSet) {
	f.BoolVar(&h.Allow, "allow-http", h.Allow, "serve Triton's HTTP/REST protocol")
	f.StringVar(&h.Address, "http-address", h.Address, "address to listen on for HTTP")
	f.IntVar(&h.Port, "http-port", h.Port, "port to listen on for HTTP (0: any free port)")
	f.Int64Var(&h.MaxInputSize, "http-max-input-size", h.MaxInputSize, "largest HTTP request body, in bytes, as sent and once decompressed")
	f.IntVar(&h.MaxHeaderBytes, "http-max-header-bytes", h.MaxHeaderBytes, "largest HTTP request header, in bytes")
	f.IntVar(&h.ReadHeaderTimeoutMs, "http-read-header-timeout", h.ReadHeaderTimeoutMs, "ms a client may take to send a request's header")
	f.IntVar(&h.ReadBodyTimeoutMs, "http-read-body-timeout", h.ReadBodyTimeoutMs, "ms a client may take to send a request's body, beyond 1 s for every --http-read-body-min-rate bytes of it")
	f.Int64Var(&h.ReadBodyMinRate, "http-read-body-min-rate", h.ReadBodyMinRate, "bytes a second a request body must arrive at, on average (a slower client is answered 408 and disconnected)")
	f.IntVar(&h.MaxConnections, "http-max-connections", h.MaxConnections, "HTTP connections open at once; past it new ones wait for one to close, idle ones being closed first")
	f.IntVar(&h.MaxConnectionsPerClient, "http-max-connections-per-client", h.MaxConnectionsPerClient,
		"HTTP connections one client (source IP address) may have open at once; past it its new ones are closed at once (0: a quarter of --http-max-connections)")
	f.IntVar(&h.IdleTimeoutMs, "http-idle-timeout", h.IdleTimeoutMs, "ms after which a kept-alive connection with no request is closed")
	f.IntVar(&h.WriteTimeoutMs, "http-write-timeout", h.WriteTimeoutMs, "ms writing one response may take (event streams: see --http-stream-stall-timeout)")
	f.IntVar(&h.StreamStallTimeoutMs, "http-stream-stall-timeout", h.StreamStallTimeoutMs, "ms an event of a generate_stream may wait for a client that does not read; then the stream is cut off and its request cancelled")
	f.IntVar(&h.MaxStreamResponses, "http-max-stream-responses", h.MaxStreamResponses, "events one generate_stream may hold for a client that reads slowly")
	f.IntVar(&h.MaxStreamResponseBytes, "http-max-stream-response-bytes", h.MaxStreamResponseBytes, "bytes of events one generate_stream may hold for a client that reads slowly")
	h.SSL.bindFlags(f, "http", "HTTP", true)
	f.StringArrayVar(&h.RestrictedAPI, "http-restricted-api", h.RestrictedAPI, "<category>[,<category>...]:<key>=<value>: those routes answer only requests with the header <key>: <value>; categories: "+categoryList()+" (repeatable)")
	f.BoolVar(&h.ReusePort, "reuse-http-port", h.ReusePort, "listen with SO_REUSEPORT, so that several servers (with the same models) share the HTTP port")
	f.StringVar(&h.HeaderForwardPattern, "http-header-forward-pattern", h.HeaderForwardPattern,
		"regular expression (RE2, case-insensitive, unanchored): request headers whose names match become string parameters (named in lower case) of the inference request of /infer and /generate")
	f.Var(optional(&h.ThreadCount, tritonHTTPThreads), "http-thread-count", "accepted for Triton compatibility, without effect: requests run on goroutines")
}

func (m *MetricsConfig) bindFlags(f *pflag.FlagSet) {
	f.BoolVar(&m.Allow, "allow-metrics", m.Allow, "serve Prometheus metrics at /metrics")
	f.BoolVar(&m.AllowCPU, "allow-cpu-metrics", m.AllowCPU, "include the host's CPU utilization and memory in the metrics")
	f.StringVar(&m.Address, "metrics-address", m.Address, "address to listen on for metrics (default: --http-address when HTTP is on, else 0.0.0.0)")
	f.IntVar(&m.Port, "metrics-port", m.Port, "port to listen on for metrics (0: any free port)")
	f.IntVar(&m.MaxConnections, "metrics-max-connections", m.MaxConnections, "metrics connections open at once; past it new ones wait for one to close, idle ones being closed first")
	f.IntVar(&m.MaxConnectionsPerClient, "metrics-max-connections-per-client", m.MaxConnectionsPerClient,
		"metrics connections one client (source IP address) may have open at once; past it its new ones are closed at once (0: a quarter of --metrics-max-connections)")
	f.IntVar(&m.IntervalMs, "metrics-interval-ms", m.IntervalMs, "ms between polls of the per-interval metrics (CPU)")
	m.SSL.bindFlags(f, "metrics", "metrics", true)
	f.StringArrayVar(&m.Config, "metrics-config", m.Config,
		"<setting>=<value>: counter_latencies=true and summary_latencies=false (the defaults) are what this server reports; histogram_latencies=true|false is accepted (the decoupled models' first-response histogram is always reported); other values are refused (repeatable)")
}

func (p *TraceConfig) bindFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&p.Config, "trace-config", p.Config,
		`trace setting [<mode>,]<setting>=<value> (repeatable): level=OFF|TIMESTAMPS|TENSORS, rate=N, count=N, mode=triton|opentelemetry; `+
			`triton,file=PATH, triton,log-frequency=N; opentelemetry,url=URL, opentelemetry,resource=KEY=VALUE, opentelemetry,bsp_max_queue_size=N, ...`)
	f.Var(optional(&p.File, ""), "trace-file", "deprecated: --trace-config triton,file=PATH")
	f.StringArrayVar(&p.Levels, "trace-level", p.Levels, "deprecated: --trace-config level=LEVEL")
	f.Var(optional(&p.Rate, ""), "trace-rate", "deprecated: --trace-config rate=N")
	f.Var(optional(&p.Count, ""), "trace-count", "deprecated: --trace-config count=N")
	f.Var(optional(&p.LogFrequency, ""), "trace-log-frequency", "deprecated: --trace-config triton,log-frequency=N")
	f.IntVar(&p.QueueSize, "trace-queue-size", p.QueueSize,
		"finished traces that may wait to be written or exported; past it they are dropped and counted (tritonhost_traces_dropped_total)")
	f.Int64Var(&p.FileMaxSize, "trace-file-max-size", p.FileMaxSize,
		"bytes of trace files the server writes, every file together; past it traces are dropped and counted (tritonhost_traces_dropped_total)")
}

func (r *RateLimitConfig) bindFlags(f *pflag.FlagSet) {
	f.StringVar(&r.Mode, "rate-limit", r.Mode,
		`"off": an instance executes as soon as it has work; "execution_count": an instance executes once the resources its instance_group's rate_limiter lists are free, the instance with the fewest executions (times its priority) first`)
	f.StringArrayVar(&r.Resources, "rate-limit-resource", r.Resources,
		"with --rate-limit=execution_count, <name>:<count> copies of a resource on every device, or <name>:<count>:<device> on one (repeatable); once one is given, a resource not given has none (default: as many as the instances ask for)")
}

func (g *GCConfig) bindFlags(f *pflag.FlagSet) {
	f.Var(optional(&g.Percent, DefaultGCPercent), "gc-percent",
		"percent the heap may grow past what is live before the garbage collector runs, as GOGC (-1: only at the memory limit)")
	f.Var(optional(&g.MemoryLimit, AutoMemoryLimit), "gc-memory-limit-byte-size",
		"bytes of memory near which the garbage collector runs whatever --gc-percent says, as GOMEMLIMIT (0: none; -1: 90% of the container's (cgroup's) memory limit, none without one)")
}

func (l *LifecycleConfig) bindFlags(f *pflag.FlagSet) {
	f.IntVar(&l.ExitTimeoutSecs, "exit-timeout-secs", l.ExitTimeoutSecs, "on SIGINT/SIGTERM, seconds the whole shutdown may take; work still running then is abandoned and the exit status is 1")
	f.BoolVar(&l.ExitOnError, "exit-on-error", l.ExitOnError, "exit if a model fails to load")
	f.BoolVar(&l.StrictReadiness, "strict-readiness", l.StrictReadiness, "report ready only when every model loaded")
}

func (t *TritonConfig) bindFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&t.HostPolicy, "host-policy", t.HostPolicy,
		"<policy>,<setting>=<value>: cpu-cores=<cpus> (e.g. 0-3,8) pins, and numa-node=<node> binds the memory of, the threads that initialize and execute the instances under that host policy (instance_group host_policy; by default cpu, gpu_<id> or model) (repeatable)")
	f.StringArrayVar(&t.ModelLoadGPULimit, "model-load-gpu-limit", t.ModelLoadGPULimit,
		"<gpu>:<fraction>, Triton's bound on a GPU's memory use at load: not enforced here, so a server that uses GPUs refuses to start with it; without GPUs it limits nothing (see docs/triton-flags.md) (repeatable)")
	f.Var(optional(&t.EnablePeerAccess, true), "enable-peer-access", "accepted for Triton compatibility; this server does not enable CUDA peer access between GPUs itself (backends do what they need)")
	f.Lookup("enable-peer-access").NoOptDefVal = "true"
	f.StringArrayVar(&t.CUDAVirtualAddressSize, "cuda-virtual-address-size", t.CUDAVirtualAddressSize,
		"<gpu>:<bytes>: accepted for Triton compatibility; this server has no growable-memory implicit state that would reserve it (repeatable)")
	f.Var(optional(&t.BufferManagerThreads, 0), "buffer-manager-thread-count", "accepted for Triton compatibility; tensors are copied on the goroutine that needs them")
	f.BoolVar(&t.AllowSageMaker, "allow-sagemaker", t.AllowSageMaker, "refused when true: this server has no SageMaker endpoint")
	f.Var(optional(&t.SageMakerPort, tritonPlatformPort), "sagemaker-port", "no effect: this server has no SageMaker endpoint")
	f.Var(optional(&t.SageMakerSafePortRange, ""), "sagemaker-safe-port-range", "<port>-<port>; no effect: this server has no SageMaker endpoint")
	f.Var(optional(&t.SageMakerThreads, tritonEndpointThreads), "sagemaker-thread-count", "no effect: this server has no SageMaker endpoint")
	f.BoolVar(&t.AllowVertexAI, "allow-vertex-ai", t.AllowVertexAI, "refused when true (Triton's default where AIP_MODE=PREDICTION): this server has no Vertex AI endpoint")
	f.Var(optional(&t.VertexAIPort, vertexAIDefaultPort()), "vertex-ai-port", "no effect: this server has no Vertex AI endpoint")
	f.Var(optional(&t.VertexAIThreads, tritonEndpointThreads), "vertex-ai-thread-count", "no effect: this server has no Vertex AI endpoint")
	f.Var(optional(&t.VertexAIDefaultModel, ""), "vertex-ai-default-model", "no effect: this server has no Vertex AI endpoint")
}

// vertexAIDefaultPort is --vertex-ai-port's default, Triton's:
// AIP_HTTP_PORT, else 8080.
func vertexAIDefaultPort() int {
	if p, err := strconv.Atoi(os.Getenv("AIP_HTTP_PORT")); err == nil {
		return p
	}
	return tritonPlatformPort
}

// optionalValue is the flag of a setting that is nil until given: it
// shows def as its default, and its first Set points the setting at a
// value of its own.
type optionalValue[T int | int64 | bool | string] struct {
	p   **T
	def T
}

// optional returns the flag value of the setting *p, nil until set, whose
// default (shown, and what nil means) is def.
func optional[T int | int64 | bool | string](p **T, def T) pflag.Value {
	return &optionalValue[T]{p: p, def: def}
}

// String implements pflag.Value.
func (v *optionalValue[T]) String() string {
	if *v.p != nil {
		return fmt.Sprint(**v.p)
	}
	return fmt.Sprint(v.def)
}

// Type implements pflag.Value: the type's name, as pflag's own values
// name theirs.
func (v *optionalValue[T]) Type() string { return fmt.Sprintf("%T", v.def) }

// Set implements pflag.Value.
func (v *optionalValue[T]) Set(s string) error {
	var x any
	var err error
	switch any(v.def).(type) {
	case int:
		var n int64
		n, err = strconv.ParseInt(s, 0, strconv.IntSize)
		x = int(n)
	case int64:
		x, err = strconv.ParseInt(s, 0, 64)
	case bool:
		x, err = strconv.ParseBool(s)
	case string:
		x = s
	}
	if err != nil {
		return err
	}
	t := x.(T)
	*v.p = &t
	return nil
}
