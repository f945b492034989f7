package protocol

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// ErrLogFileNotAllowed refuses a log_file setting on a server that does
// not let clients choose files (gRPC answers PERMISSION_DENIED, HTTP 403).
var ErrLogFileNotAllowed = errors.New("clients may not choose a file on the server's machine here; the operator can allow it with --allow-log-file-setting")

// LogValue is one log setting's value as a frontend decoded it (KindBool,
// KindUint or KindString).
type LogValue = Value

// LogControl reads and changes a server's log settings: log_info,
// log_warning, log_error (bool), log_verbose_level (unsigned), log_format
// ("default" or "ISO8601") and, if allowed, log_file ("" for standard
// error). One LogControl serves every frontend of a server, so they agree
// on the log file. Safe for concurrent use.
type LogControl struct {
	log       *serverlog.Logger
	allowFile bool

	mu   sync.Mutex
	file string   // current log file ("" for standard error)
	out  *os.File // open log file, if any
}

// NewLogControl returns the control of log; allowFile lets clients send the
// log to a file they name.
func NewLogControl(log *serverlog.Logger, allowFile bool) *LogControl {
	return &LogControl{log: log, allowFile: allowFile}
}

var levels = map[string]serverlog.Level{"log_info": serverlog.Info, "log_warning": serverlog.Warning, "log_error": serverlog.Error}

// Apply checks every setting, then applies them all: a request with one
// bad setting changes nothing. Errors are core errors (CodeInvalidArg)
// naming the setting, or wrap ErrLogFileNotAllowed.
func (c *LogControl) Apply(settings map[string]LogValue) error {
	names := make([]string, 0, len(settings))
	for name := range settings {
		names = append(names, name)
	}
	sort.Strings(names)
	bad := func(name, format string, args ...any) error {
		return core.Errorf(core.CodeInvalidArg, "log setting %q %s", name, fmt.Sprintf(format, args...))
	}
	var apply []func() error
	for _, name := range names {
		v := settings[name]
		switch name {
		case "log_info", "log_warning", "log_error":
			if v.Kind != KindBool {
				return bad(name, "must be a bool")
			}
			level := levels[name]
			apply = append(apply, func() error { c.log.SetEnabled(level, v.Bool); return nil })
		case "log_verbose_level":
			n, err := unsigned(v)
			if err != nil || n > 1<<31 {
				return bad(name, "must be an unsigned integer")
			}
			apply = append(apply, func() error { c.log.SetVerbose(int(n)); return nil })
		case "log_format":
			if v.Kind != KindString || (v.String != string(serverlog.FormatDefault) && v.String != string(serverlog.FormatISO8601)) {
				return bad(name, "must be \"default\" or \"ISO8601\"")
			}
			apply = append(apply, func() error { c.log.SetFormat(serverlog.Format(v.String)); return nil })
		case "log_file":
			if v.Kind != KindString {
				return bad(name, "must be a string")
			}
			if !c.allowFile {
				return fmt.Errorf("log setting %q: %w", name, ErrLogFileNotAllowed)
			}
			apply = append(apply, func() error {
				if err := c.setFile(v.String); err != nil {
					return core.Errorf(core.CodeInvalidArg, "log setting %q: %v", name, err)
				}
				return nil
			})
		default:
			return core.Errorf(core.CodeInvalidArg, "unknown log setting %q", name)
		}
	}
	for _, f := range apply {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// LogSettings are the current settings.
type LogSettings struct {
	File         string `json:"log_file"`
	Info         bool   `json:"log_info"`
	Warning      bool   `json:"log_warning"`
	Error        bool   `json:"log_error"`
	VerboseLevel uint32 `json:"log_verbose_level"`
	Format       string `json:"log_format"`
}

// Current returns the settings now.
func (c *LogControl) Current() LogSettings {
	c.mu.Lock()
	file := c.file
	c.mu.Unlock()
	return LogSettings{File: file, Info: c.log.Enabled(serverlog.Info), Warning: c.log.Enabled(serverlog.Warning),
		Error: c.log.Enabled(serverlog.Error), VerboseLevel: uint32(c.log.VerboseLevel()), Format: string(c.log.CurrentFormat())}
}

// UseFile records that the log already goes to f, the file at path, as
// the server opened it for --log-file: the settings report it, and a change
// of log_file closes it.
func (c *LogControl) UseFile(path string, f *os.File) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.file, c.out = path, f
}

func (c *LogControl) setFile(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if path == c.file {
		return nil
	}
	var next *os.File
	if path == "" {
		c.log.SetOutput(os.Stderr)
	} else {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		c.log.SetOutput(f)
		next = f
	}
	if c.out != nil {
		_ = c.out.Close()
	}
	c.file, c.out = path, next
	return nil
}
