package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

func TestExampleClientsPass(t *testing.T) {
	srv := startServer(t, "")
	root := testenv.RepoRoot(t)
	for _, tc := range []struct {
		client string
		want   []string
	}{
		{"repeat_client", []string{"enqueued request 0 to stream...", `raw_output_contents: "\x04\x00\x00\x00"`, "PASS: repeat_int32"}},
		{"square_client", []string{"enqueued request 3 to stream...", `id: "3"`, "PASS: square_int32"}},
	} {
		t.Run(tc.client, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), tc.client)
			build := exec.Command("go", "build", "-o", bin, "./examples/clients/"+tc.client)
			build.Dir = root
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			out, err := exec.Command(bin, "-u", srv.Addr).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.client, err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("%s output lacks %q:\n%s", tc.client, w, out)
				}
			}
		})
	}
}
