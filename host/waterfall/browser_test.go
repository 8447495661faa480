package waterfall

import (
	"bytes"
	"context"
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
	path, err := headless.Find()
	if err != nil {
		t.Skipf("skipping the browser test: %v", err)
	}
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
	b := headless.Browser{Path: path}
	dom, err := b.DumpDOM(context.Background(), "file://"+page)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}

	// The script ran to its end and saw every bar and dispatch mark.
	body := find(doc, func(n *html.Node) bool { return n.Data == "body" })
	marks := len(fixture()) // every event is a bar or a dispatch mark
	if got := attr(body, "data-ready"); got != strconv.Itoa(marks) {
		t.Errorf("page script marked %q bars ready, want %d (did the script fail?)", got, marks)
	}

	var got []wantGap
	table := find(doc, func(n *html.Node) bool { return n.Data == "table" && attr(n, "id") == "gaps" })
	if table == nil {
		t.Fatal("no gap table in the rendered page")
	}
	for _, tr := range findAll(table, func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-gap") != "" }) {
		start, _ := strconv.Atoi(attr(tr, "data-start-ms"))
		length, _ := strconv.Atoi(attr(tr, "data-duration-ms"))
		got = append(got, wantGap{attr(tr, "data-device"), start, length, Cause(attr(tr, "data-cause"))})
		// The cause is written out in the row, and each gap has its mark.
		if text := textOf(tr); !strings.Contains(text, Cause(attr(tr, "data-cause")).Label()) {
			t.Errorf("row %q does not say its cause", text)
		}
		if find(doc, func(n *html.Node) bool { return attr(n, "id") == attr(tr, "data-gap") && n.Data == "rect" }) == nil {
			t.Errorf("gap %s has no mark on the waterfall", attr(tr, "data-gap"))
		}
	}
	if !reflect.DeepEqual(got, fixtureGaps) {
		t.Errorf("gap table in the browser:\n got %v\nwant %v", got, fixtureGaps)
	}

	// Lanes: three synthesis workers, two devices with their curves, finalize.
	var lanes []string
	for _, g := range findAll(doc, func(n *html.Node) bool { return n.Data == "g" && attr(n, "class") == "lane" }) {
		lanes = append(lanes, attr(g, "data-kind")+":"+attr(g, "data-lane"))
	}
	want := []string{"synthesis:synth0", "synthesis:synth1", "synthesis:synth2", "device:dev0", "device:dev1", "finalize:finalize"}
	if !reflect.DeepEqual(lanes, want) {
		t.Errorf("lanes %v, want %v", lanes, want)
	}
	curves := findAll(doc, func(n *html.Node) bool { return n.Data == "path" && attr(n, "class") == "curve" })
	if len(curves) != 2 {
		t.Errorf("%d utilization curves, want 2", len(curves))
	}
}

func attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func find(n *html.Node, match func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, match); f != nil {
			return f
		}
	}
	return nil
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
