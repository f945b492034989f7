package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/internal/objstore/objstoretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Model repositories in object storage, each provider against a real
// server of its kind that the test starts (objstoretest: MinIO,
// fake-gcs-server, Azurite); a provider whose server is not installed is
// skipped with the reason.
var objectStores = []struct {
	name  string
	start func(testing.TB) *objstoretest.Store
}{
	{"s3", objstoretest.StartMinIO},
	{"gcs", objstoretest.StartFakeGCS},
	{"azure", objstoretest.StartAzurite},
}

// startRemoteServer serves the repositories (a remote one first) with the
// store's environment and flags, and env on top.
func startRemoteServer(t *testing.T, store *objstoretest.Store, repo string, env []string, extra ...string) *serverProcess {
	t.Helper()
	e := append(append(os.Environ(), store.Env()...), env...)
	args := append(append([]string{"--repository-cache-directory", t.TempDir()}, store.Args()...), extra...)
	return startServerEnv(t, repo, e, args...)
}

// inferSimple runs the example model "simple" over gRPC and checks its
// sums.
func inferSimple(t *testing.T, s *serverProcess) {
	t.Helper()
	in0, in1 := make([]uint32, 16), make([]uint32, 16)
	for i := range in0 {
		in0[i], in1[i] = uint32(i), 1
	}
	resp, err := s.Client.ModelInfer(ctxFor(t), simpleRequest("simple", "INT32", words(in0), words(in1)))
	if err != nil {
		t.Fatalf("ModelInfer(simple) from the bucket: %v", err)
	}
	if got := resp.GetRawOutputContents()[0]; !bytes.Equal(got[4:8], words([]uint32{2})) {
		t.Errorf("simple OUTPUT0[1] = % x, want 2", got[4:8])
	}
}

// inferIdentity runs an identity_int32 model over HTTP and checks its
// answer.
func inferIdentity(t *testing.T, s *serverProcess, model string) {
	t.Helper()
	status, _, body := s.httpCall(t, "POST", "/v2/models/"+model+"/infer",
		[]byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2],"data":[3,4]}]}`))
	if status != 200 || !strings.Contains(string(body), "[3,4]") {
		t.Errorf("HTTP infer on %s: %d %s", model, status, body)
	}
}

// TestObjectStorageRepository serves the example models from a bucket,
// under poll model control: they answer over gRPC and HTTP; a version
// uploaded while a stream is open loads beside the version streaming,
// which finishes its request; a model uploaded half-way (no config.pbtxt
// yet) is not loaded until it is complete.
func TestObjectStorageRepository(t *testing.T) {
	t.Parallel()
	for _, p := range objectStores {
		t.Run(p.name, func(t *testing.T) {
			store := p.start(t)
			store.UploadDir(t, testenv.ExampleModels(t), "models")
			s := startRemoteServer(t, store, store.URL("models"), nil, "--model-control-mode=poll", "--repository-poll-secs=1")

			inferSimple(t, s)
			inferIdentity(t, s, "identity_int32")

			st, err := client.OpenStream(ctxFor(t), s.Client)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Send(client.Request{Model: "repeat_int32", ID: "long", Inputs: []client.Tensor{
				client.Int32s("IN", []int64{4}, 1, 2, 3, 4),
				client.Uint32s("DELAY", []int64{4}, 0, 1000, 1000, 1000),
				client.Uint32s("WAIT", []int64{1}, 0),
			}}); err != nil {
				t.Fatal(err)
			}
			first, err := st.Recv()
			if err != nil {
				t.Fatal(err)
			}
			store.Put(t, "models/repeat_int32/2/.keep", nil)
			testenv.WaitUntil(t, "version 2 uploaded under the stream to load", func() bool {
				l := indexLine(t, s, "repeat_int32", "2")
				return l != nil && l.GetState() == "READY"
			})
			st.CloseSend()
			got := append([]result{decode(t, first)}, collect(t, st)...)
			var outs []int64
			for _, r := range got {
				if r.err != "" {
					t.Errorf("the streaming request failed across the new version's load: %s", r.err)
				}
				outs = append(outs, r.outs["OUT"]...)
			}
			if fmt.Sprint(outs) != "[1 2 3 4]" {
				t.Errorf("streamed outputs %v, want [1 2 3 4]", outs)
			}

			cfg := strings.Replace(testenv.ExampleConfig(t, "identity_int32"), `name: "identity_int32"`, `name: "late"`, 1)
			store.Put(t, "models/late/1/.keep", nil)
			s.AwaitOutput(t, "the half-uploaded model to be noticed", func(out string) bool {
				return strings.Contains(out, `model "late" in `+store.URL("models")+` is not complete`)
			})
			if l := indexLine(t, s, "late", "1"); l != nil {
				t.Errorf("a model without its config.pbtxt is in the index: %v", l)
			}
			store.Put(t, "models/late/config.pbtxt", []byte(cfg))
			testenv.WaitUntil(t, "the completed model to load", func() bool {
				l := indexLine(t, s, "late", "1")
				return l != nil && l.GetState() == "READY"
			})
			inferIdentity(t, s, "late")
		})
	}
}

// TestObjectStorageFailures starts a server on a local repository and a
// remote one it cannot read or download from: wrong credentials, a bucket
// that does not exist, a server that stops answering mid-download. Each
// is a clear error in the log (and the index, for the download); the
// server stays up and serves the local model, and the model whose new
// version could not be downloaded keeps serving the version it had.
func TestObjectStorageFailures(t *testing.T) {
	t.Parallel()
	for _, p := range objectStores {
		t.Run(p.name, func(t *testing.T) {
			store := p.start(t)
			local := testenv.Repository(t, testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")})
			cfg := strings.Replace(testenv.ExampleConfig(t, "identity_int32"), `name: "identity_int32"`, `name: "remote"`, 1)
			store.Put(t, "models/remote/config.pbtxt", []byte(cfg))
			store.Put(t, "models/remote/1/.keep", nil)
			wrongCreds := map[string]string{"s3": "SignatureDoesNotMatch", "gcs": "no-such-key.json", "azure": "HTTP 403"}[p.name]

			for _, tc := range []struct {
				name string
				url  string
				env  []string
				want string
			}{
				{"wrong credentials", store.URL("models"), []string{"TRITON_CLOUD_CREDENTIAL_PATH=" + store.CredentialFile(t, true)}, wrongCreds},
				{"missing bucket", store.MissingBucketURL(), nil, "no-such-bucket"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					s := startRemoteServer(t, store, local, tc.env, "--model-repository", tc.url, "--exit-on-error=false")
					s.AwaitOutput(t, "the error naming the repository", func(out string) bool {
						return strings.Contains(out, tc.url) && strings.Contains(out, tc.want)
					})
					if status, _, _ := s.httpCall(t, "GET", "/v2/health/ready", nil); status == 200 {
						t.Errorf("ready with a repository it cannot read")
					}
					inferIdentity(t, s, "identity_int32")
				})
			}

			t.Run("stalled download", func(t *testing.T) {
				s, via := serveThroughAStalledDownload(t, store, local, "sent no data for 1s (--repository-download-stall-secs)")
				if !strings.Contains(s.Log(), `download model "remote" from `+via.URL("models")) {
					t.Errorf("the log does not name the model and repository of the failed download")
				}
			})
		})
	}
}

// TestObjectStorageExplicitControl loads and unloads models of a bucket
// on request: only the model loaded at start is downloaded then; a load
// downloads the model named (a new version of it too); a load of a model
// uploaded half-way fails with the reason and loads nothing.
func TestObjectStorageExplicitControl(t *testing.T) {
	t.Parallel()
	for _, p := range objectStores {
		t.Run(p.name, func(t *testing.T) {
			store := p.start(t)
			store.UploadDir(t, testenv.ExampleModels(t), "models")
			s := startRemoteServer(t, store, store.URL("models"), nil, "--model-control-mode=explicit", "--load-model=identity_int32")
			inferIdentity(t, s, "identity_int32")
			if strings.Contains(s.Log(), `downloading model "simple"`) {
				t.Errorf("a model not loaded at start was downloaded")
			}
			if status, _, body := s.httpCall(t, "POST", "/v2/repository/models/simple/load", nil); status != 200 {
				t.Fatalf("load simple: %d %s", status, body)
			}
			inferSimple(t, s)

			store.Put(t, "models/identity_int32/2/.keep", nil)
			if status, _, body := s.httpCall(t, "POST", "/v2/repository/models/identity_int32/load", nil); status != 200 {
				t.Fatalf("reload identity_int32: %d %s", status, body)
			}
			if l := indexLine(t, s, "identity_int32", "2"); l == nil || l.GetState() != "READY" {
				t.Errorf("the new version after the load: %v", l)
			}

			store.Put(t, "models/half/1/.keep", nil)
			status, _, body := s.httpCall(t, "POST", "/v2/repository/models/half/load", nil)
			if status == 200 || !strings.Contains(string(body), "no config.pbtxt") {
				t.Errorf("load of a half-uploaded model: %d %s", status, body)
			}
			if status, _, body := s.httpCall(t, "POST", "/v2/repository/models/simple/unload", nil); status != 200 {
				t.Errorf("unload simple: %d %s", status, body)
			}
			inferIdentity(t, s, "identity_int32")
		})
	}
}

// TestObjectStorageNamespacedFailureStaysWithItsModel: with
// --model-namespacing, a poll whose download of a model's new version
// fails (the store stops answering) keeps the failure on that model, in
// its repository: the version it had goes on serving requests by the
// model's name (the failure was kept under the bare name, a second model
// of that name, which made the name ambiguous), beside a model of a
// local repository.
func TestObjectStorageNamespacedFailureStaysWithItsModel(t *testing.T) {
	t.Parallel()
	store := objstoretest.StartMinIO(t)
	cfg := strings.Replace(testenv.ExampleConfig(t, "identity_int32"), `name: "identity_int32"`, `name: "remote"`, 1)
	store.Put(t, "models/remote/config.pbtxt", []byte(cfg))
	store.Put(t, "models/remote/1/.keep", nil)
	local := testenv.Repository(t, testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")})
	serveThroughAStalledDownload(t, store, local, "--repository-download-stall-secs", "--model-namespacing=true")
}

// serveThroughAStalledDownload serves store's models (through a proxy)
// and local's, polling every second, stalls the proxy and adds a version 2
// of "remote" to the store, then checks that version 1's index line comes
// to name the failed download (reason) while it stays READY and serves,
// as identity_int32 does; it returns the server and the proxied store.
func serveThroughAStalledDownload(t *testing.T, store *objstoretest.Store, local, reason string, extra ...string) (*serverProcess, *objstoretest.Store) {
	t.Helper()
	proxy := objstoretest.StartProxy(t, store)
	via := store.Via(proxy)
	s := startRemoteServer(t, via, local, nil, append([]string{"--model-repository", via.URL("models"), "--model-control-mode=poll",
		"--repository-poll-secs=1", "--repository-download-stall-secs=1"}, extra...)...)
	inferIdentity(t, s, "remote")
	proxy.Stall()
	store.Put(t, "models/remote/2/weights.bin", bytes.Repeat([]byte("w"), 2<<20))
	testenv.WaitUntil(t, "the stalled download in the index", func() bool {
		l := indexLine(t, s, "remote", "1")
		return l != nil && strings.Contains(l.GetReason(), reason)
	})
	if l := indexLine(t, s, "remote", "1"); l.GetState() != "READY" {
		t.Errorf("the version serving before the failed download: %v", l)
	}
	inferIdentity(t, s, "remote")
	inferIdentity(t, s, "identity_int32")
	return s, via
}
