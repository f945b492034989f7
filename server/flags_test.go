package server

import (
	"testing"

	"github.com/spf13/pflag"
)

// flagConfig returns the configuration that the serve flags args give,
// over DefaultConfig with an empty model repository of the test's.
func flagConfig(t *testing.T, args ...string) Config {
	t.Helper()
	c := DefaultConfig()
	c.Models.Repositories = []string{t.TempDir()}
	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.BindFlags(f)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	return c
}
