package reliability

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// constructorLibrary builds a shared library whose constructor creates the
// file marker: whoever loads it runs its code.
func constructorLibrary(t *testing.T, marker string) []byte {
	t.Helper()
	src := filepath.Join(t.TempDir(), "constructor.c")
	code := fmt.Sprintf(`#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <unistd.h>

__attribute__((constructor)) static void ran(void) {
  int fd = open(%q, O_CREAT | O_WRONLY, 0600);
  if (fd >= 0) close(fd);
}
`, marker)
	if err := os.WriteFile(src, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(testenv.SharedLibrary(t, "triton_constructor", src))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// uploadConfig is the configuration of a model on backend, an identity
// of INT32 vectors, with runtime if not empty.
func uploadConfig(name, backend, runtime string) string {
	return fmt.Sprintf(`{"name":%q,"backend":%q,"runtime":%q,"max_batch_size":0,
		"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`, name, backend, runtime)
}

// httpLoad sends Triton's HTTP load request with a configuration and
// files (base64, as Triton's clients send them) and returns the status
// and the error text.
func httpLoad(t *testing.T, addr, model, config string, files map[string][]byte) (int, string) {
	t.Helper()
	params := map[string]string{"config": config}
	for name, data := range files {
		params["file:"+name] = base64.StdEncoding.EncodeToString(data)
	}
	body, _ := json.Marshal(map[string]any{"parameters": params})
	resp, err := http.Post("http://"+addr+"/v2/repository/models/"+model+"/load", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(text, &e)
	return resp.StatusCode, e.Error
}

func grpcLoad(c pb.GRPCInferenceServiceClient, model, config string, files map[string][]byte) error {
	params := map[string]*pb.ModelRepositoryParameter{"config": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: config}}}
	for name, data := range files {
		params["file:"+name] = &pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_BytesParam{BytesParam: data}}
	}
	_, err := c.RepositoryModelLoad(context.Background(), &pb.RepositoryModelLoadRequest{ModelName: model, Parameters: params})
	return err
}

// TestUploadedLibrariesAreNeverRun: a load request whose files hold a
// shared library (where the loader looks for the backend library first,
// or under another name the runtime names, or one a backend could open)
// is refused over HTTP and gRPC with a message naming the file and the
// flag, and the library's code never runs; with
// --allow-model-file-libraries it does, which is what the flag allows.
func TestUploadedLibrariesAreNeverRun(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "constructor-ran")
	lib := constructorLibrary(t, marker)
	t.Setenv("TMPDIR", t.TempDir())
	srv := start(t, "", "--model-control-mode", "explicit", "--load-model", "identity_int32")
	_, c := srv.Dial(t)
	addr := srv.HTTP

	code, msg := httpLoad(t, addr, "evil", uploadConfig("evil", "constructor", ""), map[string][]byte{"1/libtriton_constructor.so": lib})
	if code != http.StatusBadRequest || !strings.Contains(msg, "'file:1/libtriton_constructor.so' is an ELF object") || !strings.Contains(msg, "--allow-model-file-libraries") {
		t.Errorf("HTTP load with the backend library among its files: %d %q; want 400 naming the file and --allow-model-file-libraries", code, msg)
	}
	t.Logf("HTTP load with file:1/libtriton_constructor.so: %d %s", code, msg)
	for _, tc := range []struct {
		what    string
		runtime string
		files   map[string][]byte
	}{
		{"the library as the runtime's file", "model.bin", map[string][]byte{"1/model.bin": lib}},
		{"the library under a data file's name", "", map[string][]byte{"1/weights.bin": lib}},
		{"a file named as the backend library", "", map[string][]byte{"libtriton_identity.so": []byte("not a library")}},
	} {
		err := grpcLoad(c, "evil", uploadConfig("evil", "identity", tc.runtime), tc.files)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "--allow-model-file-libraries") {
			t.Errorf("gRPC load with %s: %v; want INVALID_ARGUMENT naming --allow-model-file-libraries", tc.what, err)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the library's constructor ran in the server (%v)", err)
	}
	if err := unaryIdentity(c)(context.Background()); err != nil {
		t.Fatalf("the server no longer serves: %v", err)
	}

	// The operator may allow it; then the library is loaded, and runs.
	allowed := start(t, "", "--model-control-mode", "explicit", "--allow-model-file-libraries")
	code, msg = httpLoad(t, allowed.HTTP, "evil", uploadConfig("evil", "constructor", ""), map[string][]byte{"1/libtriton_constructor.so": lib})
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("with --allow-model-file-libraries the library was not loaded (%d %s)", code, msg)
	}
}

// dirBytes is the size of the regular files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// TestUploadedFilesStayWithinTheirDiskBudget: the model files that load
// requests send take at most --model-files-max-size on disk, all models
// together: past it a load is refused (HTTP 503, gRPC UNAVAILABLE, naming
// the flag) and the loaded models serve on; an unload makes room.
func TestUploadedFilesStayWithinTheirDiskBudget(t *testing.T) {
	const budget, file = 1 << 20, 400 << 10
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := start(t, "", "--model-control-mode", "explicit", "--load-model", "identity_int32", "--model-files-max-size", fmt.Sprint(budget))
	_, c := srv.Dial(t)
	addr := srv.HTTP
	weights := map[string][]byte{"1/weights.bin": bytes.Repeat([]byte{7}, file)}
	for i := range 2 {
		name := fmt.Sprintf("up%d", i)
		if err := grpcLoad(c, name, uploadConfig(name, "identity", ""), weights); err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
	}
	refused := 0
	for range 5 {
		err := grpcLoad(c, "up2", uploadConfig("up2", "identity", ""), weights)
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "--model-files-max-size") {
			t.Errorf("a third load of %d bytes past %d: %v; want UNAVAILABLE naming --model-files-max-size", file, budget, err)
		}
		code, msg := httpLoad(t, addr, "up3", uploadConfig("up3", "identity", ""), weights)
		if code != http.StatusServiceUnavailable || !strings.Contains(msg, "--model-files-max-size") {
			t.Errorf("an HTTP load past the budget: %d %q", code, msg)
		}
		refused += 2
	}
	onDisk := dirBytes(t, tmp)
	if onDisk > budget+64<<10 {
		t.Errorf("%d bytes of model files on disk, budget %d", onDisk, budget)
	}
	if err := unaryIdentity(c)(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RepositoryModelUnload(context.Background(), &pb.RepositoryModelUnloadRequest{ModelName: "up0"}); err != nil {
		t.Fatal(err)
	}
	if err := grpcLoad(c, "up2", uploadConfig("up2", "identity", ""), weights); err != nil {
		t.Fatalf("load after an unload made room: %v", err)
	}
	t.Logf("budget %d bytes: 2 models of %d bytes loaded, %d loads past it refused, %d bytes on disk; after an unload the next load went through",
		budget, file, refused, onDisk)
}
