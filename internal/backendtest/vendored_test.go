package backendtest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Every library under third_party/ lists its files with their SHA-256 in
// SHA256SUMS (sha256sum's format); third_party/README.md says where they
// came from. A vendored file that was edited, added or removed without a
// refresh shows here.
func TestVendoredFilesMatchTheirChecksums(t *testing.T) {
	thirdParty := filepath.Join(testenv.RepoRoot(t), "third_party")
	sums, err := filepath.Glob(filepath.Join(thirdParty, "*", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) == 0 {
		t.Fatal("no third_party/*/SHA256SUMS")
	}
	for _, sumsFile := range sums {
		dir := filepath.Dir(sumsFile)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			listed := readChecksums(t, sumsFile)
			for name, want := range listed {
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
				if err != nil {
					t.Errorf("%s lists %s: %v", sumsFile, name, err)
					continue
				}
				sum := sha256.Sum256(data)
				if got := hex.EncodeToString(sum[:]); got != want {
					t.Errorf("%s: SHA-256 %s, SHA256SUMS records %s", name, got, want)
				}
			}
			present := filesUnder(t, dir)
			for _, name := range present {
				if _, ok := listed[name]; !ok && name != "SHA256SUMS" {
					t.Errorf("%s is not listed in %s", name, sumsFile)
				}
			}
			t.Logf("%d files checked", len(listed))
		})
	}
}

// readChecksums reads lines "<sha256>  <path>" into path -> hex sum.
func readChecksums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		sum, name, ok := strings.Cut(scanner.Text(), "  ")
		if !ok || len(sum) != 64 || name == "" {
			t.Fatalf("%s:%d: not '<sha256>  <file>': %q", path, line, scanner.Text())
		}
		sums[name] = sum
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

// filesUnder lists the regular files below dir, slash-separated and
// relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}
