package core

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tritonhost/tritonhost/internal/procdir"
)

// DefaultLoadFilesDirectory is LoadFilesLimits.Directory unless told
// otherwise: tritonhost-uploads-<uid> under the system's temporary
// directory ($TMPDIR, else /tmp), one per user. As it sits where every
// user may write, the server makes it mode 0700 and refuses to start with
// one that is a symbolic link, another user's, or open to others.
func DefaultLoadFilesDirectory() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("tritonhost-uploads-%d", os.Geteuid()))
}

// openUploads makes the server's own directory for the files of load
// requests, and removes those that servers now gone left behind.
func (s *Server) openUploads() error {
	parent, private := s.opts.LoadFiles.Directory, false
	if parent == "" {
		parent, private = DefaultLoadFilesDirectory(), true
	}
	d, removed, err := procdir.Open(parent, private)
	if d == nil {
		return fmt.Errorf("core: the directory for the files of load requests: %w", err)
	}
	if err != nil {
		s.log.Warnf("%v", err)
	}
	for _, dir := range removed {
		s.log.Infof("removed %s, the files of load requests of a server that is gone", dir)
	}
	s.uploads = d
	return nil
}

// closeUploads removes the server's directory for the files of load
// requests (those of models still loaded with it).
func (s *Server) closeUploads() {
	if s.uploads == nil {
		return
	}
	if err := s.uploads.Close(); err != nil {
		s.log.Errorf("remove the directory of the files of load requests: %v", err)
	}
}
