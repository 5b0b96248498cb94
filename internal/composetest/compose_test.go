package composetest

import (
	"encoding/json"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mooncdc/mooncdc/connector/config"
)

// root is the repository root, relative to this package's directory (the
// working directory of go test).
const root = "../.."

// wantServices are the services docker-compose.yml must have and the host
// ports each publishes. The README's Docker Compose paragraph documents the
// same ports (TestComposePortsDocumented).
var wantServices = []struct {
	name  string
	ports []string // published host ports
}{
	{"postgres", []string{"5432"}},
	{"kafka", []string{"29092"}},
	{"schema-registry", []string{"8081"}},
	{"mooncdc", []string{"9187"}},
	{"kafka-ui", []string{"8080"}},
}

type composeFile struct {
	Name     string             `yaml:"name"`
	Services map[string]service `yaml:"services"`
}

type service struct {
	Image       string       `yaml:"image"`
	Build       yaml.Node    `yaml:"build"`       // "dir" or {context, dockerfile, args}
	Command     yaml.Node    `yaml:"command"`     // string or list
	Environment yaml.Node    `yaml:"environment"` // mapping or KEY=VALUE list
	Ports       []yaml.Node  `yaml:"ports"`       // short strings or long mappings
	Volumes     []yaml.Node  `yaml:"volumes"`
	DependsOn   yaml.Node    `yaml:"depends_on"` // list or mapping
	Healthcheck *healthcheck `yaml:"healthcheck"`
}

type healthcheck struct {
	Test    yaml.Node `yaml:"test"`
	Disable bool      `yaml:"disable"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if len(c.Services) == 0 {
		t.Fatal("docker-compose.yml: no services")
	}
	return c
}

// strList decodes a string-or-list node (command, healthcheck test) into a
// list; a string becomes its whitespace-separated words.
func strList(t *testing.T, n yaml.Node) []string {
	t.Helper()
	switch n.Kind {
	case 0:
		return nil
	case yaml.ScalarNode:
		return strings.Fields(n.Value)
	case yaml.SequenceNode:
		var out []string
		if err := n.Decode(&out); err != nil {
			t.Fatalf("line %d: %v", n.Line, err)
		}
		return out
	}
	t.Fatalf("line %d: want a string or a list", n.Line)
	return nil
}

// environ returns a service's environment as KEY=VALUE entries, in file
// order, whichever of the two Compose forms it uses.
func environ(t *testing.T, s service) []string {
	t.Helper()
	n := s.Environment
	switch n.Kind {
	case 0:
		return nil
	case yaml.SequenceNode:
		return strList(t, n)
	case yaml.MappingNode:
		var out []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value+"="+n.Content[i+1].Value)
		}
		return out
	}
	t.Fatalf("environment (line %d): want a mapping or a list", n.Line)
	return nil
}

// dependsOn maps each dependency to its condition (the list form means
// service_started).
func dependsOn(t *testing.T, s service) map[string]string {
	t.Helper()
	out := map[string]string{}
	n := s.DependsOn
	switch n.Kind {
	case 0:
	case yaml.SequenceNode:
		for _, d := range strList(t, n) {
			out[d] = "service_started"
		}
	case yaml.MappingNode:
		var m map[string]struct {
			Condition string `yaml:"condition"`
		}
		if err := n.Decode(&m); err != nil {
			t.Fatalf("depends_on (line %d): %v", n.Line, err)
		}
		for d, v := range m {
			out[d] = cmpOr(v.Condition, "service_started")
		}
	default:
		t.Fatalf("depends_on (line %d): want a list or a mapping", n.Line)
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// published returns the host ports a service publishes, and for each the
// container port it maps to.
func published(t *testing.T, s service) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range s.Ports {
		switch n.Kind {
		case yaml.ScalarNode: // [IP:]HOST:CONTAINER[/proto], or CONTAINER alone (random host port)
			spec, _, _ := strings.Cut(n.Value, "/")
			parts := strings.Split(spec, ":")
			if len(parts) < 2 {
				t.Errorf("ports (line %d): %q publishes on a random host port; write HOST:CONTAINER", n.Line, n.Value)
				continue
			}
			out[parts[len(parts)-2]] = parts[len(parts)-1]
		case yaml.MappingNode:
			var p struct {
				Target    string `yaml:"target"`
				Published string `yaml:"published"`
			}
			if err := n.Decode(&p); err != nil {
				t.Fatalf("ports (line %d): %v", n.Line, err)
			}
			out[p.Published] = p.Target
		default:
			t.Fatalf("ports (line %d): want a string or a mapping", n.Line)
		}
	}
	return out
}

// buildSpec returns a service's build context and Dockerfile ("" if the
// service has no build).
func buildSpec(t *testing.T, s service) (context, dockerfile string) {
	t.Helper()
	n := s.Build
	switch n.Kind {
	case 0:
		return "", ""
	case yaml.ScalarNode:
		return n.Value, "Dockerfile"
	case yaml.MappingNode:
		var b struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		}
		if err := n.Decode(&b); err != nil {
			t.Fatalf("build (line %d): %v", n.Line, err)
		}
		return cmpOr(b.Context, "."), cmpOr(b.Dockerfile, "Dockerfile")
	}
	t.Fatalf("build (line %d): want a string or a mapping", n.Line)
	return "", ""
}

// imagePinned reports whether an image reference names a fixed version: a
// digest, or a tag other than latest.
func imagePinned(ref string) bool {
	if _, digest, ok := strings.Cut(ref, "@"); ok {
		return strings.HasPrefix(digest, "sha256:")
	}
	name := ref[strings.LastIndex(ref, "/")+1:] // a registry host may have a :port
	_, tag, ok := strings.Cut(name, ":")
	return ok && tag != "" && tag != "latest"
}

func TestImagePinned(t *testing.T) {
	for ref, want := range map[string]bool{
		"postgres:16.6": true, "postgres": false, "postgres:latest": false,
		"gcr.io/distroless/static-debian12:nonroot": true, "localhost:5000/x": false,
		"localhost:5000/x:1.2": true, "x@sha256:abc": true,
	} {
		if got := imagePinned(ref); got != want {
			t.Errorf("imagePinned(%q) = %v, want %v", ref, got, want)
		}
	}
}

func TestComposeServices(t *testing.T) {
	c := loadCompose(t)
	for _, w := range wantServices {
		s, ok := c.Services[w.name]
		if !ok {
			t.Errorf("service %s: missing from docker-compose.yml; add it back (or update wantServices and the README's Docker Compose paragraph)", w.name)
			continue
		}
		got := slices.Sorted(maps.Keys(published(t, s)))
		if !slices.Equal(got, slices.Sorted(slices.Values(w.ports))) {
			t.Errorf("service %s: publishes host ports %v, the documented ones are %v; publish those (or update wantServices and the README)", w.name, got, w.ports)
		}
	}
	for name := range c.Services {
		if !slices.ContainsFunc(wantServices, func(w struct {
			name  string
			ports []string
		}) bool {
			return w.name == name
		}) {
			t.Errorf("service %s: not expected; add it to wantServices in internal/composetest/compose_test.go and document its ports in the README", name)
		}
	}
}

func TestComposeImagesPinned(t *testing.T) {
	c := loadCompose(t)
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		s := c.Services[name]
		ctx, _ := buildSpec(t, s)
		switch {
		case s.Image == "" && ctx == "":
			t.Errorf("service %s: neither image nor build; set image: <name>:<version> or build: .", name)
		case s.Image != "" && ctx == "" && !imagePinned(s.Image):
			t.Errorf("service %s: image %q is not pinned; use an explicit version tag (not latest) or a digest", name, s.Image)
		}
	}
	if ctx, _ := buildSpec(t, c.Services["mooncdc"]); ctx == "" {
		t.Errorf("service mooncdc: must be built from the repository's Dockerfile (build: .), not pulled")
	}
}

// A service that others wait for with condition: service_healthy must have
// a healthcheck, or `docker compose up` waits forever.
func TestComposeHealthchecks(t *testing.T) {
	c := loadCompose(t)
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		for dep, cond := range dependsOn(t, c.Services[name]) {
			d, ok := c.Services[dep]
			if !ok {
				t.Errorf("service %s: depends_on %s, which is not a service", name, dep)
				continue
			}
			if cond != "service_healthy" {
				continue
			}
			if d.Healthcheck == nil || d.Healthcheck.Disable {
				t.Errorf("service %s: %s waits for it with condition service_healthy but it has no healthcheck; add one (healthcheck: test: [...])", dep, name)
				continue
			}
			if test := strList(t, d.Healthcheck.Test); len(test) == 0 || test[0] == "NONE" {
				t.Errorf("service %s: healthcheck.test is empty or NONE; %s waits for it with condition service_healthy", dep, name)
			}
		}
	}
}

func TestComposePostgres(t *testing.T) {
	c := loadCompose(t)
	s := c.Services["postgres"]
	if !strings.HasPrefix(s.Image, "postgres:16") {
		t.Errorf("service postgres: image %q; the README documents Postgres 16 (postgres:16.x)", s.Image)
	}
	cmd := strList(t, s.Command)
	if i := slices.Index(cmd, "wal_level=logical"); i < 1 || cmd[i-1] != "-c" {
		t.Errorf("service postgres: command %q does not set wal_level=logical; mooncdc needs logical decoding: command: [\"postgres\", \"-c\", \"wal_level=logical\"]", cmd)
	}
	// Bind-mounted files exist (the seed schema in particular).
	seeded := false
	for _, v := range s.Volumes {
		if v.Kind != yaml.ScalarNode {
			continue
		}
		src, rest, _ := strings.Cut(v.Value, ":")
		target, _, _ := strings.Cut(rest, ":")
		if strings.HasPrefix(src, ".") {
			if _, err := os.Stat(filepath.Join(root, src)); err != nil {
				t.Errorf("service postgres: volume %q: %v", v.Value, err)
			}
		}
		if strings.HasPrefix(target, "/docker-entrypoint-initdb.d/") {
			seeded = true
		}
	}
	if !seeded {
		t.Errorf("service postgres: no seed script mounted in /docker-entrypoint-initdb.d/; mount ./testdata/compose/init.sql there")
	}
}

// mooncdc's environment in docker-compose.yml, over the Dockerfile's ENV,
// must load and validate as a configuration, as `mooncdc run` does it.
func TestComposeMooncdcConfig(t *testing.T) {
	c := loadCompose(t)
	s := c.Services["mooncdc"]
	env := environ(t, s)
	for _, kv := range env {
		if strings.Contains(kv, "${") {
			t.Errorf("service mooncdc: environment %s uses variable interpolation, which this test cannot check; write the value", kv)
		}
	}
	_, dockerfile := buildSpec(t, s)
	ctx, _ := buildSpec(t, s)
	if ctx != "" {
		df := parseDockerfile(t, filepath.Join(root, ctx, dockerfile))
		for _, in := range df.final().instrs {
			if in.cmd == "ENV" {
				env = append(env, envPairs(in.args)...) // after compose's: the first entry wins
			}
		}
	}
	cfg, err := config.LoadConfig("", env)
	if err != nil {
		t.Fatalf("service mooncdc: environment does not load: %v", err)
	}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("service mooncdc: environment is not a valid configuration (fix the MOONCDC_* variables in docker-compose.yml):\n%v", err)
	}
	if cmd := strList(t, s.Command); len(cmd) > 0 && cmd[0] != "run" {
		t.Errorf("service mooncdc: command %q; the entrypoint is the mooncdc binary, so the command should be [\"run\"]", cmd)
	}

	// Every address in the config names a compose service mooncdc waits for.
	deps := dependsOn(t, s)
	needService := func(key, host string) {
		if _, ok := c.Services[host]; !ok {
			t.Errorf("service mooncdc: %s names host %q, which is not a compose service", key, host)
		} else if deps[host] != "service_healthy" {
			t.Errorf("service mooncdc: %s uses %s; add depends_on: %s: condition: service_healthy", key, host, host)
		}
	}
	if len(cfg.Kafka.Brokers) == 0 {
		t.Errorf("service mooncdc: MOONCDC_KAFKA_BROKERS is empty (the embedded Kafka); set it to kafka:9092")
	}
	for _, b := range cfg.Kafka.Brokers {
		host, _, _ := net.SplitHostPort(b)
		needService("kafka.brokers", host)
	}
	if u, err := url.Parse(cfg.Postgres.URL); err != nil {
		t.Errorf("service mooncdc: postgres.url: %v", err)
	} else {
		needService("postgres.url", u.Hostname())
	}
	if reg := cfg.Format.SchemaRegistry.URL; reg != "" {
		u, _ := url.Parse(reg) // Validate parsed it
		needService("format.schema_registry.url", u.Hostname())
	}

	// The metrics port must be reachable through the published port.
	host, port, err := net.SplitHostPort(cfg.Metrics.Listen)
	if err != nil {
		t.Fatalf("service mooncdc: metrics.listen %q: %v", cfg.Metrics.Listen, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		t.Errorf("service mooncdc: metrics.listen %q is loopback, unreachable through the published port; set MOONCDC_METRICS_LISTEN=0.0.0.0:%s", cfg.Metrics.Listen, port)
	}
	if !slices.Contains(slices.Collect(maps.Values(published(t, s))), port) {
		t.Errorf("service mooncdc: metrics.listen port %s is not the container port of a published port; publish \"%s:%s\"", port, port, port)
	}
}

// envPairs splits an ENV instruction's arguments (KEY=VALUE ...; the legacy
// "KEY VALUE" form is one pair) into KEY=VALUE entries.
func envPairs(args string) []string {
	if k, v, ok := strings.Cut(args, " "); ok && !strings.Contains(k, "=") {
		return []string{k + "=" + strings.TrimSpace(v)}
	}
	var out []string
	for _, f := range strings.Fields(args) { // quoted values with spaces are not supported (nor used)
		k, v, _ := strings.Cut(f, "=")
		out = append(out, k+"="+strings.Trim(v, `"`))
	}
	return out
}

// TestComposePortsDocumented checks that the README's Docker Compose
// paragraph names every published port.
func TestComposePortsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const lead = "**Docker Compose.**"
	text := string(data)
	i := strings.Index(text, lead)
	if i < 0 {
		t.Fatalf("README.md: no %q paragraph; add one describing docker-compose.yml", lead)
	}
	para, _, _ := strings.Cut(text[i:], "\n\n")
	for _, w := range wantServices {
		for _, p := range w.ports {
			if !regexp.MustCompile(`\b` + p + `\b`).MatchString(para) {
				t.Errorf("README.md: the Docker Compose paragraph does not mention port %s (service %s)", p, w.name)
			}
		}
	}
	for _, target := range []string{"make up", "make down"} {
		if !strings.Contains(para, target) {
			t.Errorf("README.md: the Docker Compose paragraph does not mention %q", target)
		}
	}
}

// ---- Dockerfile ----

type instr struct {
	cmd  string // upper case
	args string
	line int
}

type stage struct {
	name, image string
	instrs      []instr
}

type dockerfile struct {
	path   string
	args   map[string]string // ARGs before the first FROM, with defaults
	stages []stage
}

func (d dockerfile) final() stage {
	if len(d.stages) == 0 {
		return stage{}
	}
	return d.stages[len(d.stages)-1]
}

// parseDockerfile reads the instructions, joining continuation lines and
// dropping comments; it is enough for this repository's Dockerfile.
func parseDockerfile(t *testing.T, file string) dockerfile {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (docker-compose.yml's mooncdc build names it)", err)
	}
	d := dockerfile{path: file, args: map[string]string{}}
	var cur strings.Builder
	start := 0
	flush := func() {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return
		}
		cmd, args, _ := strings.Cut(text, " ")
		in := instr{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: start}
		switch {
		case in.cmd == "FROM":
			f := strings.Fields(in.args)
			f = slices.DeleteFunc(f, func(s string) bool { return strings.HasPrefix(s, "--") })
			st := stage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			d.stages = append(d.stages, st)
		case len(d.stages) == 0:
			if in.cmd == "ARG" {
				k, v, _ := strings.Cut(in.args, "=")
				d.args[k] = v
			}
		default:
			s := &d.stages[len(d.stages)-1]
			s.instrs = append(s.instrs, in)
		}
	}
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if more, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(trimmed)
		flush()
	}
	flush()
	return d
}

var argRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

func TestDockerfile(t *testing.T) {
	c := loadCompose(t)
	ctx, name := buildSpec(t, c.Services["mooncdc"])
	if ctx == "" {
		t.Skip("service mooncdc has no build (TestComposeImagesPinned fails)")
	}
	d := parseDockerfile(t, filepath.Join(root, ctx, name))
	rel := path.Join(ctx, name)

	if len(d.stages) < 2 {
		t.Fatalf("%s: %d stage(s); use a multi-stage build: FROM golang:... AS build, then a minimal runtime FROM", rel, len(d.stages))
	}
	stageNames := map[string]bool{}
	for _, st := range d.stages {
		image := argRef.ReplaceAllStringFunc(st.image, func(m string) string {
			return d.args[argRef.FindStringSubmatch(m)[1]]
		})
		if !stageNames[image] && image != "scratch" && !imagePinned(image) {
			t.Errorf("%s: FROM %s (%s) is not pinned; use a version tag or digest", rel, st.image, image)
		}
		stageNames[st.name] = true
	}

	// The go build: static, of ./cmd/mooncdc, to an output path.
	var buildOut string
	for _, st := range d.stages[:len(d.stages)-1] {
		cgoEnv := false
		for _, in := range st.instrs {
			if in.cmd == "ENV" && slices.Contains(envPairs(in.args), "CGO_ENABLED=0") {
				cgoEnv = true
			}
			if in.cmd != "RUN" || !strings.Contains(in.args, "go build") {
				continue
			}
			if !cgoEnv && !strings.Contains(in.args, "CGO_ENABLED=0") {
				t.Errorf("%s:%d: go build without CGO_ENABLED=0; the runtime image has no libc: CGO_ENABLED=0 go build ...", rel, in.line)
			}
			if !strings.Contains(in.args, "./cmd/mooncdc") {
				t.Errorf("%s:%d: go build does not build ./cmd/mooncdc", rel, in.line)
			}
			if m := regexp.MustCompile(`-o\s+(\S+)`).FindStringSubmatch(in.args); m != nil {
				buildOut = m[1]
			}
		}
	}
	if buildOut == "" {
		t.Fatalf("%s: no RUN ... go build -o <path> ./cmd/mooncdc in a build stage", rel)
	}

	final := d.final()
	var user, binary string
	var entrypoint []string
	for _, in := range final.instrs {
		switch in.cmd {
		case "USER":
			user = in.args
		case "RUN":
			t.Errorf("%s:%d: RUN in the runtime stage; it needs a shell, which the runtime image should not need: do the work in the build stage", rel, in.line)
		case "COPY":
			f := strings.Fields(in.args)
			if slices.ContainsFunc(f, func(s string) bool { return strings.HasPrefix(s, "--from=") }) &&
				len(f) >= 3 && f[len(f)-2] == buildOut {
				binary = f[len(f)-1]
				if strings.HasSuffix(binary, "/") {
					binary += path.Base(buildOut)
				}
			}
		case "ENTRYPOINT":
			entrypoint = nil
			if err := json.Unmarshal([]byte(in.args), &entrypoint); err != nil {
				t.Errorf("%s:%d: ENTRYPOINT %s is not the exec form; shell form needs /bin/sh: ENTRYPOINT [\"/usr/local/bin/mooncdc\"]", rel, in.line, in.args)
			}
		}
	}
	if user == "" {
		t.Errorf("%s: the runtime stage has no USER; end with a non-root user, e.g. USER 65532:65532", rel)
	} else if u, _, _ := strings.Cut(user, ":"); u == "root" || u == "0" {
		t.Errorf("%s: USER %s is root; use a non-root user, e.g. USER 65532:65532", rel, user)
	}
	if binary == "" {
		t.Errorf("%s: the runtime stage does not COPY --from=<build stage> %s", rel, buildOut)
	}
	switch {
	case len(entrypoint) == 0:
		t.Errorf("%s: no ENTRYPOINT; make it the binary: ENTRYPOINT [%q]", rel, binary)
	case path.Base(entrypoint[0]) != "mooncdc" || (binary != "" && entrypoint[0] != binary):
		t.Errorf("%s: ENTRYPOINT %q; make it the mooncdc binary copied from the build stage: ENTRYPOINT [%q]", rel, entrypoint, binary)
	}
}

func TestEnvPairs(t *testing.T) {
	for in, want := range map[string][]string{
		"A=1 B=2": {"A=1", "B=2"},
		"A 1 2":   {"A=1 2"},
		`A="/d"`:  {"A=/d"},
	} {
		if got := envPairs(in); !slices.Equal(got, want) {
			t.Errorf("envPairs(%q) = %q, want %q", in, got, want)
		}
	}
}
