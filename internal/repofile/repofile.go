// Package repofile reads the files of model repositories with bounds. A
// repository is a directory tree the server trusts less than itself: a
// configuration replaced by a named pipe would block a read for ever, one
// linked to /dev/zero would be read until memory runs out, and a network
// mount that stops answering would hold a read, and whatever waits on it,
// for as long as it is gone.
//
// A Reader reads a file only if it is a regular file once symbolic links
// are followed (Kubernetes mounts a ConfigMap as links to the files, so
// links are fine, wherever they lead, as long as they lead to a regular
// file); it refuses one larger than its cap before reading a byte, and
// reads at most the cap plus one byte whatever the file's size says (a
// file in /proc says 0; a file may grow while it is read). Each read runs
// on a goroutine of its own and is given up when it makes no progress for
// the Reader's timeout; such a goroutine is left to return when the
// filesystem answers, and the Reader bounds how many may be running at
// once, so a mount that hangs cannot pile them up: past the bound, a read
// waits for one to finish, for at most the timeout, then fails.
//
// Not API: the server's own bounds, set through core.Options.
package repofile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Defaults of Options.
const (
	// DefaultMaxBytes is Options.MaxBytes unless told otherwise.
	DefaultMaxBytes = 1 << 20
	// DefaultTimeout is Options.Timeout unless told otherwise.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxPending is Options.MaxPending unless told otherwise.
	DefaultMaxPending = 16
)

// ErrNotRegular is matched (errors.Is) by the error that refuses a file
// that is not a regular file: a named pipe, a device, a socket, a
// directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTimeout is matched (errors.Is) by the error of a read given up on
// because the filesystem did not answer in time, and by that of a read
// that found the Reader's goroutines all taken by reads still waiting.
var ErrTimeout = errors.New("timed out")

// TooLargeError refuses a file larger than a read's cap.
type TooLargeError struct {
	Path string
	// Size is the file's size, or -1 when the file said it was within the
	// cap and more came as it was read (a file that grew, one in /proc).
	Size int64
	// Limit is the cap, in bytes.
	Limit int64
	// Setting names the setting that sets the cap ("" when there is none).
	Setting string
}

// Error says which file is larger than what, and the setting that sets it.
func (e *TooLargeError) Error() string {
	var msg string
	if e.Size < 0 {
		msg = fmt.Sprintf("%s holds more than the %d bytes the server reads of it, though its size said less as it was opened", e.Path, e.Limit)
	} else {
		msg = fmt.Sprintf("%s is %d bytes, more than the %d bytes the server reads of it", e.Path, e.Size, e.Limit)
	}
	if e.Setting != "" {
		msg += " (" + e.Setting + ")"
	}
	return msg
}

// Options configure a Reader. Zero values take the defaults.
type Options struct {
	// MaxBytes is the largest file ReadFile reads (default
	// DefaultMaxBytes).
	MaxBytes int64
	// MaxBytesSetting names the setting that sets MaxBytes, for the
	// message that refuses a larger file.
	MaxBytesSetting string
	// Timeout is how long a read may go without progress (opening the
	// file, its status, a block of its bytes) before it is given up
	// (default DefaultTimeout).
	Timeout time.Duration
	// TimeoutSetting names the setting that sets Timeout, for the message
	// of a read given up on.
	TimeoutSetting string
	// MaxPending bounds the reads running at once, those given up on
	// included, which go on until the filesystem answers (default
	// DefaultMaxPending).
	MaxPending int
}

// Reader reads files of model repositories with bounds (see the package
// comment). It is safe for concurrent use.
type Reader struct {
	opts  Options
	slots chan struct{} // one per read running
	// read does one read on a goroutine of the Reader: readBounded, or a
	// test's stand-in.
	read func(path string, limit int64, whole bool, progress func()) ([]byte, error)
}

// New returns a Reader with opts.
func New(opts Options) *Reader {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	return &Reader{opts: opts, slots: make(chan struct{}, opts.MaxPending), read: readBounded}
}

// MaxBytes returns the largest file ReadFile reads.
func (r *Reader) MaxBytes() int64 { return r.opts.MaxBytes }

// ReadFile reads the whole of the regular file at path, refusing one
// larger than Options.MaxBytes (a *TooLargeError), one that is not a
// regular file (ErrNotRegular), and giving up on a read that makes no
// progress for Options.Timeout (ErrTimeout).
func (r *Reader) ReadFile(path string) ([]byte, error) {
	return r.do(path, r.opts.MaxBytes, true, r.opts.MaxBytesSetting)
}

// ReadFileLimit is ReadFile with a cap of limit bytes instead of
// Options.MaxBytes, for a file the caller bounds itself; the refusal names
// no setting.
func (r *Reader) ReadFileLimit(path string, limit int64) ([]byte, error) {
	return r.do(path, limit, true, "")
}

// ReadPrefix reads the first n bytes of the regular file at path, or all
// of it when it is shorter, and never more: a larger file is no error.
func (r *Reader) ReadPrefix(path string, n int64) ([]byte, error) {
	return r.do(path, n, false, "")
}

type result struct {
	data []byte
	err  error
}

// do runs one read on a goroutine and waits for it while it makes
// progress.
func (r *Reader) do(path string, limit int64, whole bool, setting string) ([]byte, error) {
	timer := time.NewTimer(r.opts.Timeout)
	defer timer.Stop()
	select {
	case r.slots <- struct{}{}:
	case <-timer.C:
		return nil, fmt.Errorf("read %s: the %d reads of repository files the server runs at once have all waited more than %v for their filesystem%s: %w",
			path, cap(r.slots), r.opts.Timeout, r.setting(), ErrTimeout)
	}
	done := make(chan result, 1)
	progress := make(chan struct{}, 1)
	go func() {
		defer func() { <-r.slots }()
		data, err := r.read(path, limit, whole, func() {
			select {
			case progress <- struct{}{}:
			default:
			}
		})
		if err != nil {
			var tl *TooLargeError
			if errors.As(err, &tl) {
				tl.Setting = setting
			}
		}
		done <- result{data, err}
	}()
	for {
		select {
		case res := <-done:
			return res.data, res.err
		case <-progress:
			timer.Reset(r.opts.Timeout)
		case <-timer.C:
			return nil, fmt.Errorf("read %s: no answer from its filesystem for %v%s: %w", path, r.opts.Timeout, r.setting(), ErrTimeout)
		}
	}
}

// setting is " (<TimeoutSetting>)", or "" when it has no name.
func (r *Reader) setting() string {
	if r.opts.TimeoutSetting == "" {
		return ""
	}
	return " (" + r.opts.TimeoutSetting + ")"
}

// readBounded reads the regular file at path: with whole, all of it,
// refusing more than limit bytes; otherwise its first limit bytes. It
// calls progress after each step that the filesystem answered.
func readBounded(path string, limit int64, whole bool, progress func()) ([]byte, error) {
	// Stat first, following links: a device is refused before it is
	// opened (opening one may do something: a watchdog arms, a tape
	// rewinds).
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	progress()
	// What the path names may change between the stat and the open: open
	// without blocking (a FIFO opens at once instead of waiting for a
	// writer) and check what was opened.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	if whole && st.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: st.Size(), Limit: limit}
	}
	progress()
	want := limit // the bytes read at most
	if whole {
		want++ // one more says the file holds more than limit
	}
	var buf bytes.Buffer
	buf.Grow(int(min(st.Size(), limit)) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(progressReader{f, progress}, want)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if whole && int64(buf.Len()) > limit {
		return nil, &TooLargeError{Path: path, Size: -1, Limit: limit}
	}
	return buf.Bytes(), nil
}

// progressReader calls progress after every read that returned bytes.
type progressReader struct {
	r        io.Reader
	progress func()
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

// notRegular refuses path, of mode, for not being a regular file.
func notRegular(path string, mode fs.FileMode) error {
	what := "an irregular file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case mode&fs.ModeCharDevice != 0:
		what = "a character device"
	case mode&fs.ModeDevice != 0:
		what = "a block device"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode.IsDir():
		what = "a directory"
	}
	if target, err := os.Readlink(path); err == nil {
		what += " (through a symbolic link to " + target + ")"
	}
	return fmt.Errorf("%s is %s, %w; the server reads only regular files from a model repository", path, what, ErrNotRegular)
}
