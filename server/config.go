package server

import (
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/frontend/tlsfiles"
	"github.com/tritonhost/tritonhost/internal/gpu"
	"github.com/tritonhost/tritonhost/internal/isolation"
	"github.com/tritonhost/tritonhost/internal/objstore/repocache"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/trace"
)

// Config is every setting of a server. Each field is the setting of one
// `tritonhost serve` flag, named in its comment, with the flag's meaning,
// unit (the flags take durations in milliseconds or seconds, as Triton's
// do) and default (DefaultConfig); the settings that take several values
// take them in the flag's syntax, Triton's (--backend-config
// <backend>,<key>=<value>, ...). The serve command's flags are bound to
// these fields, TRITONSERVER_ServerOptions are converted into them, and a
// Go program sets them itself. Validate's and New's errors name the flag
// of the setting at fault.
//
// Start from DefaultConfig: the zero Config is not valid.
type Config struct {
	// ID is what ServerMetadata reports as the server's name (--id).
	ID string
	// Version is what ServerMetadata reports as the server's version
	// (not a flag: the serve command reports its build's). "" reports
	// "dev".
	Version string

	Models        ModelsConfig        // which models load, from where, how
	Repository    RepositoryConfig    // bounds on what is read from repositories and load requests
	ObjectStorage ObjectStorageConfig // repositories in S3, GCS and Azure
	Backends      BackendsConfig      // where backends are found and how they are called
	Isolation     IsolationConfig     // backends in worker processes
	InProcess     InProcessConfig     // requests backends submit to other models
	Plugins       PluginsConfig       // the response cache and the repository agents
	GPU           GPUConfig           // GPUs, their memory pools and metrics
	SharedMemory  SharedMemoryConfig  // clients' shared-memory regions
	Log           LogConfig           // the server's log
	GRPC          GRPCConfig          // Triton's gRPC protocol
	HTTP          HTTPConfig          // Triton's HTTP/REST protocol
	Metrics       MetricsConfig       // Prometheus metrics
	Trace         TraceConfig         // request tracing
	RateLimit     RateLimitConfig     // the rate limiter
	GC            GCConfig            // the Go garbage collector of the process
	Lifecycle     LifecycleConfig     // readiness, exit on error, shutdown
	Triton        TritonConfig        // Triton's options without effect here, and those refused

	// SSLReloadMs is how often, in ms, the TLS certificate files of every
	// listener are checked for changes (--ssl-reload-interval).
	SSLReloadMs int
	// DebugAddress serves Go's pprof profiles on this host:port when not
	// empty (--debug-address); bind it to loopback.
	DebugAddress string
}

// ModelsConfig says which models the server loads and from where.
type ModelsConfig struct {
	// Repositories are the model repositories: directories, or s3://,
	// gs:// and as:// paths (--model-repository, repeated; also
	// --model-store). A path given twice counts once.
	Repositories []string
	// ControlMode is "none" (every model at start), "explicit" (the
	// LoadModels at start, then on request) or "poll" (every model at
	// start, then the repositories' changes) (--model-control-mode).
	ControlMode string
	// RepositoryPollSecs is the time between two scans of the
	// repositories under ControlMode "poll" (--repository-poll-secs).
	RepositoryPollSecs int
	// PollOnRequest makes ControlMode "poll" scan the repositories only
	// when asked (core.Server.Poll, TRITONSERVER_ServerPollModelRepository),
	// as the servers of Triton's C API do, instead of every
	// RepositoryPollSecs (not a flag).
	PollOnRequest bool
	// LoadModels are the models loaded at start under ControlMode
	// "explicit", "*" for all (--load-model).
	LoadModels []string
	// DisableAutoComplete makes a model directory without config.pbtxt
	// fail to load and keeps backends from completing configurations
	// (--disable-auto-complete-config; --strict-model-config=true).
	DisableAutoComplete bool
	// ConfigName reads configs/<name>.pbtxt in place of config.pbtxt in
	// the model directories that have it (--model-config-name).
	ConfigName string
	// LoadThreadCount is how many models load at once at start, 0 being
	// 1 (--model-load-thread-count).
	LoadThreadCount int
	// LoadRetryCount is how many times a model version that failed to
	// load is tried again at once (--model-load-retry-count).
	LoadRetryCount int
	// Namespacing makes each model repository a namespace: models of
	// one name may be in several repositories, a request naming such a
	// model is refused as ambiguous, and an ensemble's steps resolve in
	// its own repository first; false refuses a name found in two
	// repositories as a duplicate (--model-namespacing).
	Namespacing bool
}

// RepositoryConfig bounds what the server takes from its model
// repositories and from load requests.
type RepositoryConfig struct {
	// ConfigMaxSize is the largest config.pbtxt read, in bytes
	// (--model-config-max-size).
	ConfigMaxSize int64
	// ReadTimeoutMs is how long a read of a repository file may wait for
	// its filesystem (--repository-read-timeout).
	ReadTimeoutMs int
	// ModelMaxCount is how many models may be loaded at once
	// (--model-max-count).
	ModelMaxCount int
	// FilesDirectory is where the model files that load requests send are
	// kept, in a directory of the server's own; "" is
	// tritonhost-uploads-<uid> under the temporary directory
	// (--model-files-directory).
	FilesDirectory string
	// AllowFileLibraries lets load requests send shared libraries among
	// their model files, which the server would then run as code
	// (--allow-model-file-libraries).
	AllowFileLibraries bool
	// FilesMaxSize is how many bytes of model files sent by load requests
	// the loaded models may keep on disk, all together
	// (--model-files-max-size).
	FilesMaxSize int64
}

// ObjectStorageConfig sets how repositories in object storage (s3://,
// gs://, as://) are read: into a local cache, within bounds.
type ObjectStorageConfig struct {
	// CacheDirectory holds the local copies, in a directory of the
	// server's own; "" is tritonhost-repocache-<uid> under the temporary
	// directory (--repository-cache-directory).
	CacheDirectory string
	// CacheMaxSize bounds the bytes the copies take on disk
	// (--repository-cache-max-size).
	CacheMaxSize int64
	// DownloadMaxSize is the largest model downloaded, in bytes
	// (--repository-download-max-size).
	DownloadMaxSize int64
	// DownloadSecs bounds the download of one model
	// (--repository-download-timeout-secs).
	DownloadSecs int
	// StallSecs bounds how long a download may receive nothing
	// (--repository-download-stall-secs).
	StallSecs int
	// Concurrency is how many models download at once
	// (--repository-download-concurrency).
	Concurrency int
	// AzureEndpoint is the blob service URL for as:// repositories,
	// "{account}" standing for the path's account; "" is Azure's
	// (--azure-storage-endpoint).
	AzureEndpoint string
}

// BackendsConfig says where backends are found and how they are called.
type BackendsConfig struct {
	// Directory holds <backend>/libtriton_<backend>.so; "" is backends/
	// next to the program's directory if there is one, else
	// /opt/tritonserver/backends (--backend-directory).
	Directory string
	// Config are backend settings, <backend>,<key>=<value> or
	// <key>=<value> for every backend (--backend-config, repeated).
	Config []string
	// CallTimeoutSecs bounds a backend's initialization and finalization
	// of a model or instance (--backend-call-timeout-secs).
	CallTimeoutSecs int
	// EnsembleStepWaitSecs is how long an ensemble step at its
	// max_inflight_requests waits for a slot (--ensemble-step-wait-secs).
	EnsembleStepWaitSecs int
	// OutputBufferCacheBytes is the host memory kept from sent responses
	// for the outputs of the next ones, 0 for none
	// (--output-buffer-cache-byte-size).
	OutputBufferCacheBytes int64
	// ExtraProcs is how many Go processors the server adds to the
	// runtime's default while more of the backends' own threads send
	// responses at once than it has, 0 for none
	// (--backend-thread-extra-procs; abi.HostOptions.ExtraProcs). A Go
	// program that sets runtime.GOMAXPROCS itself sets this to 0: the
	// server goes back to the runtime's default, not to the program's
	// setting.
	ExtraProcs int
}

// IsolationConfig says where backends run: in the server's process, or
// each model version in a worker process of its own, restarted when it
// dies.
type IsolationConfig struct {
	// Mode is "none" or "process" (--backend-isolation); a model's
	// parameter "isolation" overrides it.
	Mode string
	// RestartBackoffMs is the wait before a dead worker's first restart,
	// doubled after each failed one (--backend-restart-backoff), up to
	// RestartBackoffMaxMs (--backend-restart-backoff-max).
	RestartBackoffMs    int // --backend-restart-backoff
	RestartBackoffMaxMs int // --backend-restart-backoff-max
	// ExecuteTimeoutMs, when positive, kills and restarts a worker whose
	// execution takes longer (--backend-execute-timeout).
	ExecuteTimeoutMs int
	// MemoryLimit bounds, when positive, the bytes of address space a
	// worker maps beyond what it maps at its start (--backend-memory-limit).
	MemoryLimit int64
	// MaxRequests bounds the requests and calls an isolated backend may
	// have in flight to the server (--backend-worker-max-requests).
	MaxRequests int
	// PipelineDepth is how many batches of one instance a worker may hold
	// at once, where nothing the server does between two executions
	// depends on the first's end (--backend-pipeline-depth): one runs, the
	// others wait in the worker. 1 sends a batch only once the last
	// returned.
	PipelineDepth int
	// WorkerCommand starts a worker: a program and its arguments, its
	// sockets to the server being its descriptors 3 (what it reads) and 4
	// (what it writes), not flags. nil is
	// this program with the argument "worker", which the tritonhost
	// binary is; a program that embeds the server names a tritonhost
	// binary of the same build here (`tritonhost worker`).
	WorkerCommand []string
	// NoWorkers says this program cannot start workers (not a flag; the
	// servers of libtritonserver.so, whose program is the application):
	// every backend runs in process, whatever a model's isolation
	// parameter says, and Mode must be "none".
	NoWorkers bool
}

// InProcessConfig bounds the requests backends submit to other models
// (TRITONSERVER_ServerInferAsync).
type InProcessConfig struct {
	// MaxPending is how many responses of one such request may wait for
	// its response callback (--inprocess-max-pending-responses).
	MaxPending int
	// StallTimeoutMs is how long a response may wait for room among those
	// (--inprocess-stall-timeout).
	StallTimeoutMs int
	// MaxTensorSize is the largest input or output of such a request, in
	// bytes (--inprocess-max-tensor-size).
	MaxTensorSize int64
}

// PluginsConfig configures the response cache and the repository agents.
type PluginsConfig struct {
	// CacheConfig are the response cache's settings, <cache>,<key>=<value>
	// (--cache-config, repeated; one cache).
	CacheConfig []string
	// ResponseCacheByteSize is the older form of --cache-config
	// local,size=<bytes>, 0 for no cache (--response-cache-byte-size).
	ResponseCacheByteSize int64
	// CacheJSON is the response cache's configuration as the JSON its
	// initialization receives, by cache name (not a flag:
	// TRITONSERVER_ServerOptionsSetCacheConfig's form). It is used when
	// neither CacheConfig nor ResponseCacheByteSize is set.
	CacheJSON map[string]string
	// CacheDirectory holds <cache>/libtritoncache_<cache>.so; "" is
	// caches/ next to the program's directory if there is one, else
	// /opt/tritonserver/caches (--cache-directory).
	CacheDirectory string
	// RepoAgentDirectory holds <agent>/libtritonrepoagent_<agent>.so; ""
	// is repoagents/ next to the program's directory if there is one,
	// else /opt/tritonserver/repoagents (--repoagent-directory).
	RepoAgentDirectory string
	// CacheCallTimeoutMs bounds a request's wait for its cache lookup
	// (--cache-call-timeout).
	CacheCallTimeoutMs int
	// CacheMaxCalls bounds the cache calls running at once
	// (--cache-max-calls).
	CacheMaxCalls int
	// CacheHeldBytes bounds the bytes of responses held on their way into
	// or out of the cache (--cache-held-byte-size).
	CacheHeldBytes int64
}

// GPUConfig configures the GPUs.
type GPUConfig struct {
	// MinComputeCapability hides GPUs of a lower CUDA compute capability
	// (--min-supported-compute-capability).
	MinComputeCapability float64
	// CUDAPools are the device memory pools for backends, <gpu>:<bytes>
	// (--cuda-memory-pool-byte-size, repeated).
	CUDAPools []string
	// PinnedPoolBytes is the page-locked host memory pool for backends, 0
	// for none (--pinned-memory-pool-byte-size).
	PinnedPoolBytes int64
	// AllowMetrics reports the GPUs' utilization, memory, power and energy
	// as metrics (--allow-gpu-metrics).
	AllowMetrics bool
	// DriverLibrary and NVMLLibrary are the CUDA driver and NVML libraries
	// loaded (--cuda-driver-library, --nvml-library; hidden flags, for
	// tests).
	DriverLibrary string // --cuda-driver-library
	NVMLLibrary   string // --nvml-library
}

// SharedMemoryConfig bounds the shared-memory regions clients register.
type SharedMemoryConfig struct {
	// AllowClient lets clients register system and CUDA shared-memory
	// regions and name them in requests (--allow-client-shm).
	AllowClient bool
	// SystemMaxRegions and CUDAMaxRegions bound the regions registered at
	// once (--system-shm-max-regions, --cuda-shm-max-regions).
	SystemMaxRegions int // --system-shm-max-regions
	CUDAMaxRegions   int // --cuda-shm-max-regions
}

// LogConfig configures the server's log, in Triton's line format.
type LogConfig struct {
	Verbose int  // --log-verbose: the verbose level, 0 for off
	Info    bool // --log-info
	Warning bool // --log-warning
	Error   bool // --log-error
	// Format is "default" or "ISO8601" (--log-format).
	Format string
	// File receives the log, appended to, instead of standard error
	// (--log-file).
	File string
}

// TLSConfig is one listener's TLS: Triton's --grpc-use-ssl and the others
// of the gRPC listener, and the same under --http- and --metrics-.
type TLSConfig struct {
	Use    bool   // --<listener>-use-ssl
	Mutual bool   // --<listener>-use-ssl-mutual (implies Use)
	Cert   string // --<listener>-server-cert
	Key    string // --<listener>-server-key
	Root   string // --<listener>-root-cert
}

// GRPCConfig configures Triton's gRPC protocol: where it listens, what one
// client may hold, who may call. Durations are in milliseconds.
type GRPCConfig struct {
	Allow           bool   // --allow-grpc
	Address         string // --grpc-address
	Port            int    // --grpc-port (0: any free port)
	ReusePort       bool   // --reuse-grpc-port
	MaxMessageBytes int    // --grpc-max-message-size (also the largest tensor the server holds)

	KeepaliveTimeMs         int  // --grpc-keepalive-time
	KeepaliveTimeoutMs      int  // --grpc-keepalive-timeout
	KeepalivePermitWithout  bool // --grpc-keepalive-permit-without-calls
	MaxPingsWithoutData     int  // --grpc-http2-max-pings-without-data (2 only)
	MinRecvPingIntervalMs   int  // --grpc-http2-min-recv-ping-interval-without-data
	MaxPingStrikes          int  // --grpc-http2-max-ping-strikes (2 only)
	MaxConcurrentStreams    int  // --grpc-max-concurrent-streams
	MaxHeaderListSize       int  // --grpc-max-header-list-size
	MaxConnectionIdleMs     int  // --grpc-max-connection-idle
	MaxConnectionAgeMs      int  // --grpc-max-connection-age (0: none)
	MaxConnectionAgeGraceMs int  // --grpc-max-connection-age-grace (0: none)
	MaxConnections          int  // --grpc-max-connections
	MaxConnectionsPerClient int  // --grpc-max-connections-per-client (0: a quarter of MaxConnections)
	HandshakeTimeoutMs      int  // --grpc-handshake-timeout

	MaxStreamPendingRequests int // --grpc-max-stream-pending-requests
	MaxResponsePoolSize      int // --grpc-max-response-pool-size
	MaxStreamResponseBytes   int // --grpc-max-stream-response-bytes
	StreamStallTimeoutMs     int // --grpc-stream-stall-timeout

	// CompressionLevel is "none", "low", "medium" or "high"
	// (--grpc-infer-response-compression-level).
	CompressionLevel string
	// HeaderForwardPattern is a regular expression: call metadata whose
	// keys match become request parameters (--grpc-header-forward-pattern).
	HeaderForwardPattern string
	// AllowLogFileSetting lets LogSettings send the log to a file
	// (--allow-log-file-setting); it governs HTTP's log settings too.
	AllowLogFileSetting bool
	SSL                 TLSConfig // --grpc-use-ssl, --grpc-server-cert, ...
	// RestrictedProtocol are <category>[,<category>...]:<key>=<value>
	// restrictions (--grpc-restricted-protocol, repeated).
	RestrictedProtocol []string

	// InferThreadCount (2 to 128) and InferAllocationPoolSize are
	// Triton's, without effect here (--grpc-infer-thread-count,
	// --grpc-infer-allocation-pool-size); nil is unset, set ones are
	// logged.
	InferThreadCount        *int // --grpc-infer-thread-count
	InferAllocationPoolSize *int // --grpc-infer-allocation-pool-size
}

// HTTPConfig configures Triton's HTTP/REST protocol. Durations are in
// milliseconds.
type HTTPConfig struct {
	Allow                   bool   // --allow-http
	Address                 string // --http-address
	Port                    int    // --http-port (0: any free port)
	ReusePort               bool   // --reuse-http-port
	MaxInputSize            int64  // --http-max-input-size
	MaxHeaderBytes          int    // --http-max-header-bytes
	ReadHeaderTimeoutMs     int    // --http-read-header-timeout
	ReadBodyTimeoutMs       int    // --http-read-body-timeout
	ReadBodyMinRate         int64  // --http-read-body-min-rate
	IdleTimeoutMs           int    // --http-idle-timeout
	WriteTimeoutMs          int    // --http-write-timeout
	MaxConnections          int    // --http-max-connections
	MaxConnectionsPerClient int    // --http-max-connections-per-client (0: a quarter of MaxConnections)
	StreamStallTimeoutMs    int    // --http-stream-stall-timeout
	MaxStreamResponses      int    // --http-max-stream-responses
	MaxStreamResponseBytes  int    // --http-max-stream-response-bytes
	// HeaderForwardPattern is a regular expression: request headers whose
	// names match become request parameters (--http-header-forward-pattern).
	HeaderForwardPattern string
	SSL                  TLSConfig // --http-use-ssl, --http-server-cert, ...
	// RestrictedAPI are <category>[,<category>...]:<key>=<value>
	// restrictions (--http-restricted-api, repeated).
	RestrictedAPI []string
	// ThreadCount is Triton's, without effect here (--http-thread-count);
	// nil is unset, a set one is logged.
	ThreadCount *int
}

// MetricsConfig configures the Prometheus metrics.
type MetricsConfig struct {
	Allow    bool // --allow-metrics
	AllowCPU bool // --allow-cpu-metrics
	// Listen serves the metrics at /metrics on Address:Port (not a flag;
	// true by default). Without it they are kept for
	// TRITONSERVER_ServerMetrics and Server.WriteMetrics only, as the
	// servers of libtritonserver.so keep them.
	Listen bool
	// Address is where metrics listen; "" is HTTP's address when HTTP is
	// served, else 0.0.0.0 (--metrics-address).
	Address                 string
	Port                    int       // --metrics-port (0: any free port)
	IntervalMs              int       // --metrics-interval-ms
	MaxConnections          int       // --metrics-max-connections
	MaxConnectionsPerClient int       // --metrics-max-connections-per-client (0: a quarter of MaxConnections)
	SSL                     TLSConfig // --metrics-use-ssl, --metrics-server-cert, ...
	// Config are Triton's <setting>=<value> metrics settings, those this
	// server serves (--metrics-config, repeated).
	Config []string
}

// TraceConfig configures request tracing, with Triton's settings.
type TraceConfig struct {
	// Config are [<mode>,]<setting>=<value> settings (--trace-config,
	// repeated).
	Config []string
	// File, Levels, Rate, Count and LogFrequency are Triton's older trace
	// flags (--trace-file, --trace-level, --trace-rate, --trace-count,
	// --trace-log-frequency); nil (empty Levels) is unset.
	File         *string  // --trace-file
	Levels       []string // --trace-level
	Rate         *string  // --trace-rate
	Count        *string  // --trace-count
	LogFrequency *string  // --trace-log-frequency
	// QueueSize bounds the finished traces waiting to be written
	// (--trace-queue-size), FileMaxSize the bytes of trace files
	// (--trace-file-max-size).
	QueueSize   int   // --trace-queue-size
	FileMaxSize int64 // --trace-file-max-size
}

// RateLimitConfig configures Triton's rate limiter.
type RateLimitConfig struct {
	// Mode is "off" or "execution_count" (--rate-limit).
	Mode string
	// Resources are <name>:<count> or <name>:<count>:<device>
	// (--rate-limit-resource, repeated).
	Resources []string
}

// GCConfig sets the Go garbage collector of the process that runs the
// server: New applies it to the whole process.
type GCConfig struct {
	// Percent is how far the heap may grow past what is live before a
	// collection, as GOGC, -1 for only at the memory limit
	// (--gc-percent). nil is the GOGC environment variable when set, else
	// DefaultGCPercent.
	Percent *int
	// MemoryLimit is the soft memory limit in bytes, as GOMEMLIMIT, 0 for
	// none and -1 for 90% of the container's (cgroup's) memory limit
	// (--gc-memory-limit-byte-size). nil is the GOMEMLIMIT environment
	// variable when set, else -1.
	MemoryLimit *int64
	// Unmanaged leaves the collector as the process has it: New sets
	// nothing and Percent and MemoryLimit are unused (not a flag; the
	// servers of libtritonserver.so, which live in an application's
	// process).
	Unmanaged bool
}

// LifecycleConfig says when the server is ready and how it stops.
type LifecycleConfig struct {
	// ExitTimeoutSecs bounds a shutdown; work still running then is
	// abandoned (--exit-timeout-secs).
	ExitTimeoutSecs int
	// ExitOnError makes New fail when a model fails to load
	// (--exit-on-error).
	ExitOnError bool
	// StrictReadiness reports ready only when every model loaded
	// (--strict-readiness).
	StrictReadiness bool
	// ShutdownStarted, if set, is called when a shutdown begins (Stop,
	// Shutdown, or New giving up after a model failed to load), with the
	// server's log and the time the shutdown must be over by (not a flag:
	// the serve command ends the process if a shutdown overruns it).
	ShutdownStarted func(log *serverlog.Logger, deadline time.Time)
}

// TritonConfig holds Triton's options that this server accepts without
// effect (nil or empty: unset; a set one is logged once at start, saying
// why it has none) and those for what it does not have, refused when
// they ask for it.
type TritonConfig struct {
	// HostPolicy are <policy>,<setting>=<value> settings: cpu-cores and
	// numa-node place the threads of the instances under that policy;
	// other settings are kept for backends (--host-policy, repeated).
	HostPolicy []string
	// ModelLoadGPULimit are <gpu>:<fraction> bounds Triton puts on a GPU's
	// memory at load, refused on a server that uses GPUs
	// (--model-load-gpu-limit, repeated).
	ModelLoadGPULimit []string

	EnablePeerAccess       *bool    // --enable-peer-access
	CUDAVirtualAddressSize []string // --cuda-virtual-address-size <gpu>:<bytes>
	BufferManagerThreads   *int     // --buffer-manager-thread-count

	// AllowSageMaker is refused when true: this server has no SageMaker
	// endpoint (--allow-sagemaker).
	AllowSageMaker         bool
	SageMakerPort          *int    // --sagemaker-port
	SageMakerSafePortRange *string // --sagemaker-safe-port-range <port>-<port>
	SageMakerThreads       *int    // --sagemaker-thread-count
	// AllowVertexAI is refused when true: this server has no Vertex AI
	// endpoint (--allow-vertex-ai; the serve command's default is true
	// where AIP_MODE=PREDICTION, as Triton's).
	AllowVertexAI        bool
	VertexAIPort         *int    // --vertex-ai-port
	VertexAIThreads      *int    // --vertex-ai-thread-count
	VertexAIDefaultModel *string // --vertex-ai-default-model
}

// Defaults of Triton's options that have no field default of their own.
const (
	tritonHTTPThreads      = 8    // --http-thread-count
	tritonGRPCInferThreads = 2    // --grpc-infer-thread-count
	tritonGRPCAllocPool    = 8    // --grpc-infer-allocation-pool-size
	tritonPlatformPort     = 8080 // --sagemaker-port, --vertex-ai-port
	tritonEndpointThreads  = 8    // --sagemaker-thread-count, --vertex-ai-thread-count
	tritonLoadThreads      = 4
)

// Backend API versions, as the headers in include/ define them.
const (
	BackendAPIMajor = 1
	BackendAPIMinor = 19
	ServerAPIMajor  = 1
	ServerAPIMinor  = 34
)

// DefaultConfig returns the serve command's defaults: a server on
// 0.0.0.0 with gRPC on 8001, HTTP on 8000 and metrics on 8002, and every
// bound at its default. The model repositories are left to the caller.
func DefaultConfig() Config {
	return Config{
		ID: grpcserver.DefaultServerName,
		Models: ModelsConfig{
			ControlMode:        "none",
			RepositoryPollSecs: 15,
			LoadThreadCount:    tritonLoadThreads,
		},
		Repository: RepositoryConfig{
			ConfigMaxSize: core.DefaultMaxConfigBytes,
			ReadTimeoutMs: int(core.DefaultRepositoryReadTimeout / time.Millisecond),
			ModelMaxCount: core.DefaultMaxModels,
			FilesMaxSize:  core.DefaultMaxLoadFilesBytes,
		},
		ObjectStorage: ObjectStorageConfig{
			CacheMaxSize:    repocache.DefaultMaxCacheBytes,
			DownloadMaxSize: repocache.DefaultMaxModelBytes,
			DownloadSecs:    int(repocache.DefaultDownloadTimeout / time.Second),
			StallSecs:       int(repocache.DefaultStallTimeout / time.Second),
			Concurrency:     repocache.DefaultMaxConcurrent,
		},
		Backends: BackendsConfig{
			CallTimeoutSecs:        int(core.DefaultBackendCallTimeout / time.Second),
			EnsembleStepWaitSecs:   int(core.DefaultEnsembleStepWait / time.Second),
			OutputBufferCacheBytes: abi.DefaultOutputCacheBytes,
			ExtraProcs:             abi.DefaultExtraProcs,
		},
		Isolation: IsolationConfig{
			Mode:                string(isolation.ModeNone),
			RestartBackoffMs:    100,
			RestartBackoffMaxMs: 30000,
			MaxRequests:         isolation.DefaultMaxUpstreamRequests,
			PipelineDepth:       isolation.DefaultPipelineDepth,
		},
		InProcess: InProcessConfig{
			MaxPending:     abi.DefaultInProcessMaxPending,
			StallTimeoutMs: int(abi.DefaultInProcessStallTimeout / time.Millisecond),
			MaxTensorSize:  abi.DefaultInProcessMaxTensorBytes,
		},
		Plugins: PluginsConfig{
			CacheCallTimeoutMs: int(core.DefaultCacheCallTimeout / time.Millisecond),
			CacheMaxCalls:      core.DefaultCacheMaxCalls,
			CacheHeldBytes:     core.DefaultCacheMaxBytes,
		},
		GPU: GPUConfig{
			MinComputeCapability: gpu.DefaultMinComputeCapability,
			PinnedPoolBytes:      gpu.DefaultPinnedPoolBytes,
			AllowMetrics:         true,
			DriverLibrary:        gpu.CUDALibrary,
			NVMLLibrary:          gpu.NVMLLibrary,
		},
		SharedMemory: SharedMemoryConfig{
			AllowClient:      true,
			SystemMaxRegions: sharedmem.DefaultMaxRegions,
			CUDAMaxRegions:   sharedmem.DefaultMaxRegions,
		},
		Log: LogConfig{Info: true, Warning: true, Error: true, Format: "default"},
		GRPC: GRPCConfig{
			Allow:                    true,
			Address:                  "0.0.0.0",
			Port:                     8001,
			MaxMessageBytes:          grpcserver.DefaultMaxMessageBytes,
			KeepaliveTimeMs:          msOf(grpcserver.DefaultKeepaliveTime),
			KeepaliveTimeoutMs:       msOf(grpcserver.DefaultKeepaliveTimeout),
			MaxPingsWithoutData:      grpcFixedMaxPingsWithoutData,
			MinRecvPingIntervalMs:    msOf(grpcserver.DefaultMinPingInterval),
			MaxPingStrikes:           grpcFixedMaxPingStrikes,
			MaxConcurrentStreams:     grpcserver.DefaultMaxConcurrentStreams,
			MaxHeaderListSize:        grpcserver.DefaultMaxHeaderListBytes,
			MaxConnectionIdleMs:      msOf(grpcserver.DefaultMaxConnectionIdle),
			MaxConnections:           grpcserver.DefaultMaxConnections,
			HandshakeTimeoutMs:       msOf(grpcserver.DefaultHandshakeTimeout),
			MaxStreamPendingRequests: grpcserver.DefaultMaxPendingRequests,
			MaxResponsePoolSize:      protocol.DefaultStreamMaxResponses,
			MaxStreamResponseBytes:   protocol.DefaultStreamMaxResponseBytes,
			StreamStallTimeoutMs:     msOf(protocol.DefaultStreamStallTimeout),
			CompressionLevel:         "none",
		},
		HTTP: HTTPConfig{
			Allow:                  true,
			Address:                "0.0.0.0",
			Port:                   8000,
			MaxInputSize:           httpserver.DefaultMaxInputBytes,
			MaxHeaderBytes:         httpserver.DefaultMaxHeaderBytes,
			ReadHeaderTimeoutMs:    msOf(httpserver.DefaultReadHeaderTimeout),
			ReadBodyTimeoutMs:      msOf(httpserver.DefaultReadBodyTimeout),
			ReadBodyMinRate:        httpserver.DefaultReadBodyMinRate,
			IdleTimeoutMs:          msOf(httpserver.DefaultIdleTimeout),
			WriteTimeoutMs:         msOf(httpserver.DefaultWriteTimeout),
			MaxConnections:         httpserver.DefaultMaxConnections,
			StreamStallTimeoutMs:   msOf(protocol.DefaultStreamStallTimeout),
			MaxStreamResponses:     protocol.DefaultStreamMaxResponses,
			MaxStreamResponseBytes: protocol.DefaultStreamMaxResponseBytes,
		},
		Metrics: MetricsConfig{
			Allow:          true,
			AllowCPU:       true,
			Listen:         true,
			Port:           8002,
			IntervalMs:     msOf(metricsserver.DefaultInterval),
			MaxConnections: metricsserver.DefaultMaxConnections,
		},
		Trace: TraceConfig{QueueSize: trace.DefaultQueueSize, FileMaxSize: trace.DefaultMaxFileBytes},
		RateLimit: RateLimitConfig{
			Mode: rateLimitOff,
		},
		Lifecycle: LifecycleConfig{
			ExitTimeoutSecs: 30,
			ExitOnError:     true,
			StrictReadiness: true,
		},
		SSLReloadMs: msOf(tlsfiles.DefaultCheckInterval),
	}
}

// ms is n milliseconds.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// msOf is d in whole milliseconds, as the settings take durations.
func msOf(d time.Duration) int { return int(d / time.Millisecond) }
