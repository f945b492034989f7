package main

import (
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time (-X main.version=...); otherwise it comes from
// the build information.
var version = ""

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return "dev"
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "tritonhost",
		Short: "Serve Triton-style C backends over Triton's gRPC protocol",
		Long: `tritonhost loads backends written against Triton's backend API
(libtriton_<name>.so) and serves the models of a Triton model repository
over Triton's gRPC protocol (inference.GRPCInferenceService).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCommand(), newInferCommand(), newPerfCommand(), newVersionCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the backend API versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.Printf("tritonhost %s\nTRITONBACKEND_API_VERSION %d.%d\nTRITONSERVER_API_VERSION %d.%d\n",
				buildVersion(), backendAPIMajor, backendAPIMinor, serverAPIMajor, serverAPIMinor)
			return nil
		},
	}
}
