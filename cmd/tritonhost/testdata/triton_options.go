// Triton's command line: every option of Triton Inference Server's
// tritonserver, as its parser declares them.
//
// Source: triton-inference-server/server, src/command_line_parser.cc at
// commit 5fd6bc48bb056527d66662d6e1688e8a3af1926e (TritonParser::SetupOptions,
// in its groups and order: 89 options), plus the two options later releases
// added: --http-max-input-size (the bound of an HTTP request body, server
// src/common.h HTTP_DEFAULT_MAX_INPUT_SIZE, 64 MiB) and --allow-client-shm
// (docs/protocol/extension_shared_memory.md: "Client
// registration/unregistration and use of shared-memory regions require the
// server to be started with --allow-client-shm=true. The default value is
// false."; Triton 26.04). 91 options in all.
//
// This file is data, not code of the package: triton_options_test.go reads
// it with go/parser. Each entry gives the option, its group in Triton's
// usage text, a command line that uses it as a Triton deployment would
// (placeholders: {tmp} a fresh directory, {cpu} a CPU the process may run
// on, {caches} the project's response caches), what tritonhost does with
// it (Here: "implemented", "no effect" or "refused"), and, for an option
// this server refuses, the words of the refusal.
package testdata

// TritonOption is one option of Triton's command line.
type TritonOption struct {
	Name  string   // without the leading --
	Group string   // Triton's option group
	Args  []string // a command line that uses it
	Here  string   // "implemented", "no effect" or "refused"
	// Refusal, for Here "refused", is in the error serve exits with.
	Refusal string
}

// TritonOptions are Triton's options, in Triton's order.
var TritonOptions = []TritonOption{
	{Name: "help", Group: "", Args: []string{"--help"}, Here: "implemented"},

	{Name: "id", Group: "Server", Args: []string{"--id", "triton-compat"}, Here: "implemented"},
	{Name: "exit-timeout-secs", Group: "Server", Args: []string{"--exit-timeout-secs=20"}, Here: "implemented"},

	{Name: "log-verbose", Group: "Logging", Args: []string{"--log-verbose", "true"}, Here: "implemented"},
	{Name: "log-info", Group: "Logging", Args: []string{"--log-info", "on"}, Here: "implemented"},
	{Name: "log-warning", Group: "Logging", Args: []string{"--log-warning=1"}, Here: "implemented"},
	{Name: "log-error", Group: "Logging", Args: []string{"--log-error", "TRUE"}, Here: "implemented"},
	{Name: "log-format", Group: "Logging", Args: []string{"--log-format", "ISO8601"}, Here: "implemented"},
	{Name: "log-file", Group: "Logging", Args: []string{"--log-file", "{tmp}/server.log"}, Here: "implemented"},

	{Name: "model-store", Group: "Model Repository", Args: []string{"--model-store", "{tmp}"}, Here: "implemented"},
	{Name: "model-repository", Group: "Model Repository", Args: []string{"--model-repository={tmp}"}, Here: "implemented"},
	{Name: "exit-on-error", Group: "Model Repository", Args: []string{"--exit-on-error", "false"}, Here: "implemented"},
	{Name: "disable-auto-complete-config", Group: "Model Repository", Args: []string{"--disable-auto-complete-config"}, Here: "implemented"},
	{Name: "strict-readiness", Group: "Model Repository", Args: []string{"--strict-readiness=false"}, Here: "implemented"},
	{Name: "model-control-mode", Group: "Model Repository", Args: []string{"--model-control-mode=explicit"}, Here: "implemented"},
	{Name: "repository-poll-secs", Group: "Model Repository", Args: []string{"--model-control-mode=poll", "--repository-poll-secs=5"}, Here: "implemented"},
	{Name: "load-model", Group: "Model Repository", Args: []string{"--model-control-mode=explicit", "--load-model=*"}, Here: "implemented"},
	{Name: "model-config-name", Group: "Model Repository", Args: []string{"--model-config-name=h100"}, Here: "implemented"},
	{Name: "model-load-thread-count", Group: "Model Repository", Args: []string{"--model-load-thread-count", "8"}, Here: "implemented"},
	{Name: "model-load-retry-count", Group: "Model Repository", Args: []string{"--model-load-retry-count", "2"}, Here: "implemented"},
	{Name: "model-namespacing", Group: "Model Repository", Args: []string{"--model-namespacing=true"}, Here: "implemented"},
	{Name: "enable-peer-access", Group: "Model Repository", Args: []string{"--enable-peer-access=false"}, Here: "no effect"},

	{Name: "allow-http", Group: "HTTP", Args: []string{"--allow-http=false"}, Here: "implemented"},
	{Name: "http-address", Group: "HTTP", Args: []string{"--http-address", "127.0.0.1"}, Here: "implemented"},
	{Name: "http-port", Group: "HTTP", Args: []string{"--http-port=0"}, Here: "implemented"},
	{Name: "reuse-http-port", Group: "HTTP", Args: []string{"--reuse-http-port", "true"}, Here: "implemented"},
	{Name: "http-header-forward-pattern", Group: "HTTP", Args: []string{"--http-header-forward-pattern", "my_header.*"}, Here: "implemented"},
	{Name: "http-thread-count", Group: "HTTP", Args: []string{"--http-thread-count", "16"}, Here: "no effect"},
	{Name: "http-restricted-api", Group: "HTTP", Args: []string{"--http-restricted-api=model-repository:admin-key=secret"}, Here: "implemented"},

	{Name: "allow-grpc", Group: "GRPC", Args: []string{"--allow-grpc=false"}, Here: "implemented"},
	{Name: "grpc-address", Group: "GRPC", Args: []string{"--grpc-address=127.0.0.1"}, Here: "implemented"},
	{Name: "grpc-port", Group: "GRPC", Args: []string{"--grpc-port", "0"}, Here: "implemented"},
	{Name: "reuse-grpc-port", Group: "GRPC", Args: []string{"--reuse-grpc-port=true"}, Here: "implemented"},
	{Name: "grpc-header-forward-pattern", Group: "GRPC", Args: []string{"--grpc-header-forward-pattern=my_header.*"}, Here: "implemented"},
	{Name: "grpc-infer-thread-count", Group: "GRPC", Args: []string{"--grpc-infer-thread-count=4"}, Here: "no effect"},
	{Name: "grpc-infer-allocation-pool-size", Group: "GRPC", Args: []string{"--grpc-infer-allocation-pool-size=16"}, Here: "no effect"},
	{Name: "grpc-max-response-pool-size", Group: "GRPC", Args: []string{"--grpc-max-response-pool-size=64"}, Here: "implemented"},
	{Name: "grpc-use-ssl", Group: "GRPC", Args: []string{"--grpc-use-ssl", "false"}, Here: "implemented"},
	{Name: "grpc-use-ssl-mutual", Group: "GRPC", Args: []string{"--grpc-use-ssl-mutual=false"}, Here: "implemented"},
	{Name: "grpc-server-cert", Group: "GRPC", Args: []string{"--grpc-server-cert={tmp}/cert.pem"}, Here: "implemented"},
	{Name: "grpc-server-key", Group: "GRPC", Args: []string{"--grpc-server-key={tmp}/key.pem"}, Here: "implemented"},
	{Name: "grpc-root-cert", Group: "GRPC", Args: []string{"--grpc-root-cert={tmp}/ca.pem"}, Here: "implemented"},
	{Name: "grpc-infer-response-compression-level", Group: "GRPC", Args: []string{"--grpc-infer-response-compression-level=high"}, Here: "implemented"},
	{Name: "grpc-keepalive-time", Group: "GRPC", Args: []string{"--grpc-keepalive-time=7200000"}, Here: "implemented"},
	{Name: "grpc-keepalive-timeout", Group: "GRPC", Args: []string{"--grpc-keepalive-timeout=20000"}, Here: "implemented"},
	{Name: "grpc-keepalive-permit-without-calls", Group: "GRPC", Args: []string{"--grpc-keepalive-permit-without-calls", "1"}, Here: "implemented"},
	{Name: "grpc-http2-max-pings-without-data", Group: "GRPC", Args: []string{"--grpc-http2-max-pings-without-data=0"}, Here: "no effect"},
	{Name: "grpc-http2-min-recv-ping-interval-without-data", Group: "GRPC", Args: []string{"--grpc-http2-min-recv-ping-interval-without-data=300000"}, Here: "implemented"},
	{Name: "grpc-http2-max-ping-strikes", Group: "GRPC", Args: []string{"--grpc-http2-max-ping-strikes=0"}, Here: "no effect"},
	{Name: "grpc-max-connection-age", Group: "GRPC", Args: []string{"--grpc-max-connection-age=3600000"}, Here: "implemented"},
	{Name: "grpc-max-connection-age-grace", Group: "GRPC", Args: []string{"--grpc-max-connection-age-grace=10000"}, Here: "implemented"},
	{Name: "grpc-restricted-protocol", Group: "GRPC", Args: []string{"--grpc-restricted-protocol=model-repository:admin-key=secret"}, Here: "implemented"},

	{Name: "allow-sagemaker", Group: "Sagemaker", Args: []string{"--allow-sagemaker=true"}, Here: "refused",
		Refusal: "this server has no SageMaker endpoint"},
	{Name: "sagemaker-port", Group: "Sagemaker", Args: []string{"--sagemaker-port=8080"}, Here: "no effect"},
	{Name: "sagemaker-safe-port-range", Group: "Sagemaker", Args: []string{"--sagemaker-safe-port-range=8000-9000"}, Here: "no effect"},
	{Name: "sagemaker-thread-count", Group: "Sagemaker", Args: []string{"--sagemaker-thread-count=8"}, Here: "no effect"},

	{Name: "allow-vertex-ai", Group: "Vertex", Args: []string{"--allow-vertex-ai", "true"}, Here: "refused",
		Refusal: "this server has no Vertex AI endpoint"},
	{Name: "vertex-ai-port", Group: "Vertex", Args: []string{"--vertex-ai-port=8080"}, Here: "no effect"},
	{Name: "vertex-ai-thread-count", Group: "Vertex", Args: []string{"--vertex-ai-thread-count=8"}, Here: "no effect"},
	{Name: "vertex-ai-default-model", Group: "Vertex", Args: []string{"--vertex-ai-default-model=simple"}, Here: "no effect"},

	{Name: "allow-metrics", Group: "Metrics", Args: []string{"--allow-metrics=false"}, Here: "implemented"},
	{Name: "allow-gpu-metrics", Group: "Metrics", Args: []string{"--allow-gpu-metrics", "off"}, Here: "implemented"},
	{Name: "allow-cpu-metrics", Group: "Metrics", Args: []string{"--allow-cpu-metrics=false"}, Here: "implemented"},
	{Name: "metrics-address", Group: "Metrics", Args: []string{"--metrics-address=127.0.0.1"}, Here: "implemented"},
	{Name: "metrics-port", Group: "Metrics", Args: []string{"--metrics-port=0"}, Here: "implemented"},
	{Name: "metrics-interval-ms", Group: "Metrics", Args: []string{"--metrics-interval-ms=1000"}, Here: "implemented"},
	{Name: "metrics-config", Group: "Metrics", Args: []string{"--metrics-config", "counter_latencies=true", "--metrics-config", "histogram_latencies=true"}, Here: "implemented"},

	{Name: "trace-config", Group: "Tracing", Args: []string{"--trace-config", "level=OFF", "--trace-config", "rate=1000"}, Here: "implemented"},

	{Name: "backend-directory", Group: "Backend", Args: []string{"--backend-directory={tmp}"}, Here: "implemented"},
	{Name: "backend-config", Group: "Backend", Args: []string{"--backend-config=python,shm-default-byte-size=1048576", "--backend-config", "default-max-batch-size=8"}, Here: "implemented"},

	{Name: "repoagent-directory", Group: "Repository Agent", Args: []string{"--repoagent-directory={tmp}"}, Here: "implemented"},

	{Name: "cache-config", Group: "Response Cache", Args: []string{"--cache-directory={caches}", "--cache-config=local,size=1048576"}, Here: "implemented"},
	{Name: "cache-directory", Group: "Response Cache", Args: []string{"--cache-directory", "{tmp}"}, Here: "implemented"},

	{Name: "rate-limit", Group: "Rate Limiter", Args: []string{"--rate-limit=execution_count"}, Here: "implemented"},
	{Name: "rate-limit-resource", Group: "Rate Limiter", Args: []string{"--rate-limit=execution_count", "--rate-limit-resource=R1:2", "--rate-limit-resource=R2:1:0"}, Here: "implemented"},

	{Name: "pinned-memory-pool-byte-size", Group: "Memory/Device Management", Args: []string{"--pinned-memory-pool-byte-size=268435456"}, Here: "implemented"},
	{Name: "cuda-memory-pool-byte-size", Group: "Memory/Device Management", Args: []string{"--cuda-memory-pool-byte-size=0:67108864"}, Here: "implemented"},
	{Name: "cuda-virtual-address-size", Group: "Memory/Device Management", Args: []string{"--cuda-virtual-address-size=0:1073741824"}, Here: "no effect"},
	{Name: "min-supported-compute-capability", Group: "Memory/Device Management", Args: []string{"--min-supported-compute-capability=7.0"}, Here: "implemented"},
	{Name: "buffer-manager-thread-count", Group: "Memory/Device Management", Args: []string{"--buffer-manager-thread-count=4"}, Here: "no effect"},
	{Name: "host-policy", Group: "Memory/Device Management", Args: []string{"--host-policy=cpu,cpu-cores={cpu}", "--host-policy", "model,cpu-cores={cpu}"}, Here: "implemented"},
	// On a server with GPUs the option is refused (not enforced there);
	// the tests run the server without GPUs, where it limits nothing.
	{Name: "model-load-gpu-limit", Group: "Memory/Device Management", Args: []string{"--model-load-gpu-limit=0:0.8"}, Here: "no effect"},

	{Name: "strict-model-config", Group: "DEPRECATED", Args: []string{"--strict-model-config=true"}, Here: "implemented"},
	{Name: "response-cache-byte-size", Group: "DEPRECATED", Args: []string{"--response-cache-byte-size=0"}, Here: "implemented"},
	{Name: "trace-file", Group: "DEPRECATED", Args: []string{"--trace-file={tmp}/trace.json"}, Here: "implemented"},
	{Name: "trace-level", Group: "DEPRECATED", Args: []string{"--trace-level=OFF"}, Here: "implemented"},
	{Name: "trace-rate", Group: "DEPRECATED", Args: []string{"--trace-rate=1000"}, Here: "implemented"},
	{Name: "trace-count", Group: "DEPRECATED", Args: []string{"--trace-count=-1"}, Here: "implemented"},
	{Name: "trace-log-frequency", Group: "DEPRECATED", Args: []string{"--trace-log-frequency=0"}, Here: "implemented"},

	// Added by later releases than the parser above.
	{Name: "http-max-input-size", Group: "HTTP", Args: []string{"--http-max-input-size=67108864"}, Here: "implemented"},
	{Name: "allow-client-shm", Group: "Server", Args: []string{"--allow-client-shm", "false"}, Here: "implemented"},
}
