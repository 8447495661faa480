package config

import (
	"reflect"
	"testing"
)

func TestIndexLines(t *testing.T) {
	const src = `# comment = 1
top = "a # not a comment"
dotted.key = 2
"quoted key" = 3

[api]
socket = '''
multi
line = "not a key"
'''
mode = """
also "" multi
"""  # done

[[device]]
index = 0
selector = { model = "H100", min_memory = "80GiB" }

[[device]]
options = { A = "1",
  B = "2" }
list = [
  1, # one
  { k = "v" },
]
[device.selector]
model = "A100"

[a."b.c".d]
e = 1
`
	got := indexLines(src)
	want := lineIndex{
		"top":                           2,
		"dotted.key":                    3,
		`"quoted key"`:                  4,
		"api":                           6,
		"api.socket":                    7,
		"api.mode":                      11,
		"device":                        15,
		"device[0]":                     15,
		"device[0].index":               16,
		"device[0].selector":            17,
		"device[0].selector.model":      17,
		"device[0].selector.min_memory": 17,
		"device[1]":                     19,
		"device[1].options":             20,
		"device[1].options.A":           20,
		"device[1].options.B":           21,
		"device[1].list":                22,
		"device[1].list[0]":             23,
		"device[1].list[1]":             24,
		"device[1].list[1].k":           24,
		"device[1].selector":            26,
		"device[1].selector.model":      27,
		`a."b.c".d`:                     29,
		`a."b.c".d.e`:                   30,
	}
	if !reflect.DeepEqual(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: line %d, want %d", k, got[k], v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s at line %d", k, v)
			}
		}
	}
	// A table only implied by a dotted key takes the line of its first key.
	if l := got.line("dotted"); l != 3 {
		t.Errorf("implicit table: line %d, want 3", l)
	}
	if l := got.line("nowhere"); l != 0 {
		t.Errorf("missing key: line %d, want 0", l)
	}
}

// TestIndexLinesNeverStalls feeds the scanner truncated documents: it runs only
// on text the parser accepted, but it must end on anything.
func TestIndexLinesNeverStalls(t *testing.T) {
	const src = "[[a]]\nb = { c = [1, \"x\\\"\", '''y'''] }\nd = \"\"\"z\"\"\"\n[e.'f']\n"
	for i := range len(src) {
		indexLines(src[:i])
	}
}
