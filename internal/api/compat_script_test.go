package api_test

import (
	"slices"
	"strings"
)

// compatStep is one request of the compatibility script. Its path, body
// and header values may name variables as ${name}: values that earlier
// answers gave (save), such as a tenant's id or a page token.
type compatStep struct {
	name   string
	method string
	path   string
	body   string
	// header are name, value pairs. Authorization is the admin token's
	// unless the pairs set it; set to "" it is left out.
	header []string
	// save takes variables from the answer: variable name → top-level
	// member of the answer's JSON body, or "header " and a header's name.
	save map[string]string
}

// saving is s saving the answer's member (or "header " and a header's
// name) as the variable name.
func (s compatStep) saving(name, member string) compatStep {
	if s.save == nil {
		s.save = map[string]string{}
	}
	s.save[name] = member
	return s
}

// Content types of the script's bodies.
const (
	compatJSON  = "application/json"
	compatMerge = "application/merge-patch+json"
)

// compatReq is a step without a body.
func compatReq(name, method, path string, header ...string) compatStep {
	return compatStep{name: name, method: method, path: path, header: header}
}

// compatSend is a step with a body of contentType.
func compatSend(name, method, path, contentType, body string, header ...string) compatStep {
	return compatStep{name: name, method: method, path: path, body: body, header: append([]string{"Content-Type", contentType}, header...)}
}

// compatScript is the previous version's tenant surface, request by
// request, as the transcript in testdata/compat records it. The server it
// runs against has no controller, so that every answer is the API's own:
// tenants stay requested, and a deleted one deleting. Changing the script
// means recording the transcript again against the previous version's
// binary (see TestCompatPreviousVersionRequestsAnswerTheSame).
var compatScript = slices.Concat(
	compatCreates(),
	compatBadCreates(),
	compatPlans(),
	compatReads(),
	compatLists(),
	compatChanges(),
	compatEvents(),
	compatDeletes(),
)

func compatCreates() []compatStep {
	return []compatStep{
		compatSend("create plain", "POST", "/v1/tenants", compatJSON, `{"name":"acme","compute_config":{"image":"example.com/app:1"}}`).saving("acme", "id"),
		compatSend("create with labels, annotations, a maintenance window and secrets", "POST", "/v1/tenants", compatJSON,
			`{"name":"globex","compute_config":{"image":"example.com/app:2","env":{"A":"1","B":"2"},"secrets":{"DB":"hunter2"},"ports":[{"container_port":8080}]},`+
				`"labels":{"tier":"gold","region":"eu"},"annotations":{"owner":"ops@example.com","note":"first customer"},`+
				`"maintenance_window":{"days":["sat","sun"],"start":"02:00","end":"04:00","time_zone":"Europe/Paris"}}`).saving("globex", "id"),
		compatSend("create, dry run", "POST", "/v1/tenants?dry_run=true", compatJSON,
			`{"name":"initech","compute_config":{"image":"example.com/app:3","secrets":{"K":"s3cr3t"}},"labels":{"tier":"silver"}}`),
		compatReq("a dry run stores nothing", "GET", "/v1/tenants/initech"),
		compatSend("create, dry run of a bad config", "POST", "/v1/tenants?dry_run=true", compatJSON, `{"name":"initech","compute_config":{"image":5}}`),
		compatSend("create, dry_run not a boolean", "POST", "/v1/tenants?dry_run=maybe", compatJSON, `{"name":"initech","compute_config":{"image":"a"}}`),
		compatSend("create with an Idempotency-Key", "POST", "/v1/tenants", compatJSON,
			`{"name":"initech","compute_config":{"image":"example.com/app:3"},"labels":{"tier":"silver","region":"us"}}`,
			"Idempotency-Key", "compat-key-1").saving("initech", "id"),
		compatSend("create with an Idempotency-Key, replayed", "POST", "/v1/tenants", compatJSON,
			`{"name":"initech","compute_config":{"image":"example.com/app:3"},"labels":{"tier":"silver","region":"us"}}`,
			"Idempotency-Key", "compat-key-1"),
		compatSend("create with a used Idempotency-Key and another body", "POST", "/v1/tenants", compatJSON,
			`{"name":"initech2","compute_config":{"image":"example.com/app:3"}}`, "Idempotency-Key", "compat-key-1"),
		compatSend("create with a bad Idempotency-Key", "POST", "/v1/tenants", compatJSON,
			`{"name":"initech2","compute_config":{"image":"example.com/app:3"}}`, "Idempotency-Key", strings.Repeat("k", 300)),
		compatSend("create with a name taken", "POST", "/v1/tenants", compatJSON, `{"name":"acme","compute_config":{"image":"example.com/app:1"}}`),
		compatSend("create hooli", "POST", "/v1/tenants", compatJSON, `{"name":"hooli","compute_config":{"image":"example.com/app:1"},"labels":{"tier":"gold","region":"us"}}`).saving("hooli", "id"),
		compatSend("create acme-two", "POST", "/v1/tenants", compatJSON, `{"name":"acme-two","compute_config":{"image":"example.com/app:1","compute_provider":"mock"}}`),
		compatSend("create as a reader", "POST", "/v1/tenants", compatJSON, `{"name":"reader-made","compute_config":{"image":"a"}}`, "Authorization", "Bearer "+readerToken),
		compatSend("create without a token", "POST", "/v1/tenants", compatJSON, `{"name":"nobody-made","compute_config":{"image":"a"}}`, "Authorization", ""),
		compatSend("create with a wrong token", "POST", "/v1/tenants", compatJSON, `{"name":"nobody-made","compute_config":{"image":"a"}}`, "Authorization", "Bearer wrong"),
	}
}

func compatBadCreates() []compatStep {
	bad := []struct{ name, contentType, body string }{
		{"malformed JSON", compatJSON, `{"name":`},
		{"empty body", compatJSON, ``},
		{"not an object", compatJSON, `[1,2]`},
		{"trailing data", compatJSON, `{"name":"a","compute_config":{"image":"a"}} {}`},
		{"unknown field", compatJSON, `{"name":"bad","compute_config":{"image":"a"},"colour":"red"}`},
		{"two unknown fields", compatJSON, `{"name":"bad","compute_config":{"image":"a"},"colour":"red","size":3}`},
		{"name of the wrong type", compatJSON, `{"name":7,"compute_config":{"image":"a"}}`},
		{"labels of the wrong type", compatJSON, `{"name":"bad","compute_config":{"image":"a"},"labels":{"tier":1}}`},
		{"labels not an object", compatJSON, `{"name":"bad","compute_config":{"image":"a"},"labels":"tier=gold"}`},
		{"bad name", compatJSON, `{"name":"Acme_Corp","compute_config":{"image":"a"}}`},
		{"uuid name", compatJSON, `{"name":"0192f0c4-1d2e-7000-8000-000000000001","compute_config":{"image":"a"}}`},
		{"empty name", compatJSON, `{"name":"","compute_config":{"image":"a"}}`},
		{"no name", compatJSON, `{"compute_config":{"image":"a"}}`},
		{"no config", compatJSON, `{"name":"bad"}`},
		{"null config", compatJSON, `{"name":"bad","compute_config":null}`},
		{"config not an object", compatJSON, `{"name":"bad","compute_config":"image"}`},
		{"config an array", compatJSON, `{"name":"bad","compute_config":[]}`},
		{"empty config", compatJSON, `{"name":"bad","compute_config":{}}`},
		{"schema violations", compatJSON, `{"name":"bad","compute_config":{"image":5,"ports":[{"container_port":"x"}],"bogus":1}}`},
		{"bad label key", compatJSON, `{"name":"bad","compute_config":{"image":"a"},"labels":{"bad key":"v"}}`},
		{"bad annotation", compatJSON, `{"name":"bad","compute_config":{"image":"a"},"annotations":{"":"v"}}`},
		{"bad maintenance window", compatJSON, `{"name":"bad","compute_config":{"image":"a"},"maintenance_window":{"days":["someday"],"start":"25:00","end":"x","time_zone":"Mars/Olympus"}}`},
		{"unknown provider", compatJSON, `{"name":"bad","compute_config":{"image":"a","compute_provider":"nomad"}}`},
		{"unknown plan", compatJSON, `{"name":"bad","compute_config":{},"plan":{"name":"nosuchplan"}}`},
		{"wrong content type", "text/plain", `{"name":"bad","compute_config":{"image":"a"}}`},
		{"merge patch content type", compatMerge, `{"name":"bad","compute_config":{"image":"a"}}`},
	}
	var out []compatStep
	for _, b := range bad {
		out = append(out, compatSend("create, "+b.name, "POST", "/v1/tenants", b.contentType, b.body))
	}
	out = append(out,
		compatStep{name: "create, no content type", method: "POST", path: "/v1/tenants", body: `{"name":"bad","compute_config":{"image":"a"}}`},
		compatReq("a refused create stores nothing", "GET", "/v1/tenants?name_prefix=bad"),
	)
	return out
}

func compatPlans() []compatStep {
	return []compatStep{
		compatSend("create a plan", "POST", "/v1/plans", compatJSON, `{"name":"standard","description":"the standard plan"}`),
		compatSend("create a plan of a taken name", "POST", "/v1/plans", compatJSON, `{"name":"standard"}`),
		compatSend("publish a plan version", "POST", "/v1/plans/standard/versions", compatJSON, `{"config":{"image":"example.com/std:1","env":{"PLAN":"1"}},"message":"first"}`),
		compatSend("publish a plan version with a secret", "POST", "/v1/plans/standard/versions", compatJSON, `{"config":{"secrets":{"K":"v"}}}`),
		compatReq("get a plan", "GET", "/v1/plans/standard"),
		compatReq("get a plan version", "GET", "/v1/plans/standard/versions/1"),
		compatReq("get a plan version that is not", "GET", "/v1/plans/standard/versions/9"),
		compatReq("list plan versions", "GET", "/v1/plans/standard/versions"),
		compatSend("create following a plan, dry run", "POST", "/v1/tenants?dry_run=true", compatJSON,
			`{"name":"umbrella","compute_config":{"env":{"OWN":"yes"}},"plan":{"name":"standard"}}`),
		compatSend("create following a plan", "POST", "/v1/tenants", compatJSON,
			`{"name":"umbrella","compute_config":{"env":{"OWN":"yes"}},"plan":{"name":"standard","version":1}}`).saving("umbrella", "id"),
		compatSend("create following a plan version that is not", "POST", "/v1/tenants", compatJSON,
			`{"name":"umbrella2","compute_config":{},"plan":{"name":"standard","version":7}}`),
		compatReq("list plans", "GET", "/v1/plans"),
		compatReq("delete a plan tenants follow", "DELETE", "/v1/plans/standard"),
	}
}

func compatReads() []compatStep {
	return []compatStep{
		compatReq("get by name", "GET", "/v1/tenants/acme"),
		compatReq("get by id", "GET", "/v1/tenants/${acme}"),
		compatReq("get with secrets, by id", "GET", "/v1/tenants/${globex}"),
		compatReq("get a tenant that follows a plan", "GET", "/v1/tenants/umbrella"),
		compatReq("get with include_deleted", "GET", "/v1/tenants/acme?include_deleted=true"),
		compatReq("get with include_deleted=false", "GET", "/v1/tenants/${acme}?include_deleted=false"),
		compatReq("get with include_deleted not a boolean", "GET", "/v1/tenants/acme?include_deleted=perhaps"),
		compatReq("get with an unknown parameter", "GET", "/v1/tenants/acme?verbose=1"),
		compatReq("get as a reader", "GET", "/v1/tenants/acme", "Authorization", "Bearer "+readerToken),
		compatReq("get without a token", "GET", "/v1/tenants/acme", "Authorization", ""),
		compatReq("get of a name that is not", "GET", "/v1/tenants/nobody", "X-Request-ID", "compat-request-1"),
		compatReq("get of an id that is not", "GET", "/v1/tenants/0192f0c4-1d2e-7000-8000-000000000001"),
		compatReq("head", "HEAD", "/v1/tenants/acme"),
		compatReq("a method not allowed", "POST", "/v1/tenants/acme"),
		compatReq("status", "GET", "/v1/tenants/acme/status"),
		compatReq("status by id", "GET", "/v1/tenants/${globex}/status"),
		compatReq("status of a tenant that is not", "GET", "/v1/tenants/nobody/status"),
	}
}

func compatLists() []compatStep {
	return []compatStep{
		compatReq("list", "GET", "/v1/tenants"),
		compatReq("list as a reader", "GET", "/v1/tenants", "Authorization", "Bearer "+readerToken),
		compatReq("list by provider", "GET", "/v1/tenants?provider=mock"),
		compatReq("list by a provider nothing runs on", "GET", "/v1/tenants?provider=docker"),
		compatReq("list by status", "GET", "/v1/tenants?status=requested"),
		compatReq("list by statuses, comma separated", "GET", "/v1/tenants?status=ready,failed"),
		compatReq("list by statuses, repeated", "GET", "/v1/tenants?status=ready&status=requested"),
		compatReq("list by a status that is not", "GET", "/v1/tenants?status=sleeping"),
		compatReq("list by label", "GET", "/v1/tenants?label=tier%3Dgold"),
		compatReq("list by two labels", "GET", "/v1/tenants?label=tier%3Dgold&label=region%3Deu"),
		compatReq("list by a bad label selector", "GET", "/v1/tenants?label=tier"),
		compatReq("list by name prefix", "GET", "/v1/tenants?name_prefix=acme"),
		compatReq("list by plan", "GET", "/v1/tenants?plan=standard"),
		compatReq("list with include_deleted", "GET", "/v1/tenants?include_deleted=true"),
		compatReq("list, page 1", "GET", "/v1/tenants?page_size=2").saving("page2", "next_page_token"),
		compatReq("list, page 2", "GET", "/v1/tenants?page_size=2&page_token=${page2}").saving("page3", "next_page_token"),
		compatReq("list, page 3", "GET", "/v1/tenants?page_size=2&page_token=${page3}"),
		compatReq("list, filtered, page 1", "GET", "/v1/tenants?label=tier%3Dgold&page_size=1").saving("gold2", "next_page_token"),
		compatReq("list, filtered, page 2", "GET", "/v1/tenants?label=tier%3Dgold&page_size=1&page_token=${gold2}"),
		compatReq("list, page_size 0", "GET", "/v1/tenants?page_size=0"),
		compatReq("list, page_size too big", "GET", "/v1/tenants?page_size=100000"),
		compatReq("list, page_size not a number", "GET", "/v1/tenants?page_size=many"),
		compatReq("list, a page token not from a listing", "GET", "/v1/tenants?page_token=garbage"),
		compatReq("list, an unknown parameter", "GET", "/v1/tenants?colour=red"),
		compatReq("list, a method not allowed", "DELETE", "/v1/tenants"),
	}
}

func compatChanges() []compatStep {
	return []compatStep{
		compatSend("replace", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":"example.com/app:2"}}`),
		compatSend("replace with the same state", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":"example.com/app:2"}}`).saving("acmeTag", "header ETag"),
		compatSend("replace with If-Match", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":"example.com/app:3"},"labels":{"tier":"bronze"}}`, "If-Match", "${acmeTag}"),
		compatSend("replace with If-Match *", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":"example.com/app:3"},"labels":{"tier":"bronze","region":"us"}}`, "If-Match", "*"),
		compatSend("replace with If-Match of two ETags", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":"example.com/app:3"},"labels":{"tier":"bronze"}}`, "If-Match", `"1", "4"`),
		compatSend("replace with a stale If-Match", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":"example.com/app:4"}}`, "If-Match", `"1"`),
		compatSend("replace with a malformed If-Match", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":"example.com/app:4"}}`, "If-Match", `three`),
		compatSend("replace by id, secrets sent back redacted", "PUT", "/v1/tenants/${globex}", compatJSON,
			`{"compute_config":{"image":"example.com/app:2","env":{"A":"1"},"secrets":{"DB":"[redacted]"}},"annotations":{}}`),
		compatSend("replace, labels and annotations left out", "PUT", "/v1/tenants/globex", compatJSON, `{"compute_config":{"image":"example.com/app:2"}}`),
		compatSend("replace, labels cleared", "PUT", "/v1/tenants/hooli", compatJSON, `{"compute_config":{"image":"example.com/app:1"},"labels":{}}`),
		compatSend("replace, a maintenance window", "PUT", "/v1/tenants/hooli", compatJSON,
			`{"compute_config":{"image":"example.com/app:1"},"maintenance_window":{"start":"22:00","end":"01:00"}}`),
		compatSend("replace, no compute_config", "PUT", "/v1/tenants/acme", compatJSON, `{"labels":{"tier":"gold"}}`),
		compatSend("replace, null compute_config", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":null}`),
		compatSend("replace, a schema violation", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":5}}`),
		compatSend("replace, an unknown field", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":"a"},"name":"other"}`),
		compatSend("replace, malformed JSON", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":`),
		compatSend("replace, a merge patch content type", "PUT", "/v1/tenants/acme", compatMerge, `{"compute_config":{"image":"a"}}`),
		compatSend("replace, a tenant that is not", "PUT", "/v1/tenants/nobody", compatJSON, `{"compute_config":{"image":"a"}}`),
		compatSend("replace, leaving the plan's version", "PUT", "/v1/tenants/umbrella", compatJSON, `{"compute_config":{"env":{"OWN":"no"}},"plan":{"name":"standard","pinned":true}}`),
		compatSend("patch compute_config", "PATCH", "/v1/tenants/acme", compatMerge, `{"compute_config":{"env":{"A":"1","B":"2"}}}`),
		compatSend("patch, a member removed with null", "PATCH", "/v1/tenants/acme", compatMerge, `{"compute_config":{"env":{"B":null}}}`),
		compatSend("patch labels and annotations", "PATCH", "/v1/tenants/acme", compatMerge, `{"labels":{"region":"eu"},"annotations":{"owner":"ops@example.com"}}`),
		compatSend("patch, a label removed with null", "PATCH", "/v1/tenants/acme", compatMerge, `{"labels":{"tier":null}}`),
		compatSend("patch, all annotations removed with null", "PATCH", "/v1/tenants/acme", compatMerge, `{"annotations":null}`).saving("acmeTag2", "header ETag"),
		compatSend("patch with If-Match", "PATCH", "/v1/tenants/acme", compatMerge, `{"labels":{"tier":"gold"}}`, "If-Match", "${acmeTag2}"),
		compatSend("patch with a stale If-Match", "PATCH", "/v1/tenants/acme", compatMerge, `{"labels":{"tier":"silver"}}`, "If-Match", `"2"`),
		compatSend("patch, the empty patch", "PATCH", "/v1/tenants/acme", compatMerge, `{}`),
		compatSend("patch, a maintenance window", "PATCH", "/v1/tenants/acme", compatMerge, `{"maintenance_window":{"days":["mon"],"start":"01:00","end":"02:00"}}`),
		compatSend("patch, the maintenance window removed", "PATCH", "/v1/tenants/acme", compatMerge, `{"maintenance_window":null}`),
		compatSend("patch, a secret", "PATCH", "/v1/tenants/globex", compatMerge, `{"compute_config":{"secrets":{"TOKEN":"t0ken"}}}`),
		compatSend("patch, the name", "PATCH", "/v1/tenants/acme", compatMerge, `{"name":"other"}`),
		compatSend("patch, compute_config null", "PATCH", "/v1/tenants/acme", compatMerge, `{"compute_config":null}`),
		compatSend("patch, a schema violation", "PATCH", "/v1/tenants/acme", compatMerge, `{"compute_config":{"image":5}}`),
		compatSend("patch, an unknown provider", "PATCH", "/v1/tenants/acme", compatMerge, `{"compute_config":{"compute_provider":"nomad"}}`),
		compatSend("patch, not an object", "PATCH", "/v1/tenants/acme", compatMerge, `[1]`),
		compatSend("patch, a JSON content type", "PATCH", "/v1/tenants/acme", compatJSON, `{"labels":{"a":"b"}}`),
		compatSend("patch, leaving the plan", "PATCH", "/v1/tenants/umbrella", compatMerge, `{"plan":null,"compute_config":{"image":"example.com/own:1"}}`),
		compatSend("patch, a tenant that is not", "PATCH", "/v1/tenants/nobody", compatMerge, `{"labels":{"a":"b"}}`),
		compatReq("get after the changes", "GET", "/v1/tenants/acme").saving("acmeTag3", "header ETag"),
		compatReq("list after the changes", "GET", "/v1/tenants"),
	}
}

func compatEvents() []compatStep {
	return []compatStep{
		compatReq("events", "GET", "/v1/tenants/acme/events"),
		compatReq("events by id", "GET", "/v1/tenants/${globex}/events"),
		compatReq("events of a tenant that follows a plan", "GET", "/v1/tenants/umbrella/events"),
		compatReq("events, newest first", "GET", "/v1/tenants/acme/events?order=newest"),
		compatReq("events, oldest first", "GET", "/v1/tenants/acme/events?order=oldest"),
		compatReq("events, page 1", "GET", "/v1/tenants/acme/events?page_size=3").saving("events2", "next_page_token"),
		compatReq("events, page 2", "GET", "/v1/tenants/acme/events?page_size=3&page_token=${events2}").saving("events3", "next_page_token"),
		compatReq("events, page 3", "GET", "/v1/tenants/acme/events?page_size=3&page_token=${events3}"),
		compatReq("events, newest first, page 1", "GET", "/v1/tenants/acme/events?order=newest&page_size=4").saving("newest2", "next_page_token"),
		compatReq("events, newest first, page 2", "GET", "/v1/tenants/acme/events?order=newest&page_size=4&page_token=${newest2}"),
		compatReq("events, a token of the other order", "GET", "/v1/tenants/acme/events?order=newest&page_token=${events2}"),
		compatReq("events, an order that is not", "GET", "/v1/tenants/acme/events?order=sideways"),
		compatReq("events, page_size not a number", "GET", "/v1/tenants/acme/events?page_size=x"),
		compatReq("events of a tenant that is not", "GET", "/v1/tenants/nobody/events"),
	}
}

func compatDeletes() []compatStep {
	return []compatStep{
		compatReq("delete with a stale If-Match", "DELETE", "/v1/tenants/acme", "If-Match", `"1"`),
		compatReq("delete as a reader", "DELETE", "/v1/tenants/acme", "Authorization", "Bearer "+readerToken),
		compatReq("delete with If-Match", "DELETE", "/v1/tenants/acme", "If-Match", "${acmeTag3}"),
		compatReq("delete again", "DELETE", "/v1/tenants/acme"),
		compatReq("delete by id", "DELETE", "/v1/tenants/${hooli}"),
		compatReq("delete a tenant that is not", "DELETE", "/v1/tenants/nobody"),
		compatReq("delete with forget, the provider enabled", "DELETE", "/v1/tenants/initech?forget=true"),
		compatReq("get after delete", "GET", "/v1/tenants/acme"),
		compatReq("get after delete, by id, include_deleted", "GET", "/v1/tenants/${acme}?include_deleted=true"),
		compatSend("replace after delete", "PUT", "/v1/tenants/acme", compatJSON, `{"compute_config":{"image":"example.com/app:9"}}`),
		compatSend("patch after delete", "PATCH", "/v1/tenants/acme", compatMerge, `{"labels":{"a":"b"}}`),
		compatSend("create of the name of a tenant being deleted", "POST", "/v1/tenants", compatJSON, `{"name":"acme","compute_config":{"image":"a"}}`),
		compatReq("events after delete", "GET", "/v1/tenants/acme/events?order=newest"),
		compatReq("status after delete", "GET", "/v1/tenants/acme/status"),
		compatReq("list after delete", "GET", "/v1/tenants"),
		compatReq("list deleting", "GET", "/v1/tenants?status=deleting"),
		compatReq("list deleted", "GET", "/v1/tenants?status=deleted"),
		compatReq("list after delete, include_deleted", "GET", "/v1/tenants?include_deleted=true&page_size=3"),
	}
}
