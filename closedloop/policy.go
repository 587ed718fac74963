package closedloop

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hvpa-dev/hvpa/scaling"
)

// Policy is how a simulated workload is autoscaled.
type Policy string

// The policies.
const (
	// PolicyHvpa: the Hvpa as configured (its embedded recommender, scaling.Decide, its HPA).
	PolicyHvpa Policy = "hvpa"
	// PolicyHPA: the HPA v2 algorithm on the Hvpa's HPA template metrics (80% CPU utilization without any),
	// fixed per-pod requests.
	PolicyHPA Policy = "hpa"
	// PolicyVPA: upstream's VPA (the per-pod model, its updater) with fixed replicas.
	PolicyVPA Policy = "vpa"
	// PolicyHPAVPA: an HPA on CPU and a VPA that controls memory only (the pairing upstream calls safe).
	PolicyHPAVPA Policy = "hpa+vpa"
)

// Policies are the known policies, in the order a table lists them.
var Policies = []Policy{PolicyHvpa, PolicyHPA, PolicyVPA, PolicyHPAVPA}

// ParsePolicies parses a comma-separated list of policies (--policy).
func ParsePolicies(s string) ([]Policy, error) {
	var out []Policy
	seen := map[Policy]bool{}
	for _, f := range strings.Split(s, ",") {
		p := Policy(strings.TrimSpace(f))
		ok := false
		for _, known := range Policies {
			ok = ok || p == known
		}
		if !ok {
			return nil, fmt.Errorf("--policy %q: %q is not a policy; use a comma-separated list of hvpa, hpa, vpa and hpa+vpa", s, p)
		}
		if !seen[p] {
			out = append(out, p)
			seen[p] = true
		}
	}
	return out, nil
}

// PodRequests are fixed per-pod requests of the hpa and hpa+vpa policies (--hpa-requests): CPU millicores
// and memory bytes, each optional (an unset one comes from the trace's first timestamp).
type PodRequests struct {
	Values scaling.Values
	// Text is the value as given, for the run's label.
	Text string
}

// ParsePodRequests parses "cpu=250m,memory=1Gi" (either part may be left out).
func ParsePodRequests(s string) (PodRequests, error) {
	out := PodRequests{Text: s}
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return out, fmt.Errorf("--hpa-requests %q: %q is not name=quantity; use e.g. cpu=250m,memory=1Gi", s, part)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil || q.Sign() <= 0 {
			return out, fmt.Errorf("--hpa-requests %q: %s=%s is not a positive quantity", s, name, value)
		}
		switch name {
		case "cpu":
			out.Values.Set(scaling.CPU, float64(q.MilliValue()))
		case "memory":
			out.Values.Set(scaling.Memory, float64(q.Value()))
		default:
			return out, fmt.Errorf("--hpa-requests %q: unknown resource %q; use cpu and memory", s, name)
		}
	}
	return out, nil
}

// Run is one closed loop on the demand: a policy and, for the hvpa policy, its recommender model, for the
// hpa and hpa+vpa policies their fixed requests (nil: the trace's first).
type Run struct {
	Policy   Policy
	Model    Model
	Requests *PodRequests
}

// Label names the run in tables and reports: the policy, "hpa[cpu=500m]" for fixed requests, and the
// model of an hvpa run other than the default total model ("hvpa[per-pod]").
func (r Run) Label() string {
	switch {
	case r.Requests != nil:
		return string(r.Policy) + "[" + r.Requests.Text + "]"
	case r.Policy == PolicyHvpa && r.Model != "" && r.Model != ModelTotal:
		return string(r.Policy) + "[" + string(r.Model) + "]"
	}
	return string(r.Policy)
}

// Runs are the runs of a list of policies: the hvpa policy once per model, the hpa and hpa+vpa policies
// once per fixed requests (none: once with the trace's first).
func Runs(policies []Policy, models []Model, requests []PodRequests) []Run {
	var out []Run
	for _, p := range policies {
		switch p {
		case PolicyHvpa:
			for _, m := range models {
				out = append(out, Run{Policy: p, Model: m})
			}
		case PolicyHPA, PolicyHPAVPA:
			if len(requests) == 0 {
				out = append(out, Run{Policy: p})
			}
			for i := range requests {
				out = append(out, Run{Policy: p, Requests: &requests[i]})
			}
		default:
			out = append(out, Run{Policy: p})
		}
	}
	return out
}
