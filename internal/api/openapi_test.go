package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/jaxxstorm/landlord/internal/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var roleTokens = []api.Token{
	{Name: "ops", Secret: adminToken, Role: api.RoleAdmin},
	{Name: "viewer", Secret: readerToken, Role: api.RoleReader},
}

// mustOpenAPI fetches the document without a token, as anyone may, and
// loads it.
func mustOpenAPI(t *testing.T, ts *testServer) (*openapi3.T, []byte) {
	t.Helper()
	anon := *ts
	anon.token = ""
	res := anon.do(t, "GET", "/v1/openapi.json", "", "")
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/openapi.json: %d %s %s", res.status, res.header.Get("Content-Type"), res.body)
	}
	doc, err := openapi3.NewLoader().LoadFromData(res.body)
	if err != nil {
		t.Fatalf("load the document: %v", err)
	}
	return doc, res.body
}

func TestOpenAPIValid(t *testing.T) {
	doc, _ := mustOpenAPI(t, newServer(t, roleTokens...))
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3.1: %v", err)
	}
}

func TestOpenAPIGolden(t *testing.T) {
	_, got := mustOpenAPI(t, newServer(t))
	golden := filepath.Join("testdata", "openapi.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/api -run TestOpenAPIGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the document differs from %s; if the change is meant, run go test ./internal/api -run TestOpenAPIGolden -update (-want +got):\n%s",
			golden, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
	}
}

// TestOpenAPIRoutes holds the document to the route table and to what the
// server answers: every documented operation reaches its handler and gets
// only documented answers, and a method a path does not document is a 405.
func TestOpenAPIRoutes(t *testing.T) {
	ts := newServer(t, roleTokens...)
	doc, _ := mustOpenAPI(t, ts)
	ts.plan(t, "example-fleet", `{"image":"example.com/app:1"}`) // createRollout's

	var table, documented []string
	for _, r := range api.Routes() {
		table = append(table, r[0]+" "+r[1]+" "+r[2])
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			documented = append(documented, method+" "+path+" "+op.OperationID)
		}
	}
	slices.Sort(table)
	slices.Sort(documented)
	if diff := cmp.Diff(table, documented); diff != "" {
		t.Fatalf("the document and the route table differ (-table +document):\n%s", diff)
	}

	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		ops := item.Operations()
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			op := ops[method]
			t.Run(op.OperationID, func(t *testing.T) {
				target := examplePath(t, ts, path, op)
				do := ts.do
				if op.OperationID == "streamEvents" {
					do = ts.doHeaders // a stream never ends: its answer is its status and headers
				}
				res := do(t, method, target, exampleType[op.OperationID], exampleBody[op.OperationID])
				mustBeDocumented(t, op, res)
				if res.status == http.StatusNotFound && strings.Contains(string(res.body), "no route") {
					t.Fatalf("%s %s is documented but not served: %s", method, target, res.body)
				}
				if want := exampleStatus(op); res.status != want {
					t.Errorf("%s %s with an example request: %d, want %d: %s", method, target, res.status, want, res.body)
				}

				// Without a token: open operations answer, the others are 401.
				anon := *ts
				anon.token = ""
				do = anon.do
				if op.OperationID == "streamEvents" {
					do = anon.doHeaders
				}
				res = do(t, method, target, exampleType[op.OperationID], exampleBody[op.OperationID])
				open := op.Security != nil && len(*op.Security) == 0
				if open == (res.status == http.StatusUnauthorized) {
					t.Errorf("without a token: %d, documented as open: %v", res.status, open)
				}
				mustBeDocumented(t, op, res)
			})
		}
		t.Run("methods "+path, func(t *testing.T) {
			target := examplePath(t, ts, path, nil)
			allowed := slices.Sorted(maps.Keys(ops))
			if ops["GET"] != nil { // HEAD is answered wherever GET is
				allowed = append(allowed, "HEAD")
				slices.Sort(allowed)
			}
			for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
				if ops[method] != nil || (method == "HEAD" && ops["GET"] != nil) {
					continue
				}
				res := ts.do(t, method, target, "", "")
				if res.status != http.StatusMethodNotAllowed {
					t.Errorf("%s %s is not documented but answers %d", method, target, res.status)
					continue
				}
				got := strings.Split(res.header.Get("Allow"), ", ")
				slices.Sort(got)
				if !slices.Equal(got, allowed) {
					t.Errorf("%s %s: Allow %v, documented %v", method, target, got, allowed)
				}
			}
		})
	}
	if res := ts.do(t, "GET", "/v1/undocumented", "", ""); res.status != http.StatusNotFound {
		t.Errorf("an undocumented path: %d", res.status)
	}
}

// Example requests, by operation, that succeed.
var (
	exampleBody = map[string]string{
		"createTenant":             `{"name":"example-new","compute_config":{"image":"example.com/app:1"}}`,
		"replaceTenant":            `{"compute_config":{"image":"example.com/app:2"},"labels":{"tier":"gold"}}`,
		"patchTenant":              `{"labels":{"tier":null}}`,
		"createPlan":               `{"name":"example-new","provider":"mock","description":"an example"}`,
		"publishPlanVersion":       `{"config":{"image":"example.com/app:2"},"message":"a new image"}`,
		"createRollout":            `{"plan":"example-fleet","waves":[{"name":"canary","count":1},{"percent":30}],"bake":"1m","max_failures":1}`,
		"abortRollout":             `{"rollback":true}`,
		"moveTenant":               `{"compute_config":{"image":"example.com/app:1"},"hold":true}`,
		"createSubscription":       `{"name":"example-new","url":"https://hooks.example.com/landlord","secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw","types":["landlord.tenant.ready"]}`,
		"updateSubscription":       `{"enabled":false}`,
		"rotateSubscriptionSecret": `{"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw","previous_expires_in":"1h"}`,
		"redeliver":                `{"since":"` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`,
	}
	exampleType = map[string]string{
		"createTenant":             "application/json",
		"replaceTenant":            "application/json",
		"patchTenant":              "application/merge-patch+json",
		"createPlan":               "application/json",
		"publishPlanVersion":       "application/json",
		"createRollout":            "application/json",
		"abortRollout":             "application/json",
		"moveTenant":               "application/json",
		"createSubscription":       "application/json",
		"updateSubscription":       "application/json",
		"rotateSubscriptionSecret": "application/json",
		"redeliver":                "application/json",
	}
)

// exampleStatus is the status an example request gets: the documented
// success, or, where there are several or the example cannot succeed, the
// one in exampleStatuses.
func exampleStatus(op *openapi3.Operation) int {
	if s, ok := exampleStatuses[op.OperationID]; ok {
		return s
	}
	var ok []int
	for _, code := range op.Responses.Keys() {
		if s, _ := strconv.Atoi(code); s >= 200 && s < 300 {
			ok = append(ok, s)
		}
	}
	if len(ok) != 1 {
		return 0
	}
	return ok[0]
}

var exampleStatuses = map[string]int{
	"createTenant": http.StatusCreated,
	"deleteTenant": http.StatusAccepted,
	// No controller provisions the tenant here, so it has no workload.
	"getTenantStatus": http.StatusNotFound,
	// No controller makes the example tenant ready, and a move starts
	// from a ready placement; nor is it moving, to approve or cancel.
	"moveTenant":  http.StatusConflict,
	"approveMove": http.StatusConflict,
	"cancelMove":  http.StatusConflict,
	// The example rollout is running, not paused.
	"resumeRollout": http.StatusConflict,
	"createRollout": http.StatusCreated,
}

var exampleTenants atomic.Int64

var templateParam = regexp.MustCompile(`\{([^}]+)\}`)

// examplePath fills a path template: {tenant} with a new tenant, the other
// parameters with the first value their schema allows.
func examplePath(t *testing.T, ts *testServer, path string, op *openapi3.Operation) string {
	t.Helper()
	var subscription string
	return templateParam.ReplaceAllStringFunc(path, func(m string) string {
		name := m[1 : len(m)-1]
		switch name {
		case "subscription":
			subscription = "example-" + strconv.FormatInt(exampleTenants.Add(1), 10)
			res := ts.do(t, "POST", "/v1/subscriptions", "application/json",
				`{"name":"`+subscription+`","url":"https://hooks.example.com/landlord","secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`)
			if res.status != http.StatusCreated {
				t.Fatalf("create subscription %s: %d %s", subscription, res.status, res.body)
			}
			return subscription
		case "event":
			// A delivery of an event to the subscription: redelivery
			// makes one that fan-out (which needs a dispatcher) has not.
			tn := ts.create(t, "example-"+strconv.FormatInt(exampleTenants.Add(1), 10), `{"image":"example.com/app:1"}`)
			f := feed(t, ts, "?type=landlord.tenant.created")
			id := ""
			for _, e := range f.Events {
				if e.Subject == tn.ID {
					id = e.ID
				}
			}
			if res := ts.do(t, "POST", "/v1/subscriptions/"+subscription+"/redeliver", "application/json", `{"event_id":"`+id+`"}`); res.status != http.StatusAccepted {
				t.Fatalf("redeliver %s: %d %s", id, res.status, res.body)
			}
			return id
		case "tenant":
			return ts.create(t, "example-"+strconv.FormatInt(exampleTenants.Add(1), 10), `{"image":"example.com/app:1"}`).Name
		case "plan":
			return ts.plan(t, "example-plan-"+strconv.FormatInt(exampleTenants.Add(1), 10), `{"image":"example.com/app:1"}`)
		case "version":
			return "1"
		case "rollout":
			plan := ts.plan(t, "example-plan-"+strconv.FormatInt(exampleTenants.Add(1), 10), `{"image":"example.com/app:1"}`)
			return ts.startRollout(t, `{"plan":"`+plan+`"}`).ID
		}
		if op != nil {
			if p := op.Parameters.GetByInAndName(openapi3.ParameterInPath, name); p != nil && p.Schema != nil && len(p.Schema.Value.Enum) > 0 {
				return p.Schema.Value.Enum[0].(string)
			}
		}
		return "example"
	})
}

// mustBeDocumented checks that the status of res is documented for op and
// that its body is what the document says.
func mustBeDocumented(t *testing.T, op *openapi3.Operation, res response) {
	t.Helper()
	doc := op.Responses.Status(res.status)
	if doc == nil {
		t.Errorf("%s answered %d, which it does not document: %s", op.OperationID, res.status, res.body)
		return
	}
	if res.status == http.StatusNoContent {
		if len(res.body) > 0 || doc.Value.Content != nil {
			t.Errorf("%s 204: a body %q, documented content %v", op.OperationID, res.body, doc.Value.Content)
		}
		return
	}
	mediaType, _, _ := strings.Cut(res.header.Get("Content-Type"), ";")
	media := doc.Value.Content.Get(mediaType)
	if media == nil {
		t.Errorf("%s %d: Content-Type %s is not documented", op.OperationID, res.status, mediaType)
		return
	}
	for name := range doc.Value.Headers {
		if res.header.Get(name) == "" && name != "Idempotent-Replayed" {
			t.Errorf("%s %d: no %s header", op.OperationID, res.status, name)
		}
	}
	if !strings.HasSuffix(mediaType, "json") {
		return
	}
	var body any
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatalf("%s %d: %v", op.OperationID, res.status, err)
	}
	if err := media.Schema.Value.VisitJSON(body, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		t.Errorf("%s %d: the body does not match its schema: %v\n%s", op.OperationID, res.status, err, res.body)
	}
}
