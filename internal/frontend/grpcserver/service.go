package grpcserver

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/connlimit"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/testhooks"
	"github.com/tritonhost/tritonhost/internal/trace"
)

// DefaultServerName is the server id ServerMetadata reports by default:
// Triton's default --id.
const DefaultServerName = protocol.DefaultServerName

// DefaultMaxMessageBytes is the default limit on one gRPC message, sent or
// received: room for 64 MiB tensors several times over. Triton itself allows
// up to 2 GiB.
const DefaultMaxMessageBytes = 256 << 20

// Defaults of StreamLimits and ConnectionLimits that are the gRPC
// frontend's own; the bounds on a stream's responses are the protocols'
// (protocol.DefaultStreamMaxResponses and the rest).
const (
	DefaultMaxPendingRequests   = 1024
	DefaultMaxConcurrentStreams = 1024
	DefaultMaxConnectionIdle    = 5 * time.Minute
	DefaultMaxConnections       = 4096
	DefaultHandshakeTimeout     = 10 * time.Second
	// Triton's defaults for keepalive and client pings.
	DefaultKeepaliveTime    = 2 * time.Hour
	DefaultKeepaliveTimeout = 20 * time.Second
	DefaultMinPingInterval  = 5 * time.Minute
)

// Options configure a Service. Zero fields take the defaults named.
type Options struct {
	// ServerName and ServerVersion are what ServerMetadata reports; the
	// name is the server's id, Triton's --id (default "triton", as
	// Triton's, which clients check).
	ServerName    string
	ServerVersion string
	// SharedMemory is the registry of system shared-memory regions, which
	// the HTTP frontend may share (default: a registry of the service's
	// own, with sharedmem's default bounds, which the caller closes
	// through Service.SharedMemory at shutdown).
	SharedMemory *sharedmem.Registry
	// MaxMessageBytes bounds a gRPC message in both directions (default
	// DefaultMaxMessageBytes; up to math.MaxInt32). A request message over
	// it is refused on its own: a stream goes on. Up to half as much again
	// is read to do so; beyond that gRPC ends the stream.
	MaxMessageBytes int
	// Stream bounds what one ModelStreamInfer call may hold.
	Stream StreamLimits
	// Connection bounds what one client connection may hold.
	Connection ConnectionLimits
	// StrictReadiness makes ServerReady true only when every model loaded
	// (Triton's --strict-readiness); otherwise a live server is ready.
	StrictReadiness bool
	// AllowLogFile lets LogSettings send the log to a file the client
	// names; off by default, as the path is on the server's machine.
	// Ignored when LogControl is set.
	AllowLogFile bool
	// LogControl, if set, is the log control shared with the server's other
	// frontends (default: one of the service's own).
	LogControl *protocol.LogControl
	// Restricted limits categories of RPCs to clients that send a header
	// with a value (Triton's --grpc-restricted-protocol); nil restricts
	// nothing.
	Restricted *protocol.Restrictions
	// Trace, if set, is the server's tracer, whose settings TraceSetting
	// reads and changes (nil: TraceSetting answers that the server does
	// not trace).
	Trace *trace.Manager
	// HeaderForward, if set, selects the call metadata (headers) that
	// become string parameters of each inference request, under the
	// header's name (Triton's --grpc-header-forward-pattern): every key
	// it matches anywhere (headers.go).
	HeaderForward *regexp.Regexp
	// DisallowClientSharedMemory refuses the registration and
	// unregistration of shared-memory regions, system and CUDA, and
	// requests whose tensors name one (PERMISSION_DENIED), as Triton with
	// --allow-client-shm=false; region status still answers (with no
	// regions). The zero value allows them, as Triton before 26.04.
	DisallowClientSharedMemory bool
	// InferResponseCompression, when above 0, compresses the responses of
	// ModelInfer and ModelStreamInfer with gzip at this level
	// (gzip.BestSpeed to gzip.BestCompression) for clients that accept
	// gzip (Triton's --grpc-infer-response-compression-level); 0 sends
	// them uncompressed. The level applies to every gzip compression of
	// the process.
	InferResponseCompression int
}

// StreamLimits bound one ModelStreamInfer stream, so that no client holds
// more than its share of memory or of backend threads.
type StreamLimits struct {
	// MaxPendingRequests is how many requests a stream may have read and not
	// yet answered with their final response (default
	// DefaultMaxPendingRequests). At the limit
	// the server stops reading the stream, and HTTP/2 flow control pushes
	// back on the client.
	MaxPendingRequests int
	// MaxResponses and MaxResponseBytes bound the responses a stream holds
	// for a client that reads slower than its models answer (defaults
	// protocol.DefaultStreamMaxResponses and DefaultStreamMaxResponseBytes;
	// a single larger response still goes).
	MaxResponses     int
	MaxResponseBytes int
	// StallTimeout is how long a response may wait for room in a full
	// stream (default protocol.DefaultStreamStallTimeout). Then the client
	// is taken for one that does not
	// read: the stream ends with RESOURCE_EXHAUSTED, its requests are
	// cancelled, and the backend thread that was sending goes on.
	StallTimeout time.Duration
}

// ConnectionLimits bound the client connections, and each of them.
type ConnectionLimits struct {
	// MaxConnections bounds the connections the server holds at once
	// (default DefaultMaxConnections), far below the process's open-file
	// limit: past it a new connection waits, in the kernel's queue, for
	// one to close, so that a flood of connections cannot take the file
	// descriptors the other endpoints and the models need. A connection
	// holds its slot until it closes: the handshake timeout, keepalive and
	// MaxIdle close the ones that do nothing. It applies to the listeners
	// passed through Service.Listen.
	MaxConnections int
	// MaxConnectionsPerClient bounds the connections of one client (one
	// source IP address) at once (default a quarter of MaxConnections,
	// connlimit.DefaultPerClient): a connection past it is closed as soon
	// as it is accepted, so that one client cannot take the connections
	// of the others.
	MaxConnectionsPerClient int
	// HandshakeTimeout bounds the time a new connection may take to send
	// HTTP/2's preface and settings (and to finish TLS) before it is
	// closed (default DefaultHandshakeTimeout; gRPC's own is 120 s).
	HandshakeTimeout time.Duration
	// MaxConcurrentStreams is HTTP/2's limit on the streams (calls) open at
	// once on a connection (default DefaultMaxConcurrentStreams).
	MaxConcurrentStreams uint32
	// MaxIdle closes a connection that had no call for this long (default
	// DefaultMaxConnectionIdle); clients reconnect by themselves when they
	// need to.
	MaxIdle time.Duration
	// KeepaliveTime and KeepaliveTimeout: the server pings a connection
	// silent for KeepaliveTime and closes it if the ping is not answered
	// within KeepaliveTimeout (defaults DefaultKeepaliveTime and
	// DefaultKeepaliveTimeout, Triton's).
	KeepaliveTime    time.Duration
	KeepaliveTimeout time.Duration
	// MinPingInterval is the shortest interval at which a client may ping,
	// and PermitPingsWithoutCalls whether it may ping with no call open;
	// a client that breaks either is disconnected (defaults
	// DefaultMinPingInterval and false, Triton's).
	MinPingInterval         time.Duration
	PermitPingsWithoutCalls bool
	// MaxHeaderListBytes bounds the header list (metadata) of one call, as
	// HTTP/2 counts it: names, values and 32 bytes a field (default
	// DefaultMaxHeaderListBytes). The server announces it; a call whose
	// headers go past it is reset (FRAME_SIZE_ERROR), and a header string
	// longer than it ends the connection, so that no client makes the
	// server hold more than this for a call it has not started.
	MaxHeaderListBytes uint32
	// MaxAge closes a connection, gracefully, once it has been open this
	// long (give or take gRPC's 10% jitter), and MaxAgeGrace is how long
	// its calls then have to finish before it is cut (Triton's
	// --grpc-max-connection-age and --grpc-max-connection-age-grace, in
	// ms there). Zero: no limit, Triton's default.
	MaxAge      time.Duration
	MaxAgeGrace time.Duration
}

// DefaultMaxHeaderListBytes is the default ConnectionLimits.MaxHeaderListBytes:
// 16 KiB, the hard limit gRPC's C++ core (Triton's) applies by default.
const DefaultMaxHeaderListBytes = 16 << 10

// Service implements inference.GRPCInferenceService over a core.Server.
type Service struct {
	pb.UnimplementedGRPCInferenceServiceServer
	core   *core.Server
	opts   Options
	health *health.Server

	drainOnce sync.Once
	draining  chan struct{} // closed when the server starts shutting down
	abortOnce sync.Once
	aborting  chan struct{} // closed when the requests still in flight are given up
	abortErr  error         // what they are told (set before aborting is closed)

	logs  *protocol.LogControl
	conns *connlimit.Limiter // Options.Connection.MaxConnections

	delays testhooks.GRPC // Triton's test hooks, read at start; zero unless a test sets them
}

var _ pb.GRPCInferenceServiceServer = (*Service)(nil)

// New returns a service over srv.
func New(srv *core.Server, opts Options) *Service {
	if opts.ServerName == "" {
		opts.ServerName = DefaultServerName
	}
	if opts.SharedMemory == nil {
		opts.SharedMemory = sharedmem.New(sharedmem.Options{})
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	opts.MaxMessageBytes = min(opts.MaxMessageBytes, math.MaxInt32)
	setDefault(&opts.Stream.MaxPendingRequests, DefaultMaxPendingRequests)
	setDefault(&opts.Stream.MaxResponses, protocol.DefaultStreamMaxResponses)
	setDefault(&opts.Stream.MaxResponseBytes, protocol.DefaultStreamMaxResponseBytes)
	setDefault(&opts.Stream.StallTimeout, protocol.DefaultStreamStallTimeout)
	setDefault(&opts.Connection.MaxConcurrentStreams, DefaultMaxConcurrentStreams)
	setDefault(&opts.Connection.MaxIdle, DefaultMaxConnectionIdle)
	setDefault(&opts.Connection.KeepaliveTime, DefaultKeepaliveTime)
	setDefault(&opts.Connection.KeepaliveTimeout, DefaultKeepaliveTimeout)
	setDefault(&opts.Connection.MinPingInterval, DefaultMinPingInterval)
	setDefault(&opts.Connection.MaxHeaderListBytes, DefaultMaxHeaderListBytes)
	setDefault(&opts.Connection.MaxConnections, DefaultMaxConnections)
	setDefault(&opts.Connection.HandshakeTimeout, DefaultHandshakeTimeout)
	logs := opts.LogControl
	if logs == nil {
		logs = protocol.NewLogControl(srv.Logger(), opts.AllowLogFile)
	}
	maxConns, log := opts.Connection.MaxConnections, srv.Logger()
	conns := connlimit.New(connlimit.Options{Max: maxConns, PerClient: opts.Connection.MaxConnectionsPerClient,
		OnFull: func() {
			log.Warnf("gRPC: all %d connections the server may hold are open; new connections wait for one to close", maxConns)
		},
		OnClientFull: func(client netip.Addr, refused int) {
			log.Warnf("gRPC: client %s holds all the connections one client may (--grpc-max-connections-per-client); its new ones are closed at once (%d since the last report)",
				client, refused)
		}})
	if err := setCompressionLevel(opts.InferResponseCompression); err != nil {
		log.Warnf("gRPC: compression level %d: %v; responses go uncompressed", opts.InferResponseCompression, err)
		opts.InferResponseCompression = 0
	}
	delays := testhooks.GRPCDelays()
	if delays.Any() {
		log.Warnf("gRPC: the test hooks TRITONSERVER_DELAY_GRPC_* / TRITONSERVER_DELAY_RESPONSE_COMPLETION are set: %+v", delays)
	}
	return &Service{core: srv, opts: opts, health: health.NewServer(), draining: make(chan struct{}), aborting: make(chan struct{}), logs: logs,
		conns: conns, delays: delays}
}

// Listen returns lis bounded to Options.Connection.MaxConnections open
// connections, for the grpc.Server of NewGRPCServer to serve.
func (s *Service) Listen(lis net.Listener) net.Listener { return s.conns.Wrap(lis) }

func setDefault[T int | uint32 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// streamWorkers is how many goroutines gRPC keeps to run RPC handlers
// (grpc.NumStreamWorkers; an RPC arriving while all are busy gets a
// goroutine of its own, as without them). A fresh goroutine per RPC grows
// its stack, by copying, on every request that runs a model on it (the
// handler executes it when an instance is idle); a kept one has grown
// already. Measured on the 2-core machine, identity unary from 16 clients:
// stack growth went from 8-11% of the server's CPU to nothing.
func streamWorkers() uint32 { return uint32(max(16, 4*runtime.GOMAXPROCS(0))) }

// NewGRPCServer returns a grpc.Server with the service, gRPC health checking
// and server reflection registered, and the message, stream and connection
// limits and the restricted categories applied.
func (s *Service) NewGRPCServer(extra ...grpc.ServerOption) *grpc.Server {
	lim := requestLimits{maxMessageBytes: s.opts.MaxMessageBytes, maxDecodedContents: s.opts.MaxMessageBytes}
	c := s.opts.Connection
	opts := append([]grpc.ServerOption{
		// gRPC reads up to half as much again as the limit, so that the codec
		// refuses a larger request by itself instead of gRPC ending its stream.
		grpc.MaxRecvMsgSize(int(min(int64(s.opts.MaxMessageBytes)*3/2, math.MaxInt32))),
		grpc.MaxSendMsgSize(s.opts.MaxMessageBytes),
		grpc.ForceServerCodecV2(newWireCodec(lim)),
		grpc.NumStreamWorkers(streamWorkers()),
		grpc.MaxConcurrentStreams(c.MaxConcurrentStreams),
		grpc.MaxHeaderListSize(c.MaxHeaderListBytes),
		grpc.ConnectionTimeout(c.HandshakeTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: c.MaxIdle, Time: c.KeepaliveTime, Timeout: c.KeepaliveTimeout,
			MaxConnectionAge: c.MaxAge, MaxConnectionAgeGrace: c.MaxAgeGrace}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: c.MinPingInterval, PermitWithoutStream: c.PermitPingsWithoutCalls}),
	}, restrictedOptions(s.opts.Restricted)...)
	g := grpc.NewServer(append(opts, extra...)...)
	g.RegisterService(serviceDesc(), s)
	healthpb.RegisterHealthServer(g, s.health)
	reflection.Register(g)
	return g
}

// Drain starts a graceful shutdown: health checks report NOT_SERVING, new
// requests are refused with UNAVAILABLE, and each stream ends once its
// pending requests have completed.
func (s *Service) Drain() {
	s.drainOnce.Do(func() {
		s.health.Shutdown()
		close(s.draining)
	})
}

// ShuttingDown is Triton's answer to work sent to a server that is
// shutting down.
const ShuttingDown = "GRPC server is shutting down and has stopped accepting new requests."

// Abort ends the calls still in flight, at the end of a shutdown (after
// Drain): a ModelInfer call returns err (its code and message), and a
// ModelStreamInfer stream sends each request it has not finished an error
// response with err's message, then ends with err. Whatever their models
// send later is dropped. Later calls do nothing.
func (s *Service) Abort(err error) {
	s.abortOnce.Do(func() {
		s.abortErr = err
		close(s.aborting)
	})
}

func (s *Service) isDraining() bool {
	select {
	case <-s.draining:
		return true
	default:
		return false
	}
}

// ServerLive reports whether the server is up.
func (s *Service) ServerLive(context.Context, *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	return &pb.ServerLiveResponse{Live: s.core.Live() && !s.isDraining()}, nil
}

// ServerReady reports whether every model loaded and the server accepts
// requests.
func (s *Service) ServerReady(context.Context, *pb.ServerReadyRequest) (*pb.ServerReadyResponse, error) {
	ready := s.core.Live()
	if s.opts.StrictReadiness {
		ready = s.core.Ready()
	}
	return &pb.ServerReadyResponse{Ready: ready && !s.isDraining()}, nil
}

// ModelReady reports whether a model version can take requests. As in
// Triton, a model or version the server does not know is not ready (no
// error); a version string that is not a version is INVALID_ARGUMENT.
func (s *Service) ModelReady(_ context.Context, req *pb.ModelReadyRequest) (*pb.ModelReadyResponse, error) {
	ready, err := protocol.ModelReady(s.core, req.GetName(), req.GetVersion())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.ModelReadyResponse{Ready: ready && !s.isDraining()}, nil
}

// ServerMetadata reports the server's id, version and protocol extensions.
func (s *Service) ServerMetadata(context.Context, *pb.ServerMetadataRequest) (*pb.ServerMetadataResponse, error) {
	return &pb.ServerMetadataResponse{
		Name:       s.opts.ServerName,
		Version:    s.opts.ServerVersion,
		Extensions: s.extensions(),
	}, nil
}

// SharedMemory returns the registry of system shared-memory regions.
func (s *Service) SharedMemory() *sharedmem.Registry { return s.opts.SharedMemory }

// ModelMetadata reports a model's versions and tensor signatures; batching
// models show the batch dimension as -1.
func (s *Service) ModelMetadata(_ context.Context, req *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	m, err := protocol.LookupModel(s.core, req.GetName(), req.GetVersion())
	if err != nil {
		return nil, toStatus(err)
	}
	md := s.core.Metadata(m, 0)
	resp := &pb.ModelMetadataResponse{Name: md.Name, Platform: md.Platform, Versions: md.Versions}
	tensors := func(ts []core.TensorMetadata) []*pb.ModelMetadataResponse_TensorMetadata {
		var out []*pb.ModelMetadataResponse_TensorMetadata
		for _, t := range ts {
			out = append(out, &pb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
		}
		return out
	}
	resp.Inputs, resp.Outputs = tensors(md.Inputs), tensors(md.Outputs)
	return resp, nil
}

// ModelConfig returns a model's configuration as loaded (normalized, and
// completed by its backend).
func (s *Service) ModelConfig(_ context.Context, req *pb.ModelConfigRequest) (*pb.ModelConfigResponse, error) {
	m, err := protocol.LookupModel(s.core, req.GetName(), req.GetVersion())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.ModelConfigResponse{Config: m.Config()}, nil
}

// ModelStatistics reports the statistics the core and the backends
// recorded, for one model (and version) or all.
func (s *Service) ModelStatistics(_ context.Context, req *pb.ModelStatisticsRequest) (*pb.ModelStatisticsResponse, error) {
	version, err := protocol.StatisticsVersion(req.GetVersion())
	if err != nil {
		return nil, toStatus(err)
	}
	stats, err := s.core.Statistics(req.GetName(), version)
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &pb.ModelStatisticsResponse{}
	for _, st := range stats {
		resp.ModelStats = append(resp.ModelStats, encodeStatistics(st))
	}
	return resp, nil
}

func duration(d core.Duration) *pb.StatisticDuration {
	return &pb.StatisticDuration{Count: d.Count, Ns: d.Ns}
}

func encodeStatistics(st core.ModelStatistics) *pb.ModelStatistics {
	inf := st.Inference
	out := &pb.ModelStatistics{
		Name:           st.Name,
		Version:        strconv.FormatInt(st.Version, 10),
		LastInference:  st.LastInference,
		InferenceCount: st.InferenceCount,
		ExecutionCount: st.ExecutionCount,
		InferenceStats: &pb.InferStatistics{
			Success: duration(inf.Success), Fail: duration(inf.Fail), Queue: duration(inf.Queue),
			ComputeInput: duration(inf.ComputeInput), ComputeInfer: duration(inf.ComputeInfer),
			ComputeOutput: duration(inf.ComputeOutput), CacheHit: duration(inf.CacheHit), CacheMiss: duration(inf.CacheMiss),
		},
		ResponseStats: map[string]*pb.InferResponseStatistics{},
	}
	for _, b := range st.Batches {
		out.BatchStats = append(out.BatchStats, &pb.InferBatchStatistics{BatchSize: b.BatchSize,
			ComputeInput: duration(b.ComputeInput), ComputeInfer: duration(b.ComputeInfer), ComputeOutput: duration(b.ComputeOutput)})
	}
	for _, u := range st.MemoryUsage {
		out.MemoryUsage = append(out.MemoryUsage, &pb.MemoryUsage{Type: u.Type.String(), Id: u.ID, ByteSize: u.ByteSize})
	}
	for k, r := range st.Responses {
		out.ResponseStats[k] = &pb.InferResponseStatistics{
			ComputeInfer: duration(r.ComputeInfer), ComputeOutput: duration(r.ComputeOutput),
			Success: duration(r.Success), Fail: duration(r.Fail), EmptyResponse: duration(r.EmptyResponse), Cancel: duration(r.Cancel)}
	}
	return out
}

func errorf(code codes.Code, format string, args ...any) error {
	return status.Error(code, fmt.Sprintf(format, args...))
}
