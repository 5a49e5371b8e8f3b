package kubetest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// auditPolicy records, at the Metadata level, every request of a service
// account in landlord-system (landlord's, in the tests) and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts:landlord-system"]
  - level: None
`

// writeAuditPolicy writes the policy and returns the flags that turn it on.
func writeAuditPolicy(dir string) ([]string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{"--audit-policy-file", policy, "--audit-log-path", filepath.Join(dir, "audit.log"),
		"--audit-log-format", "json", "--audit-log-mode", "blocking"}, nil
}

// Request is one API request landlord's service account made, as the API
// server's audit log records it.
type Request struct {
	Verb      string
	Resource  string // "deployments", "pods/status"
	Namespace string
	Name      string
	URI       string
	UserAgent string
	Code      int
}

// Requests returns the requests service accounts of landlord-system have
// made so far, in order, those that keep a watch open included once.
func (c *Cluster) Requests() ([]Request, error) {
	f, err := os.Open(filepath.Join(c.dir, "audit.log"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var ev struct {
			Verb      string `json:"verb"`
			URI       string `json:"requestURI"`
			UserAgent string `json:"userAgent"`
			ObjectRef struct {
				Resource, Subresource, Namespace, Name string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, err
		}
		r := Request{Verb: ev.Verb, Resource: ev.ObjectRef.Resource, Namespace: ev.ObjectRef.Namespace, Name: ev.ObjectRef.Name,
			URI: ev.URI, UserAgent: ev.UserAgent, Code: ev.ResponseStatus.Code}
		if ev.ObjectRef.Subresource != "" {
			r.Resource += "/" + ev.ObjectRef.Subresource
		}
		if r.Resource == "" {
			r.Resource = strings.SplitN(ev.URI, "?", 2)[0]
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
