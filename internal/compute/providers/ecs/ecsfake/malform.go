package ecsfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// MalformNext makes the next n successful answers of op (an operation name,
// or "*" for any) malformed the way a non-conforming ECS emulator has sent
// them: every string member that holds an integer, such as a task's or task
// definition's cpu and memory ("256"), is written as a JSON number. An
// answer with no such member is sent as a JSON array holding the object.
// The SDK's deserializer refuses either, so the client sees a
// *smithy.DeserializationError where ECS would have given it an answer.
//
// It is a test aid for a provider's handling of an answer it cannot read,
// not ECS behaviour: ECS's answers always match its model. The operation
// itself runs as usual (a malformed CreateService answer still creates the
// service), as a client that cannot read an answer cannot know whether the
// call took effect. Requests refused with an error are sent unchanged and
// use up nothing.
func (s *Server) MalformNext(op string, n int) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.malformed = append(s.malformed, fault{op: op, left: n})
}

// takeMalformed uses up one pending malformation that matches op, if any.
func (s *Server) takeMalformed(op string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.malformed {
		m := &s.malformed[i]
		if m.op != op && m.op != "*" {
			continue
		}
		m.left--
		if m.left == 0 {
			s.malformed = append(s.malformed[:i], s.malformed[i+1:]...)
		}
		return true
	}
	return false
}

// malform rewrites an encoded answer as MalformNext describes.
func malform(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("ecsfake: malform: %w", err)
	}
	v, changed := numbersForStrings(v)
	if !changed {
		v = []any{v}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("ecsfake: malform: %w", err)
	}
	return out, nil
}

// numbersForStrings replaces every string holding an integer with that
// number, reporting whether it replaced any.
func numbersForStrings(v any) (any, bool) {
	changed := false
	switch x := v.(type) {
	case string:
		if _, err := strconv.ParseInt(x, 10, 64); err == nil {
			return json.Number(x), true
		}
	case map[string]any:
		for k, e := range x {
			var c bool
			x[k], c = numbersForStrings(e)
			changed = changed || c
		}
	case []any:
		for i, e := range x {
			var c bool
			x[i], c = numbersForStrings(e)
			changed = changed || c
		}
	}
	return v, changed
}
