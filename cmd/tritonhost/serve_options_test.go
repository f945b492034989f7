package main

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
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
