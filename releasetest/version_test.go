package releasetest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	pb "tritonhost/frontend/inferencepb"
	"tritonhost/internal/testenv"
)

// headerAPIVersion reads "<major>.<minor>" of <prefix>_API_VERSION_MAJOR and
// _MINOR from one of the headers in include/triton/core.
func headerAPIVersion(t *testing.T, header, prefix string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "include", "triton", "core", header))
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, part := range []string{"MAJOR", "MINOR"} {
		m := regexp.MustCompile(`(?m)^#define ` + prefix + `_API_VERSION_` + part + ` (\d+)`).FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s: no %s_API_VERSION_%s", header, prefix, part)
		}
		parts = append(parts, string(m[1]))
	}
	return strings.Join(parts, ".")
}

func TestMakeStampsTheVersionItIsGiven(t *testing.T) {
	requireTools(t, "git")
	root := testenv.RepoRoot(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "tritonhost")
	const version = "v0.1.0-rc.1"
	// Its own BIN_DIR and BUILD_DIR: nothing in the checkout changes.
	run(t, root, nil, "make", "--no-print-directory", "VERSION="+version,
		"BIN_DIR="+filepath.Dir(bin), "BUILD_DIR="+filepath.Join(dir, "build"), bin)

	info := versionInfo(t, bin)
	want := map[string]string{
		"tritonhost":                version,
		"commit":                    git(t, root, "rev-parse", "HEAD"),
		"go":                        fmt.Sprintf("%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH),
		"TRITONBACKEND_API_VERSION": headerAPIVersion(t, "tritonbackend.h", "TRITONBACKEND"),
		"TRITONSERVER_API_VERSION":  headerAPIVersion(t, "tritonserver.h", "TRITONSERVER"),
	}
	for name, value := range want {
		if info[name] != value {
			t.Errorf("tritonhost version: %s %q, want %q", name, info[name], value)
		}
	}

	// ServerMetadata reports the same version.
	c := serve(t, bin, "--model-repository", t.TempDir(), "--backend-directory", t.TempDir())
	meta, err := c.ServerMetadata(ctxFor(t), &pb.ServerMetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if meta.GetVersion() != version {
		t.Errorf("ServerMetadata version %q, want %q", meta.GetVersion(), version)
	}
}

// A build in a checkout whose HEAD is tagged prints the tag; then -dirty
// once a file changes, then the commits since the tag. make relinks for each
// even though no Go source changed.
func TestBuildInTaggedCheckoutPrintsTheTag(t *testing.T) {
	requireTools(t, "git")
	src := copyCheckout(t)
	git(t, src, "tag", "-a", "v0.1.0", "-m", "tritonhost 0.1.0")
	bin := filepath.Join(src, "bin", "tritonhost")
	build := func() map[string]string {
		t.Helper()
		run(t, src, nil, "make", "--no-print-directory", "bin/tritonhost")
		return versionInfo(t, bin)
	}

	head := git(t, src, "rev-parse", "HEAD")
	if info := build(); info["tritonhost"] != "v0.1.0" || info["commit"] != head {
		t.Errorf("tagged checkout: version %q, commit %q; want v0.1.0, %s", info["tritonhost"], info["commit"], head)
	}

	// A plain go build, no ldflags: the go command's own stamp (it needs
	// -buildvcs, which GOFLAGS may turn off).
	plain := filepath.Join(t.TempDir(), "tritonhost")
	run(t, src, nil, "go", "build", "-buildvcs=true", "-o", plain, "./cmd/tritonhost")
	if info := versionInfo(t, plain); info["tritonhost"] != "v0.1.0" || info["commit"] != head {
		t.Errorf("plain go build: version %q, commit %q; want v0.1.0, %s", info["tritonhost"], info["commit"], head)
	}

	f, err := os.OpenFile(filepath.Join(src, "README.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "\nA change after the tag.")
	f.Close()
	if info := build(); info["tritonhost"] != "v0.1.0-dirty" {
		t.Errorf("changed checkout: version %q, want v0.1.0-dirty", info["tritonhost"])
	}

	git(t, src, "commit", "-q", "-am", "after the tag")
	head = git(t, src, "rev-parse", "HEAD")
	info := build()
	v, ok := strings.CutPrefix(info["tritonhost"], "v0.1.0-1-g")
	if !ok || len(v) < 7 || !strings.HasPrefix(head, v) || info["commit"] != head {
		t.Errorf("one commit after the tag: version %q, commit %q; want v0.1.0-1-g<%s>", info["tritonhost"], info["commit"], head)
	}
}
