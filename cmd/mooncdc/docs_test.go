package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// The documentation's generated parts and its links. The configuration and
// metrics references are generated from the definitions (one source of
// truth); `make docs` (go test -run TestDocs -update) rewrites them, and
// these tests fail when a page is stale or a link leads nowhere.

var updateDocs = flag.Bool("update", false, "rewrite the generated parts of docs/")

const docsRoot = "../.."

// generated is one generated block of a page, between its markers.
type generated struct {
	page, name string
	render     func() string
}

var generatedDocs = []generated{
	{"docs/configuration.md", "config reference", renderConfigReference},
	{"docs/metrics.md", "metrics reference", renderMetricsReference},
}

// flagOf returns the run flag of a config key ("" when it has none).
func flagOf(key string) string {
	for _, f := range runFlags {
		if f.key == key {
			return "`--" + f.flag + "`"
		}
	}
	if key == "worker_group" {
		return "`--group` (`run`, `check` and `status` with `--config DIR`)"
	}
	return ""
}

func renderConfigReference() string {
	var b strings.Builder
	b.WriteString("| key | environment | flag | default | what it does |\n|---|---|---|---|---|\n")
	for _, k := range config.ConfigReference() {
		env := "`" + k.Env + "`"
		if k.EnvForm != "" && k.EnvForm != "comma-separated" {
			env += " (" + k.EnvForm + ")"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Path, env, flagOf(k.Path), k.Default, cell(k.Doc))
	}
	return b.String()
}

func renderMetricsReference() string {
	var b strings.Builder
	b.WriteString("| metric | type | meaning |\n|---|---|---|\n")
	for _, m := range connector.MetricDefinitions() {
		name := m.Name
		if len(m.Labels) > 0 {
			name += "{" + strings.Join(m.Labels, ",") + "}"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, m.Kind, cell(m.Help))
	}
	return b.String()
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func markers(name string) (begin, end string) {
	return "<!-- BEGIN GENERATED: " + name + " (make docs) -->\n", "<!-- END GENERATED: " + name + " -->"
}

// TestDocsGeneratedPartsAreCurrent fails when a generated table of docs/
// differs from what the definitions give now; with -update it rewrites it.
func TestDocsGeneratedPartsAreCurrent(t *testing.T) {
	for _, g := range generatedDocs {
		path := filepath.Join(docsRoot, g.page)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		begin, end := markers(g.name)
		i, j := strings.Index(text, begin), strings.Index(text, end)
		if i < 0 || j < i {
			t.Fatalf("%s: no %q … %q markers", g.page, strings.TrimSpace(begin), end)
		}
		want := g.render()
		if got := text[i+len(begin) : j]; got != want {
			if *updateDocs {
				text = text[:i+len(begin)] + want + text[j:]
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("%s: the %s is stale; run `make docs` to regenerate it", g.page, g.name)
		}
	}
}

// markdownPages are the pages whose links are checked.
func markdownPages(t *testing.T) []string {
	pages := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(docsRoot, d)
		pages = append(pages, rel)
	}
	return pages
}

var (
	linkRE    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// anchors returns the heading anchors of a Markdown page as GitHub makes
// them: lower-cased, punctuation other than '-' and '_' dropped, spaces
// turned into '-', a repeated one suffixed -1, -2, …
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if fence || m == nil {
			continue
		}
		a := slug(m[2])
		if n := count[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		count[a]++
	}
	return out
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestSlugIsGitHubs(t *testing.T) {
	for in, want := range map[string]string{
		"Differences from Debezium 3.6.1":                  "differences-from-debezium-361",
		"High availability: standby instances":             "high-availability-standby-instances",
		"Postgres failover (PostgreSQL 17 failover slots)": "postgres-failover-postgresql-17-failover-slots",
		"`format.envelope` and the key":                    "formatenvelope-and-the-key",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	a := anchors("# A\n## A\n```\n# not a heading\n```\n## B\n")
	if !a["a"] || !a["a-1"] || !a["b"] || a["not-a-heading"] || len(a) != 3 {
		t.Errorf("anchors: %v", a)
	}
}

// TestDocsLinksResolve fails on a relative link of README.md or docs/ to a
// file that does not exist or to an anchor its page does not have.
func TestDocsLinksResolve(t *testing.T) {
	pages := markdownPages(t)
	texts := map[string]string{}
	read := func(rel string) (string, bool) {
		if s, ok := texts[rel]; ok {
			return s, true
		}
		data, err := os.ReadFile(filepath.Join(docsRoot, rel))
		if err != nil {
			return "", false
		}
		texts[rel] = string(data)
		return texts[rel], true
	}
	checked := 0
	for _, page := range pages {
		text, ok := read(page)
		if !ok {
			t.Fatalf("cannot read %s", page)
		}
		fence := false
		for n, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Clean(filepath.Join(filepath.Dir(page), file))
				}
				if _, err := os.Stat(filepath.Join(docsRoot, dest)); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", page, n+1, target, dest)
					continue
				}
				if anchor == "" {
					continue
				}
				destText, ok := read(dest)
				if !ok || !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link %q: an anchor into %s, which is no Markdown page", page, n+1, target, dest)
					continue
				}
				if !anchors(destText)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", page, n+1, target, dest, anchor)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d relative links found in %v: is the link pattern still right?", checked, pages)
	}
	// Every page of docs/ is linked from the README, so none is an orphan.
	readme, _ := read("README.md")
	for _, p := range pages[1:] {
		name := filepath.ToSlash(p)
		if !strings.Contains(readme, "("+name) {
			t.Errorf("%s is not linked from README.md", name)
		}
	}
}
