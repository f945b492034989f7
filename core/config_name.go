package core

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// ConfigDirName is the directory of a model's alternative configurations,
// configs/<name>.pbtxt, which Options.ModelConfigName picks among (Triton's
// "Custom Model Configuration").
const ConfigDirName = "configs"

// configFileExt is the extension of an alternative configuration.
const configFileExt = ".pbtxt"

// readDirConfig reads the configuration of the model in dir, as Triton's
// GetModelConfigFullPath picks it: configs/<Options.ModelConfigName>.pbtxt
// when a name is set and the model has that file, else config.pbtxt. It
// returns the path read; an error wraps fs.ErrNotExist when neither exists.
func (s *Server) readDirConfig(dir string) (*configpb.ModelConfig, string, error) {
	if name := s.opts.ModelConfigName; name != "" {
		path := filepath.Join(dir, ConfigDirName, name+configFileExt)
		cfg, err := s.readConfigFile(path)
		if !errors.Is(err, fs.ErrNotExist) {
			return cfg, path, err
		}
	}
	path := filepath.Join(dir, ConfigFileName)
	cfg, err := s.readConfigFile(path)
	return cfg, path, err
}
