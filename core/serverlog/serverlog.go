// Package serverlog writes the server's log in Triton's line format:
//
//	I1122 22:11:00.123456 4242 loader.go:88] loaded model "square_int32" version 1
//
// One letter for the level (I, W, E, and I for verbose lines), the date and
// time, the process id, the source file and line, then the message. Backends'
// TRITONSERVER_LogMessage calls land here too, with their own file and line.
package serverlog

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Level is a log level, numbered as TRITONSERVER_LogLevel.
type Level int

// Log levels.
const (
	Info    Level = 0
	Warning Level = 1
	Error   Level = 2
	Verbose Level = 3
)

// Logger writes log lines to one writer. It is safe for concurrent use; each
// line is written with a single Write call.
type Logger struct {
	mu      sync.Mutex
	w       io.Writer
	pid     string
	verbose atomic.Int32
	off     [3]atomic.Bool // Info, Warning, Error switched off
	now     func() time.Time
	iso8601 atomic.Bool
	watchMu sync.Mutex
	watch   []func()
}

// New returns a logger writing to w with info, warning and error on and
// verbose logging off.
func New(w io.Writer) *Logger {
	return &Logger{w: w, pid: strconv.Itoa(os.Getpid()), now: time.Now}
}

// Discard returns a logger that writes nothing.
func Discard() *Logger {
	l := New(io.Discard)
	for i := range l.off {
		l.off[i].Store(true)
	}
	return l
}

// SetVerbose sets the verbose level: 0 turns verbose lines off, n > 0 shows
// verbose lines of level n and below (Triton's --log-verbose).
func (l *Logger) SetVerbose(n int) {
	l.verbose.Store(int32(n))
	l.changed()
}

// Format is a log line format, as Triton's --log-format.
type Format string

// Log formats.
const (
	FormatDefault Format = "default"
	FormatISO8601 Format = "ISO8601"
)

// SetFormat selects the line format.
func (l *Logger) SetFormat(f Format) { l.iso8601.Store(f == FormatISO8601) }

// CurrentFormat returns the line format.
func (l *Logger) CurrentFormat() Format {
	if l.iso8601.Load() {
		return FormatISO8601
	}
	return FormatDefault
}

// SetOutput replaces the writer lines go to.
func (l *Logger) SetOutput(w io.Writer) {
	l.mu.Lock()
	l.w = w
	l.mu.Unlock()
}

// OnChange registers f to run after every change of the enabled levels, so a
// mirror of them (the C side of the backend API) can follow.
func (l *Logger) OnChange(f func()) {
	l.watchMu.Lock()
	l.watch = append(l.watch, f)
	l.watchMu.Unlock()
}

func (l *Logger) changed() {
	l.watchMu.Lock()
	fs := append([]func(){}, l.watch...)
	l.watchMu.Unlock()
	for _, f := range fs {
		f()
	}
}

// VerboseLevel returns the verbose level.
func (l *Logger) VerboseLevel() int { return int(l.verbose.Load()) }

// SetEnabled switches Info, Warning or Error lines on or off.
func (l *Logger) SetEnabled(level Level, on bool) {
	if level >= Info && level <= Error {
		l.off[level].Store(!on)
		l.changed()
	}
}

// Enabled reports whether lines of the level would be written (for Verbose,
// whether verbose level 1 is on).
func (l *Logger) Enabled(level Level) bool {
	switch level {
	case Info, Warning, Error:
		return !l.off[level].Load()
	case Verbose:
		return l.verbose.Load() >= 1
	}
	return false
}

// Log writes msg at level with the given source location. Verbose messages
// are written when the verbose level is at least 1.
func (l *Logger) Log(level Level, file string, line int, msg string) {
	if !l.Enabled(level) {
		return
	}
	letter := byte('I')
	switch level {
	case Warning:
		letter = 'W'
	case Error:
		letter = 'E'
	}
	t := l.now()
	buf := make([]byte, 0, 64+len(file)+len(msg))
	if l.iso8601.Load() {
		buf = t.UTC().AppendFormat(buf, "2006-01-02T15:04:05Z")
		buf = append(buf, ' ', letter, ' ')
	} else {
		buf = append(buf, letter)
		buf = t.AppendFormat(buf, "0102 15:04:05.000000")
		buf = append(buf, ' ')
	}
	buf = append(buf, l.pid...)
	buf = append(buf, ' ')
	buf = append(buf, filepath.Base(file)...)
	buf = append(buf, ':')
	buf = strconv.AppendInt(buf, int64(line), 10)
	buf = append(buf, "] "...)
	buf = append(buf, msg...)
	if len(msg) == 0 || msg[len(msg)-1] != '\n' {
		buf = append(buf, '\n')
	}
	l.mu.Lock()
	_, _ = l.w.Write(buf)
	l.mu.Unlock()
}

// WriteLine writes a line another logger formatted (a worker process's,
// relayed), as it is, with a newline added when it lacks one.
func (l *Logger) WriteLine(line []byte) {
	buf := line
	if len(line) == 0 || line[len(line)-1] != '\n' {
		buf = append(append(make([]byte, 0, len(line)+1), line...), '\n')
	}
	l.mu.Lock()
	_, _ = l.w.Write(buf)
	l.mu.Unlock()
}

func (l *Logger) logf(level Level, format string, args []any) {
	if !l.Enabled(level) {
		return
	}
	_, file, line, _ := runtime.Caller(2)
	l.Log(level, file, line, fmt.Sprintf(format, args...))
}

// Infof logs at Info level.
func (l *Logger) Infof(format string, args ...any) { l.logf(Info, format, args) }

// Warnf logs at Warning level.
func (l *Logger) Warnf(format string, args ...any) { l.logf(Warning, format, args) }

// Errorf logs at Error level.
func (l *Logger) Errorf(format string, args ...any) { l.logf(Error, format, args) }

// Verbosef logs when the verbose level is at least n.
func (l *Logger) Verbosef(n int, format string, args ...any) {
	if int(l.verbose.Load()) < n {
		return
	}
	_, file, line, _ := runtime.Caller(1)
	l.Log(Verbose, file, line, fmt.Sprintf(format, args...))
}
