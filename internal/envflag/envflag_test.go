package envflag

import (
	"strings"
	"testing"
)

func TestInt(t *testing.T) {
	env := map[string]string{"SET": "12", "NEGATIVE": "-3", "BAD": "twelve"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name    string
		want    int
		wantErr string // "" when it reads
	}{
		{"SET", 12, ""},
		{"NEGATIVE", -3, ""},
		{"UNSET", 7, ""},
		{"BAD", 0, `BAD="twelve" is not an integer`},
	} {
		got, err := Int(getenv, tc.name, 7)
		switch {
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("Int(%s) = %d, %v; want %d", tc.name, got, err, tc.want)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Int(%s) error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestBool(t *testing.T) {
	env := map[string]string{"ON": "1", "OFF": "false", "BAD": "yes please"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name    string
		want    bool
		wantErr string // "" when it reads
	}{
		{"ON", true, ""},
		{"OFF", false, ""},
		{"UNSET", true, ""},
		{"BAD", false, `BAD="yes please" is not a boolean`},
	} {
		got, err := Bool(getenv, tc.name, true)
		switch {
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("Bool(%s) = %v, %v; want %v", tc.name, got, err, tc.want)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Bool(%s) error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}
