package provider

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// attributeOf maps the JSON pointer of a field of a request body, as
// landlord's problems name it, to the attribute that set the field; false
// when no attribute did.
type attributeOf func(pointer string) (path.Path, bool)

// addAPIError adds err to diags: a problem of the API with fields at
// fault gives one attribute error per field that at maps (its pointer and
// message, then the problem's detail), and an error for the rest; any
// other error is one error.
func addAPIError(diags *diag.Diagnostics, summary string, err error, at attributeOf) {
	e, ok := problemOf(err)
	if !ok || len(e.Problem.Errors) == 0 || at == nil {
		diags.AddError(summary, err.Error())
		return
	}
	detail := cmp.Or(e.Problem.Detail, e.Problem.Title)
	var rest []string
	for _, f := range e.Problem.Errors {
		p, ok := at(f.Pointer)
		if f.Pointer == "" || !ok {
			rest = append(rest, cmp.Or(f.Pointer, f.Parameter)+": "+f.Message)
			continue
		}
		diags.AddAttributeError(p, summary, fmt.Sprintf("%s: %s\n\nlandlord: %s (%d %s)", f.Pointer, f.Message, detail, e.Status, e.Problem.Code))
	}
	if n := e.Problem.ErrorsOmitted; n > 0 {
		rest = append(rest, fmt.Sprintf("and %d more fields at fault", n))
	}
	if len(rest) > 0 {
		diags.AddError(summary, fmt.Sprintf("landlord: %s (%d %s)\n  %s", detail, e.Status, e.Problem.Code, strings.Join(rest, "\n  ")))
	}
}

// tenantAttribute maps the pointers of a tenant's create or change to the
// landlord_tenant attributes; a pointer into compute_config at or under a
// key of secrets (a secrets_wo value) is that value's.
func tenantAttribute(secrets map[string]string) attributeOf {
	return func(pointer string) (path.Path, bool) {
		tokens, err := pointerTokens(pointer)
		if err != nil || len(tokens) == 0 {
			return path.Empty(), false
		}
		switch head, rest := tokens[0], tokens[1:]; head {
		case "name":
			return path.Root("name"), true
		case "compute_config":
			in := pointerOf(rest)
			for key := range secrets {
				if in == key || strings.HasPrefix(in, key+"/") {
					return path.Root("secrets_wo").AtMapKey(key), true
				}
			}
			return path.Root("compute_config"), true
		case "labels", "annotations":
			if len(rest) > 0 {
				return path.Root(head).AtMapKey(rest[0]), true
			}
			return path.Root(head), true
		case "plan":
			if len(rest) > 0 && rest[0] == "version" {
				return path.Root("pin"), true
			}
			return path.Root("plan"), true
		case "maintenance_window":
			p := path.Root("maintenance_window")
			if len(rest) > 0 {
				p = p.AtName(rest[0])
				if len(rest) > 1 && rest[0] == "days" {
					if i, err := strconv.Atoi(rest[1]); err == nil {
						p = p.AtListIndex(i)
					}
				}
			}
			return p, true
		}
		return path.Empty(), false
	}
}
