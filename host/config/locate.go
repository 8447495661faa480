package config

import (
	"strconv"
	"strings"
)

// lineIndex maps the path of every key in a TOML document ("api.socket",
// "device[1].selector.model") to the line that defines it.
//
// BurntSushi/toml keeps key positions private and keys them without the index
// of an array-of-tables element, so every [[device]] shares one entry. Error
// messages must point at the right [[device]], so we scan the source ourselves.
// The scanner runs only on text the toml parser has already accepted, which
// keeps it small: it tracks table headers, keys, and enough of each value
// (strings, inline tables, arrays) to step over it.
type lineIndex map[string]int

// line returns the line of path, or of the first key under it when path itself
// was never written (an implicit table), or 0 when nothing matches.
func (ix lineIndex) line(path string) int {
	if l, ok := ix[path]; ok {
		return l
	}
	best := 0
	for k, l := range ix {
		if strings.HasPrefix(k, path+".") || strings.HasPrefix(k, path+"[") {
			if best == 0 || l < best {
				best = l
			}
		}
	}
	return best
}

// indexLines scans src and returns the line of every key path in it.
func indexLines(src string) lineIndex {
	s := &scanner{src: src, line: 1, index: lineIndex{}, arrays: map[string]int{}}
	s.run()
	return s.index
}

// joinKey appends one key segment to a path, quoting it the way TOML would when
// it is not a bare key.
func joinKey(path, seg string) string {
	if !isBare(seg) {
		seg = strconv.Quote(seg)
	}
	if path == "" {
		return seg
	}
	return path + "." + seg
}

// elem names element i of the array at path.
func elem(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func isBare(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

type scanner struct {
	src   string
	pos   int
	line  int
	index lineIndex
	table string // path of the current table
	// arrays holds, for each array of tables, the index of its last element,
	// so "[device.selector]" after the second "[[device]]" means device[1].
	arrays map[string]int
}

func (s *scanner) peek(off int) byte {
	if s.pos+off < len(s.src) {
		return s.src[s.pos+off]
	}
	return 0
}

func (s *scanner) eof() bool { return s.pos >= len(s.src) }

func (s *scanner) next() {
	if s.eof() {
		return
	}
	if s.src[s.pos] == '\n' {
		s.line++
	}
	s.pos++
}

func (s *scanner) record(path string, line int) {
	if _, ok := s.index[path]; !ok {
		s.index[path] = line
	}
}

// skip steps over blanks and comments, and over newlines when lines is set.
func (s *scanner) skip(lines bool) {
	for !s.eof() {
		switch c := s.peek(0); {
		case c == ' ' || c == '\t' || c == '\r':
			s.next()
		case c == '\n' && lines:
			s.next()
		case c == '#':
			for !s.eof() && s.peek(0) != '\n' {
				s.next()
			}
		default:
			return
		}
	}
}

func (s *scanner) run() {
	for {
		s.skip(true)
		if s.eof() {
			return
		}
		start := s.pos
		if s.peek(0) == '[' {
			s.header()
		} else {
			s.keyValue(s.table)
		}
		if s.pos == start { // never loop on text we do not understand
			s.next()
		}
	}
}

func (s *scanner) header() {
	line := s.line
	s.next()
	array := s.peek(0) == '['
	if array {
		s.next()
	}
	keys := s.key()
	s.skip(false)
	for s.peek(0) == ']' {
		s.next()
	}
	path := ""
	for i, k := range keys {
		path = joinKey(path, k)
		if n, ok := s.arrays[path]; ok && i < len(keys)-1 {
			path = elem(path, n)
		}
	}
	if array {
		n := 0
		if last, ok := s.arrays[path]; ok {
			n = last + 1
		}
		s.arrays[path] = n
		s.record(path, line)
		path = elem(path, n)
	}
	s.record(path, line)
	s.table = path
}

func (s *scanner) keyValue(base string) {
	line := s.line
	path := base
	for _, k := range s.key() {
		path = joinKey(path, k)
	}
	s.record(path, line)
	s.skip(false)
	if s.peek(0) != '=' {
		return
	}
	s.next()
	s.skip(false)
	s.value(path)
}

// key reads a dotted key: bare, "basic" or 'literal' segments joined by dots.
func (s *scanner) key() []string {
	var keys []string
	for {
		s.skip(false)
		switch s.peek(0) {
		case '"':
			keys = append(keys, s.basicString())
		case '\'':
			keys = append(keys, s.literalString())
		default:
			start := s.pos
			for !s.eof() && !strings.ContainsRune(" \t\r\n.=]#,{}\"'", rune(s.peek(0))) {
				s.next()
			}
			if s.pos == start {
				return keys
			}
			keys = append(keys, s.src[start:s.pos])
		}
		s.skip(false)
		if s.peek(0) != '.' {
			return keys
		}
		s.next()
	}
}

func (s *scanner) value(path string) {
	switch s.peek(0) {
	case '"':
		s.basicString()
	case '\'':
		s.literalString()
	case '{':
		s.inlineTable(path)
	case '[':
		s.array(path)
	default:
		// Numbers, booleans and dates never hold these bytes (a date may hold a
		// space, so blanks do not end it).
		for !s.eof() && !strings.ContainsRune(",]}#\n", rune(s.peek(0))) {
			s.next()
		}
	}
}

// inlineTable reads a { key = value, ... } table, recording its keys under path.
// Deliberately parallel to array: the loop over separators is the same, what
// an entry is (a key and its value, or an indexed value) is not, and a shared
// loop would take that as a function for two callers.
func (s *scanner) inlineTable(path string) {
	s.next()
	for !s.eof() {
		s.skip(true)
		switch s.peek(0) {
		case '}':
			s.next()
			return
		case ',':
			s.next()
		default:
			start := s.pos
			s.keyValue(path)
			if s.pos == start {
				s.next()
			}
		}
	}
}

// array reads a [ value, ... ] array, recording its elements under path by
// index. Deliberately parallel to inlineTable: see why there.
func (s *scanner) array(path string) {
	s.next()
	i := 0
	for !s.eof() {
		s.skip(true)
		switch s.peek(0) {
		case ']':
			s.next()
			return
		case ',':
			s.next()
			i++
		default:
			start := s.pos
			s.record(elem(path, i), s.line)
			s.value(elem(path, i))
			if s.pos == start {
				s.next()
			}
		}
	}
}

// basicString reads a "..." or """...""" string and returns its text with
// escapes decoded (well enough for keys, which is all the text is used for).
func (s *scanner) basicString() string {
	if strings.HasPrefix(s.src[s.pos:], `"""`) {
		return s.multiline('"')
	}
	s.next()
	start := s.pos
	for !s.eof() && s.peek(0) != '"' && s.peek(0) != '\n' {
		if s.peek(0) == '\\' {
			s.next()
		}
		s.next()
	}
	raw := s.src[start:min(s.pos, len(s.src))]
	s.next()
	if text, err := strconv.Unquote(`"` + raw + `"`); err == nil {
		return text
	}
	return raw
}

// literalString reads a '...' string, or its multi-line form with three quotes
// each side, which has no escapes.
func (s *scanner) literalString() string {
	if strings.HasPrefix(s.src[s.pos:], "'''") {
		return s.multiline('\'')
	}
	s.next()
	start := s.pos
	for !s.eof() && s.peek(0) != '\'' && s.peek(0) != '\n' {
		s.next()
	}
	text := s.src[start:s.pos]
	s.next()
	return text
}

// multiline reads a multi-line string, delimited by three q quotes (" or ') each
// side, from its opening delimiter and returns its raw text. A backslash escapes
// the next byte in a basic (") string only.
func (s *scanner) multiline(q byte) string {
	delim := strings.Repeat(string(q), 3)
	s.pos += len(delim)
	start := s.pos
	for !s.eof() {
		if q == '"' && s.peek(0) == '\\' {
			s.next()
			s.next()
			continue
		}
		if strings.HasPrefix(s.src[s.pos:], delim) {
			end := s.pos
			s.pos += len(delim)
			// Up to two quotes may sit right before the closing delimiter.
			for i := 0; i < 2 && s.peek(0) == q; i++ {
				s.pos++
				end++
			}
			return s.src[start:end]
		}
		s.next()
	}
	return s.src[start:]
}
