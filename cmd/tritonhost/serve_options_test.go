package main

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/isolation"
)

func TestOutputBufferCacheFlag(t *testing.T) {
	cmd := newServeCommand()
	flag := cmd.Flags().Lookup("output-buffer-cache-byte-size")
	if flag == nil || flag.DefValue != strconv.Itoa(abi.DefaultOutputCacheBytes) {
		t.Fatalf("--output-buffer-cache-byte-size: %+v, want default %d", flag, abi.DefaultOutputCacheBytes)
	}
	cmd.SetArgs([]string{"--model-repository", t.TempDir(), "--output-buffer-cache-byte-size", "-1"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--output-buffer-cache-byte-size must not be negative") {
		t.Errorf("a negative size: %v, want it refused", err)
	}
}

func TestModelFilesMaxSizeMustBePositive(t *testing.T) {
	cmd := newServeCommand()
	if flag := cmd.Flags().Lookup("model-files-max-size"); flag == nil || flag.DefValue != strconv.Itoa(core.DefaultMaxLoadFilesBytes) {
		t.Fatalf("--model-files-max-size: %+v, want default %d", flag, core.DefaultMaxLoadFilesBytes)
	}
	cmd.SetArgs([]string{"--model-repository", t.TempDir(), "--model-files-max-size", "0"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--model-files-max-size must be positive") {
		t.Errorf("--model-files-max-size 0: %v, want it refused", err)
	}
}

// TestBoundedIntFlags: each bounded integer flag of serve has its
// default, and a value past either bound is refused by name.
func TestBoundedIntFlags(t *testing.T) {
	for _, tc := range []struct {
		flag    string
		def     int
		refused []int
		message string
	}{
		{"backend-pipeline-depth", isolation.DefaultPipelineDepth, []int{0, -1, isolation.MaxPipelineDepth + 1}, "--backend-pipeline-depth must be 1 to"},
		{"backend-thread-extra-procs", abi.DefaultExtraProcs, []int{-1, abi.MaxExtraProcs + 1}, "--backend-thread-extra-procs must be 0 to"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			if flag := newServeCommand().Flags().Lookup(tc.flag); flag == nil || flag.DefValue != strconv.Itoa(tc.def) {
				t.Fatalf("--%s: %+v, want default %d", tc.flag, flag, tc.def)
			}
			for _, n := range tc.refused {
				cmd := newServeCommand()
				cmd.SetArgs([]string{"--model-repository", t.TempDir(), "--" + tc.flag, strconv.Itoa(n)})
				cmd.SetOut(io.Discard)
				cmd.SetErr(io.Discard)
				if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.message) {
					t.Errorf("--%s %d: %v, want it refused", tc.flag, n, err)
				}
			}
		})
	}
}
