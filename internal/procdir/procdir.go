// Package procdir gives a server a directory of its own under a parent
// that servers share, and removes those of servers that are gone.
//
// Each directory, <parent>/server-<pid>-<random>/, has a lock file beside
// it, <parent>/server-<pid>-<random>.lock, which its server holds locked
// (flock) for as long as the directory is open. The kernel lets go of the
// lock when the process ends, however it ends (kill -9 included), so a
// lock that can be taken belongs to a server that is gone, and Open
// removes its directory: what a killed server left behind goes at the
// next start. A directory whose lock is held is never touched. Only names
// of that form are looked at: the parent may be a directory that holds
// other things.
//
// Not API: core keeps the files that load requests send under it.
package procdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
)

// Dir is a directory of the server's own, locked while it is open.
type Dir struct {
	// Path is the directory.
	Path     string
	lockPath string
	lock     *os.File
}

// names matches what Open creates: a directory, its lock file, and the
// lock file as it is made (".server-....tmp") before it is linked into
// place.
var names = regexp.MustCompile(`^\.?(server-[0-9]+-[0-9a-f]+)(\.lock|\.tmp)?$`)

// Open creates parent if it is not there (mode 0700), checks it (see
// below), makes a new directory of the server's own under it and locks it,
// then removes the directories of servers that are gone (see the package
// comment), returning their paths.
//
// With private set, parent is a directory in a place others may write to
// (the default under the system's temporary directory): it must be a
// directory itself, not a symbolic link, owned by this user and closed to
// everyone else (no group or other permission bits), so that no other
// user can read the files or plant their own. Otherwise parent is the
// operator's choice, and symbolic links are followed.
func Open(parent string, private bool) (*Dir, []string, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, nil, err
	}
	if err := checkParent(parent, private); err != nil {
		return nil, nil, err
	}
	d, err := create(parent)
	if err != nil {
		return nil, nil, err
	}
	removed, err := Sweep(parent)
	if err != nil {
		return d, removed, fmt.Errorf("remove what servers that are gone left in %s: %w", parent, err)
	}
	return d, removed, nil
}

// checkParent refuses a parent that is not a directory, and with private
// one that is a symbolic link or that others could use.
func checkParent(parent string, private bool) error {
	stat := os.Stat
	if private {
		stat = os.Lstat
	}
	st, err := stat(parent)
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link, not a directory of this user's own", parent)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", parent)
	}
	if !private {
		return nil
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to user %d, not to this one (%d)", parent, sys.Uid, os.Geteuid())
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is open to other users (mode %v); it must be 0700", parent, st.Mode().Perm())
	}
	return nil
}

// create makes and locks a new directory under parent: the lock file
// first, locked under a temporary name and then linked into place, so that
// a lock file under its final name is always locked while its server
// runs; then the directory.
func create(parent string) (*Dir, error) {
	for range 16 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		name := fmt.Sprintf("server-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
		tmp := filepath.Join(parent, "."+name+".tmp")
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create a lock file in %s: %w", parent, err)
		}
		// Another server's Sweep may take and remove the temporary file
		// before it is locked: the lock or the link then fails, and a new
		// name is tried.
		lockPath := filepath.Join(parent, name+".lock")
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			continue
		}
		err = os.Link(tmp, lockPath)
		os.Remove(tmp)
		if err != nil {
			f.Close()
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) {
				continue
			}
			return nil, fmt.Errorf("create a lock file in %s: %w", parent, err)
		}
		path := filepath.Join(parent, name)
		if err := os.Mkdir(path, 0o700); err != nil {
			os.Remove(lockPath)
			f.Close()
			return nil, fmt.Errorf("create a directory in %s: %w", parent, err)
		}
		return &Dir{Path: path, lockPath: lockPath, lock: f}, nil
	}
	return nil, fmt.Errorf("create a directory in %s: no free name found", parent)
}

// Close removes the directory and what it holds, then its lock file, and
// lets go of the lock.
func (d *Dir) Close() error {
	err := os.RemoveAll(d.Path)
	if rerr := os.Remove(d.lockPath); err == nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = rerr
	}
	if cerr := d.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

// Sweep removes, under parent, the directories of servers that are gone:
// those whose lock file it can lock, and those with no lock file; and the
// lock files of those (see the package comment). It returns the
// directories it removed.
func Sweep(parent string) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		m := names.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		name, suffix := m[1], m[2]
		path := filepath.Join(parent, e.Name())
		dir := filepath.Join(parent, name)
		switch {
		case suffix == "" && e.Name() == name && e.IsDir():
			// A directory with no lock file beside it: its server was
			// ended while it removed it. Its lock file is made before it,
			// so a live server's directory always has one.
			if _, err := os.Lstat(dir + ".lock"); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, dir)
		case suffix != "" && e.Type().IsRegular():
			gone, err := removeIfUnlocked(path, func() error {
				if suffix == ".lock" {
					return os.RemoveAll(dir)
				}
				return nil
			})
			if err != nil {
				errs = append(errs, err)
			}
			if gone && suffix == ".lock" {
				removed = append(removed, dir)
			}
		}
	}
	return removed, errors.Join(errs...)
}

// removeIfUnlocked locks the lock file at path, if no one holds it, runs
// also and removes the file; gone says it did.
func removeIfUnlocked(path string, also func() error) (gone bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // another server removed it
		}
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil // its server is alive
		}
		return false, fmt.Errorf("lock %s: %w", path, err)
	}
	// Still the file at path? Another server may have removed it since
	// it was opened.
	if st, err := os.Lstat(path); err != nil || !sameFile(f, st) {
		return false, nil
	}
	if err := also(); err != nil {
		return false, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// sameFile reports whether f is the file st describes.
func sameFile(f *os.File, st fs.FileInfo) bool {
	fst, err := f.Stat()
	return err == nil && os.SameFile(fst, st)
}
