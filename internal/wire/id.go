package wire

// IsID reports whether s has the form of a tenant id: a UUID in its
// 36-character text form (8-4-4-4-12 hexadecimal digits, either case).
// Names never do, so "id or name" lookups are never ambiguous.
func IsID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
