// Package objstoretest starts real object-storage servers for tests, on
// loopback with credentials of their own: MinIO for S3, fake-gcs-server
// for Google Cloud Storage (reached through the client library's
// STORAGE_EMULATOR_HOST) and Azurite for Azure Blob. A test whose server
// is not installed is skipped with the reason; .ci/run installs them
// under ToolsDir.
package objstoretest

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// ToolsEnv names the directory the servers are installed under
// (bin/minio, bin/fake-gcs-server, azurite/node_modules/.bin/azurite-blob),
// by default ToolsDir.
const ToolsEnv = "TRITONHOST_OBJSTORE_TOOLS"

// ToolsDir is where .ci/run installs the servers unless ToolsEnv says
// otherwise.
func ToolsDir() string {
	if d := os.Getenv(ToolsEnv); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "tritonhost", "objstore-tools")
}

// tool finds a server's executable on PATH or under ToolsDir, or skips
// the test.
func tool(t testing.TB, name string, under ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	p := filepath.Join(append([]string{ToolsDir()}, append(under, name)...)...)
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p
	}
	t.Skipf("%s is not installed (not on PATH nor at %s; .ci/run installs it)", name, p)
	return ""
}

// freePort returns a loopback port free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// minioRoomFor is what MinIO wants free on its drive beyond 1% of the
// drive's size before it takes a write: an upload whose size it is not
// told counts as 1 GiB. Twice that leaves room for the test's objects.
const minioRoomFor = 2 << 30

// minioShm is the memory file system MinIO's drive goes on when it has
// room.
const minioShm = "/dev/shm"

// minioDrive returns a directory for MinIO's drive, removed when the test
// ends. MinIO refuses every write ("minimum free drive threshold") on a
// drive with too little room, and a test machine's disk can be nearly full
// while its memory is not, so the drive goes on /dev/shm when that has
// room (the tests write a few kilobytes); else in the test's temporary
// directory. Where neither has room the test is skipped with the reason.
func minioDrive(t testing.TB) string {
	t.Helper()
	if hasRoom(minioShm, minioRoomFor) {
		dir, err := os.MkdirTemp(minioShm, "tritonhost-minio-")
		if err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir
		}
	}
	dir := t.TempDir()
	if !hasRoom(dir, minioRoomFor) {
		t.Skipf("minio: neither %s nor %s has 1%% of its size plus %d MiB free, and MinIO refuses writes with less", minioShm, dir, minioRoomFor>>20)
	}
	return dir
}

// hasRoom reports whether the file system holding dir has more than need
// bytes free beyond 1% of its size.
func hasRoom(dir string, need uint64) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	size, free := st.Blocks*uint64(st.Bsize), st.Bavail*uint64(st.Bsize)
	return free > size/100+need
}

// process runs a server until the test ends, its output kept for the
// log of a failed test.
type process struct {
	cmd *exec.Cmd
	out *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the writes of a process's two
// output streams and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func startProcess(t testing.TB, env []string, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(bin), out.String())
		}
	})
	return &process{cmd: cmd, out: out}
}

// waitHTTP waits until url answers (any status), failing the test after
// testenv.Patience.
func waitHTTP(t testing.TB, what, url string) {
	t.Helper()
	waitStatus(t, what, url, func(int) bool { return true })
}

// waitOK waits until url answers 200 OK, failing the test after
// testenv.Patience.
func waitOK(t testing.TB, what, url string) {
	t.Helper()
	waitStatus(t, what, url, func(code int) bool { return code == http.StatusOK })
}

// waitStatus waits until url answers with a status ok accepts.
func waitStatus(t testing.TB, what, url string, ok func(int) bool) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second}
	testenv.WaitUntil(t, what+" to answer at "+url, func() bool {
		resp, err := c.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return ok(resp.StatusCode)
	})
}

// ctx is a bounded context for a test's calls to a server.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// must fails the test on err.
func must(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
