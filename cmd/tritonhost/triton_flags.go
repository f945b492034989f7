package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/server"
)

// Triton's command line. Every option of Triton's tritonserver (server
// src/command_line_parser.cc; testdata/triton_options.go lists them) is an
// option of serve, with Triton's syntax and meaning: implemented, accepted
// and documented as without effect here (docs/triton-flags.md says why),
// or, for the endpoints this server does not have (SageMaker, Vertex AI),
// refused at start with a message that says so. This file holds the
// options that are aliases of others (--model-store, --strict-model-config)
// and Triton's syntax; package server binds the rest (Config.BindFlags)
// and checks them:
//
//   - a boolean option takes true, on, 1, false, off or 0 in any case,
//     after "=" or as the next argument (--strict-readiness false), as
//     Triton's ParseOption<bool>; alone, it means true (tritonhost's
//     shorthand);
//   - --log-verbose takes true and false as 1 and 0;
//   - repeated options keep Triton's forms: --model-repository (once per
//     repository, a path that may hold commas), --backend-config
//     <backend>,<setting>=<value>, --host-policy <name>,<setting>=<value>,
//     --metrics-config <setting>=<value>, --load-model;
//   - an argument that is not an option is refused as Triton refuses it
//     ("Unexpected argument: ...").

// tritonBoolOptions are Triton's boolean options (Option::ArgBool).
var tritonBoolOptions = []string{
	"log-info", "log-warning", "log-error", "exit-on-error", "strict-readiness", "strict-model-config",
	"model-namespacing", "enable-peer-access", "allow-http", "reuse-http-port", "allow-grpc", "reuse-grpc-port",
	"grpc-use-ssl", "grpc-use-ssl-mutual", "grpc-keepalive-permit-without-calls", "allow-sagemaker", "allow-vertex-ai",
	"allow-metrics", "allow-gpu-metrics", "allow-cpu-metrics", "allow-client-shm",
}

// tritonBool is a boolean flag's value read as Triton reads one.
type tritonBool struct{ pflag.Value }

// parseTritonBool is Triton's ParseOption<bool>.
func parseTritonBool(s string) (bool, error) { return server.ParseTritonBool(s) }

// Set implements pflag.Value.
func (b tritonBool) Set(s string) error {
	v, err := parseTritonBool(s)
	if err != nil {
		return err
	}
	return b.Value.Set(strconv.FormatBool(v))
}

// tritonIntBool is --log-verbose's value: a level, or true (1) or false
// (0), as Triton's ParseIntBoolOption.
type tritonIntBool struct{ pflag.Value }

// Set implements pflag.Value.
func (b tritonIntBool) Set(s string) error {
	switch strings.ToLower(s) {
	case "true":
		s = "1"
	case "false":
		s = "0"
	}
	return b.Value.Set(s)
}

// tritonArgs rewrites a boolean option followed by a boolean value as one
// argument (--allow-http false as --allow-http=false), which pflag takes
// for the option alone followed by an argument. serve takes no
// arguments, so a boolean value after a boolean option is always its
// value.
func tritonArgs(f *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if name, ok := strings.CutPrefix(a, "--"); ok && !strings.Contains(name, "=") && i+1 < len(args) {
			if fl := f.Lookup(name); fl != nil {
				if _, isBool := fl.Value.(tritonBool); isBool {
					if _, err := parseTritonBool(args[i+1]); err == nil {
						out = append(out, a+"="+args[i+1])
						i++
						continue
					}
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// tritonCommandLine makes cmd read its command line with Triton's syntax
// (see above): it parses the flags itself, after tritonArgs, and then runs
// cmd's RunE. Call it once every flag is bound.
func tritonCommandLine(cmd *cobra.Command) {
	f := cmd.Flags()
	for _, name := range tritonBoolOptions {
		if fl := f.Lookup(name); fl != nil {
			fl.Value = tritonBool{fl.Value}
		}
	}
	if fl := f.Lookup("log-verbose"); fl != nil {
		fl.Value = tritonIntBool{fl.Value}
	}
	run := cmd.RunE
	cmd.DisableFlagParsing = true
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := c.Flags().Parse(tritonArgs(c.Flags(), args)); err != nil {
			if errors.Is(err, pflag.ErrHelp) {
				return c.Help()
			}
			return c.FlagErrorFunc()(c, err)
		}
		if help, _ := c.Flags().GetBool("help"); help {
			return c.Help()
		}
		if rest := c.Flags().Args(); len(rest) > 0 {
			return fmt.Errorf("Unexpected argument: %s", rest[0])
		}
		return run(c, nil)
	}
}
