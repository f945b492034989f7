package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/modelconfig"
	"github.com/tritonhost/tritonhost/internal/repofile"
)

// Defaults of RepositoryFileLimits.
const (
	// DefaultMaxConfigBytes is RepositoryFileLimits.MaxConfigBytes unless
	// told otherwise: 1 MiB. Triton's configurations are a few KiB (a
	// large ensemble, a few tens), so this leaves room many times over;
	// parsing one costs up to some 80 times its size (text of empty
	// instance groups, each a message of its own), so at 1 MiB a
	// configuration costs at most some 80 MiB while it loads, and the
	// loads running at once (Options.LoadConcurrency) a few hundred.
	DefaultMaxConfigBytes = 1 << 20
	// DefaultRepositoryReadTimeout is RepositoryFileLimits.ReadTimeout
	// unless told otherwise: 10 s. A local disk answers in microseconds;
	// a network mount that is slow but working answers within a second or
	// two, and the timeout counts from the last answer (a large file
	// arriving steadily is never cut); a mount that says nothing for 10 s
	// is taken as hung, which fails the load, rather than holding the
	// load, the poll or the start-up with it.
	DefaultRepositoryReadTimeout = 10 * time.Second
)

// RepositoryFileLimits bound the server's reads of the files of its model
// repositories: each model's config.pbtxt, wherever it is read (a load,
// the ensembles' dependencies, a location a repository agent gave), and
// the initial_state data files of sequence models. A file is read only if
// it is a regular file once symbolic links are followed: a named pipe, a
// device (a link to /dev/zero), a socket is refused at once, as the
// model's load error. See package internal/repofile.
type RepositoryFileLimits struct {
	// MaxConfigBytes bounds a config.pbtxt, in bytes (default
	// DefaultMaxConfigBytes): a larger one is refused before it is read.
	// (An initial_state data file is bounded by Options.MaxTensorBytes.)
	MaxConfigBytes int64
	// MaxConfigBytesSetting names the setting that sets MaxConfigBytes,
	// for the refusal (default "RepositoryFileLimits.MaxConfigBytes").
	MaxConfigBytesSetting string
	// ReadTimeout bounds how long a read of a repository file may go
	// without an answer from its filesystem (default
	// DefaultRepositoryReadTimeout); then it is given up on and the
	// model fails to load. Reads given up on are left to return when the
	// filesystem answers; at most 16 run at once, and past that a read
	// waits for one to return, for at most ReadTimeout.
	ReadTimeout time.Duration
	// ReadTimeoutSetting names the setting that sets ReadTimeout, for the
	// message of a read given up on (default
	// "RepositoryFileLimits.ReadTimeout").
	ReadTimeoutSetting string
}

func (l *RepositoryFileLimits) setDefaults() {
	if l.MaxConfigBytes <= 0 {
		l.MaxConfigBytes = DefaultMaxConfigBytes
	}
	if l.MaxConfigBytesSetting == "" {
		l.MaxConfigBytesSetting = "RepositoryFileLimits.MaxConfigBytes"
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultRepositoryReadTimeout
	}
	if l.ReadTimeoutSetting == "" {
		l.ReadTimeoutSetting = "RepositoryFileLimits.ReadTimeout"
	}
}

// reader is the Reader of these limits.
func (l RepositoryFileLimits) reader() *repofile.Reader {
	return repofile.New(repofile.Options{MaxBytes: l.MaxConfigBytes, MaxBytesSetting: l.MaxConfigBytesSetting,
		Timeout: l.ReadTimeout, TimeoutSetting: l.ReadTimeoutSetting})
}

// readConfigFile reads and parses the config.pbtxt at path, through the
// server's bounded reader; errors name the file.
func (s *Server) readConfigFile(path string) (*configpb.ModelConfig, error) {
	text, err := s.files.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model config: %w", err)
	}
	cfg, err := modelconfig.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// readErrorCode is the code of an error reading a repository file: a
// filesystem that did not answer is CodeUnavailable (it may answer
// later), anything else CodeInvalidArg (the file is wrong).
func readErrorCode(err error) Code {
	if errors.Is(err, repofile.ErrTimeout) {
		return CodeUnavailable
	}
	return CodeInvalidArg
}

// retryLoad reports whether a model whose load failed with err may load
// at the next poll although its files did not change: its filesystem did
// not answer, or the server held as many models as it may.
func retryLoad(err error) bool {
	return errors.Is(err, repofile.ErrTimeout) || errors.Is(err, errTooManyModels)
}
