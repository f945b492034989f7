package main

import "github.com/spf13/cobra"

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
	root.AddCommand(newServeCommand(), newInferCommand(), newPerfCommand(), newVersionCommand(), newWorkerCommand())
	return root
}
