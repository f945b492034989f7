package httpserver

import (
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// tokenKind is what valueScanner.token found.
type tokenKind byte

const (
	tokEnd    tokenKind = iota // the end of the value
	tokOpen                    // '['
	tokClose                   // ']'
	tokObject                  // '{': no tensor value is an object, so the scan stops there
	tokString
	tokNumber
	tokTrue
	tokFalse
	tokNull
)

// valueScanner walks one JSON value of arrays, strings, numbers and
// literals token by token, in place: a token is a slice of the scanned
// bytes (a string with its quotes), and nothing is allocated. It checks
// the grammar as it goes (the separators, and each number and string), so
// that what it passes on is what encoding/json would have decoded.
type valueScanner struct {
	b     []byte
	i     int
	depth int  // arrays open
	after bool // a value or a closed array was read: ',' or ']' or the end comes next
}

// syntaxError says where the scanner found what JSON does not allow.
func (s *valueScanner) syntaxError(what string) error {
	if s.i >= len(s.b) {
		return fmt.Errorf("unexpected end of JSON input")
	}
	return fmt.Errorf("invalid character %q %s (offset %d)", s.b[s.i], what, s.i)
}

func (s *valueScanner) space() { s.i = skipSpace(s.b, s.i) }

// token returns the next token.
func (s *valueScanner) token() (tokenKind, []byte, error) {
	s.space()
	if s.after {
		if s.depth == 0 {
			if s.i < len(s.b) {
				return 0, nil, s.syntaxError("after the top-level value")
			}
			return tokEnd, nil, nil
		}
		if s.i >= len(s.b) {
			return 0, nil, s.syntaxError("")
		}
		switch s.b[s.i] {
		case ']':
			s.i++
			s.depth--
			return tokClose, nil, nil
		case ',':
			s.i++
			s.space()
		default:
			return 0, nil, s.syntaxError("after array element")
		}
		s.after = false
		if s.i < len(s.b) && s.b[s.i] == ']' {
			return 0, nil, s.syntaxError("after a comma")
		}
	}
	if s.i >= len(s.b) {
		return 0, nil, s.syntaxError("")
	}
	start := s.i
	switch c := s.b[s.i]; c {
	case '[':
		s.i++
		s.depth++
		s.space()
		// An empty array: the scanner stands on its ']', which the next
		// token closes it with.
		s.after = s.i < len(s.b) && s.b[s.i] == ']'
		return tokOpen, nil, nil
	case '{':
		return tokObject, nil, nil
	case '"':
		if err := s.string(); err != nil {
			return 0, nil, err
		}
		s.after = true
		return tokString, s.b[start:s.i], nil
	case 't', 'f', 'n':
		for _, lit := range [...]struct {
			text string
			kind tokenKind
		}{{"true", tokTrue}, {"false", tokFalse}, {"null", tokNull}} {
			if len(s.b)-s.i >= len(lit.text) && string(s.b[s.i:s.i+len(lit.text)]) == lit.text {
				s.i += len(lit.text)
				s.after = true
				return lit.kind, s.b[start:s.i], nil
			}
		}
		return 0, nil, s.syntaxError("in literal")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			if err := s.number(); err != nil {
				return 0, nil, err
			}
			s.after = true
			return tokNumber, s.b[start:s.i], nil
		}
		return 0, nil, s.syntaxError("looking for beginning of value")
	}
}

// string takes the string whose opening quote is at the scanner, checking
// that it has no control characters and only JSON's escapes.
func (s *valueScanner) string() error {
	for s.i++; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return nil
		case c < ' ':
			return s.syntaxError("in string literal")
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return s.syntaxError("")
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if getu4(s.b[s.i-1:]) < 0 {
					return s.syntaxError("in \\u hexadecimal character escape")
				}
				s.i += 4
			default:
				return s.syntaxError("in string escape code")
			}
		}
	}
	return s.syntaxError("")
}

// number takes the number at the scanner, as JSON writes one:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *valueScanner) number() error {
	digits := func() int {
		from := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		return s.i - from
	}
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return s.syntaxError("in numeric literal")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return s.syntaxError("after decimal point in numeric literal")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return s.syntaxError("in exponent of numeric literal")
		}
	}
	return nil
}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value,
// or -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// appendUnquoted appends the string that quoted, a JSON string with its
// quotes, decodes to, exactly as encoding/json decodes it: escapes
// resolved, a surrogate that is not half of a pair and bytes that are not
// UTF-8 replaced by U+FFFD. It reports false for what is not a JSON
// string.
func appendUnquoted(b, quoted []byte) ([]byte, bool) {
	if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
		return b, false
	}
	s := quoted[1 : len(quoted)-1]
	// The common case: nothing to resolve or replace.
	plain := 0
	for plain < len(s) {
		c := s[plain]
		if c == '\\' || c == '"' || c < ' ' || c >= utf8.RuneSelf {
			break
		}
		plain++
	}
	b = append(b, s[:plain]...)
	for r := plain; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return b, false
			}
			switch s[r] {
			case '"', '\\', '/', '\'':
				b = append(b, s[r])
				r++
			case 'b':
				b = append(b, '\b')
				r++
			case 'f':
				b = append(b, '\f')
				r++
			case 'n':
				b = append(b, '\n')
				r++
			case 'r':
				b = append(b, '\r')
				r++
			case 't':
				b = append(b, '\t')
				r++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return b, false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
			default:
				return b, false
			}
		case c == '"' || c < ' ':
			return b, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			if rr == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, unicode.ReplacementChar)
			} else {
				b = append(b, s[r:r+size]...)
			}
			r += size
		}
	}
	return b, true
}
