package procdir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenRemovesWhatServersThatAreGoneLeft: Open makes a directory of its
// own; a later Open removes the directories whose lock no one holds, and
// those with no lock file, and keeps those of open Dirs and anything not
// named as its own.
func TestOpenRemovesWhatServersThatAreGoneLeft(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "uploads")
	live, _, err := Open(parent, true)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := os.WriteFile(filepath.Join(live.Path, "model.bin"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	mkdir := func(name string) string {
		p := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(p, "model-1", "1"), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	touch := func(name string) string {
		p := filepath.Join(parent, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A server killed while it ran: its directory and an unlocked lock.
	killed := mkdir("server-123-00ff")
	killedLock := touch("server-123-00ff.lock")
	// One killed as it removed its directory: the lock file went first.
	halfGone := mkdir("server-124-0aaa")
	// One killed as it made its lock file.
	tmp := touch(".server-125-0bbb.tmp")
	// One killed after it removed its directory.
	lockOnly := touch("server-126-0ccc.lock")
	// What is not the server's own stays.
	others := []string{mkdir("server-abc"), mkdir("models"), touch("notes.lock"), touch("server-127-0ddd.txt")}

	second, removed, err := Open(parent, true)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	slices.Sort(removed)
	if want := []string{killed, halfGone, filepath.Join(parent, "server-126-0ccc")}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, p := range []string{killed, killedLock, halfGone, tmp, lockOnly} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	for _, p := range append(others, live.Path, live.lockPath, filepath.Join(live.Path, "model.bin"), second.Path) {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed (%v)", p, err)
		}
	}
	if _, err := Sweep(parent); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.Path); err != nil {
		t.Errorf("a sweep removed the directory of an open Dir: %v", err)
	}

	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{live.Path, live.lockPath} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there after Close (%v)", p, err)
		}
	}
}

// TestOpenChecksAPrivateParent: a parent in a shared place must be this
// user's own directory, closed to others, and not a link.
func TestOpenChecksAPrivateParent(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(base, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		parent  string
		private bool
		want    string // "" for success
	}{
		{filepath.Join(base, "new"), true, ""},
		{private, true, ""},
		{open, true, "open to other users"},
		{open, false, ""},
		{link, true, "is a symbolic link"},
		{link, false, ""},
		{file, false, "not a directory"},
	}
	for _, tt := range tests {
		d, _, err := Open(tt.parent, tt.private)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Open(%s, %v): %v", tt.parent, tt.private, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Open(%s, %v): %v, want an error saying %q", tt.parent, tt.private, err, tt.want)
		}
		if d != nil {
			d.Close()
		}
	}
	if st, err := os.Stat(filepath.Join(base, "new")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("a new parent: %v %v, want mode 0700", st, err)
	}
}
