package main

import (
	"errors"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/druidiceberg/sidecar/internal/memory"
	"github.com/druidiceberg/sidecar/metrics"
	"github.com/druidiceberg/sidecar/splits"
	"github.com/druidiceberg/sidecar/token"
)

// k8sObject is the part of a Kubernetes manifest the test reads; each kind
// fills its own fields of spec.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		// Deployment
		Replicas *int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGracePeriodSeconds *int `yaml:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Ports   []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					Env []struct {
						Name string `yaml:"name"`
					} `yaml:"env"`
					Resources struct {
						Requests map[string]string `yaml:"requests"`
						Limits   map[string]string `yaml:"limits"`
					} `yaml:"resources"`
					ReadinessProbe k8sProbe `yaml:"readinessProbe"`
					LivenessProbe  k8sProbe `yaml:"livenessProbe"`
					VolumeMounts   []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
						ReadOnly  bool   `yaml:"readOnly"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name   string `yaml:"name"`
					Secret *struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
		// Service (Selector above is a map there: see selectorMap)
		Ports []struct {
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
		// PodDisruptionBudget
		MaxUnavailable *int `yaml:"maxUnavailable"`
		MinAvailable   *int `yaml:"minAvailable"`
		// HorizontalPodAutoscaler
		ScaleTargetRef struct {
			Kind string `yaml:"kind"`
			Name string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicas *int `yaml:"minReplicas"`
		MaxReplicas int  `yaml:"maxReplicas"`
		Metrics     []struct {
			Type string `yaml:"type"`
			Pods struct {
				Metric struct {
					Name string `yaml:"name"`
				} `yaml:"metric"`
				Target struct {
					Type         string `yaml:"type"`
					AverageValue string `yaml:"averageValue"`
				} `yaml:"target"`
			} `yaml:"pods"`
		} `yaml:"metrics"`
	} `yaml:"spec"`
	// raw is the document, for what differs between kinds.
	raw map[string]any
}

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

// selectorMap is a Service's spec.selector.
func (o k8sObject) selectorMap() map[string]string {
	out := map[string]string{}
	spec, _ := o.raw["spec"].(map[string]any)
	sel, _ := spec["selector"].(map[string]any)
	for k, v := range sel {
		out[k], _ = v.(string)
	}
	return out
}

// TestKubernetesManifests holds docker/kubernetes.yaml to the sidecar: its
// arguments are valid `sidecar serve` flags; the Deployment runs several
// replicas, probes /readyz and /healthz on its health listener, gives
// SIGTERM a grace just above --shutdown-grace, and mounts the token key
// Secret where --token-key-file reads it; the Service selects the pods and
// is what --public-url names; the PodDisruptionBudget keeps all but one;
// the autoscaler scales the Deployment on the active streams metric.
func TestKubernetesManifests(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot, "docker", "kubernetes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs := map[string]k8sObject{}
	dec := yaml.NewDecoder(f)
	for {
		var node yaml.Node
		if err := dec.Decode(&node); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("docker/kubernetes.yaml: %v", err)
		}
		var o k8sObject
		if err := node.Decode(&o); err != nil {
			t.Fatalf("docker/kubernetes.yaml: %v", err)
		}
		if err := node.Decode(&o.raw); err != nil {
			t.Fatal(err)
		}
		if _, dup := objs[o.Kind]; dup || o.Metadata.Name == "" {
			t.Fatalf("a second %s, or one without a name", o.Kind)
		}
		objs[o.Kind] = o
	}
	for _, kind := range []string{"Secret", "Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"} {
		if _, ok := objs[kind]; !ok {
			t.Fatalf("docker/kubernetes.yaml has no %s", kind)
		}
	}
	dep, svc, pdb, hpa, secret := objs["Deployment"], objs["Service"], objs["PodDisruptionBudget"], objs["HorizontalPodAutoscaler"], objs["Secret"]

	pod := dep.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want the sidecar's", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if !slices.Equal(c.Command, []string{"/sidecar", "serve"}) {
		t.Fatalf("command %q, want the image's /sidecar serve", c.Command)
	}
	cfg, err := parseServe(c.Args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("the Deployment's args are not valid sidecar serve flags: %v", err)
	}
	replicas := 1
	if dep.Spec.Replicas != nil {
		replicas = *dep.Spec.Replicas
	}
	if replicas < 2 {
		t.Errorf("%d replicas, want several behind the Service", replicas)
	}
	for k, v := range dep.Spec.Selector.MatchLabels {
		if pod.Metadata.Labels[k] != v {
			t.Errorf("the Deployment selects %s=%s, which its pods do not carry", k, v)
		}
	}

	// Probes and ports: the probes go to the health listener, which
	// answers while the main one is at its connection cap.
	named := map[string]string{} // port number -> name
	for _, p := range c.Ports {
		named[strconv.Itoa(p.ContainerPort)] = p.Name
	}
	_, port, _ := strings.Cut(cfg.Addr, ":")
	_, healthPort, _ := strings.Cut(cfg.HealthAddr, ":")
	portName, healthName := named[port], named[healthPort]
	if len(c.Ports) != 2 || portName == "" || healthName == "" {
		t.Fatalf("container ports %+v, the sidecar listens on %s and its probes on %q (--health-addr)", c.Ports, cfg.Addr, cfg.HealthAddr)
	}
	for probe, want := range map[*k8sProbe]string{&c.ReadinessProbe: "/readyz", &c.LivenessProbe: "/healthz"} {
		if probe.HTTPGet.Path != want || probe.HTTPGet.Port != healthName {
			t.Errorf("a probe gets %s on %s, want %s on %s", probe.HTTPGet.Path, probe.HTTPGet.Port, want, healthName)
		}
	}

	// Shutdown: the grace covers --shutdown-grace, with a little to exit.
	if tg := pod.Spec.TerminationGracePeriodSeconds; tg == nil {
		t.Error("no terminationGracePeriodSeconds: the default 30s may cut --shutdown-grace short")
	} else if grace := time.Duration(*tg) * time.Second; grace <= cfg.ShutdownGrace || grace > cfg.ShutdownGrace+10*time.Second {
		t.Errorf("terminationGracePeriodSeconds %d against --shutdown-grace %s: want a little more", *tg, cfg.ShutdownGrace)
	}

	// The token key: the Secret, mounted read-only where the flag reads it.
	keyDir, keyFile := path.Split(cfg.TokenKeyFile)
	mounted := false
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) != path.Clean(keyDir) {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == secret.Metadata.Name && m.ReadOnly {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("the Secret %s is not mounted read-only at %s, where --token-key-file %s reads it",
			secret.Metadata.Name, keyDir, cfg.TokenKeyFile)
	}
	if _, ok := secret.StringData[keyFile]; !ok {
		t.Errorf("the Secret has no %s", keyFile)
	}
	// The placeholder must not be a key anyone could sign with.
	tmp := filepath.Join(t.TempDir(), keyFile)
	if err := os.WriteFile(tmp, []byte(secret.StringData[keyFile]), 0o600); err != nil {
		t.Fatal(err)
	}
	if keys, err := token.LoadOrCreateKey(tmp); err == nil {
		t.Errorf("the Secret's placeholder is a usable key (%d keys): ship one the sidecar refuses", len(keys))
	}

	// The Service: selects the pods, and is what the URIs name.
	for k, v := range svc.selectorMap() {
		if pod.Metadata.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods do not carry", k, v)
		}
	}
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || cfg.PublicURL == "" {
		t.Fatalf("--public-url %q", cfg.PublicURL)
	}
	if host, _, _ := strings.Cut(u.Hostname(), "."); host != svc.Metadata.Name {
		t.Errorf("--public-url names host %s, the Service is %s", u.Hostname(), svc.Metadata.Name)
	}
	if len(svc.Spec.Ports) != 1 || strconv.Itoa(svc.Spec.Ports[0].Port) != u.Port() || svc.Spec.Ports[0].TargetPort != portName {
		t.Errorf("Service ports %+v: want %s, to the container's %s", svc.Spec.Ports, u.Port(), portName)
	}

	// Disruptions: one replica at a time.
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if pod.Metadata.Labels[k] != v {
			t.Errorf("the PodDisruptionBudget selects %s=%s, which the pods do not carry", k, v)
		}
	}
	if (pdb.Spec.MaxUnavailable == nil || *pdb.Spec.MaxUnavailable != 1) && (pdb.Spec.MinAvailable == nil || *pdb.Spec.MinAvailable >= replicas) {
		t.Error("the PodDisruptionBudget does not leave all but one replica up")
	}

	// The autoscaler, on the active streams.
	if hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.Name != dep.Metadata.Name {
		t.Errorf("the autoscaler scales %s %s", hpa.Spec.ScaleTargetRef.Kind, hpa.Spec.ScaleTargetRef.Name)
	}
	if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 2 || hpa.Spec.MaxReplicas < *hpa.Spec.MinReplicas {
		t.Error("the autoscaler's bounds let it scale to one replica, or below its minimum")
	}
	reg := prometheus.NewRegistry()
	metrics.New(reg)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := false
	for _, f := range families {
		exported = exported || f.GetName() == "sidecar_streams_active"
	}
	if !exported {
		t.Fatal("the sidecar exports no sidecar_streams_active")
	}
	ok := false
	for _, m := range hpa.Spec.Metrics {
		if m.Type == "Pods" && m.Pods.Metric.Name == "sidecar_streams_active" && m.Pods.Target.Type == "AverageValue" {
			n, err := strconv.Atoi(m.Pods.Target.AverageValue)
			ok = err == nil && n > 0 && n < cfg.MaxStreams
		}
	}
	if !ok {
		t.Errorf("the autoscaler does not target sidecar_streams_active per pod below --max-streams %d", cfg.MaxStreams)
	}
	checkMemoryRule(t, c.Env, c.Resources.Requests["memory"], c.Resources.Limits["memory"])
}

// manifestPlanFiles is the table size the manifest's memory is sized for:
// two plans of it at once.
const manifestPlanFiles = 100_000

// checkMemoryRule holds the manifest's memory to the memory rule: no
// GOMEMLIMIT (the sidecar derives it from the container's limit), a limit
// whose budget plans two tables of manifestPlanFiles data files at once,
// and a request equal to it.
func checkMemoryRule(t *testing.T, env []struct {
	Name string `yaml:"name"`
}, request, limit string) {
	t.Helper()
	for _, e := range env {
		if e.Name == "GOMEMLIMIT" || e.Name == "SIDECAR_MAX_DELETE_MEMORY" {
			t.Errorf("the manifest sets %s: the memory rule sizes it from the container's limit", e.Name)
		}
	}
	n, ok := strings.CutSuffix(limit, "Gi")
	gib, err := strconv.Atoi(n)
	if !ok || err != nil {
		t.Fatalf("memory limit %q, want whole Gi", limit)
	}
	capacity, _ := memory.BudgetOf(memory.Limit{Bytes: int64(float64(int64(gib)<<30) * memory.ContainerShare)})
	if need := int64(2 * manifestPlanFiles * splits.PlanBytesPerFile); capacity < need {
		t.Errorf("a %s limit gives a budget of %s, less than two plans of %d data files (%s)", limit,
			memory.Bytes(capacity), manifestPlanFiles, memory.Bytes(need))
	}
	if request != limit {
		t.Errorf("memory request %q, limit %q: equal, so that a replica is not evicted for memory it was promised", request, limit)
	}
}
