package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/sdk/violation"
)

// MaxDepth is the nesting the API accepts in a request body: the body
// itself is level 1, each object or array inside it one more.
const MaxDepth = 64

// MaxKeyBytes bounds the keys of objects. The longest a tenant needs is a
// label or annotation key (a 253-character prefix, "/", a 63-character
// name); a longer one would only make every pointer and error that names it
// as long.
const MaxKeyBytes = 512

// frame is one open object or array.
type frame struct {
	object bool
	// key is the key of the member being read (objects); index the number of
	// elements read so far, so the index of the one being read (arrays).
	key   string
	index int
	// wantKey: the next token of an object is a key.
	wantKey bool
	// keys are the keys seen so far (objects), made on the second key.
	first string
	keys  map[string]struct{}
}

// seen records key and reports whether the object had it already.
func (f *frame) seen(key string) bool {
	switch {
	case f.index == 0:
		f.first = key
	case f.keys == nil:
		if key == f.first {
			return true
		}
		f.keys = map[string]struct{}{f.first: {}, key: {}}
	default:
		if _, dup := f.keys[key]; dup {
			return true
		}
		f.keys[key] = struct{}{}
	}
	f.index++
	return false
}

// walker reads the tokens of one JSON value and knows where it is.
type walker struct {
	dec   *json.Decoder
	stack []frame
}

func newWalker(raw []byte) *walker {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers stay text: nothing to parse or box as float64
	return &walker{dec: dec}
}

// pointer is the JSON pointer of the value being read.
func (w *walker) pointer() string { return w.pointerTo(len(w.stack)) }

// pointerTo is the JSON pointer of the container n levels down: 0 is the
// document, len(w.stack) the value being read.
func (w *walker) pointerTo(n int) string {
	var b strings.Builder
	for _, f := range w.stack[:n] {
		b.WriteByte('/')
		if f.object {
			b.WriteString(violation.Escape(f.key))
		} else {
			b.WriteString(strconv.Itoa(f.index))
		}
	}
	return b.String()
}

// done records that the value being read is complete.
func (w *walker) done() {
	if len(w.stack) == 0 {
		return
	}
	top := &w.stack[len(w.stack)-1]
	if top.object {
		top.wantKey = true
	} else {
		top.index++
	}
}

// Check reads raw, one JSON value, and returns its first offence in the
// order of the text: an object or array nested deeper than maxDepth (its
// pointer, with nothing below it read), a key longer than MaxKeyBytes (the
// pointer of its object), or a key an object already has (the pointer of
// the second, which names the key). Keys are compared as decoded, so "a" and
// "\u0061" are the same key. Malformed JSON is no offence: Check stops at
// the first syntax error, or at the end of the first value, and reports
// nothing, leaving the decoder that follows to say what is wrong.
func Check(raw []byte, maxDepth int) (violation.Violation, bool) {
	w := newWalker(raw)
	for {
		tok, err := w.dec.Token()
		if err != nil {
			return violation.Violation{}, false
		}
		var top *frame
		if n := len(w.stack); n > 0 {
			top = &w.stack[n-1]
		}
		if top != nil && top.object && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				w.stack = w.stack[:len(w.stack)-1]
				w.done()
			} else {
				key, _ := tok.(string)
				if len(key) > MaxKeyBytes {
					// The object's pointer: the key's would be as long.
					return violation.Violation{Pointer: w.pointerTo(len(w.stack) - 1),
						Message: fmt.Sprintf("has a key of %d bytes; keys are at most %d", len(key), MaxKeyBytes)}, true
				}
				top.key, top.wantKey = key, false
				if top.seen(key) {
					// The pointer names the key; the message does not repeat
					// what may be a long one.
					return violation.Violation{Pointer: w.pointer(), Message: "repeats a key of its object; an object may have each key once"}, true
				}
				continue
			}
		} else {
			switch tok {
			case json.Delim('{'), json.Delim('['):
				if len(w.stack) >= maxDepth {
					return violation.Violation{Pointer: w.pointer(), Message: fmt.Sprintf("nests deeper than %d levels of objects and arrays", maxDepth)}, true
				}
				w.stack = append(w.stack, frame{object: tok == json.Delim('{'), wantKey: tok == json.Delim('{')})
				continue
			case json.Delim('}'), json.Delim(']'):
				w.stack = w.stack[:len(w.stack)-1]
				w.done()
			default:
				w.done()
			}
		}
		if len(w.stack) == 0 {
			return violation.Violation{}, false
		}
	}
}

// PointerAt returns the JSON pointer of the innermost value of raw, one
// JSON value, that holds the byte at offset-1: the value a decoding error
// with that offset is about (encoding/json's UnmarshalTypeError.Offset is
// the end of a scalar, or just past the opening bracket of an object or
// array). It returns "" (the whole document) when raw is malformed before
// offset.
func PointerAt(raw []byte, offset int64) string {
	w := newWalker(raw)
	for {
		start := w.dec.InputOffset()
		if start >= offset {
			return w.pointer()
		}
		tok, err := w.dec.Token()
		if err != nil {
			return w.pointer()
		}
		end := w.dec.InputOffset()
		var top *frame
		if n := len(w.stack); n > 0 {
			top = &w.stack[n-1]
		}
		switch {
		case top != nil && top.object && top.wantKey && tok != json.Delim('}'):
			top.key, _ = tok.(string)
			top.wantKey = false
		case tok == json.Delim('{') || tok == json.Delim('['):
			if end >= offset {
				return w.pointer()
			}
			w.stack = append(w.stack, frame{object: tok == json.Delim('{'), wantKey: tok == json.Delim('{')})
		case tok == json.Delim('}') || tok == json.Delim(']'):
			w.stack = w.stack[:len(w.stack)-1]
			if end >= offset {
				return w.pointer()
			}
			w.done()
		default:
			if end >= offset {
				return w.pointer()
			}
			w.done()
		}
	}
}
