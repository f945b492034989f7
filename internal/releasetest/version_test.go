package releasetest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
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
	c := serve(t, bin, t.TempDir(), t.TempDir())
	meta, err := c.ServerMetadata(ctxFor(t), &pb.ServerMetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if meta.GetVersion() != version {
		t.Errorf("ServerMetadata version %q, want %q", meta.GetVersion(), version)
	}
}

// A build in a checkout whose HEAD is tagged prints the tag; one commit
// later, the commits since; with a change not committed, -dirty; make
// relinks for each though no source changed. The checkout is this one's
// files under a scratch git directory (GIT_DIR, GIT_WORK_TREE): make builds
// what is here, as in a tagged clone, and nothing here changes.
func TestBuildInTaggedCheckoutPrintsTheTag(t *testing.T) {
	requireTools(t, "git")
	root := testenv.RepoRoot(t)
	env := []string{"GIT_DIR=" + filepath.Join(t.TempDir(), "scratch.git"), "GIT_WORK_TREE=" + root}
	scratch := func(args ...string) string { return gitWith(t, root, env, args...) }
	scratch("init", "-q")
	scratch("add", "-A")
	scratch("commit", "-q", "-m", "this checkout")
	scratch("tag", "-a", "v0.1.0", "-m", "tritonhost 0.1.0")

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "tritonhost")
	build := func() map[string]string {
		t.Helper()
		run(t, root, env, "make", "--no-print-directory",
			"BIN_DIR="+filepath.Dir(bin), "BUILD_DIR="+filepath.Join(dir, "build"), bin)
		return versionInfo(t, bin)
	}

	head := scratch("rev-parse", "HEAD")
	if info := build(); info["tritonhost"] != "v0.1.0" || info["commit"] != head {
		t.Errorf("tagged checkout: version %q, commit %q; want v0.1.0, %s", info["tritonhost"], info["commit"], head)
	}

	scratch("commit", "-q", "--allow-empty", "-m", "after the tag")
	head = scratch("rev-parse", "HEAD")
	short := scratch("rev-parse", "--short", "HEAD")
	if info := build(); info["tritonhost"] != "v0.1.0-1-g"+short || info["commit"] != head {
		t.Errorf("one commit after the tag: version %q, commit %q; want v0.1.0-1-g%s, %s", info["tritonhost"], info["commit"], short, head)
	}

	scratch("rm", "-q", "--cached", "README.md") // a change not committed
	if info := build(); info["tritonhost"] != "v0.1.0-1-g"+short+"-dirty" {
		t.Errorf("changed checkout: version %q, want v0.1.0-1-g%s-dirty", info["tritonhost"], short)
	}
}
