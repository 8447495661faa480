package waterfall

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/zkhost/zkhost/host/web/headless"
)

// TestPageInChromium renders the fixture's page in headless Chromium and reads
// the gap table back from the DOM the browser built: every gap of the fixture,
// longest first per device, with the right cause.
func TestPageInChromium(t *testing.T) {
	b := headless.ForTest(t)
	a, err := Analyze(fixture())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, a, Options{Title: "fixture", Source: "fixture.jsonl"}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "waterfall.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, _ := b.Document(t, "file://"+page)

	// The script ran to its end and saw every bar and dispatch mark.
	body := headless.FindNode(doc, func(n *html.Node) bool { return n.Data == "body" })
	marks := len(fixture()) // every event is a bar or a dispatch mark
	if got := headless.Attr(body, "data-ready"); got != strconv.Itoa(marks) {
		t.Errorf("page script marked %q bars ready, want %d (did the script fail?)", got, marks)
	}

	var got []wantGap
	table := headless.FindNode(doc, func(n *html.Node) bool { return n.Data == "table" && headless.Attr(n, "id") == "gaps" })
	if table == nil {
		t.Fatal("no gap table in the rendered page")
	}
	for _, tr := range headless.FindAll(table, func(n *html.Node) bool { return n.Data == "tr" && headless.Attr(n, "data-gap") != "" }) {
		start, _ := strconv.Atoi(headless.Attr(tr, "data-start-ms"))
		length, _ := strconv.Atoi(headless.Attr(tr, "data-duration-ms"))
		got = append(got, wantGap{headless.Attr(tr, "data-device"), start, length, Cause(headless.Attr(tr, "data-cause"))})
		// The cause is written out in the row, and each gap has its mark.
		if text := headless.Text(tr); !strings.Contains(text, Cause(headless.Attr(tr, "data-cause")).Label()) {
			t.Errorf("row %q does not say its cause", text)
		}
		if headless.FindNode(doc, func(n *html.Node) bool {
			return headless.Attr(n, "id") == headless.Attr(tr, "data-gap") && n.Data == "rect"
		}) == nil {
			t.Errorf("gap %s has no mark on the waterfall", headless.Attr(tr, "data-gap"))
		}
	}
	if !reflect.DeepEqual(got, fixtureGaps) {
		t.Errorf("gap table in the browser:\n got %v\nwant %v", got, fixtureGaps)
	}

	// Lanes: three synthesis workers, two devices with their curves, finalize.
	var lanes []string
	for _, g := range headless.FindAll(doc, func(n *html.Node) bool { return n.Data == "g" && headless.Attr(n, "class") == "lane" }) {
		lanes = append(lanes, headless.Attr(g, "data-kind")+":"+headless.Attr(g, "data-lane"))
	}
	want := []string{"synthesis:synth0", "synthesis:synth1", "synthesis:synth2", "device:dev0", "device:dev1", "finalize:finalize"}
	if !reflect.DeepEqual(lanes, want) {
		t.Errorf("lanes %v, want %v", lanes, want)
	}
	curves := headless.FindAll(doc, func(n *html.Node) bool { return n.Data == "path" && headless.Attr(n, "class") == "curve" })
	if len(curves) != 2 {
		t.Errorf("%d utilization curves, want 2", len(curves))
	}
}
