package composetest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mooncdc/mooncdc/connector/config"
)

// k8sObject is the part of a Kubernetes object these tests read.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Replicas *int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		MaxUnavailable *int `yaml:"maxUnavailable"`
		MinAvailable   *int `yaml:"minAvailable"`
		Template       struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					Args  []string `yaml:"args"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
					LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
					VolumeMounts   []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string `yaml:"name"`
					ConfigMap *struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
					Secret *struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

func loadManifests(t *testing.T) map[string]k8sObject {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "deploy", "kubernetes", "mooncdc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]k8sObject{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var o k8sObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("deploy/kubernetes/mooncdc.yaml: %v", err)
		}
		out[o.Kind] = o
	}
	return out
}

// TestKubernetesManifests: the Deployment runs two replicas whose probes
// reach /readyz and /healthz on the port metrics.listen opens, mounts the
// config where its args read it and the Secret where the config's
// password_file points, gives a stop longer than shutdown_timeout, and a
// PodDisruptionBudget covers its pods; the config validates.
func TestKubernetesManifests(t *testing.T) {
	objs := loadManifests(t)
	dep, cm, sec, pdb := objs["Deployment"], objs["ConfigMap"], objs["Secret"], objs["PodDisruptionBudget"]
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("Deployment replicas %v, want 2 (one active, one standby)", dep.Spec.Replicas)
	}
	pod := dep.Spec.Template
	for k, v := range dep.Spec.Selector.MatchLabels {
		if pod.Metadata.Labels[k] != v {
			t.Errorf("the Deployment's selector %s=%s does not select its pods", k, v)
		}
	}
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if pod.Metadata.Labels[k] != v {
			t.Errorf("the PodDisruptionBudget's selector %s=%s does not select the pods", k, v)
		}
	}
	if len(pdb.Spec.Selector.MatchLabels) == 0 || (pdb.Spec.MaxUnavailable == nil || *pdb.Spec.MaxUnavailable != 1) && pdb.Spec.MinAvailable == nil {
		t.Errorf("PodDisruptionBudget %+v: want a selector and maxUnavailable 1", pdb.Spec)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]

	// The config: where the args read it, from the ConfigMap.
	var configPath string
	for i, a := range c.Args {
		if a == "--config" && i+1 < len(c.Args) {
			configPath = c.Args[i+1]
		}
	}
	if len(c.Args) == 0 || c.Args[0] != "run" || configPath == "" {
		t.Fatalf("args %q, want run --config <file>", c.Args)
	}
	mountOf := func(volume string) string {
		for _, m := range c.VolumeMounts {
			if m.Name == volume {
				return m.MountPath
			}
		}
		return ""
	}
	var configDir, secretDir string
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.ConfigMap != nil && v.ConfigMap.Name == cm.Metadata.Name:
			configDir = mountOf(v.Name)
		case v.Secret != nil && v.Secret.SecretName == sec.Metadata.Name:
			secretDir = mountOf(v.Name)
		}
	}
	key := strings.TrimPrefix(configPath, configDir+"/")
	content, ok := cm.Data[key]
	if configDir == "" || !ok {
		t.Fatalf("--config %s is not a key of ConfigMap %q mounted at %q", configPath, cm.Metadata.Name, configDir)
	}

	// The secrets: each password file the config names is a key of the
	// Secret, mounted there. Validate reads them, so the test writes the
	// Secret's keys into a directory of its own and points the config at it.
	tmp := t.TempDir()
	for k, v := range sec.StringData {
		if err := os.WriteFile(filepath.Join(tmp, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if secretDir == "" {
		t.Fatalf("Secret %q is not mounted", sec.Metadata.Name)
	}
	local := strings.ReplaceAll(content, secretDir+"/", tmp+"/")
	path := filepath.Join(tmp, "mooncdc.yaml")
	if err := os.WriteFile(path, []byte(local), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadConfig(path, nil)
	if err != nil {
		t.Fatalf("the ConfigMap's config: %v", err)
	}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the ConfigMap's config does not validate: %v", err)
	}
	if !cfg.HA.Enabled {
		t.Errorf("ha.enabled is off: of two replicas, the second would fence the first (exactly-once) or spin on the slot, instead of waiting as a standby")
	}
	if pf := cfg.Postgres.PasswordFile; pf == "" || !strings.HasPrefix(pf, tmp+"/") {
		t.Errorf("postgres.password_file %q is not in the mounted Secret (%s)", pf, secretDir)
	}

	// The probes: /readyz and /healthz on the port metrics.listen opens.
	_, port, err := net.SplitHostPort(cfg.Metrics.Listen)
	if err != nil {
		t.Fatalf("metrics.listen %q: %v", cfg.Metrics.Listen, err)
	}
	if host, _, _ := net.SplitHostPort(cfg.Metrics.Listen); host != "0.0.0.0" && host != "" {
		t.Errorf("metrics.listen %q: the kubelet probes the pod's address; listen on 0.0.0.0", cfg.Metrics.Listen)
	}
	portOf := func(name string) string {
		for _, p := range c.Ports {
			if p.Name == name {
				return strconv.Itoa(p.ContainerPort)
			}
		}
		return name
	}
	for _, pr := range []struct {
		probe *k8sProbe
		path  string
	}{{c.ReadinessProbe, "/readyz"}, {c.LivenessProbe, "/healthz"}} {
		if pr.probe == nil || pr.probe.HTTPGet.Path != pr.path || portOf(pr.probe.HTTPGet.Port) != port {
			t.Errorf("probe %+v, want %s on port %s (metrics.listen)", pr.probe, pr.path, port)
		}
	}
	if grace := time.Duration(pod.Spec.TerminationGracePeriodSeconds) * time.Second; grace <= cfg.ShutdownTimeout {
		t.Errorf("terminationGracePeriodSeconds %s is not longer than shutdown_timeout %s: Kubernetes would kill a clean stop", grace, cfg.ShutdownTimeout)
	}
}
