package oidc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/jaxxstorm/landlord/internal/jsonscan"
)

// checkHeader refuses what a token's header asks that landlord does not
// do: a critical extension (RFC 7515 §4.1.11: a recipient that does not
// understand one must refuse the token), or a typ that is not a JWT's.
// It runs before the signature is checked, so that its words confirm
// nothing about the signature.
func checkHeader(h jose.Header) error {
	if crit, ok := h.ExtraHeaders["crit"]; ok {
		names, isList := crit.([]any)
		var named []string
		for _, n := range names {
			if s, ok := n.(string); ok {
				named = append(named, s)
			}
		}
		if !isList || len(named) == 0 || len(named) != len(names) {
			return invalid("its crit header is not a list of extension names (RFC 7515 §4.1.11)")
		}
		return invalid("its crit header makes the extension %s critical, which landlord does not implement (RFC 7515 §4.1.11)", strings.Join(named, ", "))
	}
	if typ, ok := h.ExtraHeaders[jose.HeaderType]; ok {
		s, isString := typ.(string)
		switch {
		case !isString:
			return invalid("its typ header is %s, not a string", kind(mustMarshal(typ)))
		case !acceptedType(s):
			return invalid("its type is %q, not JWT", s)
		}
	}
	return nil
}

// claimShape is what a claim must be, when it is present.
type claimShape struct {
	name, want string
	fits       func(raw json.RawMessage) bool
}

// checkClaims reads the claims of a token and reports every claim that is
// not of its type (RFC 7519 §4.1: iss, sub and jti strings, aud a string
// or a list of them, exp, nbf and iat numbers of seconds; the actor claim
// a string and the groups claim a string or a list of them), all at once.
// It reads them before the signature is checked, so that what it says of
// a malformed token confirms nothing about the signature: a claim of the
// wrong type is wrong whoever signed it.
func (v *Verifier) checkClaims(tok *jwt.JSONWebToken) error {
	var all map[string]json.RawMessage
	if err := tok.UnsafeClaimsWithoutVerification(&all); err != nil || all == nil {
		return invalid("its payload is not a JSON object of claims")
	}
	shapes := []claimShape{
		{"iss", "a string", isString}, {"sub", "a string", isString}, {"jti", "a string", isString},
		{"aud", "a string or a list of strings", isStrings},
		{"exp", "a number of seconds since 1970 (NumericDate)", isNumber},
		{"nbf", "a number of seconds since 1970 (NumericDate)", isNumber},
		{"iat", "a number of seconds since 1970 (NumericDate)", isNumber},
	}
	seen := map[string]bool{}
	for _, s := range shapes {
		seen[s.name] = true
	}
	if !seen[v.cfg.ActorClaim] {
		shapes = append(shapes, claimShape{v.cfg.ActorClaim, "a string naming the token's holder", isString})
		seen[v.cfg.ActorClaim] = true
	}
	if !seen[v.cfg.GroupsClaim] {
		shapes = append(shapes, claimShape{v.cfg.GroupsClaim, "a list of strings", isStrings})
	}
	var problems []string
	for _, s := range shapes {
		raw, ok := all[s.name]
		if !ok || s.fits(raw) {
			continue
		}
		problems = append(problems, fmt.Sprintf("its %s claim is %s, not %s", s.name, kind(raw), s.want))
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return invalid("%s", strings.Join(problems, "; "))
}

func isString(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && !jsonscan.IsNull(raw)
}

func isStrings(raw json.RawMessage) bool {
	var list []string
	return isString(raw) || (json.Unmarshal(raw, &list) == nil && !jsonscan.IsNull(raw))
}

func isNumber(raw json.RawMessage) bool {
	var n json.Number
	return kind(raw) == "a number" && json.Unmarshal(raw, &n) == nil
}

// kind names the JSON type of raw, for messages: they say what a claim is
// without repeating its value.
func kind(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "empty"
	}
	switch b[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(b, &items) != nil || len(items) == 0 {
			return "a list"
		}
		of := kind(items[0])
		for _, it := range items[1:] {
			if kind(it) != of {
				return "a list of mixed values"
			}
		}
		if p, ok := plural[of]; ok {
			return "a list of " + p
		}
		return "a list of lists"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}

// plural names many values of a kind.
var plural = map[string]string{"a string": "strings", "an object": "objects", "a list": "lists", "true or false": "true or false values",
	"null": "nulls", "a number": "numbers", "empty": "empty values"}

func mustMarshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
