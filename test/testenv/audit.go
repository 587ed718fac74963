package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// WithAudit makes the API server write an audit log to logPath, one JSON audit.k8s.io/v1 Event a line: the
// requests of the given users and of the members of the given groups at level Metadata (without the
// RequestReceived stage), nothing else. The policy file is written next to the log.
func WithAudit(logPath string, users, groups []string) Option {
	return func(env *envtest.Environment) error {
		if len(users) == 0 && len(groups) == 0 {
			return fmt.Errorf("testenv: WithAudit(%s) names no user and no group: the log would stay empty", logPath)
		}
		var rule strings.Builder
		rule.WriteString("  - level: Metadata\n")
		if len(users) > 0 {
			fmt.Fprintf(&rule, "    users: %s\n", quoted(users))
		}
		if len(groups) > 0 {
			fmt.Fprintf(&rule, "    userGroups: %s\n", quoted(groups))
		}
		policy := filepath.Join(filepath.Dir(logPath), "audit-policy.yaml")
		text := "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [\"RequestReceived\"]\nrules:\n" + rule.String() + "  - level: None\n"
		if err := os.WriteFile(policy, []byte(text), 0o600); err != nil {
			return fmt.Errorf("testenv: writing the audit policy: %w", err)
		}
		env.ControlPlane.GetAPIServer().Configure().Set("audit-policy-file", policy).Set("audit-log-path", logPath)
		return nil
	}
}

// quoted is a YAML flow list of strings.
func quoted(l []string) string {
	b, _ := json.Marshal(l) // a JSON array of strings is YAML
	return string(b)
}

// AuditEvent is the part of an audit.k8s.io/v1 Event the suites and benchmarks read.
type AuditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef  *AuditObjectRef `json:"objectRef"`
	RequestURI string          `json:"requestURI"`
	// Annotations carry the authorizer's decision (authorization.k8s.io/decision: allow or forbid)
	Annotations    map[string]string `json:"annotations"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	RequestReceived metav1.MicroTime `json:"requestReceivedTimestamp"`
}

// AuditObjectRef is the object an audited request is about.
type AuditObjectRef struct {
	APIGroup    string `json:"apiGroup"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
}

// ReadAuditLog reads every event of an audit log written by WithAudit.
func ReadAuditLog(path string) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: Close has nothing to lose
	var events []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("audit log %s: %w: %s", path, err, sc.Text())
		}
		events = append(events, e)
	}
	return events, sc.Err()
}
