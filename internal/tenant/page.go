package tenant

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ClampPageSize applies the default and the cap.
func ClampPageSize(n int) int {
	switch {
	case n <= 0:
		return DefaultPageSize
	case n > MaxPageSize:
		return MaxPageSize
	}
	return n
}

// cursor is what a page token holds: the last key of the previous page.
type cursor struct {
	After string `json:"a"`
}

// EncodePageToken returns the opaque token of a page that ends at key.
func EncodePageToken(key string) string {
	b, _ := json.Marshal(cursor{After: key})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodePageToken returns the key a token continues after; "" for an empty
// token.
func DecodePageToken(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	var c cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.After == "" {
		return "", fmt.Errorf("%w: %q was not returned by a listing", ErrInvalidPageToken, token)
	}
	return c.After, nil
}

// DecodeTenantPageToken decodes a tenant listing token, whose key is a
// tenant id.
func DecodeTenantPageToken(token string) (string, error) {
	key, err := DecodePageToken(token)
	if err == nil && key != "" && !IsID(key) {
		return "", fmt.Errorf("%w: %q was not returned by a tenant listing", ErrInvalidPageToken, token)
	}
	return key, err
}

// newestPrefix marks the key of a newest-first event listing's token, so
// that a token is not taken for one of the other order, which would page
// from the wrong end.
const newestPrefix = "<"

// EncodeEventPageToken returns the token of an event page that ends at seq,
// continuing newest first when newest is set.
func EncodeEventPageToken(seq int64, newest bool) string {
	key := strconv.FormatInt(seq, 10)
	if newest {
		key = newestPrefix + key
	}
	return EncodePageToken(key)
}

// DecodeEventPageToken decodes an event listing token, whose key is a
// sequence number: 0 for an empty token. A token of the other order than
// newest says is an ErrInvalidPageToken.
func DecodeEventPageToken(token string, newest bool) (int64, error) {
	key, err := DecodePageToken(token)
	if err != nil || key == "" {
		return 0, err
	}
	digits, marked := strings.CutPrefix(key, newestPrefix)
	seq, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || seq < 0 || marked != newest || (newest && seq == 0) {
		order := "an oldest-first"
		if newest {
			order = "a newest-first"
		}
		return 0, fmt.Errorf("%w: %q was not returned by %s event listing", ErrInvalidPageToken, token, order)
	}
	return seq, nil
}
