package reliability

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Hostile repository files: what a model repository may hold in place of
// a model's files (a named pipe, a link to a device, a file huge or
// sparse, a link out of the repository, a file changing as it is read)
// fails that model alone, at once, with a reason naming the file, and
// costs the server no memory; the scans of a polled repository go on.

// modelIndex returns the repository index by model name (the last line
// of a model with several versions).
func modelIndex(t *testing.T, c pb.GRPCInferenceServiceClient) map[string]*pb.RepositoryIndexResponse_ModelIndex {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	idx, err := c.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*pb.RepositoryIndexResponse_ModelIndex{}
	for _, m := range idx.GetModels() {
		out[m.GetName()] = m
	}
	return out
}

// awaitIndex waits until the index line of model satisfies cond.
func awaitIndex(t *testing.T, c pb.GRPCInferenceServiceClient, model, what string, cond func(*pb.RepositoryIndexResponse_ModelIndex) bool) *pb.RepositoryIndexResponse_ModelIndex {
	t.Helper()
	var last *pb.RepositoryIndexResponse_ModelIndex
	if !testenv.Eventually(func() bool {
		last = modelIndex(t, c)[model]
		return last != nil && cond(last)
	}) {
		t.Fatalf("model %s: gave up waiting for %s; its index line: %v", model, what, last)
	}
	return last
}

func ready(m *pb.RepositoryIndexResponse_ModelIndex) bool {
	return m.GetState() == "READY" && m.GetReason() == ""
}

// hostileFile is one thing put where a model's config.pbtxt belongs.
type hostileFile struct {
	name string
	make func(t *testing.T, path string)
	want string // in the model's reason; "" when it loads
}

func symlinkTo(target string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
}

func sparseFile(size int64) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
	}
}

// hostileConfigs are what TestHostileConfigFilesFailAlone puts in place
// of config.pbtxt, under a server whose cap is configCap.
func hostileConfigs(t *testing.T, configCap int) []hostileFile {
	outside := t.TempDir() // another tree, outside the repository
	regular := filepath.Join(outside, "config.pbtxt")
	if err := os.WriteFile(regular, []byte(strings.Replace(testenv.ExampleConfig(t, "identity_int32"), `name: "identity_int32"`, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return []hostileFile{
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is a named pipe (FIFO), not a regular file"},
		{"dev_zero", symlinkTo("/dev/zero"), "is a character device (through a symbolic link to /dev/zero), not a regular file"},
		{"dev_urandom", symlinkTo("/dev/urandom"), "is a character device (through a symbolic link to /dev/urandom)"},
		// A file that says it is empty and holds the server's environment:
		// read within the cap, and no configuration.
		{"proc_file", symlinkTo("/proc/self/environ"), "parse model config"},
		{"huge_sparse", sparseFile(1 << 40), "is 1099511627776 bytes, more than the"},
		{"over_cap", sparseFile(int64(configCap) + 1), fmt.Sprintf("is %d bytes, more than the %d bytes the server reads of it (--model-config-max-size)", configCap+1, configCap)},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory, not a regular file"},
		{"outside_regular", symlinkTo(regular), ""}, // a link out of the repository to a regular file: a ConfigMap's layout
		{"outside_device", symlinkTo("/dev/null"), "is a character device (through a symbolic link to /dev/null)"},
	}
}

// hostileRepository writes a repository of the identity model "good" and
// a model of each hostile config.pbtxt.
func hostileRepository(t *testing.T, files []hostileFile) string {
	models := []testenv.Model{identityModel(t, "good")}
	for _, f := range files {
		models = append(models, identityModel(t, f.name))
	}
	repo := testenv.Repository(t, models...)
	for _, f := range files {
		path := filepath.Join(repo, f.name, "config.pbtxt")
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		f.make(t, path)
	}
	return repo
}

// checkHostile checks each hostile model's index line against its want,
// and that "good" serves.
func checkHostile(t *testing.T, c pb.GRPCInferenceServiceClient, repo string, files []hostileFile) {
	t.Helper()
	idx := modelIndex(t, c)
	for _, f := range files {
		m := idx[f.name]
		switch {
		case m == nil:
			t.Errorf("%s: not in the index", f.name)
		case f.want == "" && !ready(m):
			t.Errorf("%s: %s %q, want it loaded", f.name, m.GetState(), m.GetReason())
		case f.want != "" && (m.GetState() == "READY" || !strings.Contains(m.GetReason(), f.want) ||
			!strings.Contains(m.GetReason(), filepath.Join(repo, f.name, "config.pbtxt"))):
			t.Errorf("%s: %s %q, want it unavailable, naming its config.pbtxt and saying %q", f.name, m.GetState(), m.GetReason(), f.want)
		default:
			t.Logf("%s: %s %s", f.name, m.GetState(), m.GetReason())
		}
	}
	if err := unaryIdentityOn(c, "good")(context.Background()); err != nil {
		t.Fatalf("the good model: %v", err)
	}
}

// TestHostileConfigFilesFailAlone: at start-up, a config.pbtxt that is a
// named pipe, a link to a device, a huge sparse file, a file over
// --model-config-max-size or a directory fails its model's load at once,
// with a reason naming the file, and the server starts and serves the
// others, with no memory spent on them; a link out of the repository to a
// regular file loads (Kubernetes mounts ConfigMaps so), as does a file of
// /proc within the cap.
func TestHostileConfigFilesFailAlone(t *testing.T) {
	const configCap = 64 << 10
	files := hostileConfigs(t, configCap)
	repo := hostileRepository(t, files)
	srv := start(t, repo, "--exit-on-error=false", "--model-config-max-size", fmt.Sprint(configCap))
	_, c := srv.Dial(t)
	checkHostile(t, c, repo, files)
	if hwm := srv.ProcStatus(t, "VmHWM"); hwm > 512<<20 {
		t.Errorf("peak RSS %d MiB after refusing the hostile configurations", hwm>>20)
	}
	t.Logf("peak RSS %d MiB", srv.ProcStatus(t, "VmHWM")>>20)
}

// TestPollGoesOnPastHostileConfigFiles: under poll, a loaded model's
// config.pbtxt replaced by each hostile file (a named pipe first, which
// used to stop every later scan) fails to load again with the reason
// while its version serves on; models added after it load; /dev/zero
// costs no memory; and the restored configuration loads.
func TestPollGoesOnPastHostileConfigFiles(t *testing.T) {
	const configCap = 64 << 10
	repo := testenv.Repository(t, identityModel(t, "victim"))
	srv := start(t, repo, "--model-control-mode", "poll", "--repository-poll-secs", "1", "--model-config-max-size", fmt.Sprint(configCap))
	_, c := srv.Dial(t)
	config := filepath.Join(repo, "victim", "config.pbtxt")
	original, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	before := srv.ProcStatus(t, "VmRSS")
	for i, f := range hostileConfigs(t, configCap) {
		if f.want == "" {
			continue
		}
		if err := os.Remove(config); err != nil {
			t.Fatal(err)
		}
		f.make(t, config)
		// New models, added after the hostile file: a scan stuck on it
		// would never load them.
		for j := range 3 {
			name := fmt.Sprintf("new_%d_%d", i, j)
			if err := os.MkdirAll(filepath.Join(repo, name, "1"), 0o755); err != nil {
				t.Fatal(err)
			}
			m := identityModel(t, name)
			if err := os.WriteFile(filepath.Join(repo, name, "config.pbtxt"), []byte(m.Config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m := awaitIndex(t, c, "victim", "the reason "+f.want, func(m *pb.RepositoryIndexResponse_ModelIndex) bool {
			return strings.Contains(m.GetReason(), f.want)
		})
		if m.GetState() != "READY" || !strings.Contains(m.GetReason(), config) {
			t.Errorf("%s: victim %s %q, want the version loaded before serving, the reason naming %s", f.name, m.GetState(), m.GetReason(), config)
		}
		for j := range 3 {
			awaitIndex(t, c, fmt.Sprintf("new_%d_%d", i, j), "it to load", ready)
		}
		if err := unaryIdentityOn(c, "victim")(context.Background()); err != nil {
			t.Errorf("%s: the version loaded before: %v", f.name, err)
		}
		t.Logf("%s: %s", f.name, m.GetReason())
	}
	if grown := srv.ProcStatus(t, "VmHWM") - before; grown > 256<<20 {
		t.Errorf("peak RSS grew by %d MiB over the hostile files", grown>>20)
	}
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	restored := strings.Replace(string(original), "instance_group", "# restored\ninstance_group", 1)
	if err := os.WriteFile(config, []byte(restored), 0o644); err != nil {
		t.Fatal(err)
	}
	awaitIndex(t, c, "victim", "the restored configuration to load", ready)
	if err := unaryIdentityOn(c, "victim")(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestConfigChangingWhileReadFailsOrLoadsAndPollGoesOn: a config.pbtxt
// rewritten without pause (whole, half written, growing past the cap, cut
// back) as the server polls: each scan loads it or fails it, none hangs
// or takes memory, and once it settles the model loads.
func TestConfigChangingWhileReadFailsOrLoadsAndPollGoesOn(t *testing.T) {
	const configCap = 64 << 10
	repo := testenv.Repository(t, identityModel(t, "good"), identityModel(t, "churn"))
	srv := start(t, repo, "--model-control-mode", "poll", "--repository-poll-secs", "1", "--model-config-max-size", fmt.Sprint(configCap))
	_, c := srv.Dial(t)
	config := filepath.Join(repo, "churn", "config.pbtxt")
	whole := identityModel(t, "churn").Config
	before := srv.ProcStatus(t, "VmRSS")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		junk := strings.Repeat("# padding past the cap\n", 2*configCap/23)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var text string
			switch i % 4 {
			case 0:
				text = whole
			case 1:
				text = whole[:len(whole)/2]
			case 2:
				text = whole + junk
			case 3:
				text = whole + junk[:configCap/2]
			}
			f, err := os.OpenFile(config, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				continue
			}
			// In pieces, so that a read sees it grow.
			for off := 0; off < len(text); off += 4096 {
				_, _ = f.WriteString(text[off:min(off+4096, len(text))])
			}
			f.Close()
		}
	})
	// Scans see the file as it changes: some loads fail.
	awaitIndex(t, c, "churn", "a scan to see the file changing", func(m *pb.RepositoryIndexResponse_ModelIndex) bool { return m.GetReason() != "" })
	close(stop)
	wg.Wait()
	if err := os.WriteFile(config, []byte(whole+"# settled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	awaitIndex(t, c, "churn", "the settled configuration to load", ready)
	if err := unaryIdentityOn(c, "good")(context.Background()); err != nil {
		t.Fatal(err)
	}
	if grown := srv.ProcStatus(t, "VmHWM") - before; grown > 256<<20 {
		t.Errorf("peak RSS grew by %d MiB", grown>>20)
	}
}

// TestChecksumAgentReadsOnlyBoundedRegularFiles: the checksum repository
// agent refuses a file it is to hash that is a named pipe or a link to
// /dev/zero, at once and naming the file (it used to wait on the pipe,
// and read /dev/zero, until the backend call timeout), and the server
// serves on.
func TestChecksumAgentReadsOnlyBoundedRegularFiles(t *testing.T) {
	_, agents := testenv.PluginDirs(t)
	checked := func(name string) testenv.Model {
		m := identityModel(t, name)
		m.Config += `model_repository_agents { agents [ { name: "checksum"
  parameters { key: "MD5:1/weights.bin" value: "d41d8cd98f00b204e9800998ecf8427e" } } ] }
`
		return m
	}
	repo := testenv.Repository(t, identityModel(t, "good"), checked("piped"), checked("zeros"), checked("empty"))
	weights := func(model string) string { return filepath.Join(repo, model, "1", "weights.bin") }
	if err := syscall.Mkfifo(weights("piped"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", weights("zeros")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(weights("empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := start(t, repo, "--model-control-mode", "explicit", "--load-model", "good", "--repoagent-directory", agents,
		"--backend-call-timeout-secs", "20")
	_, c := srv.Dial(t)
	for model, want := range map[string]string{
		"piped": "checksum of 1/weights.bin: it is a named pipe (FIFO), not a regular file",
		"zeros": "checksum of 1/weights.bin: it is a character device, not a regular file",
		"empty": "",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		start := time.Now()
		_, err := c.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: model})
		cancel()
		switch {
		case want == "" && err != nil:
			t.Errorf("load %s, whose file matches its digest: %v", model, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("load %s: %v (after %v); want the agent's refusal saying %q", model, err, time.Since(start), want)
		default:
			t.Logf("load %s: %v (after %v)", model, err, time.Since(start))
		}
	}
	if err := unaryIdentityOn(c, "good")(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestLoadedModelsAreBounded: past --model-max-count a load is refused,
// over gRPC (UNAVAILABLE) and HTTP (503), naming the flag, whatever the
// model (sent with its files or in the repository), before its files are
// written; a reload is not refused; an unload makes room.
func TestLoadedModelsAreBounded(t *testing.T) {
	files := t.TempDir()
	srv := start(t, "", "--model-control-mode", "explicit", "--load-model", "identity_int32", "--model-max-count", "3",
		"--model-files-directory", files)
	_, c := srv.Dial(t)
	weights := map[string][]byte{"1/weights.bin": []byte("weights")}
	for _, name := range []string{"up0", "up1"} {
		if err := grpcLoad(c, name, uploadConfig(name, "identity", ""), weights); err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
	}
	before, _ := filepath.Glob(filepath.Join(files, "server-*", "model-*"))
	for i := range 5 {
		name := fmt.Sprintf("past%d", i)
		err := grpcLoad(c, name, uploadConfig(name, "identity", ""), weights)
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "--model-max-count") {
			t.Errorf("a fourth model over gRPC: %v; want UNAVAILABLE naming --model-max-count", err)
		}
		code, msg := httpLoad(t, srv.HTTP, name, uploadConfig(name, "identity", ""), weights)
		if code != http.StatusServiceUnavailable || !strings.Contains(msg, "--model-max-count") {
			t.Errorf("a fourth model over HTTP: %d %q; want 503 naming --model-max-count", code, msg)
		}
		_, err = c.RepositoryModelLoad(context.Background(), &pb.RepositoryModelLoadRequest{ModelName: "square_int32"})
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "--model-max-count") {
			t.Errorf("a fourth model from the repository: %v", err)
		}
		if i == 0 {
			t.Logf("refused: %v", err)
		}
	}
	if after, _ := filepath.Glob(filepath.Join(files, "server-*", "model-*")); len(after) != len(before) {
		t.Errorf("the refused loads left files: %v, before them %v", after, before)
	}
	if err := grpcLoad(c, "up0", uploadConfig("up0", "identity", ""), weights); err != nil {
		t.Errorf("a reload at the bound: %v", err)
	}
	if _, err := c.RepositoryModelUnload(context.Background(), &pb.RepositoryModelUnloadRequest{ModelName: "up1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RepositoryModelLoad(context.Background(), &pb.RepositoryModelLoadRequest{ModelName: "square_int32"}); err != nil {
		t.Errorf("a load after an unload made room: %v", err)
	}
	if err := unaryIdentity(c)(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestUploadsOfAKilledServerAreRemovedAtStart: the files a load request
// sent stay under the server's own directory in --model-files-directory;
// after kill -9 they are still there, and the next server over the same
// directory removes them as it starts, while it never touches the
// directory of a server that runs. By default they go under
// tritonhost-uploads-<uid> in $TMPDIR, made 0700, and nothing is left in
// $TMPDIR itself.
func TestUploadsOfAKilledServerAreRemovedAtStart(t *testing.T) {
	files := t.TempDir()
	weights := map[string][]byte{"1/weights.bin": []byte("weights")}
	// upload sends model name with files to srv and returns the
	// server's own directory, which holds them.
	upload := func(srv *testenv.Server, name string) string {
		t.Helper()
		_, c := srv.Dial(t)
		if err := grpcLoad(c, name, uploadConfig(name, "identity", ""), weights); err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
		re := regexp.MustCompile(`model "` + name + `": the files of the load request are in (\S+) until`)
		var m []string
		// The log line may reach the test's pipe after the RPC's answer.
		testenv.WaitUntil(t, "the server to say where the files are", func() bool {
			m = re.FindStringSubmatch(srv.Log())
			return m != nil
		})
		if rel, err := filepath.Rel(files, m[1]); err != nil || !filepath.IsLocal(rel) {
			t.Fatalf("the files are in %s, not under %s", m[1], files)
		}
		return filepath.Dir(m[1])
	}
	args := []string{"--model-control-mode", "explicit", "--load-model", "identity_int32", "--model-files-directory", files}
	killed := start(t, "", args...)
	killedDir := upload(killed, "sent")
	killed.Kill()
	if _, err := os.Stat(killedDir); err != nil {
		t.Fatalf("the killed server's files are gone already (%v): the test proves nothing", err)
	}

	next := start(t, "", args...)
	if _, err := os.Stat(killedDir); !os.IsNotExist(err) {
		t.Errorf("%s, the killed server's, is still there once the next server serves (%v)", killedDir, err)
	}
	if !strings.Contains(next.Log(), "removed "+killedDir) {
		t.Errorf("the next server did not log that it removed %s", killedDir)
	}
	nextDir := upload(next, "sent")
	// A third server beside it leaves the running one's files alone.
	beside := start(t, "", args...)
	_, c := beside.Dial(t)
	if err := unaryIdentity(c)(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(nextDir); err != nil {
		t.Errorf("a server starting beside a running one removed its files: %v", err)
	}
	_, nc := next.Dial(t)
	if err := unaryIdentityOn(nc, "sent")(context.Background()); err != nil {
		t.Errorf("the model sent to the running server: %v", err)
	}

	// The default: a directory of the user's own in $TMPDIR.
	tmp := t.TempDir()
	srv := testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary, Args: []string{"--model-control-mode", "explicit"},
		Env: append(os.Environ(), "TMPDIR="+tmp)})
	_, dc := srv.Dial(t)
	if err := grpcLoad(dc, "sent", uploadConfig("sent", "identity", ""), weights); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(tmp, fmt.Sprintf("tritonhost-uploads-%d", os.Geteuid()))
	if st, err := os.Lstat(parent); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v, want a directory of mode 0700", parent, st, err)
	}
	if sent, _ := filepath.Glob(filepath.Join(parent, "server-*", "model-*", "1", "weights.bin")); len(sent) != 1 {
		t.Errorf("the files sent are not under %s: %v", parent, sent)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "tritonhost-model-*")); len(left) != 0 {
		t.Errorf("in $TMPDIR itself: %v", left)
	}
}

// TestConfigsWithMoreDimensionsThanARequestCarriesFailToLoad: a model
// whose input has 65 dimensions (or 64 and a batch dimension) could serve
// no request, which carries at most 64: it fails to load naming the
// limit, from its config.pbtxt or a load request's configuration, and the
// server goes on.
func TestConfigsWithMoreDimensionsThanARequestCarriesFailToLoad(t *testing.T) {
	dims := func(n int) string { return "[ " + strings.TrimSuffix(strings.Repeat("1, ", n), ", ") + " ]" }
	model := func(name string, maxBatch, n int) testenv.Model {
		return testenv.Model{Name: name, Config: fmt.Sprintf(`name: %q
backend: "identity"
max_batch_size: %d
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: %s } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: %[3]s } ]
`, name, maxBatch, dims(n))}
	}
	repo := testenv.Repository(t, identityModel(t, "good"), model("dims64", 0, 64), model("dims65", 0, 65), model("batched64", 8, 64))
	srv := start(t, repo, "--exit-on-error=false")
	_, c := srv.Dial(t)
	idx := modelIndex(t, c)
	for name, want := range map[string]string{
		"dims64":    "",
		"dims65":    `input "INPUT0" has 65 dimensions, more than the 64 a request's tensor may have`,
		"batched64": `input "INPUT0" has 65 dimensions, the batch dimension included, more than the 64`,
	} {
		m := idx[name]
		switch {
		case want == "" && !ready(m):
			t.Errorf("%s: %v, want it loaded", name, m)
		case want != "" && (m.GetState() == "READY" || !strings.Contains(m.GetReason(), want)):
			t.Errorf("%s: %s %q, want it unavailable saying %q", name, m.GetState(), m.GetReason(), want)
		}
	}
	override := `{"name":"dims64","backend":"identity","max_batch_size":0,
		"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":` + strings.ReplaceAll(dims(65), " ", "") + `}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":` + strings.ReplaceAll(dims(65), " ", "") + `}]}`
	srv2 := start(t, repo, "--model-control-mode", "explicit", "--load-model", "good")
	_, c2 := srv2.Dial(t)
	_, err := c2.RepositoryModelLoad(context.Background(), &pb.RepositoryModelLoadRequest{ModelName: "dims64",
		Parameters: map[string]*pb.ModelRepositoryParameter{"config": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: override}}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "65 dimensions") {
		t.Errorf("a load whose configuration has 65 dims: %v; want INVALID_ARGUMENT naming the limit", err)
	}
	t.Logf("override of 65 dims: %v", err)
	if err := unaryIdentityOn(c2, "good")(context.Background()); err != nil {
		t.Fatal(err)
	}
}
