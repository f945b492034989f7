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

func TestBackendPipelineDepthIsBounded(t *testing.T) {
	if flag := newServeCommand().Flags().Lookup("backend-pipeline-depth"); flag == nil || flag.DefValue != strconv.Itoa(isolation.DefaultPipelineDepth) {
		t.Fatalf("--backend-pipeline-depth: %+v, want default %d", flag, isolation.DefaultPipelineDepth)
	}
	for _, depth := range []int{0, -1, isolation.MaxPipelineDepth + 1} {
		cmd := newServeCommand()
		cmd.SetArgs([]string{"--model-repository", t.TempDir(), "--backend-pipeline-depth", strconv.Itoa(depth)})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--backend-pipeline-depth must be 1 to") {
			t.Errorf("--backend-pipeline-depth %d: %v, want it refused", depth, err)
		}
	}
}

func TestBackendThreadExtraProcsIsBounded(t *testing.T) {
	if flag := newServeCommand().Flags().Lookup("backend-thread-extra-procs"); flag == nil || flag.DefValue != strconv.Itoa(abi.DefaultExtraProcs) {
		t.Fatalf("--backend-thread-extra-procs: %+v, want default %d", flag, abi.DefaultExtraProcs)
	}
	for _, n := range []int{-1, abi.MaxExtraProcs + 1} {
		cmd := newServeCommand()
		cmd.SetArgs([]string{"--model-repository", t.TempDir(), "--backend-thread-extra-procs", strconv.Itoa(n)})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--backend-thread-extra-procs must be 0 to") {
			t.Errorf("--backend-thread-extra-procs %d: %v, want it refused", n, err)
		}
	}
}
