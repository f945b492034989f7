package repofile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestReadFileReadsOnlyBoundedRegularFiles: what each hostile file a
// repository may hold comes to: a regular file within the cap is read,
// through any symbolic link; anything else is refused before a byte past
// the cap is read, and nothing blocks.
func TestReadFileReadsOnlyBoundedRegularFiles(t *testing.T) {
	const limit = 1 << 10
	outside := t.TempDir() // another tree: links out of the repository lead here
	target := filepath.Join(outside, "config.pbtxt")
	if err := os.WriteFile(target, []byte("from elsewhere"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(n int) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("x"), n), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := func(to string) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.Symlink(to, path); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name     string
		make     func(t *testing.T, path string)
		wantLen  int   // when the read succeeds
		wantErr  error // errors.Is
		wantSize int64 // of a *TooLargeError; 0: none wanted
		wantText string
	}{
		{name: "a regular file", make: write(100), wantLen: 100},
		{name: "a file at the cap", make: write(limit), wantLen: limit},
		{name: "an empty file", make: write(0), wantLen: 0},
		{name: "a file one byte over the cap", make: write(limit + 1), wantSize: limit + 1},
		{name: "a huge sparse file", make: func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(1 << 40); err != nil {
				t.Fatal(err)
			}
		}, wantSize: 1 << 40},
		{name: "a named pipe", make: func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantErr: ErrNotRegular, wantText: "a named pipe (FIFO)"},
		{name: "a link to /dev/zero", make: link("/dev/zero"), wantErr: ErrNotRegular, wantText: "a character device (through a symbolic link to /dev/zero)"},
		{name: "a link to /dev/null", make: link("/dev/null"), wantErr: ErrNotRegular},
		{name: "a directory", make: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, wantErr: ErrNotRegular, wantText: "a directory"},
		{name: "a link out of the repository to a regular file", make: link(target), wantLen: len("from elsewhere")},
		{name: "a relative link out of the repository", make: func(t *testing.T, path string) {
			rel, err := filepath.Rel(filepath.Dir(path), target)
			if err != nil {
				t.Fatal(err)
			}
			link(rel)(t, path)
		}, wantLen: len("from elsewhere")},
		{name: "a link to a file that says it is empty and is not", make: link("/proc/self/status"), wantSize: -1},
		{name: "a dangling link", make: link("/nonexistent/config.pbtxt"), wantErr: fs.ErrNotExist},
		{name: "no file", make: func(*testing.T, string) {}, wantErr: fs.ErrNotExist},
	}
	r := New(Options{MaxBytes: limit, MaxBytesSetting: "--the-cap", Timeout: 10 * time.Second})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.pbtxt")
			tt.make(t, path)
			data, err := r.ReadFile(path)
			var tl *TooLargeError
			switch {
			case tt.wantSize != 0:
				if !errors.As(err, &tl) || tl.Size != tt.wantSize || tl.Limit != limit || !strings.Contains(err.Error(), "--the-cap") || !strings.Contains(err.Error(), path) {
					t.Fatalf("ReadFile: %d bytes, %v; want a *TooLargeError of size %d naming the file and --the-cap", len(data), err, tt.wantSize)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) {
					t.Fatalf("ReadFile: %d bytes, %v; want %v saying %q", len(data), err, tt.wantErr, tt.wantText)
				}
			case err != nil || len(data) != tt.wantLen:
				t.Fatalf("ReadFile: %d bytes, %v; want %d bytes", len(data), err, tt.wantLen)
			}
			if err != nil {
				t.Log(err)
			}
		})
	}
}

// TestReadPrefixReadsNoMoreThanAsked: a prefix read takes the first n
// bytes of a larger file, all of a shorter one, and refuses what is not a
// regular file as ReadFile does.
func TestReadPrefixReadsNoMoreThanAsked(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long")
	if err := os.WriteFile(long, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	r := New(Options{})
	tests := []struct {
		path    string
		n       int64
		want    string
		wantErr error
	}{
		{long, 4, "0123", nil},
		{long, 100, "0123456789", nil},
		{long, 0, "", nil},
		{zero, 4, "", ErrNotRegular},
	}
	for _, tt := range tests {
		data, err := r.ReadPrefix(tt.path, tt.n)
		if !errors.Is(err, tt.wantErr) || string(data) != tt.want {
			t.Errorf("ReadPrefix(%s, %d) = %q, %v; want %q, %v", tt.path, tt.n, data, err, tt.want, tt.wantErr)
		}
	}
	if data, err := r.ReadFileLimit(long, 9); err == nil {
		t.Errorf("ReadFileLimit(10 bytes, 9) = %q, want a refusal", data)
	}
}

// TestAFileGrowingWhileReadIsReadWithinTheCap: a file appended to as it is
// read comes back whole up to the cap, or is refused; the read always
// ends.
func TestAFileGrowingWhileReadIsReadWithinTheCap(t *testing.T) {
	const limit = 256 << 10
	path := filepath.Join(t.TempDir(), "config.pbtxt")
	if err := os.WriteFile(path, bytes.Repeat([]byte("a"), limit-1), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		block := bytes.Repeat([]byte("b"), 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := f.Write(block); err != nil {
				return
			}
		}
	})
	r := New(Options{MaxBytes: limit})
	refused := 0
	for range 50 {
		data, err := r.ReadFile(path)
		var tl *TooLargeError
		switch {
		case errors.As(err, &tl):
			refused++
		case err != nil:
			t.Fatal(err)
		case len(data) > limit:
			t.Fatalf("read %d bytes, cap %d", len(data), limit)
		}
	}
	close(stop)
	wg.Wait()
	if refused == 0 {
		t.Errorf("a file growing past the cap was never refused")
	}
}

// TestAHungFilesystemIsGivenUpOnAndBounded: a read that makes no progress
// is given up on after the timeout; one that makes progress is not,
// however long it takes; the reads still stuck are bounded, and once
// they return, reads go on.
func TestAHungFilesystemIsGivenUpOnAndBounded(t *testing.T) {
	// The slow read's steps are a twentieth of the timeout, so that a
	// loaded machine oversleeping one of them does not make it hang.
	const timeout = 500 * time.Millisecond
	r := New(Options{Timeout: timeout, TimeoutSetting: "--the-timeout", MaxPending: 2})
	release := make(chan struct{})
	var stuck sync.WaitGroup
	r.read = func(path string, limit int64, whole bool, progress func()) ([]byte, error) {
		switch path {
		case "hung":
			stuck.Done()
			<-release
			return nil, errors.New("answered at last")
		case "slow":
			for range 40 { // two timeouts in all, in steps of a twentieth of one
				time.Sleep(timeout / 20)
				progress()
			}
			return []byte("slow"), nil
		}
		return []byte("fine"), nil
	}
	if data, err := r.ReadFile("slow"); err != nil || string(data) != "slow" {
		t.Fatalf("a read that makes progress: %q %v", data, err)
	}
	for range 2 {
		stuck.Add(1)
		start := time.Now()
		_, err := r.ReadFile("hung")
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "--the-timeout") || !strings.Contains(err.Error(), "hung") {
			t.Fatalf("a hung read: %v; want ErrTimeout naming the file and --the-timeout", err)
		}
		if d := time.Since(start); d < timeout {
			t.Errorf("given up after %v, before the timeout", d)
		}
		t.Log(err)
	}
	stuck.Wait()
	// Both goroutines are stuck: the next read finds none free.
	_, err := r.ReadFile("fine")
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "the 2 reads") {
		t.Fatalf("a read while 2 are stuck: %v; want ErrTimeout saying all 2 are waiting", err)
	}
	t.Log(err)
	close(release)
	var data []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if data, err = r.ReadFile("fine"); err == nil {
			break
		}
	}
	if err != nil || string(data) != "fine" {
		t.Fatalf("once the filesystem answered: %q %v", data, err)
	}
}
