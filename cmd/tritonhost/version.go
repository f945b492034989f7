package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tritonhost/tritonhost/server"
)

// The release version and the commit it was built from, stamped at link
// time by the Makefile (and by anything that builds the way it does):
//
//	go build -ldflags "-X main.version=v0.1.0 -X main.commit=<sha>" ./cmd/tritonhost
//
// A plain `go build` leaves them empty; buildVersion and buildCommit then
// fall back to what the go command recorded in the binary.
var (
	version = ""
	commit  = ""
)

// buildVersion is the version `tritonhost version` prints and ServerMetadata
// reports: the stamped one, else the module version the go command derived
// from the checkout (the tag, e.g. v0.1.0, or a pseudo-version with the
// commit when HEAD is not tagged; +dirty for uncommitted changes), else "dev".
func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		if rev := vcsSetting(info, "vcs.revision"); len(rev) >= 12 {
			return "dev-" + rev[:12]
		}
	}
	return "dev"
}

// buildCommit is the commit the binary was built from: the stamped one, else
// the go command's vcs.revision, else "unknown".
func buildCommit() string {
	if commit != "" {
		return commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		if rev := vcsSetting(info, "vcs.revision"); rev != "" {
			return rev
		}
	}
	return "unknown"
}

func vcsSetting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// writeVersion prints one "name value" pair a line: the version first,
// so that `tritonhost version | head -1` is enough for a script.
func writeVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "tritonhost %s\ncommit %s\ngo %s %s/%s\n"+
		"TRITONBACKEND_API_VERSION %d.%d\nTRITONSERVER_API_VERSION %d.%d\n",
		buildVersion(), buildCommit(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		server.BackendAPIMajor, server.BackendAPIMinor, server.ServerAPIMajor, server.ServerAPIMinor)
	return err
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit, the Go version and the backend API versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(cmd.OutOrStdout())
		},
	}
}
