package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// userDocs are the documents a user reads, relative to the repository
// root: the README, the front door, and docs/*.md, where the flag
// reference, the bounds tables and the guides live.
func userDocs(t *testing.T) []string {
	t.Helper()
	root := testenv.RepoRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	files := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, rel)
	}
	return files
}

// readmeDefaultRE finds a flag and the default the docs state for it:
// "`--flag` [default]" in the tables of bounds, "`--flag` (default x)" in
// the text.
var readmeDefaultRE = regexp.MustCompile("`--([a-z0-9-]+)` (?:\\[([^\\]]+)\\]|\\(default ([^)]+)\\))")

// readmeValue turns a default as the docs write it ("256 MiB", "5000
// ms", "16384 bytes/s", "1024", "false") into the flag's own spelling.
func readmeValue(s string) string {
	for unit, shift := range map[string]int{" GiB": 30, " MiB": 20, " KiB": 10} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			if v, err := strconv.ParseInt(n, 10, 64); err == nil {
				return strconv.FormatInt(v<<shift, 10)
			}
		}
	}
	s = strings.TrimSuffix(s, " bytes/s")
	return strings.TrimSuffix(s, " ms")
}

// TestREADMEStatesTheDefaults: every default the README and docs/*.md
// state for a serve flag is the flag's own, and the per-request bounds
// they state (docs/limits.md) are the ones both frontends enforce
// (protocol.MaxRequestTensors and the others).
func TestREADMEStatesTheDefaults(t *testing.T) {
	root := testenv.RepoRoot(t)
	var texts []string
	for _, name := range userDocs(t) {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		// Each file on its own, so that no match spans two of them.
		texts = append(texts, strings.Join(strings.Fields(string(data)), " "))
	}
	docs := strings.Join(texts, "\n")
	flags := newServeCommand().Flags()
	found := 0
	for _, m := range readmeDefaultRE.FindAllStringSubmatch(docs, -1) {
		name, stated := m[1], m[2]+m[3]
		f := flags.Lookup(name)
		if f == nil {
			continue // a flag of another command, or one written without a default
		}
		found++
		want := readmeValue(stated)
		if a, err1 := strconv.ParseFloat(want, 64); err1 == nil {
			if b, err2 := strconv.ParseFloat(f.DefValue, 64); err2 == nil && a == b {
				continue
			}
		}
		if want != f.DefValue {
			t.Errorf("the README or docs/ says --%s defaults to %s; the flag's default is %s", name, stated, f.DefValue)
		}
	}
	if found < 25 {
		t.Errorf("found the defaults of %d serve flags in the README and docs/; the pattern no longer matches how they state them", found)
	}
	bounds := fmt.Sprintf("a request may have at most %d inputs and %d requested outputs, %d parameters of its own and %d on each tensor, and %d dimensions a tensor",
		protocol.MaxRequestTensors, protocol.MaxRequestTensors, protocol.MaxRequestParameters, protocol.MaxRequestParameters, protocol.MaxTensorDims)
	load := fmt.Sprintf("a load request at most %d parameters", protocol.MaxLoadParameters)
	for _, want := range []string{bounds, load} {
		if !strings.Contains(docs, want) {
			t.Errorf("neither the README nor docs/ says %q", want)
		}
	}
}

var (
	mdFenceRE   = regexp.MustCompile("(?ms)^```.*?^```")
	mdCodeRE    = regexp.MustCompile("`[^`\n]*`")
	mdLinkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeadingRE = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	mdSlugDrop  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// mdAnchors returns the anchors GitHub makes for a document's headings:
// lower case, punctuation dropped, spaces as hyphens, a repeated one
// numbered.
func mdAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, m := range mdHeadingRE.FindAllStringSubmatch(mdFenceRE.ReplaceAllString(text, ""), -1) {
		slug := strings.ReplaceAll(mdSlugDrop.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// TestREADMEAndDocsLinksResolve: every relative link in the README and
// docs/*.md names a file of the repository, and every #anchor a heading
// of the document it points into, so that text moved between them leaves
// no reader at a dead end.
func TestREADMEAndDocsLinksResolve(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, name := range userDocs(t) {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		text := mdCodeRE.ReplaceAllString(mdFenceRE.ReplaceAllString(string(data), ""), "")
		for _, m := range mdLinkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := name
			if file != "" {
				path = filepath.Join(filepath.Dir(name), file)
			}
			linked, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				if info, serr := os.Stat(filepath.Join(root, path)); serr == nil && info.IsDir() && anchor == "" {
					continue
				}
				t.Errorf("%s links to %s: %v", name, target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !mdAnchors(string(linked))[anchor] {
				t.Errorf("%s links to %s: %s has no heading with that anchor", name, target, path)
			}
		}
	}
}
