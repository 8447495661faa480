package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkhost/zkhost/internal/version"
)

var update = flag.Bool("update", false, "rewrite the golden help texts in testdata/help")

// helpTopics are the help pages users read: zkhost help, each group's and each
// command's, named by their golden file.
func helpTopics() map[string][]string {
	topics := map[string][]string{"zkhost": nil, "key": {"key"}}
	for _, c := range commands.Commands() {
		topics[strings.ReplaceAll(c.Name, " ", "-")] = strings.Fields(c.Name)
	}
	return topics
}

// TestHelpGolden compares every help page with its golden text
// (testdata/help/NAME.txt; go test -run TestHelpGolden -update rewrites them
// after a deliberate change). Help that was asked for is output: stdout, exit 0,
// nothing on stderr; `zkhost help CMD`, `zkhost CMD --help` and `zkhost CMD -h`
// print the same page.
func TestHelpGolden(t *testing.T) {
	for name, topic := range helpTopics() {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"help"}, topic...), &stdout, &stderr); code != 0 || stderr.Len() != 0 {
				t.Fatalf("zkhost help %s: exit %d, stderr %q", strings.Join(topic, " "), code, stderr.String())
			}
			golden := filepath.Join("testdata", "help", name+".txt")
			if *update {
				if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -run TestHelpGolden -update writes it)", err)
			}
			if stdout.String() != string(want) {
				t.Errorf("zkhost help %s differs from %s (-update rewrites it after a deliberate change):\n%s", strings.Join(topic, " "), golden, stdout.String())
			}
			for _, h := range []string{"--help", "-h"} {
				var out, errOut bytes.Buffer
				args := append(append([]string(nil), topic...), h)
				if code := run(args, &out, &errOut); code != 0 || out.String() != string(want) || errOut.Len() != 0 {
					t.Errorf("zkhost %s: exit %d, stderr %q; stdout differs from zkhost help's: %v", strings.Join(args, " "), code, errOut.String(), out.String() != string(want))
				}
			}
			if len(topic) == 0 {
				return
			}
			// Every command says what it does: a paragraph between the synopsis and
			// the flags.
			if c, _, _, ok := commands.Find(topic); ok {
				page := stdout.String()
				usage := "Usage: zkhost " + c.Usage + "\n\n"
				flags := strings.Index(page, "\nFlags:\n")
				if !strings.HasPrefix(page, usage) || flags < 0 || strings.TrimSpace(page[len(usage):flags]) == "" {
					t.Errorf("zkhost help %s has no description between its synopsis and its flags:\n%s", c.Name, page)
				}
				if strings.Contains(page, `"s `) {
					t.Errorf("zkhost help %s has a stray quote for an apostrophe:\n%s", c.Name, page)
				}
			}
		})
	}
}

// TestEveryCommandInHelp: `zkhost help` names every command, or its group.
func TestEveryCommandInHelp(t *testing.T) {
	var help, stderr bytes.Buffer
	if code := run([]string{"help"}, &help, &stderr); code != 0 {
		t.Fatalf("zkhost help: exit %d, %s", code, stderr.String())
	}
	cmds := commands.Commands()
	if len(cmds) < 19 {
		t.Errorf("%d commands registered, want the daemon's, the client's and the tools' (19)", len(cmds))
	}
	for _, c := range cmds {
		word := strings.Fields(c.Name)[0]
		if !strings.Contains(help.String(), "\n  "+word+" ") {
			t.Errorf("zkhost help does not list %q:\n%s", word, help.String())
		}
	}
}

// TestMisuse: a command line that names no command, an unknown one or a bad flag
// gets the error first and short, on stderr, with exit status 2; nothing on
// stdout.
func TestMisuse(t *testing.T) {
	pointer := func(name string) string { return "Run 'zkhost help " + name + "' for details.\n" }
	for _, tc := range []struct {
		args  []string
		first string // stderr's first line
		last  string // stderr's last line, when not "" (the pointer to the help)
		lines int    // stderr's lines at most
	}{
		{[]string{"nosuch"}, `zkhost: unknown command "nosuch"`, "Run 'zkhost help' for the list of commands.\n", 2},
		{[]string{"key"}, "zkhost key: missing command (key convert, key import)", pointer("key"), 2},
		{[]string{"key", "nosuch"}, `zkhost key: unknown command "key nosuch" (key convert, key import)`, pointer("key"), 2},
		{[]string{"help", "nosuch"}, `zkhost help: unknown help topic "nosuch"`, "", 2},
		{[]string{"submit", "--bogus"}, "zkhost submit: flag provided but not defined: -bogus", pointer("submit"), 3},
		{[]string{"cancel"}, "zkhost cancel: no JOB given", pointer("cancel"), 3},
		{[]string{"jobs", "--state", "bogus"}, `zkhost jobs: --state: unknown job state "bogus" (want one of queued, running, done, failed, cancelled)`, pointer("jobs"), 3},
		{[]string{"prove", "--partitions", "x"}, `zkhost prove: invalid value "x" for flag -partitions: parse error`, pointer("prove"), 3},
		{[]string{"version", "extra"}, `zkhost version: unexpected arguments ["extra"]`, pointer("version"), 3},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		lines := strings.SplitAfter(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if code != 2 || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), tc.first+"\n") || len(lines) > tc.lines ||
			tc.last != "" && !strings.HasSuffix(stderr.String(), tc.last) {
			t.Errorf("zkhost %s: exit %d, stdout %q, stderr:\n%s\nwant exit 2, nothing on stdout, at most %d lines starting %q and ending %q",
				strings.Join(tc.args, " "), code, stdout.String(), stderr.String(), tc.lines, tc.first, tc.last)
		}
	}
	// zkhost alone: the command list, as an error (the go tool's way).
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "Commands:") {
		t.Errorf("zkhost alone: exit %d, stdout %q, stderr:\n%s", code, stdout.String(), stderr.String())
	}
}

// TestVersionEverywhere: zkhost version and --version print the one version
// string the daemon and the backends report.
func TestVersionEverywhere(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "zkhost "+version.String()+"\n") {
			t.Errorf("zkhost %s: exit %d, stdout %q, stderr %q", args[0], code, stdout.String(), stderr.String())
		}
	}
}
