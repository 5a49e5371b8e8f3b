package ecs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// This file is a small evaluator of identity-based IAM policies, enough to
// check landlord's documented policy against the requests its ECS calls
// make. It follows the IAM User Guide:
//
//   - Policy evaluation logic (reference_policies_evaluation-logic.html):
//     an explicit Deny wins, else an Allow allows, else the request is
//     implicitly denied.
//   - IAM JSON policy elements: Action, NotAction, Resource, NotResource
//     (reference_policies_elements_*.html): action names match without
//     regard to case, resources with it; both take the wildcards * and ?,
//     and an ARN is matched segment by segment.
//   - Condition (reference_policies_elements_condition.html and
//     reference_policies_elements_condition_operators.html): the operators
//     of a statement, and the keys of an operator, are ANDed; the values of
//     one key are ORed; a key absent from the request context makes the
//     condition false, except for Null, an ...IfExists operator and
//     ForAllValues (reference_policies_condition-single-vs-multi-valued-context-keys.html).
//
// It knows only the operators below and refuses any other, so that a policy
// it cannot read fails the test instead of passing it.

// iamRequest is one iamAuthorization AWS makes: an action on a resource with
// its request context. Resource is "*" for an action whose row in the
// Service Authorization Reference lists no resource type: only a statement
// whose Resource is "*" applies to it.
type iamRequest struct {
	Action   string
	Resource string
	Context  map[string][]string
}

func (r iamRequest) String() string {
	return fmt.Sprintf("%s on %s with %v", r.Action, r.Resource, r.Context)
}

type iamPolicy struct {
	Version   string
	Statement iamStatements
}

type iamStatement struct {
	Sid         string
	Effect      string
	Action      iamValues
	NotAction   iamValues
	Resource    iamValues
	NotResource iamValues
	Condition   map[string]map[string]iamValues
}

// iamStatements is a policy's Statement: one statement or a list of them.
type iamStatements []iamStatement

func (s *iamStatements) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		var one iamStatement
		if err := iamStrictUnmarshal(b, &one); err != nil {
			return err
		}
		*s = iamStatements{one}
		return nil
	}
	var many []json.RawMessage
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	for _, raw := range many {
		var st iamStatement
		if err := iamStrictUnmarshal(raw, &st); err != nil {
			return err
		}
		*s = append(*s, st)
	}
	return nil
}

// iamValues is a policy value that is a string, a boolean, or a list of
// them.
type iamValues []string

func (l *iamValues) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	one := func(v any) (string, error) {
		switch v := v.(type) {
		case string:
			return v, nil
		case bool:
			return fmt.Sprint(v), nil
		}
		return "", fmt.Errorf("policy value %v is neither a string nor a boolean", v)
	}
	if list, ok := v.([]any); ok {
		for _, x := range list {
			s, err := one(x)
			if err != nil {
				return err
			}
			*l = append(*l, s)
		}
		return nil
	}
	s, err := one(v)
	*l = iamValues{s}
	return err
}

func iamStrictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// parseIAMPolicy reads an identity-based policy, refusing fields and shapes it
// does not know.
func parseIAMPolicy(b []byte) (*iamPolicy, error) {
	var p iamPolicy
	if err := iamStrictUnmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if p.Version != "2012-10-17" {
		return nil, fmt.Errorf("policy: Version %q, want 2012-10-17", p.Version)
	}
	for i, st := range p.Statement {
		switch {
		case st.Effect != "Allow" && st.Effect != "Deny":
			return nil, fmt.Errorf("policy: statement %d (%s): Effect %q", i, st.Sid, st.Effect)
		case (len(st.Action) == 0) == (len(st.NotAction) == 0):
			return nil, fmt.Errorf("policy: statement %d (%s): give Action or NotAction", i, st.Sid)
		case (len(st.Resource) == 0) == (len(st.NotResource) == 0):
			return nil, fmt.Errorf("policy: statement %d (%s): give Resource or NotResource", i, st.Sid)
		}
	}
	return &p, nil
}

func mustIAMPolicy(t *testing.T, b []byte) *iamPolicy {
	t.Helper()
	p, err := parseIAMPolicy(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// allows reports whether the policy allows r, and which statement decided.
func (p *iamPolicy) allows(r iamRequest) (bool, string, error) {
	allowedBy := ""
	for i, st := range p.Statement {
		ok, err := st.applies(r)
		if err != nil {
			return false, "", fmt.Errorf("statement %d (%s): %w", i, st.Sid, err)
		}
		switch {
		case ok && st.Effect == "Deny":
			return false, st.Sid, nil
		case ok && allowedBy == "":
			allowedBy = st.Sid
			if allowedBy == "" {
				allowedBy = fmt.Sprintf("statement %d", i)
			}
		}
	}
	return allowedBy != "", allowedBy, nil
}

func (st iamStatement) applies(r iamRequest) (bool, error) {
	action := iamAnyMatch(st.Action, r.Action, iamMatchAction)
	if len(st.NotAction) > 0 {
		action = !iamAnyMatch(st.NotAction, r.Action, iamMatchAction)
	}
	resource := iamAnyMatch(st.Resource, r.Resource, iamMatchResource)
	if len(st.NotResource) > 0 {
		resource = !iamAnyMatch(st.NotResource, r.Resource, iamMatchResource)
	}
	if !action || !resource {
		return false, nil
	}
	for op, keys := range st.Condition {
		for key, values := range keys {
			ok, err := iamCondition(op, values, iamContextValues(r.Context, key), iamHasKey(r.Context, key))
			if err != nil {
				return false, fmt.Errorf("%s %s: %w", op, key, err)
			}
			if !ok {
				return false, nil
			}
		}
	}
	return true, nil
}

// iamHasKey looks a context key up without regard to case, as IAM does for
// key names.
func iamHasKey(ctx map[string][]string, key string) bool {
	for k := range ctx {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

func iamContextValues(ctx map[string][]string, key string) []string {
	for k, v := range ctx {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}

// iamCondition evaluates one operator on one key: policy holds the policy's
// values, got the request's.
func iamCondition(op string, policy, got []string, present bool) (bool, error) {
	if op == "Null" {
		// "true": the key must be absent; "false": present.
		for _, v := range policy {
			if (v == "true") == !present {
				return true, nil
			}
		}
		return false, nil
	}
	set, base := "", op
	if s, rest, ok := strings.Cut(op, ":"); ok {
		set, base = s, rest
	}
	base, ifExists := strings.CutSuffix(base, "IfExists")
	var match func(pattern, value string) bool
	switch base {
	case "StringEquals":
		match = func(p, v string) bool { return p == v }
	case "StringLike":
		match = func(p, v string) bool { return iamGlob(p, v, false) }
	case "ArnEquals", "ArnLike":
		match = iamMatchARN
	default:
		return false, fmt.Errorf("the evaluator does not know operator %s", op)
	}
	if !present {
		// An absent key matches nothing, except where the operator says
		// otherwise.
		return ifExists || set == "ForAllValues", nil
	}
	matchesOne := func(v string) bool {
		for _, p := range policy {
			if match(p, v) {
				return true
			}
		}
		return false
	}
	switch set {
	case "ForAllValues":
		for _, v := range got {
			if !matchesOne(v) {
				return false, nil
			}
		}
		return true, nil
	case "ForAnyValue":
		for _, v := range got {
			if matchesOne(v) {
				return true, nil
			}
		}
		return false, nil
	case "":
		if len(got) != 1 {
			return false, fmt.Errorf("%d values for a single-valued operator; the policy needs ForAllValues or ForAnyValue", len(got))
		}
		return matchesOne(got[0]), nil
	default:
		return false, fmt.Errorf("the evaluator does not know set operator %s", set)
	}
}

func iamAnyMatch(patterns []string, value string, match func(pattern, value string) bool) bool {
	for _, p := range patterns {
		if match(p, value) {
			return true
		}
	}
	return false
}

// iamMatchAction matches "service:Action" patterns without regard to case.
func iamMatchAction(pattern, action string) bool { return iamGlob(pattern, action, true) }

// iamMatchResource matches a Resource element: "*" matches every resource
// (including the "*" of an action without a resource type); an ARN
// pattern matches an ARN segment by segment.
func iamMatchResource(pattern, resource string) bool {
	if pattern == "*" {
		return true
	}
	return iamMatchARN(pattern, resource)
}

// iamMatchARN compares the six colon-separated segments of an ARN separately,
// each with wildcards, as ArnLike does; the resource segment keeps any
// further colons (task-definition/family:3).
func iamMatchARN(pattern, value string) bool {
	p, v := strings.SplitN(pattern, ":", 6), strings.SplitN(value, ":", 6)
	if len(p) != 6 || len(v) != 6 || p[0] != "arn" || v[0] != "arn" {
		return false
	}
	for i := range p {
		if !iamGlob(p[i], v[i], false) {
			return false
		}
	}
	return true
}

// iamGlob matches s against pattern, where * matches any run of characters
// and ? any one.
func iamGlob(pattern, s string, foldCase bool) bool {
	if foldCase {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if iamGlob(pattern[1:], s[i:], false) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && iamGlob(pattern[1:], s[1:], false)
	default:
		return s != "" && s[0] == pattern[0] && iamGlob(pattern[1:], s[1:], false)
	}
}

// TestPolicyEvaluator checks the evaluator on its own, so that it cannot
// pass a policy by allowing everything.
func TestPolicyEvaluator(t *testing.T) {
	const cluster = "arn:aws:ecs:us-west-2:123456789012:cluster/landlord"
	policy := mustIAMPolicy(t, []byte(`{"Version": "2012-10-17", "Statement": [
	  {"Sid": "Services", "Effect": "Allow", "Action": "ECS:*Service", "Resource": "arn:aws:ecs:us-west-2:123456789012:service/landlord/landlord-*"},
	  {"Sid": "InCluster", "Effect": "Allow", "Action": ["ecs:ListTasks"], "Resource": "*",
	   "Condition": {"ArnEquals": {"ecs:cluster": ["arn:aws:ecs:us-west-2:123456789012:cluster/other", "`+cluster+`"]}}},
	  {"Sid": "TagOnCreate", "Effect": "Allow", "Action": "ecs:TagResource", "Resource": "*",
	   "Condition": {"StringEquals": {"ecs:CreateAction": "RegisterTaskDefinition"}, "ForAllValues:StringLike": {"aws:TagKeys": "landlord:*"}}},
	  {"Sid": "NoTagKey", "Effect": "Allow", "Action": "ecs:UntagResource", "Resource": "*", "Condition": {"Null": {"aws:TagKeys": "true"}}},
	  {"Sid": "Maybe", "Effect": "Allow", "Action": "ecs:StopTask", "Resource": "*", "Condition": {"StringEqualsIfExists": {"ecs:cluster": "x"}}},
	  {"Sid": "AllButDelete", "Effect": "Allow", "NotAction": ["ecs:Delete*", "ecs:*Service", "ecs:TagResource", "ecs:UntagResource", "ecs:ListTasks", "ecs:StopTask"],
	   "Resource": "arn:aws:ecs:us-west-2:123456789012:task-definition/app:?"},
	  {"Sid": "NoProd", "Effect": "Deny", "Action": "ecs:UpdateService", "Resource": "arn:aws:ecs:*:*:service/*/landlord-prod"}
	]}`))
	tagged := map[string][]string{"ecs:CreateAction": {"RegisterTaskDefinition"}, "aws:TagKeys": {"landlord:tenant-id", "landlord:task-hash"}}
	for _, c := range []struct {
		name string
		r    iamRequest
		want bool
	}{
		{"action case and wildcard", iamRequest{Action: "ecs:createservice", Resource: "arn:aws:ecs:us-west-2:123456789012:service/landlord/landlord-acme"}, true},
		{"resource is case-sensitive", iamRequest{Action: "ecs:CreateService", Resource: "arn:aws:ecs:us-west-2:123456789012:service/landlord/Landlord-acme"}, false},
		{"resource of another cluster", iamRequest{Action: "ecs:CreateService", Resource: "arn:aws:ecs:us-west-2:123456789012:service/other/landlord-acme"}, false},
		{"resource of another region", iamRequest{Action: "ecs:CreateService", Resource: "arn:aws:ecs:eu-west-1:123456789012:service/landlord/landlord-acme"}, false},
		{"an action no statement names", iamRequest{Action: "ecs:RunTask", Resource: "*"}, false},
		{"an action without a resource type needs Resource *", iamRequest{Action: "ecs:CreateService", Resource: "*"}, false},
		{"a condition value of several", iamRequest{Action: "ecs:ListTasks", Resource: "*", Context: map[string][]string{"ecs:cluster": {cluster}}}, true},
		{"a condition value none matches", iamRequest{Action: "ecs:ListTasks", Resource: "*", Context: map[string][]string{"ecs:cluster": {cluster + "2"}}}, false},
		{"a condition key absent from the context", iamRequest{Action: "ecs:ListTasks", Resource: "*"}, false},
		{"condition key names ignore case", iamRequest{Action: "ecs:ListTasks", Resource: "*", Context: map[string][]string{"ECS:Cluster": {cluster}}}, true},
		{"every operator must hold", iamRequest{Action: "ecs:TagResource", Resource: "*", Context: tagged}, true},
		{"ForAllValues with a value outside", iamRequest{Action: "ecs:TagResource", Resource: "*", Context: map[string][]string{
			"ecs:CreateAction": {"RegisterTaskDefinition"}, "aws:TagKeys": {"landlord:tenant-id", "team"}}}, false},
		{"ForAllValues with the key absent", iamRequest{Action: "ecs:TagResource", Resource: "*", Context: map[string][]string{"ecs:CreateAction": {"RegisterTaskDefinition"}}}, true},
		{"StringEquals is exact", iamRequest{Action: "ecs:TagResource", Resource: "*", Context: map[string][]string{"ecs:CreateAction": {"registertaskdefinition"}}}, false},
		{"StringEquals with the key absent", iamRequest{Action: "ecs:TagResource", Resource: "*", Context: map[string][]string{"aws:TagKeys": {"landlord:tenant-id"}}}, false},
		{"Null true with the key absent", iamRequest{Action: "ecs:UntagResource", Resource: "*"}, true},
		{"Null true with the key present", iamRequest{Action: "ecs:UntagResource", Resource: "*", Context: map[string][]string{"aws:TagKeys": {"a"}}}, false},
		{"IfExists with the key absent", iamRequest{Action: "ecs:StopTask", Resource: "*"}, true},
		{"IfExists with the key present", iamRequest{Action: "ecs:StopTask", Resource: "*", Context: map[string][]string{"ecs:cluster": {"y"}}}, false},
		{"NotAction allows what it does not name", iamRequest{Action: "ecs:DescribeTaskDefinition", Resource: "arn:aws:ecs:us-west-2:123456789012:task-definition/app:3"}, true},
		{"NotAction refuses what it names", iamRequest{Action: "ecs:DeleteTaskDefinitions", Resource: "arn:aws:ecs:us-west-2:123456789012:task-definition/app:3"}, false},
		{"? is one character", iamRequest{Action: "ecs:DescribeTaskDefinition", Resource: "arn:aws:ecs:us-west-2:123456789012:task-definition/app:12"}, false},
		{"an explicit deny wins", iamRequest{Action: "ecs:UpdateService", Resource: "arn:aws:ecs:us-west-2:123456789012:service/landlord/landlord-prod"}, false},
		{"the deny leaves the rest", iamRequest{Action: "ecs:UpdateService", Resource: "arn:aws:ecs:us-west-2:123456789012:service/landlord/landlord-dev"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, by, err := policy.allows(c.r)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("allows(%v) = %v (by %q), want %v", c.r, got, by, c.want)
			}
		})
	}
}

// TestPolicyEvaluatorRefuses checks that what the evaluator cannot read is
// an error, never an allow.
func TestPolicyEvaluatorRefuses(t *testing.T) {
	for _, c := range []struct{ name, policy string }{
		{"version", `{"Version": "2008-10-17", "Statement": []}`},
		{"unknown field", `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*", "Principal": "*"}]}`},
		{"no resource", `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*"}]}`},
		{"effect", `{"Version": "2012-10-17", "Statement": [{"Effect": "allow", "Action": "*", "Resource": "*"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := parseIAMPolicy([]byte(c.policy)); err == nil {
				t.Errorf("parseIAMPolicy(%s) = nil error", c.policy)
			}
		})
	}
	p := mustIAMPolicy(t, []byte(`{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "*", "Resource": "*",
	  "Condition": {"DateGreaterThan": {"aws:CurrentTime": "2020-01-01T00:00:00Z"}}}}`))
	if ok, _, err := p.allows(iamRequest{Action: "ecs:ListTasks", Resource: "*", Context: map[string][]string{"aws:CurrentTime": {"2030-01-01T00:00:00Z"}}}); err == nil || ok {
		t.Errorf("an unknown operator: allows = %v, %v; want an error", ok, err)
	}
	p = mustIAMPolicy(t, []byte(`{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "*", "Resource": "*",
	  "Condition": {"StringLike": {"aws:TagKeys": "landlord:*"}}}}`))
	if ok, _, err := p.allows(iamRequest{Action: "ecs:TagResource", Resource: "*", Context: map[string][]string{"aws:TagKeys": {"landlord:a", "b"}}}); err == nil || ok {
		t.Errorf("a single-valued operator on two values: allows = %v, %v; want an error", ok, err)
	}
}
