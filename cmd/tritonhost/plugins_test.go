package main

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The response cache and the repository agents against the binary: the
// local cache (plugins/caches/local) and the checksum agent
// (plugins/repoagents/checksum) as make builds them, over the models of
// testdata/plugins, and the probe cache of abi/testdata for a cache that
// fails or is slow.

// pluginRepo copies testdata/plugins into a repository the test may change.
func pluginRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	testenv.CopyTree(t, filepath.Join("testdata", "plugins"), repo)
	return repo
}

// startWithPlugins serves repo with the project's cache and agent
// directories, and extra flags.
func startWithPlugins(t *testing.T, repo string, extra ...string) *serverProcess {
	t.Helper()
	caches, agents := testenv.PluginDirs(t)
	return startServer(t, repo, append([]string{"--cache-directory", caches, "--repoagent-directory", agents}, extra...)...)
}

// inferVector sends INPUT0 = values to model over gRPC and returns OUTPUT0.
func (s *serverProcess) inferVector(t *testing.T, model string, values ...int32) ([]int32, error) {
	t.Helper()
	msg, err := client.Request{Model: model, Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{int64(len(values))}, values...)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Client.ModelInfer(ctxFor(t), msg)
	if err != nil {
		return nil, err
	}
	out, err := client.Output(resp, "OUTPUT0")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int32, len(out.Data)/4)
	for i := range got {
		got[i] = int32(uint32(out.Data[4*i]) | uint32(out.Data[4*i+1])<<8 | uint32(out.Data[4*i+2])<<16 | uint32(out.Data[4*i+3])<<24)
	}
	return got, nil
}

// echoes checks that model echoes values.
func (s *serverProcess) echoes(t *testing.T, model string, values ...int32) {
	t.Helper()
	got, err := s.inferVector(t, model, values...)
	if err != nil || !slices.Equal(got, values) {
		t.Fatalf("%s: %v, %v; want its input back", model, got, err)
	}
}

// modelStats returns model's statistics over gRPC and over HTTP.
func (s *serverProcess) modelStats(t *testing.T, model string) (grpc, http *pb.ModelStatistics) {
	t.Helper()
	g, err := s.Client.ModelStatistics(ctxFor(t), &pb.ModelStatisticsRequest{Name: model})
	if err != nil || len(g.GetModelStats()) != 1 {
		t.Fatalf("ModelStatistics(%s): %v %v", model, g, err)
	}
	httpc, err := client.NewHTTP(s.HTTP, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer httpc.Close()
	h, err := httpc.ModelStatistics(ctxFor(t), &pb.ModelStatisticsRequest{Name: model})
	if err != nil || len(h.GetModelStats()) != 1 {
		t.Fatalf("GET /v2/models/%s/stats: %v %v", model, h, err)
	}
	return g.GetModelStats()[0], h.GetModelStats()[0]
}

// awaitReported waits until model's statistics count successes successful
// requests and every executed request in an execution: the identity
// backend reports a request's statistics, then its execution's, after the
// response the client may already have read. A count that never arrives
// is left for the caller's checks to report.
func (s *serverProcess) awaitReported(t *testing.T, model string, successes uint64) {
	t.Helper()
	testenv.Eventually(func() bool {
		resp, err := s.Client.ModelStatistics(ctxFor(t), &pb.ModelStatisticsRequest{Name: model})
		if err != nil || len(resp.GetModelStats()) != 1 {
			return false
		}
		st := resp.GetModelStats()[0]
		var executed uint64
		for _, b := range st.GetBatchStats() {
			executed += b.GetBatchSize() * b.GetComputeInfer().GetCount()
		}
		return st.GetInferenceStats().GetSuccess().GetCount() >= successes && executed >= st.GetInferenceCount()
	})
}

// metric returns the value of series in the metrics now, without the
// checks of scrapeMetrics (for waiting on it); false when absent.
func (s *serverProcess) metric(t *testing.T, series string) (float64, bool) {
	t.Helper()
	body, err := httpGet("http://" + s.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	return v, err == nil
}

// waitMetric waits until series reaches want.
func (s *serverProcess) waitMetric(t *testing.T, series string, want float64) {
	t.Helper()
	testenv.WaitUntil(t, fmt.Sprintf("%s to reach %v", series, want), func() bool {
		v, ok := s.metric(t, series)
		return ok && v >= want
	})
}

const cachedLabels = `{model="cached",version="1"}`

func TestResponseCacheAnswersAHitWithoutTheBackend(t *testing.T) {
	t.Parallel()
	s := startWithPlugins(t, pluginRepo(t), "--cache-config", "local,size=1048576")
	s.echoes(t, "cached", 1, 2, 3)
	s.waitMetric(t, "nv_cache_num_entries", 1) // the local cache's own gauge
	s.echoes(t, "cached", 1, 2, 3)
	s.awaitReported(t, "cached", 2)
	g, h := s.modelStats(t, "cached")
	for via, st := range map[string]*pb.ModelStatistics{"gRPC": g, "HTTP": h} {
		inf := st.GetInferenceStats()
		if st.GetExecutionCount() != 1 || st.GetInferenceCount() != 1 {
			t.Errorf("%s: %d executions, %d inferences; want 1 each, the second request a hit", via, st.GetExecutionCount(), st.GetInferenceCount())
		}
		if inf.GetCacheHit().GetCount() != 1 || inf.GetCacheMiss().GetCount() != 1 || inf.GetSuccess().GetCount() != 2 {
			t.Errorf("%s: cache_hit %d, cache_miss %d, success %d; want 1, 1, 2", via,
				inf.GetCacheHit().GetCount(), inf.GetCacheMiss().GetCount(), inf.GetSuccess().GetCount())
		}
		if inf.GetCacheHit().GetNs() == 0 || inf.GetCacheMiss().GetNs() == 0 {
			t.Errorf("%s: cache_hit %v ns, cache_miss %v ns; want both timed", via, inf.GetCacheHit().GetNs(), inf.GetCacheMiss().GetNs())
		}
	}
	text := s.scrapeMetrics(t)
	for series, want := range map[string]float64{
		"nv_cache_num_hits_per_model" + cachedLabels:            1,
		"nv_cache_num_misses_per_model" + cachedLabels:          1,
		"tritonhost_cache_insert_failures_total" + cachedLabels: 0,
		"nv_inference_request_success" + cachedLabels:           2,
		"nv_inference_exec_count" + cachedLabels:                1,
		"nv_cache_num_lookups":                                  2,
		"nv_cache_num_hits":                                     1,
		"nv_cache_num_entries":                                  1,
	} {
		if got := sample(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	sample(t, text, "nv_cache_hit_duration_per_model"+cachedLabels)
	sample(t, text, "nv_cache_miss_duration_per_model"+cachedLabels)
	if strings.Contains(text, `nv_cache_num_hits_per_model{model="checked"`) {
		t.Error("a model without response_cache has cache series")
	}
}

// TestLocalCacheEvictsTheLeastRecentlyUsedAtItsSize: a cache of 10000
// bytes holds two responses of 1000 INT32 (about 4.2 kB each, with their
// key and bookkeeping): the third evicts the oldest, which is a miss
// again, while the newest is still a hit; a response larger than the whole
// cache is answered and not stored, and counted.
func TestLocalCacheEvictsTheLeastRecentlyUsedAtItsSize(t *testing.T) {
	t.Parallel()
	s := startWithPlugins(t, pluginRepo(t), "--cache-config", "local,size=10000")
	vec := func(first int32, n int) []int32 {
		v := make([]int32, n)
		for i := range v {
			v[i] = first + int32(i)
		}
		return v
	}
	a, b, c := vec(0, 1000), vec(1000, 1000), vec(2000, 1000)
	s.echoes(t, "cached", a...)
	s.waitMetric(t, "nv_cache_num_entries", 1)
	s.echoes(t, "cached", b...)
	s.waitMetric(t, "nv_cache_num_entries", 2)
	s.echoes(t, "cached", c...)
	s.waitMetric(t, "nv_cache_num_evictions", 1)
	if n, _ := s.metric(t, "nv_cache_num_entries"); n != 2 {
		t.Errorf("%v entries after an eviction, want 2", n)
	}
	s.echoes(t, "cached", a...) // evicted: runs again
	s.waitMetric(t, "nv_cache_num_evictions", 2)
	s.echoes(t, "cached", c...) // still there
	s.awaitReported(t, "cached", 5)
	g, _ := s.modelStats(t, "cached")
	if g.GetExecutionCount() != 4 || g.GetInferenceStats().GetCacheHit().GetCount() != 1 {
		t.Errorf("%d executions, %d hits; want 4 and 1 (only the newest response a hit)", g.GetExecutionCount(), g.GetInferenceStats().GetCacheHit().GetCount())
	}
	s.echoes(t, "cached", vec(0, 4000)...) // 16 kB: larger than the cache
	s.waitMetric(t, "tritonhost_cache_insert_failures_total"+cachedLabels, 1)
	testenv.WaitUntil(t, "the refused insert logged with the cache's reason", func() bool {
		return strings.Contains(s.Log(), "does not fit in the cache's 10000")
	})
}

// TestResponseCacheConcurrentIdenticalRequests: identical requests at once
// (with the older --response-cache-byte-size) all get the answer; the
// cache ends with one entry and no failed insert.
func TestResponseCacheConcurrentIdenticalRequests(t *testing.T) {
	t.Parallel()
	s := startWithPlugins(t, pluginRepo(t), "--response-cache-byte-size", "1048576")
	const n = 24
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			got, err := s.inferVector(t, "cached", 7, 8, 9)
			if err != nil || !slices.Equal(got, []int32{7, 8, 9}) {
				t.Errorf("got %v, %v", got, err)
			}
		})
	}
	wg.Wait()
	s.awaitReported(t, "cached", n)
	g, _ := s.modelStats(t, "cached")
	inf := g.GetInferenceStats()
	if inf.GetCacheHit().GetCount()+inf.GetCacheMiss().GetCount() != n || g.GetExecutionCount() > inf.GetCacheMiss().GetCount() {
		t.Errorf("%d hits + %d misses, %d executions; want %d lookups and no more executions than misses",
			inf.GetCacheHit().GetCount(), inf.GetCacheMiss().GetCount(), g.GetExecutionCount(), n)
	}
	s.waitMetric(t, "nv_cache_num_entries", 1)
	if f, _ := s.metric(t, "tritonhost_cache_insert_failures_total"+cachedLabels); f != 0 {
		t.Errorf("%v failed inserts, want 0", f)
	}
	s.echoes(t, "cached", 7, 8, 9)
	s.awaitReported(t, "cached", n+1) // a run on the backend counts only after its response
	if after, _ := s.modelStats(t, "cached"); after.GetExecutionCount() != g.GetExecutionCount() {
		t.Error("the request after them ran on the backend")
	}
}

// TestAFailingOrSlowCacheNeverFailsARequest: with a cache whose every call
// fails, or whose lookups outlast --cache-call-timeout, every request is
// answered by its model; failed inserts are logged and counted.
func TestAFailingOrSlowCacheNeverFailsARequest(t *testing.T) {
	t.Parallel()
	lib := testenv.SharedLibrary(t, "tritoncache_probe", filepath.Join("..", "..", "abi", "testdata", "cache_probe.c"))
	caches := t.TempDir()
	testenv.CopyFile(t, lib, filepath.Join(caches, "probe", "libtritoncache_probe.so"))
	tests := []struct {
		name     string
		flags    []string
		failures float64
		log      string
	}{
		{"every call fails", []string{"--cache-config", "probe,lookup_error=1", "--cache-config", "probe,insert_error=1"}, 2,
			"failed to insert a response into the response cache: the probe cache refuses to insert"},
		{"lookups are slow", []string{"--cache-config", "probe,lookup_sleep_ms=2000", "--cache-call-timeout", "20", "--log-verbose", "1"}, 0,
			"the lookup did not return within the cache call timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, agents := testenv.PluginDirs(t)
			s := startServer(t, pluginRepo(t), append([]string{"--cache-directory", caches, "--repoagent-directory", agents}, tt.flags...)...)
			s.echoes(t, "cached", 4, 5)
			s.echoes(t, "cached", 4, 5)
			// The backend reports an execution after its response, which
			// the client may have read first.
			var g *pb.ModelStatistics
			done := func() bool {
				g, _ = s.modelStats(t, "cached")
				return g.GetExecutionCount() >= 2 && g.GetInferenceStats().GetCacheMiss().GetCount() >= 2
			}
			for deadline := time.Now().Add(testenv.Patience); !done() && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if g.GetExecutionCount() != 2 || g.GetInferenceStats().GetCacheMiss().GetCount() != 2 {
				t.Errorf("%d executions, %d misses; want 2 each", g.GetExecutionCount(), g.GetInferenceStats().GetCacheMiss().GetCount())
			}
			s.waitMetric(t, "tritonhost_cache_insert_failures_total"+cachedLabels, tt.failures)
			testenv.WaitUntil(t, "the log to say "+tt.log, func() bool { return strings.Contains(s.Log(), tt.log) })
		})
	}
}

func TestCacheFlagsAreCheckedBeforeServing(t *testing.T) {
	t.Parallel()
	caches, _ := testenv.PluginDirs(t)
	repo := t.TempDir()
	tests := []struct {
		flags []string
		want  string
	}{
		{[]string{"--cache-config", "local,size=1048576", "--cache-config", "redis,host=localhost"}, "multiple cache configurations"},
		{[]string{"--response-cache-byte-size", "1024", "--cache-config", "local,size=1048576"}, "incompatible flags"},
		{[]string{"--cache-config", "local"}, "want <cache>,<key>=<value>"},
		{[]string{"--cache-directory", caches, "--cache-config", "nope,size=1"}, "unable to find 'libtritoncache_nope.so' for cache. Searched: " + caches},
		{[]string{"--cache-directory", caches, "--cache-config", "local,sized=1"}, "local cache: the configuration needs 'size'"},
		{[]string{"--cache-max-calls", "0"}, "--cache-max-calls must be positive"},
	}
	for _, tt := range tests {
		out, err := exec.Command(serverBinary, append([]string{"serve", "--model-repository", repo, "--grpc-port", "0",
			"--http-port", "0", "--metrics-port", "0", "--grpc-address", "127.0.0.1", "--http-address", "127.0.0.1"}, tt.flags...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("serve %v: %v, want a failure saying %q:\n%s", tt.flags, err, tt.want, out)
		}
	}
}

// TestChecksumAgentRefusesATamperedModel: the checksum agent loads the
// model while its file matches the digest in its configuration, refuses it
// with its reason once the file changes, and loads it again once restored;
// an agent the server cannot find fails its model with Triton's message.
func TestChecksumAgentRefusesATamperedModel(t *testing.T) {
	t.Parallel()
	repo := pluginRepo(t)
	if err := os.MkdirAll(filepath.Join(repo, "unknown_agent", "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := strings.Replace(readFile(t, filepath.Join(repo, "checked", "config.pbtxt")), `name: "checksum"`, `name: "nope"`, 1)
	config = strings.Replace(config, `name: "checked"`, `name: "unknown_agent"`, 1)
	if err := os.WriteFile(filepath.Join(repo, "unknown_agent", "config.pbtxt"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startWithPlugins(t, repo, "--model-control-mode", "explicit", "--load-model", "checked")
	s.echoes(t, "checked", 1, 2)

	weights := filepath.Join(repo, "checked", "1", "weights.bin")
	original := readFile(t, weights)
	tampered := original + "tampered\n"
	if err := os.WriteFile(weights, []byte(tampered), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte(tampered))
	want := "Mismatched MD5 hash for file 1/weights.bin, expect: c543721a46d0cd49b4a955979ff03818, got: " + hex.EncodeToString(sum[:])
	ctx := ctxFor(t)
	_, err := s.Client.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "checked"})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("loading the tampered model: %v\nwant the agent's reason %q", err, want)
	}
	idx, err := s.Client.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range idx.GetModels() {
		if m.GetName() == "checked" && (m.GetState() == "READY" || !strings.Contains(m.GetReason(), want)) {
			t.Errorf("index: %s %s %q; want it unavailable with the agent's reason", m.GetName(), m.GetState(), m.GetReason())
		}
	}

	if err := os.WriteFile(weights, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "checked"}); err != nil {
		t.Fatalf("loading the restored model: %v", err)
	}
	s.echoes(t, "checked", 3, 4)

	_, err = s.Client.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: "unknown_agent"})
	if err == nil || !strings.Contains(err.Error(), "unable to find 'libtritonrepoagent_nope.so' for repo agent 'nope', searched: ") {
		t.Errorf("a model naming an agent the server does not have: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
