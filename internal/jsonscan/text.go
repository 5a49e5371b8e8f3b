package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/jaxxstorm/landlord/sdk/violation"
)

// InvalidText returns the first string of raw, one JSON document, that is
// not text: one holding bytes that are not UTF-8, or an escape of half a
// UTF-16 surrogate pair ("\ud800"), which is no character. A decoder would
// replace either with U+FFFD, changing what was sent without a word; the
// API refuses the document instead. A key that is not text is reported at
// the pointer of its object, since its own pointer could not spell it; a
// value at its own. Bytes that are not UTF-8 outside any string make the
// document malformed too: they are reported where they stand. A document
// of valid UTF-8 without a surrogate escape is not decoded.
func InvalidText(raw []byte) (violation.Violation, bool) {
	if utf8.Valid(raw) && !hasSurrogateEscape(raw) {
		return violation.Violation{}, false
	}
	w := newWalker(raw)
	for {
		start := w.dec.InputOffset()
		tok, err := w.dec.Token()
		if err != nil {
			if !utf8.Valid(raw[start:]) {
				return violation.Violation{Pointer: w.pointer(), Message: "is not valid UTF-8"}, true
			}
			return violation.Violation{}, false
		}
		var top *frame
		if n := len(w.stack); n > 0 {
			top = &w.stack[n-1]
		}
		isKey := top != nil && top.object && top.wantKey && tok != json.Delim('}')
		if _, ok := tok.(string); ok {
			// The text since the previous token: separators and white space,
			// which are ASCII, and the string.
			if msg := textProblem(raw[start:w.dec.InputOffset()]); msg != "" {
				if isKey {
					return violation.Violation{Pointer: w.pointerTo(len(w.stack) - 1), Message: "has a key that " + msg}, true
				}
				return violation.Violation{Pointer: w.pointer(), Message: msg}, true
			}
		}
		switch {
		case isKey:
			top.key, _ = tok.(string)
			top.wantKey = false
		case tok == json.Delim('{') || tok == json.Delim('['):
			w.stack = append(w.stack, frame{object: tok == json.Delim('{'), wantKey: tok == json.Delim('{')})
		case tok == json.Delim('}') || tok == json.Delim(']'):
			w.stack = w.stack[:len(w.stack)-1]
			w.done()
		default:
			w.done()
		}
		if len(w.stack) == 0 {
			return violation.Violation{}, false
		}
	}
}

// textProblem says what is wrong with the JSON text of one string, or ""
// when it is text.
func textProblem(s []byte) string {
	if !utf8.Valid(s) {
		return "is not valid UTF-8"
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		r, ok := escapedRune(s, i)
		if !ok {
			i++ // the escaped character
			continue
		}
		i += 5
		if !utf16.IsSurrogate(r) {
			continue
		}
		if next, ok := escapedRune(s, i+1); ok && r < 0xdc00 && utf16.DecodeRune(r, next) != utf8.RuneError {
			i += 6 // a pair: one character
			continue
		}
		return fmt.Sprintf("holds \\u%04x, half of a UTF-16 surrogate pair, which is no character", r)
	}
	return ""
}

// escapedRune reads the escape \uXXXX at s[i:], if there is one.
func escapedRune(s []byte, i int) (rune, bool) {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 16)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

// hasSurrogateEscape reports whether JSON text may hold an escape of a
// surrogate: \uD800 to \uDFFF, in either case.
func hasSurrogateEscape(raw []byte) bool {
	for i := bytes.Index(raw, []byte(`\u`)); i >= 0 && i+3 < len(raw); {
		if c, d := raw[i+2], raw[i+3]; (c == 'd' || c == 'D') && bytes.IndexByte([]byte("89abcdefABCDEF"), d) >= 0 {
			return true
		}
		j := bytes.Index(raw[i+2:], []byte(`\u`))
		if j < 0 {
			return false
		}
		i += 2 + j
	}
	return false
}
