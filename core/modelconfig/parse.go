package modelconfig

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// textOptions decode config.pbtxt the way Triton's C++ TextFormat parser
// does: unknown fields are errors, not silently dropped.
//
// Go's prototext accepts every construct common in Triton configs that the
// C++ parser accepts: `True`/`False`/`t`/`f`/`1`/`0` for booleans, list
// syntax for scalars (`dims: [ -1 ]`) and messages (`input [ {..}, {..} ]`),
// maps written as entry lists or single entries, optional colons before
// messages, `,` or `;` between fields, '#' comments, single-quoted and
// adjacent string literals, hex integers, `inf`/`nan` and an `f` suffix on
// floats. The C++ parser's few extras (form feed or vertical tab as
// whitespace, `-nan`) are not supported; they do not occur in practice.
var textOptions = prototext.UnmarshalOptions{DiscardUnknown: false}

// Parse decodes config.pbtxt text (protobuf text format) into a ModelConfig.
// The error names the line, column and, for unknown fields, the field.
func Parse(text []byte) (*configpb.ModelConfig, error) {
	cfg := &configpb.ModelConfig{}
	if err := textOptions.Unmarshal(text, cfg); err != nil {
		return nil, &configError{msg: "parse model config: " + err.Error(), cause: err}
	}
	return cfg, nil
}

// ReadFile reads and parses a config.pbtxt; errors name the file. It
// reads the whole file, however large and whatever it is, so it is for
// files the caller trusts (tests, tools): the server reads the
// configurations of its repositories with bounds (core's
// RepositoryFileLimits) and parses them with Parse.
func ReadFile(path string) (*configpb.ModelConfig, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model config: %w", err)
	}
	cfg, err := Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}
